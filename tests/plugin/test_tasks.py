"""The background tasks run the core functions through the task manager and clean up after themselves.

The core functions are replaced by an injected stand-in (``stand_ins.StandInCore``, with
the signatures of ``polytopo.plugin.runs``) that records its calls, honours cancellation
and can be told to fail; the tasks run in real worker threads of ``QgsApplication.taskManager()``.
"""

import os
import time

import pytest
from polytopo_testing import RecordingNotifier, polygon_layer, wait_until
from stand_ins import StandInCore

from polytopo.plugin.errors import LayerInputError

SQUARE = "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (3 3, 6 3, 6 6, 3 6, 3 3))"


@pytest.fixture
def layers(qgis_app):
    """A prediction and a reference memory layer of one square with a hole each."""
    return polygon_layer("pred", [SQUARE]), polygon_layer("ref", [SQUARE])


def evaluation_request(layers, gpkg_path=None):
    from qgis.core import QgsCoordinateTransformContext

    from polytopo.plugin.gui.tasks import EvaluationRequest, LayerSnapshot

    context = QgsCoordinateTransformContext()
    prediction, reference = layers
    return EvaluationRequest(LayerSnapshot.of(prediction, context), LayerSnapshot.of(reference, context), 0.5,
                             "paper", "score", None, gpkg_path, False, "PolyTopo test run")


def run_task(task):
    """Add ``task`` to the task manager and wait until its finished() ran."""
    from qgis.core import QgsApplication

    done = []
    task.on_finished = done.append
    QgsApplication.taskManager().addTask(task)
    wait_until(lambda: done)
    return task


def test_feedback_maps_onto_the_task(qgis_app):
    """setProgress and isCanceled reach the QgsTask; messages are kept."""
    from qgis.core import QgsTask

    from polytopo.plugin.gui.tasks import TaskFeedback

    task = QgsTask.fromFunction("probe", lambda task: None)
    feedback = TaskFeedback(task)
    feedback.setProgress(42.5)
    feedback.pushInfo("reading")
    feedback.pushWarning("no overlap")
    feedback.reportError("broken", fatalError=False)
    assert task.progress() == pytest.approx(42.5)
    assert feedback.isCanceled() is False
    task.cancel()
    assert feedback.isCanceled() is True
    assert feedback.messages == ["reading", "no overlap", "broken"]


def test_snapshot_copies_memory_layers_and_reopens_files(qgis_app, tmp_path):
    """Memory layers are copied in the main thread; file layers reopen from their source."""
    from qgis.core import QgsCoordinateTransformContext, QgsVectorFileWriter, QgsVectorLayer

    from polytopo.plugin.errors import PluginError
    from polytopo.plugin.gui.tasks import LayerSnapshot

    context = QgsCoordinateTransformContext()
    memory = polygon_layer("pred", [SQUARE, "POLYGON((20 0, 30 0, 30 10, 20 0))"])
    snapshot = LayerSnapshot.of(memory, context)
    assert snapshot.copy is not None and snapshot.kind == "vector"
    assert snapshot.open().featureCount() == 2

    path = str(tmp_path / "pred.gpkg")
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    error = QgsVectorFileWriter.writeAsVectorFormatV3(memory, path, context, options)
    assert error[0] == QgsVectorFileWriter.NoError
    on_disk = QgsVectorLayer(path, "pred", "ogr")
    snapshot = LayerSnapshot.of(on_disk, context)
    assert snapshot.copy is None
    reopened = snapshot.open()
    assert reopened is not on_disk
    assert reopened.featureCount() == 2

    os.remove(path)
    with pytest.raises(PluginError, match="check that its file still exists"):
        snapshot.open()


def test_evaluation_succeeds_and_hands_over_the_result(layers, tmp_path):
    """The core runs in the worker, the callback gets the result in the main thread."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    core, notifier, received = StandInCore(), RecordingNotifier(), []
    gpkg = str(tmp_path / "out.gpkg")
    task = run_task(EvaluationTask(evaluation_request(layers, gpkg), core, received.append, notifier))
    (result,) = received
    assert result.gpkg_path == gpkg
    assert result.paths == {"gpkg": gpkg}
    assert core.calls == [("evaluate_layers", "pred", 1, "ref", 0.5, "paper", "score"),
                          ("export_run", gpkg, str(tmp_path / "out_report"), False)]
    assert notifier.messages == []
    assert task.feedback.messages == ["step 0", "step 1", "step 2"]


def test_evaluation_without_output_path_writes_into_a_temporary_folder(layers):
    """No output path: the GeoPackage goes into a new temporary folder, which stays after success."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    received = []
    run_task(EvaluationTask(evaluation_request(layers), StandInCore(), received.append, RecordingNotifier()))
    (result,) = received
    assert os.path.basename(result.gpkg_path) == "evaluation.gpkg"
    assert os.path.isfile(result.gpkg_path)
    os.remove(result.gpkg_path)
    os.rmdir(os.path.dirname(result.gpkg_path))


