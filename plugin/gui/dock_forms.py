"""The widgets of the dock's two parts, built and laid out, returned in typed holders.

:func:`vectorize_form` builds the *Vectorize* group (raster, model, card summary, band
boxes, provider, processed area, output, *Run* / *Cancel* and progress) around the
*Advanced* group of :func:`advanced_vectorize_form` (tiling, batch, threshold, minimum
areas); :func:`evaluate_form` builds the *Evaluate* group (layers, pixel size, profile,
workers, output, *Run* / *Cancel*, summary table, report link, error-class stepping,
per-feature table, ring diagnosis). Each returns a frozen dataclass of its widgets, whose
field names are the attribute names :class:`~polytopo.plugin.gui.dock.PolyTopoDock` gives
them. The builders connect no signal to the dock: only widgets of one form to each other
(the score field follows the prediction layer). The dock wires its own handlers.
"""

from dataclasses import dataclass

from qgis.core import QgsFieldProxyModel, QgsMapLayerProxyModel
from qgis.gui import QgsCollapsibleGroupBox, QgsFieldComboBox, QgsFileWidget, QgsMapLayerComboBox
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QStandardItemModel
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTableWidget,
    QWidget,
)

from ...evaluator.tables.profiles import REGISTRY as PROFILE_REGISTRY
from ...models.session import PROVIDER_CHOICES
from ..runs.output_check import REPLACE_LABEL
from .cluster_fields import ClusterFields
from .dock_widgets import DiagnosisBox, form_layout, narrow, optional_spin, progress_bar, relayout_when_toggled, row
from .model_choice import zoo_choices
from .wrap_layout import WrapGrid, gap_in_labels, wrap_row

__all__ = [
    "AREA_CHOICES",
    "CANCEL_TEXT",
    "CANVAS_EXTENT",
    "CARD_VALUE",
    "DEGREE_DECIMALS",
    "LAYER_EXTENT",
    "LINEAR_DECIMALS",
    "MASK_AREA",
    "OTHER_MODEL",
    "SELECTED_AREA",
    "AdvancedVectorizeForm",
    "EvaluateForm",
    "VectorizeForm",
    "advanced_vectorize_form",
    "evaluate_form",
    "vectorize_form",
]

#: Item data of the processed-area choices: the raster layer's extent, the map canvas
#: extent, the selected features of a polygon layer, every polygon of a mask layer.
LAYER_EXTENT, CANVAS_EXTENT, SELECTED_AREA, MASK_AREA = "layer", "canvas", "selected", "mask"
#: The processed-area list: (label, item data), in list order.
AREA_CHOICES = (
    ("Layer extent", LAYER_EXTENT),
    ("Map canvas extent", CANVAS_EXTENT),
    ("Selected features", SELECTED_AREA),
    ("Polygons of a mask layer", MASK_AREA),
)
#: Item data of the model list's last item, *Other file…* (the others hold a model file path).
OTHER_MODEL = "other"
#: Text of the *Cancel* buttons of the runs while none is being canceled.
CANCEL_TEXT = "Cancel"
#: What an empty decoding field (threshold, minimum areas) says before the card's value is known.
CARD_VALUE = "card's"
#: Decimals of the pixel size field for a reference CRS in linear units, and in degrees.
LINEAR_DECIMALS, DEGREE_DECIMALS = 4, 10
#: The feature table's least height, pixels.
_FEATURE_TABLE_MIN_HEIGHT = 160


@dataclass(frozen=True)
class AdvancedVectorizeForm:
    """The collapsed *Advanced* group of the vectorization and its fields.

    The spin boxes of :func:`~polytopo.plugin.gui.dock_widgets.optional_spin` read None at
    their lowest value (the model card's value applies).

    Attributes
    ----------
    advanced_group : QgsCollapsibleGroupBox
    tile_size, tile_overlap : QSpinBox
        Tile edge (16–8192) and overlap (0–4096), model pixels.
    batch_size : QSpinBox
        Tiles per inference call, 1–256.
    seg_threshold : QDoubleSpinBox
        Segmentation threshold, probability 0–1; its lowest value, -0.01, stands for the card's.
    min_area, min_hole_area : QSpinBox
        Smallest polygon and hole kept, square model pixels.
    """

    advanced_group: QgsCollapsibleGroupBox
    tile_size: QSpinBox
    tile_overlap: QSpinBox
    batch_size: QSpinBox
    seg_threshold: QDoubleSpinBox
    min_area: QSpinBox
    min_hole_area: QSpinBox


