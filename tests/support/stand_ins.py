"""Stand-ins for the plugin's core functions and for the objects they talk to.

The dock and task tests inject these instead of ``polytopo.plugin.runs`` (the core), a
``QgsProcessingFeedback`` (feedback) or ``polytopo.models.read_card`` (card reader).
``tests/plugin/test_stand_in_signatures.py`` checks that every one keeps the signature
of the real function it stands in for, so a change of the real API shows there first.
"""

import time
import types
from pathlib import Path

from polytopo_testing import polygon_layer

from polytopo.plugin.errors import RunCanceled
from polytopo.models.work_estimate import DEFAULT_MAX_PIXELS
from polytopo.plugin.runs.vectorize import VectorizationRun, layer_source

__all__ = ["CancelInEvaluation", "CancelInExport", "CancelingFeedback", "RecordingFeedback", "SlowCore",
           "StandInCore", "VectorizeCore", "fake_card", "real_core", "vectorization_run"]


def vectorization_run(output_path, model, features):
    """What a stand-in vectorization returns: ``features`` polygons written to ``output_path`` on the CPU."""
    return VectorizationRun(path=Path(output_path), source=layer_source(output_path), model=str(model), card={},
                            decoding={}, provider_used="CPUExecutionProvider", provider_report=None,
                            features=features, provenance={}, messages=())


def real_core():
    """The real core functions, ``polytopo.plugin.runs``."""
    from polytopo.plugin import runs

    return runs


class StandInCore:
    """Core functions with the signatures of ``polytopo.plugin.runs``.

    ``steps`` progress steps of ``step_s`` seconds each; ``fail`` is raised from the
    evaluation or vectorization when set. Outputs are written only at the end, the way
    the real core writes atomically.
    """

    def __init__(self, steps=3, step_s=0.0, fail=None):
        self.steps, self.step_s, self.fail = steps, step_s, fail
        self.calls = []
        self.started = False

    def _work(self, feedback):
        self.started = True
        for step in range(self.steps):
            if feedback.isCanceled():
                raise RunCanceled("The run was canceled; no output was written.")
            feedback.setProgress(100.0 * step / self.steps)
            feedback.pushInfo(f"step {step}")
            time.sleep(self.step_s)
        if self.fail is not None:
            raise self.fail

    def evaluate_layers(self, prediction_layer, reference_layer, *, pixel_size, profile="paper", score_field=None,
                        default_score=None, image_field=None, patch_size_px=None, overrides=None, feedback=None,
                        transform_context=None, workers=0, scheduler=None):
        self.calls.append(("evaluate_layers", prediction_layer.name(), prediction_layer.featureCount(),
                           reference_layer.name(), pixel_size, profile, score_field))
        self._work(feedback)
        return types.SimpleNamespace(provenance={"profile": profile})

    def export_run(self, run, gpkg_path, report_dir, *, overwrite=False, feedback=None):
        self.calls.append(("export_run", gpkg_path, report_dir, overwrite))
        with open(gpkg_path, "wb") as stream:
            stream.write(b"gpkg")
        return {"gpkg": gpkg_path}

    def vectorize_layer(self, raster_layer, model, *, provider="auto", extent=None, aoi_layer=None, tile_px=None,
                        overlap_px=None, batch=None, bands=None, threshold=None, min_area_px=None,
                        min_hole_area_px=None, output_path, feedback=None, overwrite=False, transform_context=None,
                        keep_polygons=False, max_pixels=DEFAULT_MAX_PIXELS):
        self.calls.append(("vectorize_layer", raster_layer.name(), model, provider, extent, output_path))
        self._work(feedback)
        with open(output_path, "wb") as stream:
            stream.write(b"gpkg")
        return vectorization_run(output_path, model, 2)


class SlowCore:
    """Core stand-in whose evaluation takes ``steps`` x ``step_s`` and honours cancellation."""

    def __init__(self, steps=1000, step_s=0.01):
        self.steps, self.step_s = steps, step_s
        self.started = False
        self.calls = []

    def evaluate_layers(self, prediction_layer, reference_layer, *, pixel_size, profile="paper", score_field=None,
                        default_score=None, image_field=None, patch_size_px=None, overrides=None, feedback=None,
                        transform_context=None, workers=0, scheduler=None):
        self.started = True
        self.calls.append("evaluate_layers")
        for step in range(self.steps):
            if feedback.isCanceled():
                raise RunCanceled("The evaluation was canceled; no output was written.")
            feedback.setProgress(100.0 * step / self.steps)
            time.sleep(self.step_s)
        raise AssertionError("the run was expected to be canceled")

    def export_run(self, run, gpkg_path, report_dir, *, overwrite=False, feedback=None):
        self.calls.append("export_run")
        raise AssertionError("a canceled run must not export")

    def add_run_to_project(self, gpkg_path, project, group_name):
        self.calls.append("add_run_to_project")
        raise AssertionError("a canceled run must not add layers")


