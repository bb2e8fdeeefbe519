"""Evaluation on a local Dask cluster from inside headless QGIS: workers run Python, Cancel leaves nothing."""

import multiprocessing
import multiprocessing.spawn
import sys

import pytest

from polytopo.evaluator import evaluate, load_inputs

#: Small patches so that the scene spans several images, hence several partitions.
PATCH_SIZE_PX = 24


@pytest.fixture
def qgis_binary(tmp_path, monkeypatch):
    """Make ``sys.executable`` the QGIS binary, as it is inside QGIS (not a Python interpreter)."""
    binary = tmp_path / "qgis.bin"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(binary))
    return binary


def _parameters(scene, tmp_path, workers):
    return {"INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
            "PIXEL_SIZE": scene.pixel_size, "PATCH_SIZE": PATCH_SIZE_PX, "WORKERS": workers,
            "OUTPUT_GPKG": str(tmp_path / "evaluation.gpkg"), "OUTPUT_REPORT": str(tmp_path / "report")}


def test_workers_is_an_advanced_parameter_defaulting_to_in_process(qgis_processing):
    from qgis.core import QgsProcessingParameterDefinition

    parameter = qgis_processing.algorithm("evaluate").parameterDefinition("WORKERS")
    assert parameter.defaultValue() == 0 and parameter.minimum() == 0
    assert parameter.flags() & QgsProcessingParameterDefinition.FlagAdvanced


def test_evaluate_with_two_workers_gives_the_in_process_numbers(qgis_processing, qgis_binary, scene, tmp_path):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback

    spawn_before = multiprocessing.spawn.get_executable()
    results = processing.run("polytopo:evaluate", _parameters(scene, tmp_path, 2), context=QgsProcessingContext(),
                             feedback=QgsProcessingFeedback())
    gt, pred, _ = load_inputs(str(scene.reference), str(scene.prediction), pixel_size=scene.pixel_size,
                              score_field="score", patch_size_px=PATCH_SIZE_PX)
    assert len(set(gt.image_ids)) > 2
    with pytest.warns(UserWarning, match="only in the predictions"):  # patches cut the shifted predictions
        metrics = evaluate(gt, pred).summary["metrics"]
    for output, metric in {"AP50": "AP50", "E_BIOU": "E-BIoU", "HOLE_F1": "Hole-F1", "TOPO_EM": "Topo-EM"}.items():
        assert results[output] == pytest.approx(metrics[metric], rel=1e-9, nan_ok=True), output
    assert multiprocessing.spawn.get_executable() == spawn_before and not multiprocessing.active_children()


def test_local_workers_run_python_not_the_qgis_binary(qgis_app, qgis_binary):
    from polytopo.core.cluster import open_client

    with open_client(workers=1) as client:
        (executable,) = client.run(lambda: sys.executable).values()
    assert executable != str(qgis_binary) and "python" in executable.rsplit("/", 1)[-1]


def test_cancel_stops_the_cluster_work_and_leaves_nothing(qgis_processing, qgis_binary, scene, tmp_path):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingException, QgsProcessingFeedback

    class CancelAtFirstPartition(QgsProcessingFeedback):
        """Presses Cancel as soon as the first partition of the cluster run has finished."""

        def __init__(self):
            super().__init__()
            self.seen = []

        def pushInfo(self, message):  # noqa: N802 - QGIS API name.
            self.seen.append(message)
            if "partition 1 of" in message:
                self.cancel()
            super().pushInfo(message)

    feedback = CancelAtFirstPartition()
    with pytest.raises(QgsProcessingException, match="canceled; no output was written"):
        processing.run("polytopo:evaluate", _parameters(scene, tmp_path, 2), context=QgsProcessingContext(),
                       feedback=feedback)
    total = int(next(m for m in feedback.seen if "partition 1 of" in m).rsplit(" ", 1)[1])
    assert total > 1 and not any(f"partition {total} of" in m for m in feedback.seen)
    assert not (tmp_path / "evaluation.gpkg").exists() and not (tmp_path / "report").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "qgis.bin"]
    assert not multiprocessing.active_children()