@dataclass(frozen=True)
class VectorizeForm:
    """The *Vectorize* group and its widgets.

    Attributes
    ----------
    vectorize_group : QGroupBox
    raster_combo : QgsMapLayerComboBox
        Raster layers of the project.
    model_combo : QComboBox
        The zoo models (item data: the file path; tool tip: the held-out scores), then
        *Other file…* (item data :data:`OTHER_MODEL`).
    model_installer : QWidget
        The *Install* row under the model list (what ``installer_for`` returned).
    model_file, model_file_label : QgsFileWidget, QLabel
        The ONNX file chosen with *Other file…*, and its label.
    card_label : QLabel
        The chosen model card's summary.
    band_box : QWidget
        Holds one band combo box per model channel, laid out by ``band_layout``.
    band_layout : WrapGrid
    provider_combo : QComboBox
        :data:`polytopo.models.session.PROVIDER_CHOICES`.
    provider_label : QLabel
        What this onnxruntime offers.
    extent_combo : QComboBox
        :data:`AREA_CHOICES`.
    mask_combo, mask_label : QgsMapLayerComboBox, QLabel
        The polygon layer of the selected features or the mask, and its label.
    vector_output : QgsFileWidget
        The GeoPackage to write; empty for a temporary file.
    vector_overwrite : QCheckBox
    vectorize_button, vectorize_cancel : QPushButton
    vectorize_progress : QProgressBar
    """

    vectorize_group: QGroupBox
    raster_combo: QgsMapLayerComboBox
    model_combo: QComboBox
    model_installer: QWidget
    model_file: QgsFileWidget
    model_file_label: QLabel
    card_label: QLabel
    band_box: QWidget
    band_layout: WrapGrid
    provider_combo: QComboBox
    provider_label: QLabel
    extent_combo: QComboBox
    mask_combo: QgsMapLayerComboBox
    mask_label: QLabel
    vector_output: QgsFileWidget
    vector_overwrite: QCheckBox
    vectorize_button: QPushButton
    vectorize_cancel: QPushButton
    vectorize_progress: QProgressBar


@dataclass(frozen=True)
class EvaluateForm:
    """The *Evaluate* group and its widgets.

    Attributes
    ----------
    evaluate_group : QGroupBox
    prediction_combo, reference_combo : QgsMapLayerComboBox
        Polygon layers; the reference may be empty.
    score_field : QgsFieldComboBox
        Numeric field of the prediction layer (follows ``prediction_combo``), may be empty.
    pixel_size : QDoubleSpinBox
        Ground sampling distance, units of the reference CRS per pixel.
    pixel_unit : QLabel
        That unit.
    pixel_raster : QgsMapLayerComboBox
        The raster layer the pixel size is taken from, may be empty.
    pixel_metres : QLabel
        The pixel size in metres on the ground, or why it is refused.
    profile_combo : QComboBox
        The evaluation profiles of :data:`polytopo.evaluator.tables.profiles.REGISTRY`.
    cluster_fields : ClusterFields
        The collapsed *Advanced* group: Dask workers or scheduler.
    gpkg_output : QgsFileWidget
        The GeoPackage to write; empty for a temporary file.
    overwrite : QCheckBox
    evaluate_button, evaluate_cancel : QPushButton
    evaluate_progress : QProgressBar
    summary_table : QTableWidget
        One row per summary metric, one ``value`` column.
    report_button : QPushButton
    report_link : QLabel
        A link to the report (hidden before a run).
    class_combo : QComboBox
        The error class *Previous* / *Next* step through.
    previous_button, next_button : QPushButton
    feature_model : QStandardItemModel
        One row per prediction, one column per header.
    feature_table : QTableView
        Shows ``feature_model``: sortable, one row selected at a time.
    diagnosis : DiagnosisBox
        The ring diagnosis of the selected row, read-only.
    """

    evaluate_group: QGroupBox
    prediction_combo: QgsMapLayerComboBox
    score_field: QgsFieldComboBox
    reference_combo: QgsMapLayerComboBox
    pixel_size: QDoubleSpinBox
    pixel_unit: QLabel
    pixel_raster: QgsMapLayerComboBox
    pixel_metres: QLabel
    profile_combo: QComboBox
    cluster_fields: ClusterFields
    gpkg_output: QgsFileWidget
    overwrite: QCheckBox
    evaluate_button: QPushButton
    evaluate_cancel: QPushButton
    evaluate_progress: QProgressBar
    summary_table: QTableWidget
    report_button: QPushButton
    report_link: QLabel
    class_combo: QComboBox
    previous_button: QPushButton
    next_button: QPushButton
    feature_model: QStandardItemModel
    feature_table: QTableView
    diagnosis: DiagnosisBox


