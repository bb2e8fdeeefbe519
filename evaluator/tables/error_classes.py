"""The error classes and the error layers of an evaluation, declared once.

Every per-feature record carries one error class (:data:`ERROR_CLASSES`), and every
evaluation writes the layers of :data:`ERROR_LAYERS`. Records, writers, the report, the
generated QML styles (:mod:`.qml_styles`), the plugin's layer names and the legend of
docs/plugin.md all read these two tables.

Colours are sRGB hex strings; fill opacities are 0–255; outline widths are millimetres
on the map.
"""

from dataclasses import dataclass

from ...core.errors import InvalidParameterError

__all__ = [
    "MATCHED_OK",
    "MISSED_REFERENCE",
    "PAIR_FAILURES",
    "UNMATCHED_PREDICTION",
    "ErrorClass",
    "ErrorLayer",
    "FILL_PATTERNS",
    "ERROR_CLASSES",
    "ERROR_LAYERS",
    "PREDICTION_CLASSES",
    "REFERENCE_CLASSES",
    "RECORD_TABLES",
    "error_class",
    "error_layer",
    "layers_top_to_bottom",
    "rgb",
]

#: Fill pattern → (hatch angles in degrees, or None for dots; words of the legend).
FILL_PATTERNS = {
    "none": ((), "none"),
    "diagonal": ((45,), "diagonal lines ／"),
    "back-diagonal": ((135,), "diagonal lines ＼"),
    "cross-hatch": ((45, 135), "cross-hatch"),
    "horizontal": ((0,), "horizontal lines"),
    "vertical": ((90,), "vertical lines"),
    "dots": (None, "dots"),
}


@dataclass(frozen=True)
class ErrorClass:
    """One error class and how it is drawn.

    Attributes
    ----------
    name : str
        The value of the records' ``error_class`` field (hole classes name the features
        of a hole layer, which has no such field).
    description : str
        What the class means, one lower-case phrase (legend and style rule label).
    colour : str
        Fill colour, ``#rrggbb``; outlines and hatching use it darkened.
    colour_name : str
        The colour in words, for the legend.
    pattern : str
        A key of :data:`FILL_PATTERNS` drawn over the fill.
    outline : str
        Exterior outline: ``"solid"`` or ``"dash"``.
    sides : tuple of str
        ``"prediction"`` and/or ``"reference"``: the records that can have the class;
        empty for hole classes.
    """

    name: str
    description: str
    colour: str
    colour_name: str
    pattern: str = "none"
    outline: str = "solid"
    sides: tuple = ("prediction", "reference")

    def __post_init__(self):
        if self.pattern not in FILL_PATTERNS:
            raise InvalidParameterError(f"Expected a pattern of {list(FILL_PATTERNS)} but got {self.pattern!r}")
        if self.outline not in ("solid", "dash"):
            raise InvalidParameterError(f"Expected outline 'solid' or 'dash' but got {self.outline!r}")


#: Every error class, in legend order (the order of the rules of the styles).
ERROR_CLASSES = (
    ErrorClass("ok", "exterior and every hole matched", "#1a9850", "green"),
    ErrorClass("missing hole", "a reference hole has no predicted hole", "#f46d43", "orange", "diagonal"),
    ErrorClass("extra hole", "a predicted hole has no reference hole", "#984ea3", "purple", "back-diagonal"),
    ErrorClass("misplaced hole", "reference and predicted holes both unmatched", "#e6ab02", "mustard",
               "cross-hatch"),
    ErrorClass("invalid", "the prediction breaks a validity rule", "#d7191c", "red", "horizontal", "dash"),
    ErrorClass("exterior mismatch", "exterior boundary IoU does not pass the ring threshold", "#2c7bb6",
               "blue", "vertical"),
    ErrorClass("unmatched", "no reference matched (false positive)", "#636363", "grey", "dots", "dash",
               ("prediction",)),
    ErrorClass("missed", "no prediction matched (false negative)", "#8c510a", "brown", "dots", "dash",
               ("reference",)),
    ErrorClass("missed hole", "reference hole without a matching predicted hole", "#ff00ff", "magenta",
               sides=()),
    ErrorClass("hallucinated hole", "predicted hole without a matching reference hole", "#00ffff", "cyan",
               "cross-hatch", "dash", ()),
)

#: The class of a matched pair that fails nothing, and of a prediction / reference that matched nothing.
MATCHED_OK, UNMATCHED_PREDICTION, MISSED_REFERENCE = "ok", "unmatched", "missed"
#: The classes of a matched pair that fails, in precedence order: the first that applies is the pair's
#: (an invalid prediction, then its exterior, then both hole errors, then one of them).
PAIR_FAILURES = ("invalid", "exterior mismatch", "misplaced hole", "missing hole", "extra hole")