class CancelingFeedback:
    """Wrap a task's feedback: report canceled once progress reached ``at_percent`` ``times`` times."""

    def __init__(self, feedback, at_percent, times=1):
        self.feedback, self.at_percent, self.times = feedback, at_percent, times
        self.reached = 0

    def setProgress(self, percent):  # noqa: N802 - feedback protocol name.
        if percent >= self.at_percent:
            self.reached += 1
        self.feedback.setProgress(percent)

    def isCanceled(self):  # noqa: N802 - feedback protocol name.
        return self.reached >= self.times

    def pushInfo(self, message):  # noqa: N802 - feedback protocol name.
        self.feedback.pushInfo(message)

    def pushWarning(self, message):  # noqa: N802 - feedback protocol name.
        self.feedback.pushWarning(message)

    def reportError(self, message, fatalError=False):  # noqa: N802, N803 - feedback protocol names.
        self.feedback.reportError(message)


class CancelInExport:
    """The real core, with the export canceled after it started writing the GeoPackage."""

    def __init__(self):
        self.runs = real_core()

    def evaluate_layers(self, *args, **kwargs):
        return self.runs.evaluate_layers(*args, **kwargs)

    def export_run(self, run, gpkg_path, report_dir, *, overwrite=False, feedback=None):
        return self.runs.export_run(run, gpkg_path, report_dir, overwrite=overwrite,
                                    feedback=CancelingFeedback(feedback, 30))

    def add_run_to_project(self, gpkg_path, project, group_name):
        raise AssertionError("a canceled run must not add layers")


class CancelInEvaluation(CancelInExport):
    """The real core, with the evaluation canceled between two of its phases."""

    def evaluate_layers(self, *args, feedback=None, **kwargs):
        return self.runs.evaluate_layers(*args, feedback=CancelingFeedback(feedback, 30, times=2), **kwargs)

    def export_run(self, *args, **kwargs):
        raise AssertionError("a canceled run must not export")


class VectorizeCore:
    """Core stand-in whose vectorization writes one polygon into a GeoPackage."""

    def __init__(self):
        self.calls = []

    def vectorize_layer(self, raster_layer, model, *, provider="auto", extent=None, aoi_layer=None, tile_px=None,
                        overlap_px=None, batch=None, bands=None, threshold=None, min_area_px=None,
                        min_hole_area_px=None, output_path, feedback=None, overwrite=False, transform_context=None,
                        keep_polygons=False, max_pixels=DEFAULT_MAX_PIXELS):
        from qgis.core import QgsCoordinateTransformContext, QgsVectorFileWriter

        self.calls.append((raster_layer.name(), model, provider, extent))
        self.aoi_features = None if aoi_layer is None else aoi_layer.featureCount()
        self.bands = bands
        self.decoding = (threshold, min_area_px, min_hole_area_px)
        feedback.setProgress(50.0)
        layer = polygon_layer("polygons", ["POLYGON((100 199,101 199,101 198,100 198,100 199))"])
        options = QgsVectorFileWriter.SaveVectorOptions()
        options.driverName = "GPKG"
        error = QgsVectorFileWriter.writeAsVectorFormatV3(layer, output_path, QgsCoordinateTransformContext(),
                                                          options)
        assert error[0] == QgsVectorFileWriter.NoError, error
        return vectorization_run(output_path, model, 1)


def fake_card(path):
    """Card reader stand-in: a semantic building model at 50 cm/px, whatever ``path`` is."""
    from polytopo.models import ModelCard

    return ModelCard(family="semantic", class_names=("building",), resolution_cm_per_px=50.0)


class RecordingFeedback:
    """A feedback object that records what a run reports and cancels on request."""

    def __init__(self, cancel_after_progress=None):
        self.progress, self.infos, self.warnings, self.errors = [], [], [], []
        self.cancel_after_progress = cancel_after_progress

    def setProgress(self, percent):  # noqa: N802 - the QgsFeedback name.
        self.progress.append(percent)

    def isCanceled(self):  # noqa: N802 - the QgsFeedback name.
        return self.cancel_after_progress is not None and len(self.progress) > self.cancel_after_progress

    def pushInfo(self, message):  # noqa: N802 - the QgsProcessingFeedback name.
        self.infos.append(message)

    def pushWarning(self, message):  # noqa: N802 - the QgsProcessingFeedback name.
        self.warnings.append(message)

    def reportError(self, message, fatalError=False):  # noqa: N802, N803 - the QgsProcessingFeedback names.
        self.errors.append(message)
