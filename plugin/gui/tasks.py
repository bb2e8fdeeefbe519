"""Background tasks of the dock: evaluation, vectorization and the dependency install.

Each task is a :class:`qgis.core.QgsTask` run by ``QgsApplication.taskManager()``:
:meth:`run` works in a worker thread and only touches what the main thread
captured before the task started (:class:`LayerSnapshot`: layer ids, sources,
provider keys, the project's transform context), so the project's layers are
never read from two threads. :meth:`finished` runs in the main thread: on
success it hands the result to a callback (which adds the layers to the
project), otherwise it reports the error, or the cancel, through a notifier
and leaves nothing behind (the core functions write atomically; a task removes the
temporary folder it made).

Notifiers have ``info``, ``warning`` and ``error`` methods taking a title and
a text: :class:`MessageBarNotifier` pushes to the QGIS message bar,
:class:`LogNotifier` writes to the message log (headless, tests).
"""

import shutil
import traceback
from dataclasses import dataclass

from qgis.core import (
    Qgis,
    QgsFeatureRequest,
    QgsMessageLog,
    QgsProject,
    QgsRasterLayer,
    QgsTask,
    QgsVectorLayer,
)

from ..setup import dependencies
from ..errors import PluginError, RunCanceled
from ..runs.output_check import report_folder
from .result_folders import new_result_folder
from ..runs.feedback import work_and_write

__all__ = [
    "LOG_TAG",
    "EvaluationRequest",
    "EvaluationResult",
    "EvaluationTask",
    "InstallDependenciesTask",
    "LayerSnapshot",
    "LogNotifier",
    "MessageBarNotifier",
    "TaskFeedback",
    "VectorizeRequest",
    "VectorizeResult",
    "VectorizeTask",
]

#: Message-log tab of the plugin.
LOG_TAG = "PolyTopo"

_MESSAGE_SECONDS = 10


class MessageBarNotifier:
    """Show task outcomes in a QGIS message bar (``iface.messageBar()``); :meth:`clear` takes them back."""

    def __init__(self, message_bar):
        self.message_bar = message_bar
        self.shown = []

    def _push(self, title, text, level, seconds):
        try:
            item = self.message_bar.createMessage(title, text)
            self.shown = [shown for shown in self.shown if _still_shown(shown)]
            self.shown.append(self.message_bar.pushWidget(item, level, seconds))
        except RuntimeError:  # the bar is gone (QGIS closing): the log still takes the message
            QgsMessageLog.logMessage(f"{title}: {text}", LOG_TAG, level)

    def info(self, title, text):
        """Show an informative message for a few seconds."""
        self._push(title, text, Qgis.Info, _MESSAGE_SECONDS)

    def warning(self, title, text):
        """Show a warning until the user closes it."""
        self._push(title, text, Qgis.Warning, 0)

    def error(self, title, text):
        """Show an error until the user closes it."""
        self._push(title, text, Qgis.Critical, 0)

    def clear(self):
        """Remove every message this notifier showed that is still in the bar (a new project)."""
        for item in self.shown:
            if _still_shown(item):
                self.message_bar.popWidget(item)
        self.shown = []


def _still_shown(item):
    """False once Qt deleted the message item (closed by the user or timed out)."""
    try:
        item.objectName()
    except RuntimeError:  # the wrapped C++ object is gone
        return False
    return True


class LogNotifier:
    """Write task outcomes to the QGIS message log, tab ``PolyTopo``."""

    def info(self, title, text):
        """Log an informative message."""
        QgsMessageLog.logMessage(f"{title}: {text}", LOG_TAG, Qgis.Info)

    def warning(self, title, text):
        """Log a warning."""
        QgsMessageLog.logMessage(f"{title}: {text}", LOG_TAG, Qgis.Warning)

    def error(self, title, text):
        """Log an error."""
        QgsMessageLog.logMessage(f"{title}: {text}", LOG_TAG, Qgis.Critical)

    def clear(self):
        """Nothing to take back: the log keeps its history."""