#: Error classes of prediction records, in legend order.
PREDICTION_CLASSES = tuple(c.name for c in ERROR_CLASSES if "prediction" in c.sides)
#: Error classes of reference records, in legend order.
REFERENCE_CLASSES = tuple(c.name for c in ERROR_CLASSES if "reference" in c.sides)


@dataclass(frozen=True)
class ErrorLayer:
    """One layer of an evaluation's GeoPackage and how it is drawn.

    Attributes
    ----------
    name : str
        GeoPackage layer name (also the CSV and style file stem).
    title : str
        The name shown in a layer tree.
    description : str
        One sentence: layer metadata and style description.
    side : str
        ``"prediction"`` or ``"reference"``: the input the features come from.
    holes : bool
        The features are holes (one polygon per unmatched hole ring), not polygons.
    error_class : str or None
        None: the features are drawn by their ``error_class``. Else the one class
        drawn: for a polygon layer the layer holds only the records of that class.
    stack : int
        Drawing position, 0 on top.
    fill_alpha : int
        Fill opacity, 0–255.
    outline_width_mm : float
        Exterior outline width, millimetres.
    outline_colour : str or None
        Exterior outline colour ``#rrggbb``; None: the class colour darkened.
    outline_colour_name : str or None
        ``outline_colour`` in words, for the legend.
    """

    name: str
    title: str
    description: str
    side: str
    holes: bool
    error_class: object
    stack: int
    fill_alpha: int
    outline_width_mm: float
    outline_colour: object = None
    outline_colour_name: object = None

    @property
    def source(self):
        """The record table (a layer name of :data:`RECORD_TABLES`) the features are taken from."""
        if self.holes or self.error_class is None:
            return self.name
        return f"{self.side}s"


#: Every layer of an evaluation, in writing order.
ERROR_LAYERS = (
    ErrorLayer("predictions", "Predictions", "Predicted polygons with per-feature scores and error class",
               "prediction", False, None, 4, 120, 0.5),
    ErrorLayer("references", "References", "Reference polygons with their match and error class",
               "reference", False, None, 5, 70, 1.0),
    ErrorLayer("missed_holes", "Missed holes", "Reference holes that no predicted hole matched",
               "reference", True, "missed hole", 0, 230, 1.2, "#7a0177", "dark-purple"),
    ErrorLayer("hallucinated_holes", "Hallucinated holes", "Predicted holes that no reference hole matched",
               "prediction", True, "hallucinated hole", 1, 110, 1.2, "#008b8b", "dark-cyan"),
    ErrorLayer("unmatched_predictions", "Unmatched predictions",
               "Predictions that matched no reference polygon (false positives)",
               "prediction", False, "unmatched", 2, 120, 1.2, "#252525", "dark-grey"),
    ErrorLayer("missed_references", "Missed references",
               "Reference polygons that no prediction matched (false negatives)",
               "reference", False, "missed", 3, 120, 1.2, "#543005", "dark-brown"),
)

#: The layers that are record tables of their own (the others select records of one class).
RECORD_TABLES = tuple(layer.name for layer in ERROR_LAYERS if layer.source == layer.name)


def rgb(colour):
    """A ``#rrggbb`` colour as a tuple of three 0–255 integers.

    Examples
    --------
    >>> rgb(error_class("ok").colour)
    (26, 152, 80)
    """
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def error_class(name):
    """The :class:`ErrorClass` called ``name``.

    Examples
    --------
    >>> error_class("missed").sides
    ('reference',)
    """
    for found in ERROR_CLASSES:
        if found.name == name:
            return found
    raise InvalidParameterError(f"Expected an error class of {[c.name for c in ERROR_CLASSES]} but got {name!r}")


def error_layer(name):
    """The :class:`ErrorLayer` called ``name``.

    Examples
    --------
    >>> error_layer("missed_holes").title
    'Missed holes'
    """
    for found in ERROR_LAYERS:
        if found.name == name:
            return found
    raise InvalidParameterError(f"Expected an error layer of {[layer.name for layer in ERROR_LAYERS]} but got {name!r}")


def layers_top_to_bottom():
    """The layer names in drawing order, the top one first.

    Examples
    --------
    >>> layers_top_to_bottom()[:2]
    ('missed_holes', 'hallucinated_holes')
    """
    return tuple(layer.name for layer in sorted(ERROR_LAYERS, key=lambda layer: layer.stack))


if {MATCHED_OK, UNMATCHED_PREDICTION, MISSED_REFERENCE, *PAIR_FAILURES} - {c.name for c in ERROR_CLASSES}:
    raise InvalidParameterError("Expected the pair rule's classes among ERROR_CLASSES")
