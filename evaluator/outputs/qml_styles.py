"""QGIS QML styles of the evaluation layers, generated from :mod:`.error_classes`.

Each layer of :data:`~.error_classes.ERROR_LAYERS` gets a rule-based style: one rule per
error class (``"error_class" = '…'``) and a grey dotted fallback for records without a
class, or a single rule for a layer of one class. Fills take the class colour at the
layer's opacity and a hatch or dot pattern in the class colour darkened to 60 %; the
exterior ring is outlined in that dark colour, and on polygon layers the hole rings are a
black dash on a white halo, which a last rule (:data:`HOLE_RING_RULE`, matching no
feature) shows in the legend. Labels are defined but off. Sizes are millimetres.

The text is plain QML that QGIS 3.22 and later load with ``importNamedStyle`` (or
``loadNamedStyle`` once written to a ``.qml`` file); nothing here imports QGIS. Write the
files with ``python -m polytopo.evaluator.outputs.qml_styles FOLDER``.
"""

import argparse
import sys
from pathlib import Path
from xml.sax.saxutils import escape

from ..tables.error_classes import ERROR_CLASSES, ERROR_LAYERS, FILL_PATTERNS, error_class, error_layer, rgb

__all__ = ["OTHER_COLOUR", "HOLE_RING_HALO_MM", "HOLE_RING_DASH_MM", "HOLE_RING_LABEL", "HOLE_RING_RULE", "dark",
           "main", "qml_style", "write_styles"]

#: Fill of records whose class is not set (the fallback rule), ``#rrggbb``.
OTHER_COLOUR = "#bdbdbd"
#: Width of the white halo under hole rings, millimetres.
HOLE_RING_HALO_MM = 1.6
#: Width of the black dash of hole rings, millimetres.
HOLE_RING_DASH_MM = 0.8
#: Key and legend text of the rule that shows the hole rings in the legend (it draws nothing itself).
HOLE_RING_RULE, HOLE_RING_LABEL = "hole-rings", "hole ring (of any class): black dash on a white halo"
_HATCH_SPACING_MM, _HATCH_WIDTH_MM = 2.6, 0.35
_DOT_SPACING_MM, _DOT_SIZE_MM = 2.2, 0.9
_LABELS = {
    "prediction": "'holes ' || \"pred_holes\" || ' / ' || coalesce(to_string(\"ref_holes\"), '–')",
    "reference": "'holes ' || \"ref_holes\" || ' / ' || coalesce(to_string(\"pred_holes\"), '–')",
    "hole": "format_number(\"area_px2\", 0) || ' px²'",
}
_LABEL_WORDS = {"prediction": "predicted / reference holes", "reference": "reference / predicted holes",
                "hole": "area (px²)"}


def _attr(text):
    return escape(text, {'"': "&quot;"})


def dark(colour):
    """``colour`` (``#rrggbb``) darkened to 60 % as an ``(r, g, b)`` tuple, for outlines and hatching.

    Examples
    --------
    >>> dark("#1a9850")
    (15, 91, 48)
    """
    return tuple(int(channel * 0.6) for channel in rgb(colour))


def _qcolor(rgb, alpha=255):
    return ",".join(str(value) for value in (*rgb, alpha))


def _options(indent, values):
    pad = " " * indent
    lines = [f"{pad}<Option type=\"Map\">"]
    lines += [f"{pad}  <Option name=\"{name}\" type=\"QString\" value=\"{_attr(str(value))}\"/>"
              for name, value in values]
    return lines + [f"{pad}</Option>"]


def _layer(indent, kind, values, sub_symbol=()):
    pad = " " * indent
    return [f"{pad}<layer class=\"{kind}\" enabled=\"1\" pass=\"0\" locked=\"0\">", *_options(indent + 2, values),
            *sub_symbol, f"{pad}</layer>"]