class TaskFeedback:
    """The feedback object the core functions expect, mapped onto a running QgsTask.

    Progress goes to :meth:`QgsTask.setProgress` (0–100), cancellation comes from
    :meth:`QgsTask.isCanceled`; messages go to the message log and are kept in
    :attr:`messages`. Every method is safe to call from the worker thread.
    """

    def __init__(self, task):
        self._task = task
        self.messages = []
        self.progress_text = ""

    def setProgress(self, percent):  # noqa: N802 - feedback protocol name.
        """Report ``percent`` (0–100) done."""
        self._task.setProgress(float(percent))

    def setProgressText(self, text):  # noqa: N802 - QgsProcessingFeedback name.
        """Keep ``text`` (``tile 3/12``) for the progress bar; read by the main thread."""
        self.progress_text = str(text)

    def isCanceled(self):  # noqa: N802 - feedback protocol name.
        """Return True once the user canceled the task."""
        return self._task.isCanceled()

    def pushInfo(self, message):  # noqa: N802 - feedback protocol name.
        """Log an informative message."""
        self._log(message, Qgis.Info)

    def pushWarning(self, message):  # noqa: N802 - feedback protocol name.
        """Log a warning."""
        self._log(message, Qgis.Warning)

    def reportError(self, message, fatalError=False):  # noqa: N802, N803 - QgsProcessingFeedback names.
        """Log an error; the core raises as well when the error ends the run."""
        self._log(message, Qgis.Critical)

    def _log(self, message, level):
        self.messages.append(message)
        QgsMessageLog.logMessage(f"{self._task.description()}: {message}", LOG_TAG, level)


@dataclass(frozen=True)
class LayerSnapshot:
    """What a worker thread needs to open its own copy of a project layer.

    Build it in the main thread with :meth:`of`; call :meth:`open` in the
    worker. Layers whose features live only in memory (memory provider, or
    unsaved edits) are copied by :meth:`of`, in the main thread.

    Attributes
    ----------
    layer_id, name, source, provider : str
        The project layer's id, name, data source URI and provider key.
    kind : str
        ``"vector"`` or ``"raster"``.
    transform_context : qgis.core.QgsCoordinateTransformContext
        The project's datum transforms, for reprojection in the worker.
    copy : qgis.core.QgsVectorLayer or None
        Memory copy of a layer that cannot be reopened from its source.
    """

    layer_id: str
    name: str
    source: str
    provider: str
    kind: str
    transform_context: object
    copy: object = None

    @classmethod
    def of(cls, layer, transform_context):
        """Capture ``layer`` (main thread only).

        Parameters
        ----------
        layer : qgis.core.QgsVectorLayer or qgis.core.QgsRasterLayer
        transform_context : qgis.core.QgsCoordinateTransformContext
            Usually ``QgsProject.instance().transformContext()``.

        Returns
        -------
        LayerSnapshot
        """
        if isinstance(layer, QgsRasterLayer):
            kind, copy = "raster", None
        elif isinstance(layer, QgsVectorLayer):
            kind = "vector"
            in_memory = layer.providerType() == "memory" or layer.isModified()
            copy = layer.materialize(QgsFeatureRequest()) if in_memory else None
        else:
            raise PluginError(f"Expected a vector or raster layer but got {type(layer).__name__}; "
                              "choose a polygon layer or a raster layer.")
        return cls(layer.id(), layer.name(), layer.source(), layer.providerType(), kind,
                   transform_context, copy)

    def open(self):
        """Open a new layer on the same data (worker thread).

        Returns
        -------
        qgis.core.QgsVectorLayer or qgis.core.QgsRasterLayer

        Raises
        ------
        PluginError
            The data source cannot be opened any more (file moved or deleted).
        """
        if self.copy is not None:
            return self.copy
        if self.kind == "raster":
            layer = QgsRasterLayer(self.source, self.name, self.provider,
                                   QgsRasterLayer.LayerOptions(False, self.transform_context))
        else:
            layer = QgsVectorLayer(self.source, self.name, self.provider,
                                   QgsVectorLayer.LayerOptions(self.transform_context, False))
        if not layer.isValid():
            raise PluginError(f"Expected layer {self.name!r} to open from {self.source!r} but it does not; "
                              "check that its file still exists, then start the run again.")
        return layer


@dataclass(frozen=True)
class EvaluationRequest:
    """An evaluation to run: inputs, parameters and outputs.

    Attributes
    ----------
    prediction, reference : LayerSnapshot
    pixel_size : float
        Size of one evaluation pixel, map units of the reference layer.
    profile : str
        Evaluator profile, one of :data:`polytopo.evaluator.tables.profiles.PROFILE_NAMES`.
    score_field : str or None
        Prediction attribute holding the confidence score.
    default_score : float or None
        Score of every prediction when there is no score field.
    gpkg_path : str or None
        Output GeoPackage; None writes into a new temporary folder.
    overwrite : bool
        Whether existing outputs may be replaced.
    group_name : str
        Name of the layer group the result is added under.
    workers : int
        Worker processes of a local Dask cluster for the evaluation; 0 runs it in the
        QGIS process.
    scheduler : str or None
        Address ``tcp://HOST:PORT`` of a running Dask scheduler (excludes ``workers``).
    """

    prediction: LayerSnapshot
    reference: LayerSnapshot
    pixel_size: float
    profile: str
    score_field: object
    default_score: object
    gpkg_path: object
    overwrite: bool
    group_name: str
    workers: int = 0
    scheduler: object = None


