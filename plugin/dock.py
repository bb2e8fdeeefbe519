"""The PolyTopo dock: vectorize a raster with an ONNX model, evaluate polygons, inspect errors.

Built in code (no ``.ui`` file). Part *Vectorize* picks a raster layer, a model
file (its card is summarised: family, ground sampling distance, classes,
licence), an execution provider (with what this onnxruntime really offers)
and an extent. Part *Evaluate* picks a prediction layer and its score field, a
reference layer, the pixel size, the profile and the output GeoPackage; after a
run it shows the headline metrics and one row per prediction, and selecting a
row zooms the map to the feature and explains it ring by ring.

Long work runs in :mod:`.tasks` through the task manager, so the interface
never blocks. Every collaborator is injected (the core functions, the
interface or None, the map canvas, the task manager, the notifier, the card
reader and the provider probe), so the dock is built and driven offscreen in
tests.
"""

import importlib.metadata
import math
import time
from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsCoordinateTransform,
    QgsCsException,
    QgsFieldProxyModel,
    QgsMapLayerProxyModel,
    QgsProject,
    QgsRectangle,
    QgsVectorLayer,
)
from qgis.gui import QgsDockWidget, QgsFieldComboBox, QgsFileWidget, QgsMapLayerComboBox
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QStandardItem, QStandardItemModel
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..evaluator.params import PROFILES
from ..models import PROVIDER_CHOICES, ModelsError, read_card
from ..models.session import import_onnxruntime
from .errors import RunFailedError
from .tasks import (
    EvaluationRequest,
    EvaluationTask,
    LayerSnapshot,
    LogNotifier,
    MessageBarNotifier,
    VectorizeRequest,
    VectorizeTask,
)

__all__ = [
    "FEATURE_COLUMNS",
    "SUMMARY_METRICS",
    "PolyTopoDock",
    "card_summary",
    "probe_providers",
    "provider_availability",
    "ring_diagnosis",
]

#: Headline metrics of the summary table, in display order.
SUMMARY_METRICS = ("AP50", "E-BIoU", "Hole-F1", "Topo-EM")

#: Per-feature table columns: (header, prediction record field).
FEATURE_COLUMNS = (
    ("id", "pred_id"),
    ("error class", "error_class"),
    ("pred holes", "pred_holes"),
    ("ref holes", "ref_holes"),
    ("Hole-F1", "hole_f1"),
    ("Topo-EM", "topo_em"),
    ("IoU", "iou"),
)

_CUDA = "CUDAExecutionProvider"
_RECORD_ROLE = Qt.UserRole + 1
_ZOOM_MARGIN = 0.25
_LAYER_EXTENT, _CANVAS_EXTENT = "layer", "canvas"


def _format(value, digits=3):
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def card_summary(path, read=read_card):
    """Describe the model card of an ONNX file in one line.

    Parameters
    ----------
    path : str
        ONNX file; empty for none.
    read : callable
        ``read(path) -> ModelCard`` (:func:`polytopo.models.read_card`).

    Returns
    -------
    text : str
        ``family · GSD · classes · licence``, or the reason the card is unusable.
    ok : bool
        Whether the model can be run.
    """
    if not path:
        return "Choose an ONNX model file.", False
    try:
        card = read(path)
    except ModelsError as exc:
        return f"This model cannot be used: {exc}", False
    gsd = ("native raster resolution" if card.resolution_cm_per_px is None
           else f"GSD {card.resolution_cm_per_px:g} cm/px")
    classes = "classes: " + ", ".join(card.class_names) if card.class_names else "no class names"
    licence = card.licence or "licence not stated"
    return f"{card.family} family · {gsd} · {classes} · {licence}", True


def _gpu_package_installed():
    try:
        importlib.metadata.distribution("onnxruntime-gpu")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def probe_providers():
    """Return what the installed onnxruntime offers.

    Returns
    -------
    available : list of str or None
        ``onnxruntime.get_available_providers()``; None without onnxruntime.
    gpu_package : bool
        Whether the ``onnxruntime-gpu`` distribution is installed.
    """
    try:
        onnxruntime = import_onnxruntime()
    except ModelsError:
        return None, _gpu_package_installed()
    return list(onnxruntime.get_available_providers()), _gpu_package_installed()