def test_a_failing_evaluation_reports_the_message_and_removes_its_temporary_folder(layers):
    """A core error reaches the notifier verbatim; the temporary folder is gone; no callback."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    core = StandInCore(fail=LayerInputError("Expected a polygon layer but got points; choose polygons"))
    notifier, received = RecordingNotifier(), []
    task = EvaluationTask(evaluation_request(layers), core, received.append, notifier)
    run_task(task)
    assert received == []
    assert notifier.messages == [("error", "PolyTopo", "PolyTopo evaluation of pred failed: Expected a polygon "
                                  "layer but got points; choose polygons")]
    assert task.temp_dir is None
    assert task.error.startswith("Expected a polygon layer")


def test_an_unexpected_exception_names_its_type(layers):
    """A bug in the core (not a PluginError) still reaches the user, with its type."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    notifier = RecordingNotifier()
    run_task(EvaluationTask(evaluation_request(layers), StandInCore(fail=ZeroDivisionError("division by zero")),
                            pytest.fail, notifier))
    assert notifier.messages[0][0] == "error"
    assert notifier.messages[0][2].endswith("failed: ZeroDivisionError: division by zero")


def test_canceling_stops_the_run_and_leaves_nothing(layers, tmp_path):
    """Cancel while the core works: it stops, nothing is written, the user is told."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    core, notifier = StandInCore(steps=500, step_s=0.01), RecordingNotifier()
    gpkg = tmp_path / "out.gpkg"
    task = EvaluationTask(evaluation_request(layers, str(gpkg)), core, pytest.fail, notifier)
    done = []
    task.on_finished = done.append
    from qgis.core import QgsApplication

    started = time.monotonic()
    QgsApplication.taskManager().addTask(task)
    wait_until(lambda: core.started)
    task.cancel()
    wait_until(lambda: done)
    assert time.monotonic() - started < 4.0
    assert notifier.messages == [("info", "PolyTopo", "PolyTopo evaluation of pred was canceled; nothing was "
                                  "written.")]
    assert task.canceled and task.status() == task.Complete  # listed as finished, not as a failed task
    assert list(tmp_path.iterdir()) == []
    assert [call[0] for call in core.calls] == ["evaluate_layers"]


def test_canceling_a_temporary_output_run_removes_the_folder(layers):
    """The temporary folder made for the output disappears on cancel."""
    from qgis.core import QgsApplication

    from polytopo.plugin.gui.tasks import EvaluationTask

    core = StandInCore(steps=500, step_s=0.01)
    task = EvaluationTask(evaluation_request(layers), core, pytest.fail, RecordingNotifier())
    done = []
    task.on_finished = done.append
    QgsApplication.taskManager().addTask(task)
    wait_until(lambda: core.started)
    folder = task.temp_dir
    assert folder is not None and os.path.isdir(folder)
    task.cancel()
    wait_until(lambda: done)
    assert not os.path.exists(folder)


def test_a_failing_callback_is_reported(layers, tmp_path):
    """An error while adding the result (main thread) is shown, not lost."""
    from polytopo.plugin.gui.tasks import EvaluationTask

    def on_success(result):
        raise LayerInputError("Expected the GeoPackage to hold layer 'predictions' but it does not")

    notifier = RecordingNotifier()
    run_task(EvaluationTask(evaluation_request(layers, str(tmp_path / "o.gpkg")), StandInCore(), on_success,
                            notifier))
    assert notifier.messages == [("error", "PolyTopo", "PolyTopo evaluation of pred: adding the result failed: "
                                  "Expected the GeoPackage to hold layer 'predictions' but it does not")]


def raster_layer(tmp_path):
    """Return a 4 x 4 single-band GeoTIFF layer."""
    from osgeo import gdal
    from qgis.core import QgsRasterLayer

    path = str(tmp_path / "image.tif")
    dataset = gdal.GetDriverByName("GTiff").Create(path, 4, 4, 1, gdal.GDT_Byte)
    dataset.SetGeoTransform((100.0, 0.5, 0.0, 200.0, 0.0, -0.5))
    dataset.GetRasterBand(1).Fill(7)
    dataset = None
    return QgsRasterLayer(path, "image")


def test_vectorization_runs_on_a_reopened_raster(qgis_app, tmp_path):
    """The raster is reopened in the worker from its source; the result carries the request."""
    from qgis.core import QgsCoordinateTransformContext

    from polytopo.plugin.gui.tasks import LayerSnapshot, VectorizeRequest, VectorizeTask

    layer = raster_layer(tmp_path)
    assert layer.isValid()
    request = VectorizeRequest(LayerSnapshot.of(layer, QgsCoordinateTransformContext()), "model.onnx", "cpu", None,
                               str(tmp_path / "polygons.gpkg"), False, "PolyTopo vectorize test")
    core, received = StandInCore(), []
    run_task(VectorizeTask(request, core, received.append, RecordingNotifier()))
    (result,) = received
    assert result.request is request
    assert result.run.provider_used == "CPUExecutionProvider"
    assert core.calls == [("vectorize_layer", "image", "model.onnx", "cpu", None, str(tmp_path / "polygons.gpkg"))]


def test_dependency_install_task_hands_over_the_outcome(qgis_app, tmp_path):
    """The install runs in the background and its outcome reaches the callback."""
    from qgis.core import QgsApplication

    from polytopo.plugin.setup.dependencies import InstallOutcome, check_dependencies
    from polytopo.plugin.gui.tasks import InstallDependenciesTask

    report = check_dependencies(folder=tmp_path)
    outcome = InstallOutcome(True, ("python", "-m", "pip"), tmp_path, "Successfully installed")
    received = []
    task = InstallDependenciesTask(report, received.append, install=lambda report: outcome)
    QgsApplication.taskManager().addTask(task)
    wait_until(lambda: received)
    assert received == [outcome]