@dataclass(frozen=True)
class EvaluationResult:
    """A finished evaluation.

    Attributes
    ----------
    run : object
        The core's ``EvaluationRun`` (evaluation, frame, crs, provenance).
    paths : dict
        Output name to path, as returned by ``export_run``.
    gpkg_path : str
        The GeoPackage written.
    request : EvaluationRequest
    """

    run: object
    paths: dict
    gpkg_path: str
    request: EvaluationRequest


@dataclass(frozen=True)
class VectorizeRequest:
    """A vectorization to run.

    Attributes
    ----------
    raster : LayerSnapshot
    model_path : str
        The ONNX model file.
    provider : str
        ``auto``, ``cuda`` or ``cpu``.
    extent : qgis.core.QgsRectangle or None
        Area to vectorize in the raster layer's CRS; None for the whole layer.
    bands : tuple of int or None
        Raster band feeding each model channel; None for the card's mapping.
    tile_px, overlap_px : int or None
        Tile edge and overlap in model pixels; None for the card's.
    batch : int or None
        Tiles per inference call; None for 1.
    aoi : LayerSnapshot or None
        Polygons outside which nothing is vectorized (selected features or a mask layer).
    threshold : float or None
        Segmentation threshold; None for the card's.
    min_area_px, min_hole_area_px : float or None
        Smallest polygon and hole kept, square model pixels; None for the card's.
    output_path : str or None
        Output GeoPackage; None writes into a new temporary folder.
    overwrite : bool
        Whether an existing output may be replaced.
    group_name : str
        Name of the layer group the output is added under.
    """

    raster: LayerSnapshot
    model_path: str
    provider: str
    extent: object
    output_path: object
    overwrite: bool
    group_name: str
    bands: object = None
    tile_px: object = None
    overlap_px: object = None
    batch: object = None
    aoi: object = None
    threshold: object = None
    min_area_px: object = None
    min_hole_area_px: object = None


@dataclass(frozen=True)
class VectorizeResult:
    """A finished vectorization.

    Attributes
    ----------
    run : object
        The core's ``VectorizationRun`` (written file and layer source, polygons written,
        provider used, provenance).
    request : VectorizeRequest
    """

    run: object
    request: VectorizeRequest


def _ignore(result):
    """Callback of an abandoned task: the result is not handed to anyone."""