def _geopackage_output():
    """A file field for a GeoPackage to write; empty reads "[temporary file]"."""
    widget = QgsFileWidget()
    widget.setStorageMode(QgsFileWidget.SaveFile)
    widget.setFilter("GeoPackage (*.gpkg)")
    widget.lineEdit().setPlaceholderText("[temporary file]")
    return widget


def _run_controls(label):
    """The *Run* button named ``label``, a disabled *Cancel* button and an empty progress bar."""
    run, cancel = QPushButton(label), QPushButton(CANCEL_TEXT)
    cancel.setEnabled(False)
    return run, cancel, progress_bar()


def _layer_combo(filters):
    combo = narrow(QgsMapLayerComboBox())
    combo.setFilters(filters)
    return combo


def advanced_vectorize_form():
    """Build the collapsed *Advanced* group of the vectorization, every field at its default.

    Returns
    -------
    AdvancedVectorizeForm
    """
    group = relayout_when_toggled(QgsCollapsibleGroupBox("Advanced"))
    group.setCollapsed(True)
    form = form_layout(group)
    tile_size = optional_spin(16, 8192, "the card's tile size")
    form.addRow("Tile size (model px)", tile_size)
    tile_overlap = optional_spin(0, 4096, "the card's overlap", minimum_is_default=False)
    form.addRow("Overlap (model px)", tile_overlap)
    batch_size = QSpinBox()
    batch_size.setRange(1, 256)
    form.addRow("Batch (tiles)", batch_size)
    seg_threshold = QDoubleSpinBox()
    seg_threshold.setDecimals(2)
    seg_threshold.setSingleStep(0.05)
    seg_threshold.setRange(-0.01, 1.0)  # the lowest value stands for the card's threshold
    seg_threshold.setValue(seg_threshold.minimum())
    form.addRow("Threshold (0–1)", seg_threshold)
    min_area = optional_spin(0, 100_000_000, CARD_VALUE, minimum_is_default=False)
    form.addRow("Min. area (model px²)", min_area)
    min_hole_area = optional_spin(0, 100_000_000, CARD_VALUE, minimum_is_default=False)
    form.addRow("Min. hole area (model px²)", min_hole_area)
    gap_in_labels(form)
    return AdvancedVectorizeForm(group, tile_size, tile_overlap, batch_size, seg_threshold, min_area, min_hole_area)