def _symbol(indent, kind, name, layers):
    pad = " " * indent
    return [f"{pad}<symbol type=\"{kind}\" name=\"{name}\" alpha=\"1\" clip_to_extent=\"1\" force_rhr=\"0\">",
            *layers, f"{pad}</symbol>"]


def _line(values):
    return _layer(8, "SimpleLine", [*values, ("joinstyle", "miter")])


def _pattern_layers(symbol_name, pattern, rgb):
    angles, _ = FILL_PATTERNS[pattern]
    colour = _qcolor(rgb)
    if angles is None:
        marker = _layer(12, "SimpleMarker", [("name", "circle"), ("size", _DOT_SIZE_MM), ("color", colour),
                                             ("outline_style", "no")])
        return [_layer(8, "PointPatternFill", [
            ("distance_x", _DOT_SPACING_MM), ("distance_y", _DOT_SPACING_MM),
            ("displacement_x", _DOT_SPACING_MM / 2), ("displacement_y", 0),
        ], _symbol(10, "marker", f"@{symbol_name}@1", marker))]
    return [_layer(8, "LinePatternFill", [
        ("angle", angle), ("distance", _HATCH_SPACING_MM), ("line_width", _HATCH_WIDTH_MM), ("color", colour),
    ], _symbol(10, "line", f"@{symbol_name}@{index}",
               _layer(12, "SimpleLine", [("line_color", colour), ("line_width", _HATCH_WIDTH_MM)])))
        for index, angle in enumerate(angles, start=1)]


def _fill_symbol(name, layer, colour, pattern, outline, outline_rgb):
    """A fill symbol: class fill, its pattern, the exterior outline and (polygon layers) the hole rings."""
    layers = [_layer(8, "SimpleFill", [("color", _qcolor(rgb(colour), layer.fill_alpha)),
                                       ("outline_style", "no"), ("style", "solid")])]
    for pattern_layer in _pattern_layers(name, pattern, dark(colour)):
        layers.append(pattern_layer)
    layers.append(_line([("line_color", _qcolor(outline_rgb)), ("line_width", layer.outline_width_mm),
                         ("line_style", outline), ("ring_filter", 0 if layer.holes else 1)]))
    if not layer.holes:
        layers += _hole_ring_lines(ring_filter=2)
    return _symbol(6, "fill", name, [line for part in layers for line in part])


def _hole_ring_lines(ring_filter):
    """The white halo and the black dash of hole rings (``ring_filter`` 2: interior rings only, 0: every ring)."""
    return [_line([("line_color", _qcolor((255, 255, 255))), ("line_width", HOLE_RING_HALO_MM),
                   ("ring_filter", ring_filter)]),
            _line([("line_color", _qcolor((0, 0, 0))), ("line_width", HOLE_RING_DASH_MM),
                   ("line_style", "dash"), ("ring_filter", ring_filter)])]


def _hole_ring_legend(symbol_name):
    """A rule that matches no feature (``FALSE``) and shows the hole-ring line in the legend.

    The rings are drawn by every class's symbol (their interior rings only), which a
    legend patch, a plain rectangle, never shows; this entry draws the same line around
    its patch.
    """
    rule = (f"      <rule key=\"{HOLE_RING_RULE}\" filter=\"FALSE\" symbol=\"{symbol_name}\" "
            f"label=\"{_attr(HOLE_RING_LABEL)}\"/>")
    lines = _hole_ring_lines(ring_filter=0)
    return rule, _symbol(6, "fill", symbol_name, [line for part in lines for line in part])


def _rules_and_symbols(layer):
    rules, symbols = _class_rules_and_symbols(layer)
    if not layer.holes:
        rule, symbol = _hole_ring_legend(str(len(rules)))
        rules.append(rule)
        symbols += symbol
    return rules, symbols


