"""The vectorize-and-evaluate chain scores the engine's polygons directly, with the numbers of the written layer."""

import json

import pytest

from polytopo.plugin.errors import LayerInputError
from polytopo.plugin.runs import evaluate_layers, vectorize_and_evaluate


def _layer(path, name):
    from qgis.core import QgsRasterLayer, QgsVectorLayer

    layer = QgsRasterLayer(str(path), name) if str(path).endswith(".tif") else QgsVectorLayer(str(path), name, "ogr")
    assert layer.isValid()
    return layer


def _comparable(summary):
    """The summary without its timings, as JSON text (NaN equals NaN there)."""
    return json.dumps({key: value for key, value in summary.items() if key != "timings"}, sort_keys=True,
                      default=repr)


def _reference_in(vectorize_inputs, tmp_path, crs):
    """The reference layer, reprojected to ``crs`` when given (so the predictions are reprojected too)."""
    if crs is None:
        return _layer(vectorize_inputs.reference, "reference")
    from osgeo import gdal

    path = tmp_path / "reference.gpkg"
    gdal.VectorTranslate(str(path), str(vectorize_inputs.reference), dstSRS=crs, format="GPKG")
    return _layer(path, "reference")


@pytest.mark.parametrize(("suffix", "reference_crs"), [(".gpkg", None), (".geojson", None), (".gpkg", "EPSG:3857")])
def test_direct_chain_equals_evaluating_the_written_layer(vectorize_inputs, tmp_path, suffix, reference_crs):
    """Same summary and per-feature records as reading the written polygons back and evaluating them."""
    reference = _reference_in(vectorize_inputs, tmp_path, reference_crs)
    options = {"pixel_size": 0.5, "patch_size_px": 32}
    vectorized, run = vectorize_and_evaluate(
        _layer(vectorize_inputs.raster, "image"), reference, vectorize_inputs.model,
        output_path=tmp_path / f"v{suffix}", vectorize_options={"provider": "cpu"}, evaluation_options=options)
    assert vectorized.polygons is None and vectorized.features > 0
    written = evaluate_layers(_layer(vectorized.source, "vectorized"), reference, score_field="score", **options)
    assert _comparable(run.evaluation.summary) == _comparable(written.evaluation.summary)
    assert repr(run.evaluation.records) == repr(written.evaluation.records)
    assert run.frame == written.frame
    assert run.evaluation.summary["metrics"]["Topo-EM"] > 0  # the predictions do match the reference
    assert run.provenance["prediction"]["source"] == vectorized.source


def test_an_image_field_is_refused_before_the_inference(vectorize_inputs, tmp_path):
    """The vectorized polygons have no image field: said at once, nothing is written."""
    with pytest.raises(LayerInputError, match="expected a field 'tile' but the vectorized polygons"):
        vectorize_and_evaluate(
            _layer(vectorize_inputs.raster, "image"), _layer(vectorize_inputs.reference, "reference"),
            vectorize_inputs.model, output_path=tmp_path / "v.gpkg", vectorize_options={"provider": "cpu"},
            evaluation_options={"pixel_size": 0.5, "image_field": "tile"})
    assert not (tmp_path / "v.gpkg").exists()
