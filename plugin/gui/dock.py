"""The PolyTopo dock: vectorize a raster with an ONNX model, evaluate polygons, inspect errors.

Built in code (no ``.ui`` file: the widgets of both parts come from
:mod:`polytopo.plugin.gui.dock_forms`, the dock wires them to its handlers), one scroll
area usable from 280 px wide (long text wraps; band boxes and button pairs wrap into
rows, :mod:`polytopo.plugin.gui.wrap_layout`). Part *Vectorize* picks a raster layer, a
bundled model (with its held-out scores) or another model file (its card is
summarised: family, ground sampling distance, classes, licence), the raster band of
each model channel, an execution provider
(with what this onnxruntime really offers), the extent and, under *Advanced*,
tiling, batch, the segmentation threshold and the minimum polygon and hole areas
(each empty field shows the chosen model card's value). Part *Evaluate* picks a prediction layer and its score field, a
reference layer (never the same), the pixel size (taken from the raster the
prediction came from, shown with its unit and its size in metres, refused
outside 1 cm–10 m), the profile, under *Advanced* the Dask workers or scheduler
(:mod:`polytopo.plugin.gui.cluster_fields`) and the output GeoPackage; after a run it shows
the headline metrics, *Open report*, one row per prediction, and *Previous* /
*Next* through one error class; selecting a row selects, flashes and zooms to
the feature and explains it ring by ring. A finished vectorization becomes the
prediction of the next evaluation. A new project clears the results; a saved
project or an evaluation GeoPackage opened again brings them back
(:mod:`polytopo.plugin.gui.restored_run`).

Long work runs in :mod:`polytopo.plugin.gui.tasks` through the task manager, so the interface
never blocks; progress shows elapsed time and time left, *Cancel* says
"Canceling…" at once, and the bar keeps the outcome ("Done in m:ss", "Canceled
after m:ss", "Failed after m:ss"). Every check that needs no work (layers, bands, pixel
size, outputs) runs before a task starts. Every collaborator is injected (the
core functions, the interface or None, the map canvas, the task manager, the
notifier, the card reader, the provider probe, the channel probe and the URL
opener), so the dock is built and driven offscreen in tests.
"""

import dataclasses
import html
import math
import time
from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsCsException,
    QgsExpression,
    QgsFeatureRequest,
    QgsProject,
    QgsRectangle,
    QgsVectorLayer,
)
from qgis.gui import QgsDockWidget
from qgis.PyQt.QtCore import Qt, QUrl
from qgis.PyQt.QtGui import QColor, QDesktopServices, QStandardItem
from qgis.PyQt.QtWidgets import QComboBox, QScrollArea, QTableWidgetItem, QVBoxLayout, QWidget

from ...evaluator.tables.error_classes import MATCHED_OK
from ...evaluator.tables.metric_table import KEY_METRICS, metric, metric_names
from ...models import read_card
from ...models.pipeline import decoding_values
from ..errors import LayerInputError, PluginError, RunFailedError
from ..runs.layer_choice import (
    check_distinct_layers,
    default_evaluation_layers,
    polygon_layers,
    source_raster,
    unique_layer_name,
)
from .dock_forms import (
    CANCEL_TEXT,
    CANVAS_EXTENT,
    CARD_VALUE,
    DEGREE_DECIMALS,
    LINEAR_DECIMALS,
    MASK_AREA,
    OTHER_MODEL,
    SELECTED_AREA,
    advanced_vectorize_form,
    evaluate_form,
    vectorize_form,
)
from .dock_widgets import narrow, spin_value
from .evaluation_text import format_value, ring_diagnosis
from .model_choice import card_summary, model_channels, probe_providers, provider_availability
from .model_install import ModelInstaller
from ..runs.output_check import check_output, report_folder
from ..runs.export import GEOPACKAGE_LAYERS as EVALUATION_LAYERS
from ..runs.project_layers import LAYER_TITLES, run_group_name
from ..runs.raster_pixel import check_pixel_size, pixel_size_unit, raster_pixel_size
from .restored_run import RestoredResult, attribute_diagnosis, restore_from_project
from .result_folders import mark_kept, temporary_result_folders
from .tasks import (
    EvaluationRequest,
    EvaluationTask,
    LayerSnapshot,
    LogNotifier,
    MessageBarNotifier,
    VectorizeRequest,
    VectorizeTask,
)
from ..runs.vectorize import SCORE_FIELD, check_raster_crs, resolve_bands

