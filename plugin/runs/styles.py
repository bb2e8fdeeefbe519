"""Styles and field aliases of the evaluation layers.

Each output layer of an evaluation has a rule-based QML style generated from the error
class table (:mod:`polytopo.evaluator.outputs.qml_styles`); docs/plugin.md shows the legend.
Field aliases live here, not in the styles, so that every layer shares one table.
"""

from qgis.core import QgsEditorWidgetSetup, QgsFeatureRequest
from qgis.PyQt.QtCore import QVariant
from qgis.PyQt.QtXml import QDomDocument

from ...evaluator.tables.error_classes import layers_top_to_bottom
from ...evaluator.outputs.qml_styles import HOLE_RING_RULE, qml_style
from ..errors import PluginError

__all__ = ["DISPLAY_DECIMALS", "ERROR_LAYERS", "SUMMARY_LAYER", "FIELD_ALIASES",  # noqa: F822 - from __getattr__
           "field_aliases", "load_style", "apply_style", "legend_of_what_is_drawn"]

#: Decimals shown for real-valued fields (attribute table, forms, identify results); the
#: stored values keep full precision.
DISPLAY_DECIMALS = 3

#: The spatial layers of an evaluation, drawn top to bottom in this order.
ERROR_LAYERS = layers_top_to_bottom()

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
    from ...evaluator.tables import metric_table  # this form lets qgis.utils unload the subpackage with the plugin

    return {**_RECORD_ALIASES, **{field: row.label for field, row in metric_table.FEATURE_FIELDS.items()}}


def __getattr__(name):
    if name == "FIELD_ALIASES":
        return field_aliases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_style(layer, layer_name):
    """Give ``layer`` the generated QML style of an evaluation layer (symbology and labels).

    Parameters
    ----------
    layer : QgsVectorLayer
        A layer with the fields of that evaluation layer.
    layer_name : str
        One of :data:`ERROR_LAYERS`.

    Raises
    ------
    PluginError
        ``layer_name`` is not an evaluation layer, or QGIS cannot read the style.
    """
    if layer_name not in ERROR_LAYERS:
        raise PluginError(f"Expected a layer name of {list(ERROR_LAYERS)} but got {layer_name!r}")
    document = QDomDocument()
    parsed, message, line, _ = document.setContent(qml_style(layer_name))
    loaded = False
    if parsed:
        loaded, message = layer.importNamedStyle(document)
    if not loaded:
        raise PluginError(f"Expected the style of {layer_name!r} to load but QGIS reported: {message} "
                          f"(line {line}); reinstall the plugin")


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
        When the style cannot be loaded.
    """
    if layer_name in ERROR_LAYERS:
        load_style(layer, layer_name)
    aliases = field_aliases()
    for index, field in enumerate(layer.fields()):
        alias = aliases.get(field.name())
        if alias:
            layer.setFieldAlias(index, alias)
        if field.type() == QVariant.Double:
            layer.setEditorWidgetSetup(index, QgsEditorWidgetSetup(
                "Range", {"Precision": DISPLAY_DECIMALS, "Style": "SpinBox", "AllowNull": True,
                          "Min": -1e308, "Max": 1e308}))


def legend_of_what_is_drawn(layer):
    """Drop the rules of ``layer``'s style that draw none of its features, so its legend lists only what the map shows.

    A class rule stays when a feature has its class, the fallback (``ELSE``) rule when a
    feature matches no class rule, and the hole-ring entry when a feature has a hole. A
    layer whose every rule would go keeps its style unchanged.

    Parameters
    ----------
    layer : QgsVectorLayer
        An evaluation layer styled by :func:`apply_style` or by the style saved with it.

    Returns
    -------
    list of str
        The labels of the rules dropped.
    """
    renderer = layer.renderer()
    if renderer is None or renderer.type() != "RuleRenderer":
        return []
    root = renderer.rootRule()
    rules = list(root.children())
    classes = [rule.filterExpression() for rule in rules
               if not rule.isElse() and rule.ruleKey() != HOLE_RING_RULE and rule.filterExpression()]
    not_a_class = "TRUE" if not classes else "NOT coalesce(" + " OR ".join(f"({f})" for f in classes) + ", FALSE)"

    def drawn(rule):
        if rule.ruleKey() == HOLE_RING_RULE:
            expression = "num_interior_rings($geometry) > 0"
        elif rule.isElse():
            expression = not_a_class
        else:
            expression = rule.filterExpression() or "TRUE"
        request = QgsFeatureRequest().setFilterExpression(expression).setLimit(1)
        return any(True for _ in layer.getFeatures(request))

    unused = [rule for rule in rules if not drawn(rule)]
    if len(unused) == len(rules):
        return []
    dropped = [rule.label() for rule in unused]
    for rule in unused:
        root.removeChild(rule)  # deletes the rule
    layer.triggerRepaint()
    return dropped
