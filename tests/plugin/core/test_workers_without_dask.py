"""Processing's WORKERS without Dask in QGIS's Python: the algorithm fails with the plugin's install entry."""

import sys

import pytest


def test_evaluate_with_workers_and_no_dask_names_the_install_entry(qgis_processing, scene, tmp_path, monkeypatch):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingException, QgsProcessingFeedback

    monkeypatch.setitem(sys.modules, "distributed", None)  # as in a QGIS whose Python lacks Dask
    parameters = {"INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
                  "PIXEL_SIZE": scene.pixel_size, "WORKERS": 2, "OUTPUT_GPKG": str(tmp_path / "evaluation.gpkg"),
                  "OUTPUT_REPORT": str(tmp_path / "report")}
    with pytest.raises(QgsProcessingException) as raised:
        processing.run("polytopo:evaluate", parameters, context=QgsProcessingContext(),
                       feedback=QgsProcessingFeedback())
    message = str(raised.value)
    assert "for the Workers or Scheduler field (WORKERS in Processing) but they cannot be imported" in message
    assert "Plugins ▸ PolyTopo ▸ Install Dask for workers" in message and "--workers" not in message
    assert list(tmp_path.iterdir()) == []