def _failure_text(exc):
    if isinstance(exc, PluginError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class _CoreTask(QgsTask):
    """Shared life cycle: run ``work`` in the worker, report in the main thread.

    A run stopped by *Cancel* sets :attr:`canceled` and ends as finished, not as
    failed, in the task manager; the notifier says it was canceled.

    Parameters
    ----------
    description : str
        Shown in the task manager.
    on_success : callable
        ``on_success(result)``, main thread, after a successful run.
    notifier : object
        ``info/warning/error(title, text)``.
    on_finished : callable, optional
        ``on_finished(task)``, main thread, after every outcome (UI reset).
    """

    title = "PolyTopo"
    kind = "run"  # names the result folder of a run without an output path

    def __init__(self, description, on_success, notifier, on_finished=None):
        super().__init__(description, QgsTask.CanCancel)
        self.on_success = on_success
        self.notifier = notifier
        self.on_finished = on_finished
        self.feedback = TaskFeedback(self)
        self.result = None
        self.error = None
        self.canceled = False
        self.temp_dir = None
        self.project_folder = QgsProject.instance().absolutePath()  # read in the main thread, where tasks start

    def output_path(self, requested, file_name):
        """Return ``requested``, or a path in a new result folder of this run when it is None.

        The folder (:mod:`.result_folders`) is beside the saved project file, else in the
        system's temporary folder; a failed or canceled run removes it.
        """
        if requested:
            return str(requested)
        folder = new_result_folder(self.project_folder, self.kind)
        self.temp_dir = str(folder)
        return str(folder / file_name)

    def work(self):
        """Do the task's work in the worker thread and return its result (each task defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define work()")

    def abandon(self):
        """Cancel and drop the callbacks, for when their owner (the dock) goes away.

        A result that is already complete stays on disk but is not added to the project.
        """
        self.on_success = _ignore
        self.on_finished = None
        self.cancel()

    def run(self):
        """Worker thread: run :meth:`work`, keep its result or the error message."""
        try:
            self.result = self.work()
        except RunCanceled:
            self.canceled = True
            self._clean_up()
            return True  # a cancel is not a failure: the task manager lists it as finished
        except Exception as exc:  # noqa: BLE001 - a worker exception must reach the user, not the log only.
            self.error = _failure_text(exc)
            if not isinstance(exc, PluginError):
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, Qgis.Critical)
            self._clean_up()
            return False
        return True

    def finished(self, result):
        """Main thread: hand over the result, or report the cancel or the error."""
        try:
            if result and not self.canceled:
                self.on_success(self.result)
            elif self.error is not None:
                self.notifier.error(self.title, f"{self.description()} failed: {self.error}")
            else:
                self._clean_up()
                self.notifier.info(self.title, f"{self.description()} was canceled; nothing was written.")
        except Exception as exc:  # noqa: BLE001 - a callback error is shown instead of lost in the log.
            self.error = _failure_text(exc)
            QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, Qgis.Critical)
            self.notifier.error(self.title, f"{self.description()}: adding the result failed: {self.error}")
        finally:
            if self.on_finished is not None:
                self.on_finished(self)

    def _clean_up(self):
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None


class EvaluationTask(_CoreTask):
    """Evaluate a prediction layer against a reference layer and export the run.

    Parameters
    ----------
    request : EvaluationRequest
    core : object
        Has ``evaluate_layers`` and ``export_run`` (:mod:`polytopo.plugin.runs`).
    on_success : callable
        ``on_success(EvaluationResult)`` in the main thread.
    notifier : object
    on_finished : callable, optional
    """

    kind = "evaluation"

    def __init__(self, request, core, on_success, notifier, on_finished=None):
        super().__init__(f"PolyTopo evaluation of {request.prediction.name}", on_success, notifier, on_finished)
        self.request = request
        self.core = core

    def work(self):
        """Evaluate and export; return an :class:`EvaluationResult`."""
        request = self.request
        gpkg_path = self.output_path(request.gpkg_path, "evaluation.gpkg")
        report_dir = str(report_folder(gpkg_path))
        work, write = work_and_write(self.feedback)
        run = self.core.evaluate_layers(
            request.prediction.open(), request.reference.open(), pixel_size=request.pixel_size,
            profile=request.profile, score_field=request.score_field, default_score=request.default_score,
            feedback=work, transform_context=request.prediction.transform_context, workers=request.workers,
            scheduler=request.scheduler)
        paths = self.core.export_run(run, gpkg_path, report_dir, overwrite=request.overwrite, feedback=write)
        return EvaluationResult(run, dict(paths), gpkg_path, request)


class VectorizeTask(_CoreTask):
    """Run an ONNX model over a raster layer into a polygon GeoPackage.

    Parameters
    ----------
    request : VectorizeRequest
    core : object
        Has ``vectorize_layer`` (:mod:`polytopo.plugin.runs`).
    on_success : callable
        ``on_success(VectorizeResult)`` in the main thread.
    notifier : object
    on_finished : callable, optional
    """

    kind = "vectorization"

    def __init__(self, request, core, on_success, notifier, on_finished=None):
        super().__init__(f"PolyTopo vectorization of {request.raster.name}", on_success, notifier, on_finished)
        self.request = request
        self.core = core

    def work(self):
        """Vectorize; return a :class:`VectorizeResult`."""
        request = self.request
        output_path = self.output_path(request.output_path, "polygons.gpkg")
        run = self.core.vectorize_layer(
            request.raster.open(), request.model_path, provider=request.provider, extent=request.extent,
            bands=request.bands, tile_px=request.tile_px, overlap_px=request.overlap_px, batch=request.batch,
            threshold=request.threshold, min_area_px=request.min_area_px, min_hole_area_px=request.min_hole_area_px,
            aoi_layer=None if request.aoi is None else request.aoi.open(), output_path=output_path, feedback=self.feedback, overwrite=request.overwrite,
            transform_context=request.raster.transform_context)
        return VectorizeResult(run, request)


class InstallDependenciesTask(QgsTask):
    """pip-install the missing packages of a dependency report, in the background.

    Parameters
    ----------
    report : polytopo.plugin.setup.dependencies.DependencyReport
    on_done : callable
        ``on_done(InstallOutcome)`` in the main thread, whatever the outcome.
    install : callable
        :func:`polytopo.plugin.setup.dependencies.install_missing` or a stand-in.
    names : list of str, optional
        The packages named in the task's description; defaults to the report's missing ones.
    """

    def __init__(self, report, on_done, install=dependencies.install_missing, names=None):
        names = report.missing_names() if names is None else names
        super().__init__("PolyTopo: installing " + ", ".join(names), QgsTask.Flags())
        self.report = report
        self.on_done = on_done
        self.install = install
        self.outcome = None

    def run(self):
        """Worker thread: run pip."""
        self.outcome = self.install(self.report)
        return self.outcome.ok

    def finished(self, result):
        """Main thread: hand the outcome over."""
        outcome = self.outcome or dependencies.InstallOutcome(
            False, (), self.report.folder, "The install was stopped before pip ran; start it again.")
        self.on_done(outcome)