def _class_rules_and_symbols(layer):
    if layer.error_class is not None:
        drawn = error_class(layer.error_class)
        rules = [f"      <rule key=\"all\" filter=\"ELSE\" symbol=\"0\" "
                 f"label=\"{_attr(f'{drawn.name}: {drawn.description}')}\"/>"]
        return rules, _fill_symbol("0", layer, drawn.colour, drawn.pattern, drawn.outline,
                                   rgb(layer.outline_colour))
    classes = [c for c in ERROR_CLASSES if layer.side in c.sides]
    rules, symbols = [], []
    for index, drawn in enumerate(classes):
        condition = f"\"error_class\" = '{drawn.name}'"
        rules.append(f"      <rule key=\"class-{index}\" filter=\"{_attr(condition)}\" symbol=\"{index}\" "
                     f"label=\"{_attr(f'{drawn.name}: {drawn.description}')}\"/>")
        symbols += _fill_symbol(str(index), layer, drawn.colour, drawn.pattern, drawn.outline, dark(drawn.colour))
    other = str(len(classes))
    rules.append(f"      <rule key=\"class-{other}\" filter=\"ELSE\" symbol=\"{other}\" "
                 f"label=\"other: error class not set\"/>")
    symbols += _fill_symbol(other, layer, OTHER_COLOUR, "none", "dot", dark(OTHER_COLOUR))
    return rules, symbols


def qml_style(layer_name):
    """The QML style of one evaluation layer.

    Parameters
    ----------
    layer_name : str
        A layer of :data:`~.error_classes.ERROR_LAYERS`.

    Returns
    -------
    str
        The QML document (categories Symbology and Labeling, labels off).

    Raises
    ------
    InvalidParameterError
        ``layer_name`` is not an evaluation layer.

    Examples
    --------
    >>> text = qml_style("missed_holes")
    >>> text.count("<rule "), "255,0,255,230" in text
    (1, True)
    """
    layer = error_layer(layer_name)
    role = "hole" if layer.holes else layer.side
    rules, symbols = _rules_and_symbols(layer)
    lines = [
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>",
        f"<!-- PolyTopo {layer.name}: {_attr(layer.description)}; label: {_LABEL_WORDS[role]}. "
        "Labels are off; turn them on in Layer Properties › Labels. -->",
        "<qgis version=\"3.22.0\" styleCategories=\"Symbology|Labeling\" labelsEnabled=\"0\">",
        "  <renderer-v2 type=\"RuleRenderer\" symbollevels=\"0\" forceraster=\"0\" enableorderby=\"0\">",
        "    <rules key=\"root\">", *rules, "    </rules>",
        "    <symbols>", *symbols, "    </symbols>",
        "  </renderer-v2>",
        "  <labeling type=\"simple\">",
        "    <settings calloutType=\"simple\">",
        f"      <text-style fieldName=\"{_attr(_LABELS[role])}\" isExpression=\"1\" fontSize=\"8\" "
        "fontSizeUnit=\"Point\" textColor=\"0,0,0,255\"/>",
        "      <text-buffer bufferDraw=\"1\" bufferSize=\"0.8\" bufferSizeUnits=\"MM\" bufferColor=\"255,255,255,255\"/>",
        "      <placement placement=\"1\" dist=\"0\"/>",
        "    </settings>",
        "  </labeling>",
        "</qgis>",
    ]
    return "\n".join(lines) + "\n"


def write_styles(folder):
    """Write ``<layer>.qml`` for every evaluation layer into ``folder`` (created if needed).

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of :data:`~.error_classes.ERROR_LAYERS`.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for layer in ERROR_LAYERS:
        path = folder / f"{layer.name}.qml"
        path.write_text(qml_style(layer.name), encoding="utf-8")
        written.append(path)
    return written


def main(argv=None):
    """Write every layer's style into the folder the command line names and print the files; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m polytopo.evaluator.outputs.qml_styles",
                                     description="Write the QGIS QML style of every evaluation layer into FOLDER.")
    parser.add_argument("folder", type=Path, help="folder to write the .qml files into (created when missing)")
    for written_path in write_styles(parser.parse_args(argv).folder):
        print(written_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