def vectorize_form(advanced, installer_for, has_canvas):
    """Build the *Vectorize* group.

    Parameters
    ----------
    advanced : QWidget
        The *Advanced* group (:func:`advanced_vectorize_form`), placed after the area rows.
    installer_for : callable
        ``installer_for(model_combo) -> QWidget``: the *Install* row for the models of the
        list (:class:`~polytopo.plugin.gui.model_install.ModelInstaller`).
    has_canvas : bool
        Whether there is a map canvas; without one, *Map canvas extent* cannot be chosen.

    Returns
    -------
    VectorizeForm
    """
    group = QGroupBox("Vectorize")
    form = form_layout(group)
    raster_combo = _layer_combo(QgsMapLayerProxyModel.RasterLayer)
    form.addRow("Raster", raster_combo)
    model_combo = narrow(QComboBox())
    for choice in zoo_choices():
        model_combo.addItem(choice.name, choice.path)
        model_combo.setItemData(model_combo.count() - 1, choice.summary, Qt.ToolTipRole)
    model_combo.addItem("Other file…", OTHER_MODEL)
    form.addRow("Model", model_combo)
    model_installer = installer_for(model_combo)
    form.addRow(model_installer)
    model_file = QgsFileWidget()
    model_file.setFilter("ONNX models (*.onnx)")
    model_file.setDialogTitle("Choose an ONNX model")
    model_file_label = QLabel("Model file")
    form.addRow(model_file_label, model_file)
    card_label = QLabel()
    card_label.setWordWrap(True)
    form.addRow(card_label)
    band_box = QWidget()
    band_layout = WrapGrid(band_box, min_columns=2)  # a box per model channel, in rows if narrow
    form.addRow("Bands", band_box)
    provider_combo = narrow(QComboBox())
    provider_combo.addItems(list(PROVIDER_CHOICES))
    form.addRow("Provider", provider_combo)
    provider_label = QLabel()
    provider_label.setWordWrap(True)
    form.addRow(provider_label)
    extent_combo = narrow(QComboBox())
    for label, data in AREA_CHOICES:
        extent_combo.addItem(label, data)
    if not has_canvas:
        extent_combo.model().item(extent_combo.findData(CANVAS_EXTENT)).setEnabled(False)
    form.addRow("Area", extent_combo)
    mask_combo = _layer_combo(QgsMapLayerProxyModel.PolygonLayer)
    mask_label = QLabel("of layer")
    form.addRow(mask_label, mask_combo)
    form.addRow(advanced)
    vector_output = _geopackage_output()
    form.addRow("Output", vector_output)
    vector_overwrite = QCheckBox(REPLACE_LABEL)
    form.addRow(vector_overwrite)
    run, cancel, progress = _run_controls("Run vectorization")
    form.addRow(wrap_row(run, cancel))
    form.addRow(progress)
    gap_in_labels(form)
    return VectorizeForm(group, raster_combo, model_combo, model_installer, model_file, model_file_label, card_label,
                         band_box, band_layout, provider_combo, provider_label, extent_combo, mask_combo, mask_label,
                         vector_output, vector_overwrite, run, cancel, progress)


def _summary_table(metrics):
    """A one-column table with a row per metric name, as tall as its rows."""
    table = QTableWidget(len(metrics), 1)
    table.setHorizontalHeaderLabels(["value"])
    table.setVerticalHeaderLabels(list(metrics))
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.horizontalHeader().setStretchLastSection(True)
    table.setFixedHeight(table.verticalHeader().length() + table.horizontalHeader().sizeHint().height() + 4)
    return table


def _feature_table(headers):
    """An empty model with ``headers`` and the sortable, row-selecting view that shows it."""
    model = QStandardItemModel(0, len(headers))
    model.setHorizontalHeaderLabels(list(headers))
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectRows)
    table.setSelectionMode(QAbstractItemView.SingleSelection)
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.setSortingEnabled(True)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
    table.setMinimumHeight(_FEATURE_TABLE_MIN_HEIGHT)
    table.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
    return model, table


