"""The generated QML styles, read as XML without QGIS: rules, colours, patterns and labels from the table."""

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from polytopo.evaluator.tables.error_classes import ERROR_CLASSES, ERROR_LAYERS, error_class, rgb
from polytopo.core.errors import InvalidParameterError
from polytopo.evaluator.outputs.qml_styles import (
    HOLE_RING_DASH_MM,
    HOLE_RING_HALO_MM,
    HOLE_RING_LABEL,
    HOLE_RING_RULE,
    OTHER_COLOUR,
    dark,
    qml_style,
    write_styles,
)


def parsed(layer_name):
    return ET.fromstring(qml_style(layer_name).split("\n", 1)[1])


def options(element):
    return {o.get("name"): o.get("value") for o in element.findall("./Option/Option")}


def symbol_layers(root, symbol):
    return root.findall(f"./renderer-v2/symbols/symbol[@name='{symbol}']/layer")


@pytest.mark.parametrize("layer", ERROR_LAYERS, ids=lambda layer: layer.name)
def test_each_rule_fills_with_its_class_colour_at_the_layer_opacity(layer):
    root = parsed(layer.name)
    assert root.get("labelsEnabled") == "0" and root.find("./renderer-v2").get("type") == "RuleRenderer"
    rules = root.findall("./renderer-v2/rules/rule")
    legend_only = [] if layer.holes else ["FALSE"]  # the hole-ring entry of polygon layers
    if layer.error_class is None:
        classes = [c for c in ERROR_CLASSES if layer.side in c.sides]
        assert [r.get("filter") for r in rules] == [f"\"error_class\" = '{c.name}'" for c in classes] + [
            "ELSE", *legend_only]
        colours = [c.colour for c in classes] + [OTHER_COLOUR]
    else:
        assert [r.get("filter") for r in rules] == ["ELSE", *legend_only]
        colours = [error_class(layer.error_class).colour]
    for rule, colour in zip(rules, colours):
        fill, *_, exterior = [found for found in symbol_layers(root, rule.get("symbol"))
                              if found.get("class") != "SimpleLine" or options(found).get("ring_filter") in "01"]
        assert options(fill)["color"] == ",".join(map(str, (*rgb(colour), layer.fill_alpha)))
        assert options(exterior)["line_width"] == str(layer.outline_width_mm)
        expected_outline = rgb(layer.outline_colour) if layer.outline_colour else dark(colour)
        assert options(exterior)["line_color"] == ",".join(map(str, (*expected_outline, 255)))


def test_patterns_and_outlines_follow_the_class():
    root = parsed("predictions")
    for name in ("ok", "missing hole", "misplaced hole", "invalid", "unmatched"):
        symbol = str([c.name for c in ERROR_CLASSES].index(name))
        kinds = [found.get("class") for found in symbol_layers(root, symbol)]
        angles = [options(found)["angle"] for found in symbol_layers(root, symbol)
                  if found.get("class") == "LinePatternFill"]
        assert angles == {"ok": [], "missing hole": ["45"], "misplaced hole": ["45", "135"], "invalid": ["0"],
                          "unmatched": []}[name]
        assert ("PointPatternFill" in kinds) == (name == "unmatched")
        exterior = [options(found) for found in symbol_layers(root, symbol)
                    if options(found).get("ring_filter") == "1"][0]
        assert exterior["line_style"] == error_class(name).outline


def test_hole_layers_outline_every_ring_and_label_the_area():
    root = parsed("hallucinated_holes")
    rings = [options(found)["ring_filter"] for found in symbol_layers(root, "0") if found.get("class") == "SimpleLine"]
    assert rings == ["0"]
    assert "area_px2" in root.find("./labeling/settings/text-style").get("fieldName")
    assert "pred_holes" in parsed("references").find("./labeling/settings/text-style").get("fieldName")


def test_polygon_layers_show_the_hole_ring_in_the_legend():
    """The last rule of a polygon layer matches no feature and draws the hole ring (white halo, black dash) around
    the legend patch; hole layers have none."""
    for layer in ERROR_LAYERS:
        root = parsed(layer.name)
        last = root.findall("./renderer-v2/rules/rule")[-1]
        if layer.holes:
            assert last.get("key") != HOLE_RING_RULE
            continue
        assert (last.get("key"), last.get("filter"), last.get("label")) == (HOLE_RING_RULE, "FALSE", HOLE_RING_LABEL)
        lines = [options(found) for found in symbol_layers(root, last.get("symbol"))]
        assert [(line["line_color"], line["line_width"], line.get("line_style"), line["ring_filter"])
                for line in lines] == [("255,255,255,255", str(HOLE_RING_HALO_MM), None, "0"),
                                       ("0,0,0,255", str(HOLE_RING_DASH_MM), "dash", "0")]


def test_an_unknown_layer_is_refused():
    with pytest.raises(InvalidParameterError, match="Expected an error layer of .* but got 'summary'"):
        qml_style("summary")


def test_the_module_writes_one_file_per_layer(tmp_path):
    result = subprocess.run([sys.executable, "-m", "polytopo.evaluator.outputs.qml_styles", str(tmp_path)],
                            capture_output=True, text=True, check=True)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{layer.name}.qml" for layer in ERROR_LAYERS)
    assert len(result.stdout.splitlines()) == len(ERROR_LAYERS)
    assert [path.read_text(encoding="utf-8") for path in write_styles(tmp_path / "again")] == [
        qml_style(layer.name) for layer in ERROR_LAYERS]


def test_the_module_answers_help_and_a_missing_folder_without_writing(tmp_path):
    """``--help`` prints the usage (it once became a folder of styles); no folder is an error naming it."""
    for argv, code, stream, text in ((["--help"], 0, "stdout", "FOLDER"), ([], 2, "stderr", "folder")):
        result = subprocess.run([sys.executable, "-m", "polytopo.evaluator.outputs.qml_styles", *argv],
                                capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == code and text in getattr(result, stream)
    assert list(tmp_path.iterdir()) == []