def provider_availability(available, gpu_package):
    """Say which execution providers can run, and why CUDA cannot when it cannot.

    Parameters
    ----------
    available : list of str or None
        ``onnxruntime.get_available_providers()``; None when onnxruntime is missing.
    gpu_package : bool
        Whether ``onnxruntime-gpu`` is installed.

    Returns
    -------
    str

    Examples
    --------
    >>> provider_availability(["CPUExecutionProvider"], False)
    'Available: CPU. CUDA unavailable: onnxruntime-gpu not installed.'
    >>> provider_availability(["CUDAExecutionProvider", "CPUExecutionProvider"], True)
    'Available: CUDA, CPU. auto runs on CUDA.'
    """
    if available is None:
        return "onnxruntime is not installed: vectorization cannot run (install it from the dependency message)."
    names = ", ".join(name.replace("ExecutionProvider", "") for name in available)
    if _CUDA in available:
        return f"Available: {names}. auto runs on CUDA."
    if gpu_package:
        return (f"Available: {names}. CUDA unavailable: no CUDA provider in this onnxruntime-gpu build "
                "(its CUDA libraries did not load).")
    return f"Available: {names}. CUDA unavailable: onnxruntime-gpu not installed."


def _pair_of(outcome, index):
    matches = [k for k, p in enumerate(outcome.pairs.pred_index) if int(p) == index]
    return matches[0] if matches else None


def ring_diagnosis(evaluation, index):
    """Explain one prediction ring by ring: exterior BIoU and each hole matched, extra or missing.

    Parameters
    ----------
    evaluation : polytopo.evaluator.Evaluation
    index : int
        Position of the prediction in ``evaluation.records["predictions"]``.

    Returns
    -------
    str
        Several lines; BIoU values are unitless, γ is the profile's ring-match threshold.
    """
    record = evaluation.records["predictions"][index]
    outcome = evaluation.outcome
    gamma = outcome.params.ring_match_threshold
    lines = [f"Prediction {record['pred_id']}: {record['error_class']}"]
    if record["invalid_reason"]:
        lines.append(f"Invalid: {record['invalid_reason']}")
    k = _pair_of(outcome, index)
    holes = outcome.pred_table.hole_range(index)
    if k is None:
        lines.append("Matched no reference polygon (IoU below the matching threshold).")
        lines += [f"Hole {h - holes.start + 1}: extra (its polygon is unmatched)" for h in holes]
        return "\n".join(lines)
    gt_index = int(outcome.pairs.gt_index[k])
    gt_holes = outcome.gt_table.hole_range(gt_index)
    lines.append(f"Matched reference {record['matched_ref_id']} with IoU {_format(record['iou'])}.")
    verdict = "matched" if bool(outcome.exterior_matched[k]) else "not matched"
    lines.append(f"Exterior ring: BIoU {_format(record['e_biou'])} ({verdict}, γ = {gamma:g}).")
    found = outcome.pairs.holes
    in_pair = [m for m, pair in enumerate(found.pair) if int(pair) == k]
    matched_pred = {int(found.pred_hole[m]): (int(found.gt_hole[m]), float(found.biou[m])) for m in in_pair}
    matched_gt = {gt for gt, _ in matched_pred.values()}
    for hole in holes:
        if hole in matched_pred:
            gt_hole, biou = matched_pred[hole]
            lines.append(f"Hole {hole - holes.start + 1}: matched reference hole "
                         f"{gt_hole - gt_holes.start + 1}, BIoU {biou:.3f}")
        else:
            lines.append(f"Hole {hole - holes.start + 1}: extra (no reference hole with BIoU above γ)")
    lines += [f"Reference hole {hole - gt_holes.start + 1}: missing (no predicted hole with BIoU above γ)"
              for hole in gt_holes if hole not in matched_gt]
    if not holes and not gt_holes:
        lines.append("No holes on either side.")
    return "\n".join(lines)


