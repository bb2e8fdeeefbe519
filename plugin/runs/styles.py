"""Styles and field aliases of the evaluation layers.

Each output layer of an evaluation has a rule-based QML style in ``resources/styles``
(``predictions.qml``, ``references.qml``, ``missed_holes.qml``, ``hallucinated_holes.qml``,
``unmatched_predictions.qml``, ``missed_references.qml``); docs/plugin.md shows the legend.
Field aliases live here, not in the QML files, so that every layer shares one table.
"""

from qgis.core import QgsEditorWidgetSetup
from qgis.PyQt.QtCore import QVariant

from ..errors import PluginError
from ..resource_paths import STYLES_DIR

__all__ = ["DISPLAY_DECIMALS", "ERROR_LAYERS", "SUMMARY_LAYER", "FIELD_ALIASES",  # noqa: F822 - from __getattr__
           "field_aliases", "style_path", "apply_style"]

#: Decimals shown for real-valued fields (attribute table, forms, identify results); the
#: stored values keep full precision.
DISPLAY_DECIMALS = 3

#: The spatial layers of an evaluation, drawn top to bottom in this order.
ERROR_LAYERS = ("missed_holes", "hallucinated_holes", "unmatched_predictions", "missed_references",
                "predictions", "references")

#: Name of the GeoPackage table of headline numbers (fields ``metric``, ``value``).
SUMMARY_LAYER = "summary"

#: Aliases of the record fields that are not metrics (see :func:`field_aliases`).
_RECORD_ALIASES = {
    "image_id": "Image",
    "pred_id": "Prediction feature",
    "ref_id": "Reference feature",
    "part": "Part",
    "score": "Score",
    "category_id": "Category",
    "matched_ref_id": "Matched reference",
    "matched_pred_id": "Matched prediction",
    "valid": "Valid",
    "invalid_reason": "Invalid because",
    "pred_holes": "Predicted holes",
    "ref_holes": "Reference holes",
    "hole_tp": "Holes matched (TP)",
    "hole_fp": "Extra holes (FP)",
    "hole_fn": "Missed holes (FN)",
    "error_class": "Error class",
    "hole_index": "Hole number",
    "area_px2": "Area (px²)",
    "metric": "Metric",
    "value": "Value",
}


def field_aliases():
    """Field name → alias shown in attribute tables and forms (also the module attribute ``FIELD_ALIASES``).

    Metric fields take their labels from the evaluator's metric table, read on first use:
    this module loads with the provider, before shapely may be imported. Units: POLIS in
    pixels, MTA in degrees, areas in px² of the evaluation grid.

    Returns
    -------
    dict
    """
    from ...evaluator import metric_table  # this form lets qgis.utils unload the subpackage with the plugin

    return {**_RECORD_ALIASES, **{field: row.label for field, row in metric_table.FEATURE_FIELDS.items()}}


def __getattr__(name):
    if name == "FIELD_ALIASES":
        return field_aliases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def style_path(layer_name):
    """The QML file of an evaluation layer.

    Parameters
    ----------
    layer_name : str
        One of :data:`ERROR_LAYERS`.

    Returns
    -------
    pathlib.Path
    """
    if layer_name not in ERROR_LAYERS:
        raise PluginError(f"Expected a layer name of {list(ERROR_LAYERS)} but got {layer_name!r}")
    return STYLES_DIR / f"{layer_name}.qml"


def apply_style(layer, layer_name):
    """Give ``layer`` the aliases of :func:`field_aliases`, :data:`DISPLAY_DECIMALS` for real fields and its QML style.

    Parameters
    ----------
    layer : QgsVectorLayer
        A layer of an evaluation GeoPackage.
    layer_name : str
        The GeoPackage layer name; names outside :data:`ERROR_LAYERS` (the ``summary``
        table) get aliases only.

    Raises
    ------
    PluginError
        When the QML file cannot be loaded.
    """
    if layer_name in ERROR_LAYERS:
        path = style_path(layer_name)
        message, loaded = layer.loadNamedStyle(str(path))
        if not loaded:
            raise PluginError(f"Expected the style {path} to load but QGIS reported: {message}; "
                              "reinstall the plugin")
    aliases = field_aliases()
    for index, field in enumerate(layer.fields()):
        alias = aliases.get(field.name())
        if alias:
            layer.setFieldAlias(index, alias)
        if field.type() == QVariant.Double:
            layer.setEditorWidgetSetup(index, QgsEditorWidgetSetup(
                "Range", {"Precision": DISPLAY_DECIMALS, "Style": "SpinBox", "AllowNull": True,
                          "Min": -1e308, "Max": 1e308}))