__all__ = [
    "FEATURE_COLUMNS",
    "SUMMARY_METRICS",
    "PolyTopoDock",
    "step_row",
]

#: Key metrics of the summary table, in the metric table's order.
SUMMARY_METRICS = KEY_METRICS

#: Per-feature table columns: (header, prediction record field).
FEATURE_COLUMNS = (
    ("id", "pred_id"),
    ("error class", "error_class"),
    ("pred holes", "pred_holes"),
    ("ref holes", "ref_holes"),
    *((name, metric(name).field) for name in metric_names("Hole-F1", "Topo-EM", "IoU")),
)

_MESSAGE_METRICS = metric_names("Hole-F1", "Topo-EM")
"""Scores named in the message bar when an evaluation ends."""
_RECORD_ROLE = Qt.UserRole + 1
_ZOOM_MARGIN = 0.25
_FLASHES, _FLASH_MS = 2, 300


def step_row(classes, current, error_class, step):
    """The next (``step`` = 1) or previous (-1) row of ``error_class`` after ``current``, wrapping round.

    Parameters
    ----------
    classes : sequence of str
        Error class of each table row, in display order.
    current : int
        The selected row, -1 for none.
    error_class : str
    step : {1, -1}

    Returns
    -------
    int or None
        None when no row has that class.

    Examples
    --------
    >>> step_row(["ok", "extra hole", "ok", "extra hole"], 1, "extra hole", 1)
    3
    >>> step_row(["ok", "extra hole", "ok", "extra hole"], 1, "extra hole", -1)
    3
    >>> step_row(["ok"], -1, "invalid", 1) is None
    True
    """
    count = len(classes)
    start = current if current >= 0 else (-1 if step > 0 else count)
    for offset in range(1, count + 1):
        row = (start + step * offset) % count
        if classes[row] == error_class:
            return row
    return None


