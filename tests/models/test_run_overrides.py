"""Run overrides of the card's threshold and minimum areas: one replaced card that every decoder sees."""

import math

import numpy as np
import pytest
import shapely
from osgeo import ogr

from polytopo.models import ModelCardError, PreparedRun, RunParams, SessionParams, load_model
from polytopo.models.cli import main

CPU = SessionParams(provider="cpu")
CARD = {"polytopo.family": "semantic", "seg_thresh": 0.5, "polytopo.input_range": [0, 1], "tile_size": 64,
        "polytopo.min_area_px": 4, "polytopo.min_hole_area_px": 4}


def probability_image():
    """A 0.9 block with a 10 x 10 px courtyard (0.0) and a 0.6 block of 12 x 12 px."""
    band = np.zeros((64, 64), np.float32)
    band[4:34, 4:34] = 0.9
    band[14:24, 14:24] = 0.0
    band[44:56, 40:52] = 0.6
    return band


@pytest.fixture
def scene(tmp_path, tiny):
    model = load_model(tiny.semantic_band_model(tmp_path / "band.onnx", tile=64, card=CARD), CPU)
    raster = tiny.write_raster(tmp_path / "p.tif", probability_image(), geotransform=(0.0, 1.0, 0.0, 64.0, 0.0, -1.0))
    return model, raster


def shapes(model, raster, **overrides):
    """(area px², hole count) of every polygon, largest first."""
    polygons = [p.geometry for p in PreparedRun(model, raster, RunParams(**overrides))]
    return sorted(((round(p.area), len(p.interiors)) for p in polygons), reverse=True)


def test_card_values_hold_without_overrides(scene):
    assert shapes(*scene) == [(800, 1), (144, 0)]  # 30² - 10² with its courtyard, and the 0.6 block


def test_higher_threshold_drops_the_weaker_block(scene):
    assert shapes(*scene, threshold=0.7) == [(800, 1)]


def test_minimum_hole_area_above_the_courtyard_fills_it(scene):
    assert shapes(*scene, min_hole_area_px=101) == [(900, 0), (144, 0)]
    assert shapes(*scene, min_hole_area_px=100) == [(800, 1), (144, 0)]  # a hole of exactly the minimum stays


def test_minimum_area_drops_the_smaller_block(scene):
    assert shapes(*scene, min_area_px=200) == [(800, 1)]


def test_overrides_replace_the_card_for_the_run_only(scene):
    model, raster = scene
    prediction = PreparedRun(model, raster, RunParams(threshold=0.7, min_area_px=9, min_hole_area_px=0))
    card = prediction.model.card
    assert (card.seg_threshold, card.min_area_px2, card.min_hole_area_px2) == (0.7, 9.0, 0.0)
    assert (model.card.seg_threshold, model.card.min_area_px2, model.card.min_hole_area_px2) == (0.5, 4.0, 4.0)
    assert PreparedRun(model, raster).model is model


@pytest.mark.parametrize("field, value", [("threshold", 1.5), ("threshold", -0.1), ("threshold", math.nan),
                                          ("min_area_px", -1), ("min_hole_area_px", math.inf), ("min_area_px", "10")])
def test_bad_override_is_refused_at_once(field, value):
    with pytest.raises(ModelCardError, match=f"Expected {field} to be .* but got"):
        RunParams(**{field: value})


def test_threshold_refused_for_a_family_without_one(tmp_path, tiny):
    model = load_model(tiny.instance_model(tmp_path / "instance.onnx"), CPU)
    raster = tiny.write_raster(tmp_path / "two.tif", np.zeros((2, 32, 32), np.float32))
    with pytest.raises(ModelCardError, match="Expected a segmentation threshold only .* but got one for family 'instance'"):
        PreparedRun(model, raster, RunParams(threshold=0.6))


def test_minimum_hole_area_reaches_the_instance_family(tmp_path, tiny):
    model = load_model(tiny.instance_model(tmp_path / "instance.onnx"), CPU)
    masks = np.zeros((2, 32, 32), np.float32)
    masks[0, 4:24, 4:24] = 1.0
    masks[0, 10:14, 10:14] = 0.0  # a 16 px² hole
    raster = tiny.write_raster(tmp_path / "two.tif", masks)
    holes = [len(p.geometry.interiors) for p in PreparedRun(model, raster, RunParams(min_hole_area_px=0))]
    filled = [len(p.geometry.interiors) for p in PreparedRun(model, raster, RunParams(min_hole_area_px=17))]
    assert (holes, filled) == ([1], [0])


def test_cli_run_takes_the_overrides(tmp_path, tiny, capsys):
    model = tiny.semantic_band_model(tmp_path / "band.onnx", tile=64, card=CARD)
    raster = tiny.write_raster(tmp_path / "p.tif", probability_image(), geotransform=(0.0, 1.0, 0.0, 64.0, 0.0, -1.0))
    out = tmp_path / "out.geojson"
    args = ["run", "--model", str(model), "--raster", raster, "--out", str(out), "--provider", "cpu", "--quiet"]
    assert main([*args, "--threshold", "0.7", "--min-hole-area-px", "101"]) == 0
    source = ogr.Open(str(out))
    geometries = [shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb())) for f in source.GetLayer(0)]
    assert [(g.area, len(g.interiors)) for g in geometries] == [(900.0, 0)]
    assert "threshold 0.7, minimum area 4 px², minimum hole area 101 px²" in capsys.readouterr().err
    assert main([*args, "--overwrite", "--threshold", "2"]) == 1
    assert "Expected threshold to be a number from 0 to 1 but got 2.0" in capsys.readouterr().err
