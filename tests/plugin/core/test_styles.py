"""The generated QML styles load, and rendered outputs show each error class in its table colour.

The rendering tests draw an evaluation GeoPackage's layers offscreen with
``QgsMapRendererSequentialJob`` at 5 pixels per metre into PNG files and read the pixels
at known map positions of the scene: the exported GeoPackage with the styles saved inside
it, and the evaluator's GeoPackage (no saved styles) with the generated style applied.
"""

import pytest

from polytopo.evaluator.tables.error_classes import ERROR_CLASSES, error_class, error_layer, rgb
from polytopo.evaluator.tables.error_classes import ERROR_LAYERS as TABLE_LAYERS
from polytopo.evaluator.outputs.qml_styles import write_styles
from polytopo.plugin.runs import evaluate_layers, export_run
from polytopo.plugin.runs.styles import ERROR_LAYERS, load_style

#: Colours (RGB) and fill opacity (0–255) of the error class table, by layer and class.
PREDICTION_FILL_ALPHA = error_layer("predictions").fill_alpha
REFERENCE_FILL_ALPHA = error_layer("references").fill_alpha
CLASS_COLOURS = {c.name: rgb(c.colour) for c in ERROR_CLASSES if c.sides}
MISSED_HOLE = (rgb(error_class("missed hole").colour), error_layer("missed_holes").fill_alpha)
HALLUCINATED_HOLE = (rgb(error_class("hallucinated hole").colour), error_layer("hallucinated_holes").fill_alpha)
PIXELS_PER_METRE = 5
WINDOW_PX = 9
TOLERANCE = 12


def on_white(rgb, alpha):
    """The colour a fill of ``rgb`` at opacity ``alpha`` shows over a white background."""
    return tuple(round(255 + (channel - 255) * alpha / 255) for channel in rgb)


FIELDS = "&".join(f"field={name}:{kind}" for name, kind in (
    ("error_class", "string"), ("pred_holes", "integer"), ("ref_holes", "integer"), ("area_px2", "double")))


def memory_layer(name):
    """An empty polygon layer with the fields the styles use."""
    from qgis.core import QgsVectorLayer

    return QgsVectorLayer(f"Polygon?crs=EPSG:32616&{FIELDS}", name, "memory")


def test_every_style_loads_with_its_rules(qgis_app):
    assert sorted(ERROR_LAYERS) == sorted(layer.name for layer in TABLE_LAYERS)
    for name in ERROR_LAYERS:
        layer = memory_layer(name)
        load_style(layer, name)
        rules = layer.renderer().rootRule().children()
        assert rules and all(rule.symbol() is not None for rule in rules), name
        assert layer.labeling() is not None and not layer.labelsEnabled(), name
    predictions = memory_layer("p")
    load_style(predictions, "predictions")
    rules = predictions.renderer().rootRule().children()
    filters = [rule.filterExpression() for rule in rules]
    assert filters[:-2] == [f"\"error_class\" = '{name}'" for name in CLASS_COLOURS if name != "missed"]
    assert rules[-2].isElse() and (rules[-1].ruleKey(), filters[-1]) == ("hole-rings", "FALSE")
    hole_rings = rules[-1].symbol().symbolLayers()  # legend only: the dashed line around the legend patch
    assert [(layer.layerType(), layer.properties().get("ring_filter")) for layer in hole_rings] == [
        ("SimpleLine", "0"), ("SimpleLine", "0")]
    ok_symbol = predictions.renderer().rootRule().children()[0].symbol()
    ring_filters = [layer.properties().get("ring_filter") for layer in ok_symbol.symbolLayers()
                    if layer.layerType() == "SimpleLine"]
    assert ring_filters == ["1", "2", "2"]  # exterior outline, then the hole rings' halo and dash


def test_a_written_qml_file_gives_qgis_the_same_style(qgis_app, tmp_path):
    """``write_styles`` files load with loadNamedStyle into the very style QGIS reads from the generated text."""
    from qgis.PyQt.QtXml import QDomDocument

    def exported(layer):
        document = QDomDocument()
        layer.exportNamedStyle(document)
        return document.toString()

    for path in write_styles(tmp_path):
        from_file, generated = memory_layer(path.stem), memory_layer(path.stem)
        message, loaded = from_file.loadNamedStyle(str(path))
        assert loaded, (path, message)
        load_style(generated, path.stem)
        assert exported(from_file) == exported(generated), path.stem


