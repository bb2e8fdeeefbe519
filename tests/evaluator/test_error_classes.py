"""The error class table: its invariants, and the legend of docs/plugin.md that must list its values."""

import re
from pathlib import Path

import pytest

from polytopo.evaluator.tables.error_classes import (
    ERROR_CLASSES,
    ERROR_LAYERS,
    FILL_PATTERNS,
    PREDICTION_CLASSES,
    RECORD_TABLES,
    REFERENCE_CLASSES,
    ErrorClass,
    error_class,
    error_layer,
    layers_top_to_bottom,
)
from polytopo.core.errors import InvalidParameterError

PLUGIN_DOC = Path(__file__).resolve().parents[2] / "docs" / "plugin.md"


def percent(alpha):
    """Opacity 0–255 as the whole percent the legend shows."""
    return round(alpha * 100 / 255)


def class_rows():
    """The legend's class table, one row per class of prediction or reference records."""
    rows = []
    for c in ERROR_CLASSES:
        if not c.sides:
            continue
        side = f" ({c.sides[0]}s)" if len(c.sides) == 1 else ""
        pattern = FILL_PATTERNS[c.pattern][1] + (", dashed outline" if c.outline == "dash" else "")
        rows.append(f"| {c.name}{side} | {c.colour_name} `{c.colour}` | {pattern} | {c.description} |")
    return rows


def layer_rows():
    """The legend's error layer table, one row per layer of a single class, top layer first."""
    rows = []
    for name in layers_top_to_bottom():
        layer = error_layer(name)
        if layer.error_class is None:
            continue
        c = error_class(layer.error_class)
        pattern = "no pattern" if c.pattern == "none" else FILL_PATTERNS[c.pattern][1]
        outline = "dashed" if c.outline == "dash" else "solid"
        rows.append(f"| {layer.title.lower()} | {c.colour_name} `{c.colour}` ({percent(layer.fill_alpha)} %), "
                    f"{pattern}, thick {outline} {layer.outline_colour_name} outline |")
    return rows


def legend_section():
    text = PLUGIN_DOC.read_text(encoding="utf-8")
    return text[text.index("## Styles legend"):text.index("## Headless use")]


def table_rows(section, header):
    """The body rows of the Markdown table that starts with ``header``."""
    lines = section[section.index(header):].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_legend_of_docs_plugin_lists_the_table():
    section = legend_section()
    assert table_rows(section, "| error class | colour | pattern | meaning |") == class_rows()
    assert table_rows(section, "| error layer | style |") == layer_rows()
    predictions, references = error_layer("predictions"), error_layer("references")
    sentence = (f"Predictions are filled at {percent(predictions.fill_alpha)} % opacity with a "
                f"{predictions.outline_width_mm:g} mm outline, references at {percent(references.fill_alpha)} % "
                f"with a {references.outline_width_mm:g} mm outline")
    assert sentence in re.sub(r"\s+", " ", section)


def test_record_classes_follow_the_table_order():
    assert PREDICTION_CLASSES == ("ok", "missing hole", "extra hole", "misplaced hole", "invalid",
                                  "exterior mismatch", "unmatched")
    assert REFERENCE_CLASSES == PREDICTION_CLASSES[:-1] + ("missed",)


def test_every_layer_names_a_known_class_side_and_source():
    names = [layer.name for layer in ERROR_LAYERS]
    assert len(set(names)) == len(names) and sorted(layer.stack for layer in ERROR_LAYERS) == list(range(len(names)))
    assert RECORD_TABLES == ("predictions", "references", "missed_holes", "hallucinated_holes")
    for layer in ERROR_LAYERS:
        assert layer.side in ("prediction", "reference") and 0 <= layer.fill_alpha <= 255
        assert layer.source in RECORD_TABLES
        if layer.error_class is not None:
            drawn = error_class(layer.error_class)
            assert layer.holes == (not drawn.sides), layer.name
            assert drawn.sides in ((), (layer.side,)) and layer.outline_colour_name, layer.name
    assert error_layer("unmatched_predictions").source == "predictions"
    assert error_layer("missed_references").source == "references"


def test_unknown_names_and_values_are_refused_with_the_choices():
    with pytest.raises(InvalidParameterError, match="Expected an error class of .*'ok'.* but got 'okay'"):
        error_class("okay")
    with pytest.raises(InvalidParameterError, match="Expected an error layer of .* but got 'holes'"):
        error_layer("holes")
    with pytest.raises(InvalidParameterError, match="Expected a pattern of"):
        ErrorClass("x", "y", "#000000", "black", pattern="zigzag")
    with pytest.raises(InvalidParameterError, match="Expected outline 'solid' or 'dash' but got 'dot'"):
        ErrorClass("x", "y", "#000000", "black", outline="dot")