class PolyTopoDock(QgsDockWidget):
    """The dock widget.

    Parameters
    ----------
    core : object
        ``evaluate_layers``, ``export_run``, ``add_run_to_project`` and
        ``vectorize_layer`` (:mod:`polytopo.plugin.runs`).
    iface : qgis.gui.QgisInterface or None
        Gives the map canvas and the message bar when they are not passed.
    canvas : qgis.gui.QgsMapCanvas, optional
        Map canvas to zoom; None without a canvas (no zooming, no canvas extent).
    task_manager : qgis.core.QgsTaskManager, optional
        Defaults to ``QgsApplication.taskManager()``.
    notifier : object, optional
        ``info/warning/error(title, text)``; defaults to the message bar of
        ``iface``, or the message log without one.
    read_card : callable, optional
        ``read_card(path) -> ModelCard``.
    providers : callable, optional
        ``providers() -> (available, gpu_package)``, see :func:`probe_providers`.
    parent : QWidget, optional

    Notes
    -----
    The layer combo boxes list the layers of ``QgsProject.instance()`` (QGIS
    3.22 combo boxes cannot follow another project), and results are added
    there too.
    """

    def __init__(self, core, iface=None, canvas=None, task_manager=None, notifier=None,
                 read_card=read_card, providers=probe_providers, parent=None):
        super().__init__("PolyTopo", parent)
        self.setObjectName("PolyTopoDock")
        self.core = core
        self.iface = iface
        self.canvas = canvas if canvas is not None else (iface.mapCanvas() if iface is not None else None)
        self.task_manager = task_manager if task_manager is not None else QgsApplication.taskManager()
        if notifier is None:
            notifier = MessageBarNotifier(iface.messageBar()) if iface is not None else LogNotifier()
        self.notifier = notifier
        self.read_card = read_card
        self.providers = providers
        self.evaluation_task = None
        self.vectorize_task = None
        self.last_result = None
        self.added_layers = []
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self._vectorize_group())
        layout.addWidget(self._evaluate_group())
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        self.setWidget(scroll)
        self.refresh_providers()
        self._update_card()

    # ----- Vectorize -------------------------------------------------------------------------

    def _vectorize_group(self):
        group = QGroupBox("Vectorize")
        form = QFormLayout(group)
        self.raster_combo = QgsMapLayerComboBox()
        self.raster_combo.setFilters(QgsMapLayerProxyModel.RasterLayer)
        form.addRow("Raster layer", self.raster_combo)
        self.model_file = QgsFileWidget()
        self.model_file.setFilter("ONNX models (*.onnx)")
        self.model_file.fileChanged.connect(self._update_card)
        form.addRow("Model file", self.model_file)
        self.card_label = QLabel()
        self.card_label.setWordWrap(True)
        form.addRow("Model card", self.card_label)
        self.provider_combo = QComboBox()
        self.provider_combo.addItems(list(PROVIDER_CHOICES))
        form.addRow("Provider", self.provider_combo)
        self.provider_label = QLabel()
        self.provider_label.setWordWrap(True)
        form.addRow("", self.provider_label)
        self.extent_combo = QComboBox()
        self.extent_combo.addItem("Layer extent", _LAYER_EXTENT)
        self.extent_combo.addItem("Map canvas extent", _CANVAS_EXTENT)
        if self.canvas is None:
            self.extent_combo.model().item(1).setEnabled(False)
        form.addRow("Extent", self.extent_combo)
        self.vector_output = QgsFileWidget()
        self.vector_output.setStorageMode(QgsFileWidget.SaveFile)
        self.vector_output.setFilter("GeoPackage (*.gpkg)")
        self.vector_output.lineEdit().setPlaceholderText("[temporary file]")
        form.addRow("Output", self.vector_output)
        self.vector_overwrite = QCheckBox("Replace an existing output")
        form.addRow("", self.vector_overwrite)
        self.vectorize_button = QPushButton("Run vectorization")
        self.vectorize_button.clicked.connect(self.start_vectorization)
        self.vectorize_cancel = QPushButton("Cancel")
        self.vectorize_cancel.setEnabled(False)
        self.vectorize_cancel.clicked.connect(self.cancel_vectorization)
        self.vectorize_progress = QProgressBar()
        self.vectorize_progress.setRange(0, 100)
        form.addRow(self._row(self.vectorize_button, self.vectorize_cancel, self.vectorize_progress))
        return group

    def refresh_providers(self):
        """Update the label that says which execution providers this onnxruntime offers."""
        self.provider_label.setText(provider_availability(*self.providers()))

    def _update_card(self):
        text, self.model_ok = card_summary(self.model_file.filePath(), self.read_card)
        self.card_label.setText(text)

    def _vectorize_extent(self, raster):
        if self.extent_combo.currentData() != _CANVAS_EXTENT or self.canvas is None:
            return None
        transform = QgsCoordinateTransform(self.canvas.mapSettings().destinationCrs(), raster.crs(),
                                           QgsProject.instance().transformContext())
        return transform.transformBoundingBox(self.canvas.extent())

    def start_vectorization(self):
        """Start vectorizing the chosen raster with the chosen model (returns at once).

        Returns
        -------
        VectorizeTask or None
            The started task; None when an input is missing (the notifier says which).
        """
        raster = self.raster_combo.currentLayer()
        if raster is None:
            return self._refuse("Expected a raster layer to vectorize but none is chosen; add one to the project.")
        if not self.model_ok:
            return self._refuse(f"Expected a usable ONNX model but got: {self.card_label.text()}")
        try:
            extent = self._vectorize_extent(raster)
        except QgsCsException as exc:
            return self._refuse(f"Expected the map canvas extent to convert to the raster CRS but it does not "
                                f"({exc}); vectorize the layer extent instead.")
        context = QgsProject.instance().transformContext()
        request = VectorizeRequest(
            LayerSnapshot.of(raster, context), self.model_file.filePath(), self.provider_combo.currentText(),
            extent, self.vector_output.filePath() or None, self.vector_overwrite.isChecked(),
            f"PolyTopo vectorization {time.strftime('%H:%M:%S')}: {raster.name()}")
        task = VectorizeTask(request, self.core, self._vectorized, self.notifier, self._vectorize_done)
        self._start(task, self.vectorize_button, self.vectorize_cancel, self.vectorize_progress)
        self.vectorize_task = task
        return task

    def cancel_vectorization(self):
        """Cancel the running vectorization, if any."""
        if self.vectorize_task is not None:
            self.vectorize_task.cancel()

    def _vectorized(self, result):
        path = str(result["path"])
        layer = QgsVectorLayer(path, Path(path).stem, "ogr")
        if not layer.isValid():
            raise RunFailedError(f"Expected the vectorization output {path!r} to open as a vector layer "
                             "but it does not; open it from the Browser to see why.")
        project = QgsProject.instance()
        group = project.layerTreeRoot().insertGroup(0, result["request"].group_name)
        project.addMapLayer(layer, False)
        group.addLayer(layer)
        self.added_layers = [layer]
        self.notifier.info("PolyTopo", f"Vectorized {result['request'].raster.name} into {result['features']} "
                           f"polygons on {result.get('provider_report') or result['provider_used']}.")

    def _vectorize_done(self, task):
        self._finish(self.vectorize_button, self.vectorize_cancel, self.vectorize_progress)
        self.vectorize_task = None

    # ----- Evaluate --------------------------------------------------------------------------

    def _evaluate_group(self):
        group = QGroupBox("Evaluate")
        form = QFormLayout(group)
        self.prediction_combo = QgsMapLayerComboBox()
        self.prediction_combo.setFilters(QgsMapLayerProxyModel.PolygonLayer)
        form.addRow("Prediction layer", self.prediction_combo)
        self.score_field = QgsFieldComboBox()
        self.score_field.setFilters(QgsFieldProxyModel.Numeric)
        self.score_field.setAllowEmptyFieldName(True)
        self.score_field.setLayer(self.prediction_combo.currentLayer())
        self.prediction_combo.layerChanged.connect(self.score_field.setLayer)
        form.addRow("Score field", self.score_field)
        self.reference_combo = QgsMapLayerComboBox()
        self.reference_combo.setFilters(QgsMapLayerProxyModel.PolygonLayer)
        form.addRow("Reference layer", self.reference_combo)
        self.pixel_size = QDoubleSpinBox()
        self.pixel_size.setDecimals(8)
        self.pixel_size.setRange(1e-8, 1e6)
        self.pixel_size.setValue(1.0)
        self.pixel_size.setToolTip("Ground sampling distance of the imagery, map units of the reference "
                                   "layer per pixel")
        self.pixel_raster = QgsMapLayerComboBox()
        self.pixel_raster.setFilters(QgsMapLayerProxyModel.RasterLayer)
        self.pixel_raster.setAllowEmptyLayer(True)
        self.pixel_raster.setCurrentIndex(0)
        self.pixel_raster.setToolTip("Take the pixel size from this raster layer")
        self.pixel_raster.layerChanged.connect(self._take_pixel_size)
        form.addRow("Pixel size (map units)", self._row(self.pixel_size, QLabel("from"), self.pixel_raster))
        self.profile_combo = QComboBox()
        self.profile_combo.addItems(list(PROFILES))
        form.addRow("Profile", self.profile_combo)
        self.gpkg_output = QgsFileWidget()
        self.gpkg_output.setStorageMode(QgsFileWidget.SaveFile)
        self.gpkg_output.setFilter("GeoPackage (*.gpkg)")
        self.gpkg_output.lineEdit().setPlaceholderText("[temporary file]")
        form.addRow("Output GeoPackage", self.gpkg_output)
        self.overwrite = QCheckBox("Replace existing outputs")
        form.addRow("", self.overwrite)
        self.evaluate_button = QPushButton("Run evaluation")
        self.evaluate_button.clicked.connect(self.start_evaluation)
        self.evaluate_cancel = QPushButton("Cancel")
        self.evaluate_cancel.setEnabled(False)
        self.evaluate_cancel.clicked.connect(self.cancel_evaluation)
        self.evaluate_progress = QProgressBar()
        self.evaluate_progress.setRange(0, 100)
        form.addRow(self._row(self.evaluate_button, self.evaluate_cancel, self.evaluate_progress))
        self.summary_table = QTableWidget(len(SUMMARY_METRICS), 1)
        self.summary_table.setHorizontalHeaderLabels(["value"])
        self.summary_table.setVerticalHeaderLabels(list(SUMMARY_METRICS))
        self.summary_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        form.addRow("Summary", self.summary_table)
        self.feature_model = QStandardItemModel(0, len(FEATURE_COLUMNS))
        self.feature_model.setHorizontalHeaderLabels([header for header, _ in FEATURE_COLUMNS])
        self.feature_table = QTableView()
        self.feature_table.setModel(self.feature_model)
        self.feature_table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.feature_table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.feature_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.feature_table.setSortingEnabled(True)
        self.feature_table.selectionModel().currentRowChanged.connect(self._row_selected)
        form.addRow(self.feature_table)
        self.diagnosis = QPlainTextEdit()
        self.diagnosis.setReadOnly(True)
        self.diagnosis.setPlaceholderText("Select a feature to see its rings.")
        form.addRow(self.diagnosis)
        return group

    def _take_pixel_size(self, layer):
        if layer is not None:
            self.pixel_size.setValue(layer.rasterUnitsPerPixelX())

    def start_evaluation(self):
        """Start evaluating the chosen prediction layer against the reference layer (returns at once).

        Returns
        -------
        EvaluationTask or None
            The started task; None when an input is missing (the notifier says which).
        """
        prediction, reference = self.prediction_combo.currentLayer(), self.reference_combo.currentLayer()
        if prediction is None or reference is None:
            return self._refuse("Expected a prediction layer and a reference layer but at least one is not "
                                "chosen; add polygon layers to the project.")
        if prediction.id() == reference.id():
            return self._refuse("Expected two different layers but the prediction layer is also the reference "
                                "layer; choose the reference polygons.")
        context = QgsProject.instance().transformContext()
        request = EvaluationRequest(
            LayerSnapshot.of(prediction, context), LayerSnapshot.of(reference, context),
            self.pixel_size.value(), self.profile_combo.currentText(), self.score_field.currentField() or None,
            None, self.gpkg_output.filePath() or None, self.overwrite.isChecked(),
            f"PolyTopo evaluation {time.strftime('%H:%M:%S')}: {prediction.name()} vs {reference.name()}")
        task = EvaluationTask(request, self.core, self._evaluated, self.notifier, self._evaluation_done)
        self._start(task, self.evaluate_button, self.evaluate_cancel, self.evaluate_progress)
        self.evaluation_task = task
        return task

    def cancel_evaluation(self):
        """Cancel the running evaluation, if any."""
        if self.evaluation_task is not None:
            self.evaluation_task.cancel()

    def _evaluated(self, result):
        self.added_layers = list(self.core.add_run_to_project(result.gpkg_path, QgsProject.instance(),
                                                              result.request.group_name))
        self.show_result(result)
        metrics = result.run.evaluation.summary["metrics"]
        self.notifier.info("PolyTopo", f"Evaluated {result.request.prediction.name}: Hole-F1 "
                           f"{_format(metrics.get('Hole-F1'))}, Topo-EM {_format(metrics.get('Topo-EM'))}; "
                           f"written to {result.gpkg_path}.")

    def _evaluation_done(self, task):
        self._finish(self.evaluate_button, self.evaluate_cancel, self.evaluate_progress)
        self.evaluation_task = None

    def show_result(self, result):
        """Fill the summary and per-feature tables from an :class:`~.tasks.EvaluationResult`."""
        self.last_result = result
        metrics = result.run.evaluation.summary["metrics"]
        for row, name in enumerate(SUMMARY_METRICS):
            self.summary_table.setItem(row, 0, QTableWidgetItem(_format(metrics.get(name))))
        self.feature_table.setSortingEnabled(False)
        self.feature_model.removeRows(0, self.feature_model.rowCount())
        for index, record in enumerate(result.run.evaluation.records["predictions"]):
            items = []
            for _, field in FEATURE_COLUMNS:
                item = QStandardItem()
                value = record[field]
                if isinstance(value, float) and not math.isnan(value):
                    item.setData(round(value, 3), Qt.DisplayRole)
                else:
                    item.setData(value if isinstance(value, (int, str)) else _format(value), Qt.DisplayRole)
                item.setData(index, _RECORD_ROLE)
                items.append(item)
            self.feature_model.appendRow(items)
        self.feature_table.setSortingEnabled(True)
        self.diagnosis.clear()

    def _row_selected(self, current, previous):
        if not current.isValid() or self.last_result is None:
            return
        index = self.feature_model.item(current.row(), 0).data(_RECORD_ROLE)
        evaluation = self.last_result.run.evaluation
        self.diagnosis.setPlainText(ring_diagnosis(evaluation, index))
        self.zoom_to_record(index)

    def zoom_to_record(self, index):
        """Zoom the map canvas to prediction ``index`` of the last run; no-op without a canvas.

        Returns
        -------
        qgis.core.QgsRectangle or None
            The new canvas extent (canvas CRS), None when nothing was zoomed.
        """
        run = self.last_result.run
        geometry = run.evaluation.records["predictions"][index]["geometry"]
        if self.canvas is None or geometry is None or geometry.is_empty:
            return None
        min_x, min_y, max_x, max_y = run.frame.to_map(geometry).bounds
        rectangle = QgsRectangle(min_x, min_y, max_x, max_y)
        transform = QgsCoordinateTransform(run.crs, self.canvas.mapSettings().destinationCrs(),
                                           QgsProject.instance().transformContext())
        try:
            rectangle = transform.transformBoundingBox(rectangle)
        except QgsCsException as exc:
            self.notifier.warning("PolyTopo", f"Cannot zoom to feature: its extent does not convert to the "
                                  f"map CRS ({exc}).")
            return None
        margin = _ZOOM_MARGIN * max(rectangle.width(), rectangle.height(), 1e-9)
        rectangle.grow(margin)
        self.canvas.setExtent(rectangle)
        self.canvas.refresh()
        return rectangle

    # ----- Shared ----------------------------------------------------------------------------

    @staticmethod
    def _row(*widgets):
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget)
        return row

    def _refuse(self, message):
        self.notifier.warning("PolyTopo", message)
        return None

    def _start(self, task, run_button, cancel_button, progress):
        run_button.setEnabled(False)
        cancel_button.setEnabled(True)
        progress.setValue(0)
        task.progressChanged.connect(lambda value: progress.setValue(int(value)))
        self.task_manager.addTask(task)

    @staticmethod
    def _finish(run_button, cancel_button, progress):
        run_button.setEnabled(True)
        cancel_button.setEnabled(False)
        progress.setValue(0)

    def cancel_all(self):
        """Cancel every running task of the dock; their outcome is still reported."""
        self.cancel_evaluation()
        self.cancel_vectorization()

    def abandon_tasks(self):
        """Cancel every running task and detach it from the dock, before the dock is deleted."""
        for task in (self.evaluation_task, self.vectorize_task):
            if task is not None:
                task.abandon()
        self.evaluation_task = self.vectorize_task = None