def evaluate_form(summary_metrics, feature_headers):
    """Build the *Evaluate* group, with empty result tables and the stepping controls disabled.

    Parameters
    ----------
    summary_metrics : sequence of str
        Metric names, one row of the summary table each.
    feature_headers : sequence of str
        Column headers of the per-feature table.

    Returns
    -------
    EvaluateForm
    """
    group = QGroupBox("Evaluate")
    form = form_layout(group)
    prediction_combo = _layer_combo(QgsMapLayerProxyModel.PolygonLayer)
    form.addRow("Prediction", prediction_combo)
    score_field = narrow(QgsFieldComboBox())
    score_field.setFilters(QgsFieldProxyModel.Numeric)
    score_field.setAllowEmptyFieldName(True)
    score_field.setLayer(prediction_combo.currentLayer())
    prediction_combo.layerChanged.connect(score_field.setLayer)
    form.addRow("Score field", score_field)
    reference_combo = _layer_combo(QgsMapLayerProxyModel.PolygonLayer)
    reference_combo.setAllowEmptyLayer(True)  # empty until a second polygon layer is there
    reference_combo.setToolTip("The reference polygons: another layer than the prediction")
    form.addRow("Reference", reference_combo)
    pixel_size = QDoubleSpinBox()
    pixel_size.setDecimals(LINEAR_DECIMALS)
    pixel_size.setRange(1e-9, 1e6)
    pixel_size.setValue(1.0)
    pixel_size.setToolTip("Ground sampling distance of the imagery, in units of the reference CRS per pixel")
    pixel_unit = QLabel()
    form.addRow("Pixel size", row(pixel_size, pixel_unit))
    pixel_raster = _layer_combo(QgsMapLayerProxyModel.RasterLayer)
    pixel_raster.setAllowEmptyLayer(True)
    pixel_raster.setCurrentIndex(0)
    pixel_raster.setToolTip("Take the pixel size from this raster (the one the prediction came from)")
    form.addRow("from raster", pixel_raster)
    pixel_metres = QLabel()
    pixel_metres.setWordWrap(True)
    form.addRow(pixel_metres)
    profile_combo = narrow(QComboBox())
    for index, profile in enumerate(PROFILE_REGISTRY.values()):
        profile_combo.addItem(profile.name)
        profile_combo.setItemData(index, profile.description, Qt.ToolTipRole)
    form.addRow("Profile", profile_combo)
    cluster_fields = relayout_when_toggled(ClusterFields())
    form.addRow(cluster_fields)
    gpkg_output = _geopackage_output()
    form.addRow("Output", gpkg_output)
    overwrite = QCheckBox(REPLACE_LABEL)
    form.addRow(overwrite)
    run, cancel, progress = _run_controls("Run evaluation")
    form.addRow(wrap_row(run, cancel))
    form.addRow(progress)
    summary_table = _summary_table(summary_metrics)
    form.addRow(summary_table)
    report_button = QPushButton("Open report")
    report_button.setEnabled(False)
    form.addRow(report_button)
    report_link = QLabel()
    report_link.setWordWrap(True)
    report_link.setTextInteractionFlags(Qt.TextBrowserInteraction)
    report_link.setVisible(False)  # no empty line before a run
    form.addRow(report_link)
    class_combo = narrow(QComboBox())
    class_combo.setToolTip("Error class that Previous / Next step through")
    previous_button, next_button = QPushButton("◀ Previous"), QPushButton("Next ▶")
    for widget in (class_combo, previous_button, next_button):
        widget.setEnabled(False)
    form.addRow(class_combo)
    form.addRow(wrap_row(previous_button, next_button))
    feature_model, feature_table = _feature_table(feature_headers)
    form.addRow(feature_table)
    diagnosis = DiagnosisBox()
    diagnosis.setReadOnly(True)
    diagnosis.setPlaceholderText("Select a feature to see its rings.")
    form.addRow(diagnosis)
    gap_in_labels(form)
    return EvaluateForm(group, prediction_combo, score_field, reference_combo, pixel_size, pixel_unit, pixel_raster,
                        pixel_metres, profile_combo, cluster_fields, gpkg_output, overwrite, run, cancel, progress,
                        summary_table, report_button, report_link, class_combo, previous_button, next_button,
                        feature_model, feature_table, diagnosis)