@pytest.fixture(scope="module")
def run(scene):
    """The scene's evaluation."""
    prediction, reference = scene.layers()
    return evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score")


@pytest.fixture(scope="module")
def styled_gpkg(run, tmp_path_factory):
    """The scene's evaluation exported once; its layers carry the saved styles."""
    folder = tmp_path_factory.mktemp("styled")
    return export_run(run, folder / "evaluation.gpkg", folder / "report")["geopackage"]


@pytest.fixture(scope="module")
def evaluator_gpkg(run, tmp_path_factory):
    """The scene's evaluation written by the evaluator (``write_report``): a GeoPackage without saved styles."""
    from polytopo.evaluator import write_report

    return write_report(run.evaluation, tmp_path_factory.mktemp("plain") / "out", frame=run.frame,
                        plots=False)["geopackage"]


def render_window(gpkg, layer_name, centre_x, centre_y, size_m=60.0, apply_generated=False):
    """Render one layer around a map point to a PNG; return the PNG's pixels in a small window at that point.

    With ``apply_generated`` the layer gets the generated style first, else it keeps the style saved in the file.
    """
    from qgis.core import QgsMapRendererSequentialJob, QgsMapSettings, QgsPointXY, QgsRectangle, QgsVectorLayer
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor, QImage

    layer = QgsVectorLayer(f"{gpkg}|layername={layer_name}", layer_name, "ogr")
    if apply_generated:
        load_style(layer, layer_name)
    assert layer.isValid() and layer.renderer().type() == "RuleRenderer"
    settings = QgsMapSettings()
    settings.setLayers([layer])
    settings.setDestinationCrs(layer.crs())
    settings.setBackgroundColor(QColor(255, 255, 255))
    side = int(size_m * PIXELS_PER_METRE)
    settings.setOutputSize(QSize(side, side))
    half = size_m / 2
    settings.setExtent(QgsRectangle(centre_x - half, centre_y - half, centre_x + half, centre_y + half))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    png = gpkg.with_name(f"{layer_name}_{centre_x:.0f}_{centre_y:.0f}.png")
    assert job.renderedImage().save(str(png), "PNG")
    image = QImage(str(png))
    centre = settings.mapToPixel().transform(QgsPointXY(centre_x, centre_y))
    x0, y0, r = int(round(centre.x())), int(round(centre.y())), WINDOW_PX // 2
    pixels = [image.pixelColor(x, y) for x in range(x0 - r, x0 + r + 1) for y in range(y0 - r, y0 + r + 1)]
    return [(c.red(), c.green(), c.blue()) for c in pixels]


def share_of(pixels, colour):
    """Fraction of ``pixels`` within TOLERANCE of ``colour`` on every channel."""
    close = [p for p in pixels if all(abs(a - b) <= TOLERANCE for a, b in zip(p, colour))]
    return len(close) / len(pixels)


def building_point(tools, index, x, y):
    """Map coordinates of the point (x, y) metres from the lower-left corner of scene building ``index``."""
    return tools.scene_origin[0] + index * tools.spacing_m + x, tools.scene_origin[1] + y


#: (layer, scene position, point in the building (m), class) sampled inside the fill, away from rings.
FILL_SAMPLES = [
    ("predictions", 0, (7, 7), "ok"),
    ("predictions", 1, (7, 7), "missing hole"),
    ("predictions", 2, (7, 7), "extra hole"),
    ("predictions", 3, (7, 33), "misplaced hole"),
    ("predictions", 4, (7, 7), "invalid"),
    ("predictions", 5, (20, 20), "exterior mismatch"),
    ("predictions", 7, (7, 7), "unmatched"),
    ("references", 0, (7, 7), "ok"),
    ("references", 6, (7, 7), "missed"),
    ("unmatched_predictions", 7, (7, 7), "unmatched"),
    ("missed_references", 6, (7, 7), "missed"),
]