def _elapsed_text(seconds):
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes}:{seconds:02d}"


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
    channels : callable, optional
        ``channels(path) -> int or None``, the model's input channels
        (:func:`polytopo.plugin.gui.model_choice.model_channels`).
    open_url : callable, optional
        ``open_url(QUrl)``, opens the report (``QDesktopServices.openUrl``).
    parent : QWidget, optional

    Notes
    -----
    The layer combo boxes list the layers of ``QgsProject.instance()`` (QGIS
    3.22 combo boxes cannot follow another project), and results are added
    there too.
    """

    def __init__(self, core, iface=None, canvas=None, task_manager=None, notifier=None,
                 read_card=read_card, providers=probe_providers, channels=model_channels,
                 open_url=QDesktopServices.openUrl, parent=None):
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
        self.channels = channels
        self.open_url = open_url
        self.evaluation_task = None
        self.vectorize_task = None
        self.last_result = None
        self.added_layers = []
        self.model_ok = False
        self.card = None
        self._run_started = {}  # progress bar → time.monotonic() at the start of its run
        advanced = advanced_vectorize_form()
        vectorize = vectorize_form(
            advanced.advanced_group,
            lambda combo: ModelInstaller(combo, self.task_manager, self.notifier, self._update_card),
            has_canvas=self.canvas is not None)
        evaluate = evaluate_form(SUMMARY_METRICS, [header for header, _ in FEATURE_COLUMNS])
        for form in (vectorize, advanced, evaluate):
            self._adopt(form)
        self.band_combos = []  # the band box's combo boxes, one per model channel
        self._connect_vectorize()
        self._connect_evaluate()
        self._show_mask()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.vectorize_group)
        layout.addWidget(self.evaluate_group, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)  # never needed from 280 px on
        scroll.setWidget(body)
        self.setWidget(scroll)
        self.refresh_providers()
        self._update_card()
        self._choose_default_layers()
        self._adding_run = False
        project = QgsProject.instance()
        project.cleared.connect(self.clear_result)
        project.readProject.connect(self.restore_saved_run)
        project.readProject.connect(self._choose_default_layers)
        project.layersAdded.connect(self._layers_added)
        project.legendLayersAdded.connect(self._keep_layers_apart)  # the layer tree has the new layers then
        project.writeProject.connect(self._warn_temporary_layers)

    def _adopt(self, form):
        """Keep each widget of a built form as the dock attribute its field names (``dock.model_combo``, …)."""
        for field in dataclasses.fields(form):
            setattr(self, field.name, getattr(form, field.name))

    # ----- Vectorize -------------------------------------------------------------------------

    def _connect_vectorize(self):
        self.raster_combo.layerChanged.connect(self._update_bands)
        self.model_combo.currentIndexChanged.connect(self._update_card)
        self.model_file.fileChanged.connect(self._model_file_chosen)
        self.extent_combo.currentIndexChanged.connect(self._show_mask)
        self.vectorize_button.clicked.connect(self.start_vectorization)
        self.vectorize_cancel.clicked.connect(self.cancel_vectorization)

    def _show_card_decoding(self):
        """Show the chosen card's threshold and minimum areas in the empty Advanced fields."""
        values = decoding_values(self.card) if self.card is not None else None
        threshold = None if values is None else values["threshold"]
        usable = values is None or threshold is not None
        if not usable:
            self.seg_threshold.setValue(self.seg_threshold.minimum())
            text = "not used"
        elif isinstance(threshold, list):
            text = "card's per class"
        else:
            text = CARD_VALUE if threshold is None else f"card's: {threshold:g}"
        self.seg_threshold.setEnabled(usable)
        self.seg_threshold.setSpecialValueText(text)
        self.seg_threshold.setToolTip(
            "Probability a pixel needs to count as the class; lowest value: the model card's seg_thresh" if usable
            else f"The {self.card.family} family has no segmentation threshold (it thresholds masks, scores or "
                 "vertices as its card says)")
        for spin, key, what in ((self.min_area, "min_area_px", "polygons"),
                                (self.min_hole_area, "min_hole_area_px", "holes")):
            spin.setSpecialValueText(CARD_VALUE if values is None else f"card's: {values[key]:g}")
            spin.setToolTip(f"Smaller {what} are dropped, square model pixels; lowest value: the model card's "
                            f"polytopo.{key}")

    def _show_mask(self, *_):
        shown = self.extent_combo.currentData() in (SELECTED_AREA, MASK_AREA)
        self.mask_combo.setVisible(shown)
        self.mask_label.setVisible(shown)
        current = self.mask_combo.currentLayer()
        if self.extent_combo.currentData() == SELECTED_AREA and (current is None or not current.selectedFeatureCount()):
            selected = [layer for layer in polygon_layers(QgsProject.instance()) if layer.selectedFeatureCount()]
            if selected:  # the layer the user selected polygons in, not merely the first polygon layer
                self.mask_combo.setLayer(selected[0])

    def _area_of_interest(self):
        """The polygons limiting the vectorization (selected features or a mask layer), or None.

        Raises
        ------
        LayerInputError
            No polygon layer chosen, or no feature selected in it.
        """
        choice = self.extent_combo.currentData()
        if choice not in (SELECTED_AREA, MASK_AREA):
            return None
        layer = self.mask_combo.currentLayer()
        if layer is None:
            raise LayerInputError("Expected a polygon layer for the processed area but none is chosen; add one "
                                  "or process the layer extent")
        if choice == MASK_AREA:
            return layer
        if not layer.selectedFeatureCount():
            raise LayerInputError(f"Expected selected features in {layer.name()!r} but none is selected; select "
                                  "the polygons to process or choose another area")
        return layer.materialize(QgsFeatureRequest().setFilterFids(layer.selectedFeatureIds()))

    def refresh_providers(self):
        """Update the label that says which execution providers this onnxruntime offers."""
        self.provider_label.setText(provider_availability(*self.providers()))

    def model_path(self):
        """The chosen model file: the bundled model's, or the one chosen with *Other file…*."""
        data = self.model_combo.currentData()
        return self.model_file.filePath() if data == OTHER_MODEL else data

    def _model_file_chosen(self, path):
        if path and self.model_combo.currentData() != OTHER_MODEL:
            self.model_combo.setCurrentIndex(self.model_combo.findData(OTHER_MODEL))
        else:
            self._update_card()

    def _update_card(self):
        other = self.model_combo.currentData() == OTHER_MODEL
        self.model_file.setVisible(other)
        self.model_file_label.setVisible(other)
        path = self.model_path()
        text, self.model_ok = card_summary(path, self.read_card)
        tip = "" if other else self.model_combo.currentData(Qt.ToolTipRole) or ""
        self.card_label.setText(f"{text}\n{tip}" if tip else text)
        self.card = self.read_card(path) if self.model_ok else None
        self.model_channel_count = self.channels(path) if self.model_ok else None
        self._update_bands()
        self._show_card_decoding()

    def _update_bands(self, *_):
        for combo in self.band_combos:
            self.band_layout.removeWidget(combo)
            combo.setParent(None)
        self.band_combos = []
        raster = self.raster_combo.currentLayer()
        channels = self.model_channel_count if self.model_ok else None
        if channels is None or raster is None:
            self.band_box.setToolTip("Choose a raster and a model to map bands to model channels.")
            return
        default = list((self.card.bands if self.card is not None else None) or range(1, channels + 1))
        for channel, band in enumerate(default, start=1):
            combo = narrow(QComboBox())
            combo.setToolTip(f"Raster band feeding model channel {channel}")
            for number in range(1, raster.bandCount() + 1):
                combo.addItem(f"{number}: {raster.bandName(number)}", number)
            if band > raster.bandCount():
                combo.addItem(f"{band}: missing", band)
            combo.setCurrentIndex(combo.findData(band))
            self.band_layout.addWidget(combo)
            self.band_combos.append(combo)
        self.band_box.setToolTip("Raster band → model channel 1, 2, … (default from the model card)")

    def bands(self):
        """The chosen raster band of each model channel, or None when the model is not known yet."""
        return tuple(combo.currentData() for combo in self.band_combos) or None

    def _vectorize_extent(self, raster):
        if self.extent_combo.currentData() != CANVAS_EXTENT or self.canvas is None:
            return None
        transform = QgsCoordinateTransform(self.canvas.mapSettings().destinationCrs(), raster.crs(),
                                           QgsProject.instance().transformContext())
        return transform.transformBoundingBox(self.canvas.extent())

    def start_vectorization(self):
        """Start vectorizing the chosen raster with the chosen model (returns at once).

        Every check that needs no work runs first: raster and model chosen, bands, the
        canvas extent, the output (exists without *Replace*, folder not writable).

        Returns
        -------
        VectorizeTask or None
            The started task; None when an input is refused (the notifier says why).
        """
        raster = self.raster_combo.currentLayer()
        if raster is None:
            return self._refuse("Expected a raster layer to vectorize but none is chosen; add one to the project.")
        if not self.model_ok:
            return self._refuse(f"Expected a usable ONNX model but got: {self.card_label.text()}")
        try:
            check_raster_crs(raster)
            extent = self._vectorize_extent(raster)
            aoi = self._area_of_interest()
            bands = self.bands()
            if bands is not None:
                resolve_bands(bands, None, len(bands), raster.bandCount())
            check_output(self.vector_output.filePath(), self.vector_overwrite.isChecked(),
                         layers=[Path(self.vector_output.filePath()).stem])
        except QgsCsException as exc:
            return self._refuse(f"Expected the map canvas extent to convert to the raster CRS but it does not "
                                f"({exc}); vectorize the layer extent instead.")
        except PluginError as exc:
            return self._refuse(str(exc))
        context = QgsProject.instance().transformContext()
        request = VectorizeRequest(
            LayerSnapshot.of(raster, context), self.model_path(), self.provider_combo.currentText(),
            extent, self.vector_output.filePath() or None, self.vector_overwrite.isChecked(),
            f"PolyTopo vectorization {time.strftime('%H:%M:%S')}: {raster.name()}", bands,
            spin_value(self.tile_size), spin_value(self.tile_overlap), self.batch_size.value(),
            None if aoi is None else LayerSnapshot.of(aoi, context), spin_value(self.seg_threshold),
            spin_value(self.min_area), spin_value(self.min_hole_area))
        task = VectorizeTask(request, self.core, self._vectorized, self.notifier, self._vectorize_done)
        self._start(task, self.vectorize_button, self.vectorize_cancel, self.vectorize_progress)
        self.vectorize_task = task
        return task

    def cancel_vectorization(self):
        """Cancel the running vectorization, if any; the button says "Canceling…" at once."""
        self._cancel(self.vectorize_task, self.vectorize_cancel, self.vectorize_progress)

    def _vectorized(self, result):
        """Add the written polygons of a :class:`~polytopo.plugin.gui.tasks.VectorizeResult` and make them the prediction."""
        run, request = result.run, result.request
        project = QgsProject.instance()
        name = unique_layer_name(project, f"{request.raster.name} — {Path(request.model_path).stem}")
        layer = QgsVectorLayer(run.source, name, "ogr")
        if not layer.isValid():
            raise RunFailedError(f"Expected the vectorization output {run.source!r} to open as a vector layer "
                                 "but it does not; open it from the Browser to see why.")
        group = project.layerTreeRoot().insertGroup(0, request.group_name)
        project.addMapLayer(layer, False)
        group.addLayer(layer)
        self.added_layers = [layer]
        self._prepare_evaluation_of(layer, project.mapLayer(request.raster.layer_id))
        self.notifier.info("PolyTopo", f"Vectorized {request.raster.name} into {run.features} "
                           f"polygons on {run.provider_report or run.provider_used}.")

    def _prepare_evaluation_of(self, layer, raster):
        """Make a new vectorized layer the prediction: its score field, its raster's pixel size."""
        self.prediction_combo.setLayer(layer)
        self.score_field.setField(SCORE_FIELD)
        if raster is not None:
            self.pixel_raster.setLayer(raster)
        reference = self.reference_combo.currentLayer()
        if reference is None or reference.id() == layer.id():
            self.reference_combo.setLayer(default_evaluation_layers(QgsProject.instance(), layer)[1])

    def _vectorize_done(self, task):
        self._finish(task, self.vectorize_button, self.vectorize_cancel, self.vectorize_progress)
        self.vectorize_task = None

    # ----- Evaluate --------------------------------------------------------------------------

    def _connect_evaluate(self):
        self.prediction_combo.layerChanged.connect(self._prediction_changed)  # after the score field follows it
        self.reference_combo.layerChanged.connect(self._update_pixel_size)
        self.pixel_size.valueChanged.connect(self._show_pixel_metres)
        self.pixel_raster.layerChanged.connect(self._update_pixel_size)
        self.evaluate_button.clicked.connect(self.start_evaluation)
        self.evaluate_cancel.clicked.connect(self.cancel_evaluation)
        self.report_button.clicked.connect(self.open_report)
        self.report_link.linkActivated.connect(lambda _url: self.open_report())
        self.previous_button.clicked.connect(lambda: self.step_error(-1))
        self.next_button.clicked.connect(lambda: self.step_error(1))
        self.feature_table.selectionModel().currentRowChanged.connect(self._row_selected)

    def _choose_default_layers(self, *_):
        active = self.iface.activeLayer() if self.iface is not None else None
        prediction, reference = default_evaluation_layers(QgsProject.instance(), active)
        if prediction is not None:
            self.prediction_combo.setLayer(prediction)
        self.reference_combo.setLayer(reference)
        self._prediction_changed(self.prediction_combo.currentLayer())

    def _warn_temporary_layers(self, *_):
        """On save: layers that live in temporary result folders are named, and those folders kept."""
        layers = list(QgsProject.instance().mapLayers().values())
        folders = temporary_result_folders(layer.source() for layer in layers)
        if not folders:
            return
        mark_kept(folders)
        used = [layer.name() for layer in layers if temporary_result_folders([layer.source()])]
        self.notifier.warning(
            "PolyTopo", f"{len(used)} layer(s) of this project ({', '.join(used[:3])}{'…' if len(used) > 3 else ''}) "
            f"live in a temporary folder ({folders[0].parent}); they are kept for this project, but the system may "
            "empty that folder: export them (Export › Save Features As) or rerun with an output file beside the "
            "project.")

    def _keep_layers_apart(self, *_):
        """Choose the defaults again when a combo is empty or both show one layer (layers added, project read)."""
        prediction, reference = self.prediction_combo.currentLayer(), self.reference_combo.currentLayer()
        if prediction is None or reference is None or prediction.id() == reference.id():
            self._choose_default_layers()

    def _prediction_changed(self, layer):
        raster = source_raster(layer, QgsProject.instance())
        if raster is not None:
            self.pixel_raster.setLayer(raster)
            if layer.fields().indexOf(SCORE_FIELD) >= 0:
                self.score_field.setField(SCORE_FIELD)
        self._update_pixel_size()

    def _update_pixel_size(self, *_):
        """Take the pixel size from the raster (in the reference CRS) and show its unit and ground size."""
        reference = self.reference_combo.currentLayer()
        crs = reference.crs() if reference is not None else QgsCoordinateReferenceSystem()
        unit = pixel_size_unit(crs)
        self.pixel_unit.setText(f"{unit} per px")
        self.pixel_size.setDecimals(DEGREE_DECIMALS if unit == "°" else LINEAR_DECIMALS)
        raster = self.pixel_raster.currentLayer()
        if raster is not None and reference is not None:
            try:
                self.pixel_size.setValue(raster_pixel_size(raster, crs, QgsProject.instance().transformContext()))
            except PluginError as exc:
                self.notifier.warning("PolyTopo", str(exc))
        self._show_pixel_metres()

    def _pixel_check(self):
        reference = self.reference_combo.currentLayer()
        if reference is None:
            return None
        return check_pixel_size(self.pixel_size.value(), reference.crs(), reference.extent().center(),
                                QgsProject.instance().transformContext())

    def _show_pixel_metres(self, *_):
        try:
            metres = self._pixel_check()
        except PluginError as exc:
            self.pixel_metres.setText(f"<span style='color:#b00020'>{html.escape(str(exc))}</span>")
            self.pixel_metres.setVisible(True)
            return
        self.pixel_metres.setText("" if metres is None else f"≈ {metres:.3g} m per pixel on the ground")
        self.pixel_metres.setVisible(metres is not None)  # no empty line before a reference is chosen

    def start_evaluation(self):
        """Start evaluating the chosen prediction layer against the reference layer (returns at once).

        Every check that needs no work runs first: two different layers, a plausible
        pixel size, the workers or scheduler address (*Advanced*), the output (exists
        without *Replace*, folder not writable).

        Returns
        -------
        EvaluationTask or None
            The started task; None when an input is refused (the notifier says why).
        """
        prediction, reference = self.prediction_combo.currentLayer(), self.reference_combo.currentLayer()
        if prediction is None or reference is None:
            return self._refuse("Expected a prediction layer and a reference layer but at least one is not "
                                "chosen; add polygon layers to the project.")
        try:
            check_distinct_layers(prediction, reference)
            self._pixel_check()
            workers, scheduler = self.cluster_fields.choice()
            check_output(self.gpkg_output.filePath(), self.overwrite.isChecked(), layers=EVALUATION_LAYERS)
            if self.gpkg_output.filePath():
                check_output(report_folder(self.gpkg_output.filePath()), self.overwrite.isChecked())
        except PluginError as exc:
            return self._refuse(str(exc))
        context = QgsProject.instance().transformContext()
        request = EvaluationRequest(
            LayerSnapshot.of(prediction, context), LayerSnapshot.of(reference, context),
            self.pixel_size.value(), self.profile_combo.currentText(), self.score_field.currentField() or None,
            None, self.gpkg_output.filePath() or None, self.overwrite.isChecked(),
            f"{run_group_name(prediction.name(), reference.name())} ({time.strftime('%H:%M:%S')})", workers,
            scheduler)
        task = EvaluationTask(request, self.core, self._evaluated, self.notifier, self._evaluation_done)
        self._start(task, self.evaluate_button, self.evaluate_cancel, self.evaluate_progress)
        self.evaluation_task = task
        return task

    def cancel_evaluation(self):
        """Cancel the running evaluation, if any; the button says "Canceling…" at once."""
        self._cancel(self.evaluation_task, self.evaluate_cancel, self.evaluate_progress)

    def restore_saved_run(self, *_):
        """Show the evaluation whose scored layers are in the project (a saved project, an exported GeoPackage).

        Returns
        -------
        RestoredResult or None
            None when the project holds no evaluation's predictions layer.
        """
        restored = restore_from_project(QgsProject.instance())
        if restored is not None:
            self.added_layers = [restored.layer]
            self.show_result(restored)
        return restored

    def _layers_added(self, layers):
        if not self._adding_run and self.last_result is None:
            self.restore_saved_run()

    def _evaluated(self, result):
        project = QgsProject.instance()
        self._adding_run = True
        try:
            self.added_layers = list(self.core.add_run_to_project(result.gpkg_path, project,
                                                                  result.request.group_name))
        finally:
            self._adding_run = False
        for snapshot in (result.request.prediction, result.request.reference):
            node = project.layerTreeRoot().findLayer(snapshot.layer_id)
            if node is not None:
                node.setItemVisibilityChecked(False)
        self.show_result(result)
        metrics = result.run.evaluation.summary["metrics"]
        scores = ", ".join(f"{name} {format_value(metrics.get(name))}" for name in _MESSAGE_METRICS)
        self.notifier.info("PolyTopo", f"Evaluated {result.request.prediction.name}: {scores}; "
                           f"report {self.report_path()}, layers in {result.gpkg_path}.")

    def _evaluation_done(self, task):
        self._finish(task, self.evaluate_button, self.evaluate_cancel, self.evaluate_progress)
        self.evaluation_task = None

    def report_path(self):
        """The HTML report of the last evaluation, or None before one."""
        if self.last_result is None or "report_html" not in self.last_result.paths:
            return None
        return Path(self.last_result.paths["report_html"])

    def open_report(self):
        """Open the last evaluation's report.html with the desktop's browser.

        Returns
        -------
        qgis.PyQt.QtCore.QUrl or None
            The URL opened; None before an evaluation.
        """
        path = self.report_path()
        if path is None:
            return None
        url = QUrl.fromLocalFile(str(path))
        self.open_url(url)
        return url

    def show_result(self, result):
        """Fill the summary and per-feature tables from an :class:`~polytopo.plugin.gui.tasks.EvaluationResult` or a :class:`RestoredResult`."""
        self.last_result = result
        metrics = result.run.evaluation.summary["metrics"]
        for row, name in enumerate(SUMMARY_METRICS):
            self.summary_table.setItem(row, 0, QTableWidgetItem(format_value(metrics.get(name))))
        self.feature_table.setSortingEnabled(False)
        self.feature_model.removeRows(0, self.feature_model.rowCount())
        records = result.run.evaluation.records["predictions"]
        for index, record in enumerate(records):
            items = []
            for _, field in FEATURE_COLUMNS:
                item = QStandardItem()
                value = record[field]
                if isinstance(value, float) and not math.isnan(value):
                    item.setData(round(value, 3), Qt.DisplayRole)
                else:
                    item.setData(value if isinstance(value, (int, str)) else format_value(value), Qt.DisplayRole)
                item.setData(index, _RECORD_ROLE)
                items.append(item)
            self.feature_model.appendRow(items)
        self.feature_table.setSortingEnabled(True)
        self.diagnosis.clear()
        report = self.report_path()
        self.report_button.setEnabled(report is not None)
        self.report_link.setText("" if report is None else
                                 f"Report: <a href=\"{QUrl.fromLocalFile(str(report)).toString()}\">"
                                 f"{html.escape(str(report))}</a>")
        self.report_link.setVisible(report is not None)
        self.class_combo.clear()
        present = sorted({record["error_class"] for record in records} - {MATCHED_OK})
        self.class_combo.addItems(present)
        for widget in (self.class_combo, self.previous_button, self.next_button):
            widget.setEnabled(bool(present))

    def clear_result(self):
        """Forget the last evaluation (a new project): empty tables, no report, no stepping, no old messages."""
        self.notifier.clear()
        self.last_result = None
        self.added_layers = []
        for row in range(len(SUMMARY_METRICS)):
            self.summary_table.setItem(row, 0, QTableWidgetItem(""))
        self.feature_model.removeRows(0, self.feature_model.rowCount())
        self.diagnosis.clear()
        self.report_link.clear()
        self.report_link.setVisible(False)
        self.class_combo.clear()
        for widget in (self.report_button, self.class_combo, self.previous_button, self.next_button):
            widget.setEnabled(False)

    def step_error(self, step):
        """Select the next (1) or previous (-1) feature of the error class chosen beside the buttons.

        Returns
        -------
        int or None
            The table row selected; None when no feature has that class.
        """
        error_class = self.class_combo.currentText()
        column = [field for _, field in FEATURE_COLUMNS].index("error_class")
        classes = [self.feature_model.item(row, column).text() for row in range(self.feature_model.rowCount())]
        row = step_row(classes, self.feature_table.currentIndex().row(), error_class, step)
        if row is not None:
            self.feature_table.setCurrentIndex(self.feature_model.index(row, 0))
        return row

    def _row_selected(self, current, previous):
        if not current.isValid() or self.last_result is None:
            return
        index = self.feature_model.item(current.row(), 0).data(_RECORD_ROLE)
        evaluation = self.last_result.run.evaluation
        if isinstance(self.last_result, RestoredResult):
            self.diagnosis.setPlainText(attribute_diagnosis(evaluation.records["predictions"][index]))
            ids = self.select_record(index)
            if self.canvas is not None and ids:
                self.canvas.zoomToFeatureIds(self.last_result.layer, ids)
            return
        self.diagnosis.setPlainText(ring_diagnosis(evaluation, index))
        self.select_record(index)
        self.zoom_to_record(index)

    def select_record(self, index):
        """Select prediction ``index`` in the scored predictions layer and flash it on the canvas.

        Returns
        -------
        list of int
            Feature ids selected in the scored layer (empty when it is not in the project).
        """
        record = self.last_result.run.evaluation.records["predictions"][index]
        if isinstance(self.last_result, RestoredResult):
            layer = self.last_result.layer if _alive(self.last_result.layer) else None
        else:
            layer = next((layer for layer in self.added_layers
                          if layer.name() == LAYER_TITLES["predictions"] and _alive(layer)), None)
        if layer is None:
            return []
        request = QgsFeatureRequest().setFilterExpression(
            QgsExpression.createFieldEqualityExpression("pred_id", record["pred_id"]))
        request.setFlags(QgsFeatureRequest.NoGeometry)
        ids = [feature.id() for feature in layer.getFeatures(request)]
        layer.selectByIds(ids)
        if self.canvas is not None and ids:
            self.canvas.flashFeatureIds(layer, ids, QColor(255, 0, 0, 255), QColor(255, 0, 0, 0),
                                        _FLASHES, _FLASH_MS)
        return ids

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

    def _refuse(self, message):
        self.notifier.warning("PolyTopo", message)
        return None

    def _start(self, task, run_button, cancel_button, progress):
        run_button.setEnabled(False)
        cancel_button.setEnabled(True)
        cancel_button.setText(CANCEL_TEXT)
        progress.setValue(0)
        started = time.monotonic()
        self._run_started[progress] = started
        progress.setFormat("starting…")

        def show(value):
            if task.isCanceled():
                return
            percent = max(0.0, min(100.0, float(value)))
            progress.setValue(int(percent))
            elapsed = time.monotonic() - started
            left = f", {_elapsed_text(elapsed * (100.0 - percent) / percent)} left" if percent >= 1 else ""
            detail = task.feedback.progress_text
            progress.setFormat(f"%p% · {_elapsed_text(elapsed)} elapsed{left}" + (f" · {detail}" if detail else ""))

        task.progressChanged.connect(show)
        self.task_manager.addTask(task)

    @staticmethod
    def _cancel(task, cancel_button, progress):
        if task is None:
            return
        cancel_button.setText("Canceling…")
        cancel_button.setEnabled(False)
        progress.setFormat("canceling…")
        task.cancel()

    def _finish(self, task, run_button, cancel_button, progress):
        """Buttons ready for the next run; the bar keeps the outcome: done (full), canceled or failed."""
        run_button.setEnabled(True)
        cancel_button.setEnabled(False)
        cancel_button.setText(CANCEL_TEXT)
        started = self._run_started.pop(progress, None)
        took = _elapsed_text(time.monotonic() - started) if started is not None else None
        if task.error is not None:
            progress.setFormat(f"Failed after {took}" if took else "Failed")
        elif task.canceled or task.isCanceled():
            progress.setFormat(f"Canceled after {took}" if took else "Canceled")
        else:
            progress.setValue(100)
            progress.setFormat(f"Done in {took}" if took else "Done")

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
        self.model_installer.abandon()


def _alive(layer):
    try:
        return layer.isValid()
    except RuntimeError:
        return False