@pytest.mark.parametrize(("layer_name", "position", "point", "error_class"), FILL_SAMPLES)
def test_each_class_shows_its_own_colour(styled_gpkg, tools, layer_name, position, point, error_class):
    """The class colour dominates the fill (hatching and dots cover the rest); no other class colour shows."""
    alpha = error_layer(layer_name).fill_alpha
    assert alpha == (REFERENCE_FILL_ALPHA if layer_name in ("references",) else PREDICTION_FILL_ALPHA)
    pixels = render_window(styled_gpkg, layer_name, *building_point(tools, position, *point))
    expected = on_white(CLASS_COLOURS[error_class], alpha)
    minimum = 0.9 if error_class == "ok" else 0.4
    assert share_of(pixels, expected) >= minimum, (error_class, expected, sorted(set(pixels))[:8])
    for other, colour in CLASS_COLOURS.items():
        if other != error_class:
            assert share_of(pixels, on_white(colour, alpha)) < 0.05, (error_class, other)


#: Hole layers sampled inside the hole, and the class their style draws.
HOLE_SAMPLES = [("missed_holes", 1, (20, 20), "missed hole"), ("hallucinated_holes", 2, (20, 20), "hallucinated hole")]


@pytest.mark.parametrize(("layer_name", "position", "point", "class_name"), FILL_SAMPLES + HOLE_SAMPLES)
def test_the_generated_style_on_the_evaluator_geopackage_shows_the_table_colours(
        evaluator_gpkg, tools, layer_name, position, point, class_name):
    """The evaluator's GeoPackage with the generated style: the class's table colour at the layer's opacity
    dominates the sample (patterns cover the rest) and no other class colour shows."""
    drawn, alpha = error_class(class_name), error_layer(layer_name).fill_alpha
    pixels = render_window(evaluator_gpkg, layer_name, *building_point(tools, position, *point), apply_generated=True)
    expected = on_white(rgb(drawn.colour), alpha)
    minimum = 0.9 if drawn.pattern == "none" else 0.4
    assert share_of(pixels, expected) >= minimum, (class_name, expected, sorted(set(pixels))[:8])
    for other in ERROR_CLASSES:
        if other.name != class_name:
            assert share_of(pixels, on_white(rgb(other.colour), alpha)) < 0.05, (class_name, other.name)


def test_a_missed_hole_is_solid_magenta_and_a_hallucinated_hole_cyan(styled_gpkg, tools):
    missed = render_window(styled_gpkg, "missed_holes", *building_point(tools, 1, 20, 20))
    assert share_of(missed, on_white(*MISSED_HOLE)) >= 0.9
    hallucinated = render_window(styled_gpkg, "hallucinated_holes", *building_point(tools, 2, 20, 20))
    assert share_of(hallucinated, on_white(*HALLUCINATED_HOLE)) >= 0.4
    assert share_of(hallucinated, on_white(*MISSED_HOLE)) == 0
    assert share_of(missed, on_white(*HALLUCINATED_HOLE)) == 0


def test_hole_rings_stand_out_from_exterior_outlines(styled_gpkg, tools):
    """A hole ring is a black dash on a white halo; the exterior is a solid dark line of the class colour."""
    hole_edge = render_window(styled_gpkg, "predictions", *building_point(tools, 0, 15.2, 20))
    exterior_edge = render_window(styled_gpkg, "predictions", *building_point(tools, 0, 0.2, 20))
    black, white = (0, 0, 0), (255, 255, 255)
    assert share_of(hole_edge, black) > 0.05 and share_of(hole_edge, white) > 0.05
    assert share_of(exterior_edge, black) == 0
    dark_green = tuple(int(channel * 0.6) for channel in CLASS_COLOURS["ok"])
    assert share_of(exterior_edge, dark_green) > 0.1


def test_outside_every_feature_the_map_stays_white(styled_gpkg, tools):
    pixels = render_window(styled_gpkg, "predictions", *building_point(tools, 0, 50, 20))
    assert share_of(pixels, (255, 255, 255)) == 1.0
