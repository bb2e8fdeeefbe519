"""The semantic family end to end: raster → ONNX → polygons with holes → GeoPackage, and bad input."""

import os

import numpy as np
import pytest
import shapely
from osgeo import ogr

from polytopo.models import (
    GeoreferenceWarning,
    InferenceCanceled,
    InferenceError,
    MemoryBudgetError,
    ModelCardError,
    OutputError,
    PreparedRun,
    RasterError,
    RunParams,
    SessionParams,
    load_model,
    run_to_file,
)
from polytopo.models.cli import main

CPU = SessionParams(provider="cpu")


def read_layer(path):
    source = ogr.Open(str(path))
    layer = source.GetLayer(0)
    features = [
        (shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb())), f.GetField("class_id"), f.GetField("class_name"), f.GetField("score"))
        for f in layer
    ]
    srs = layer.GetSpatialRef()
    return features, (srs.GetAuthorityCode(None) if srs is not None else None)


def buildings_image(height=160, width=150):
    """Band 1 (0/255): a ring building crossing the tile rows at 48 and 96, a plain block, a speck."""
    band = np.zeros((height, width), np.uint8)
    band[30:110, 20:90] = 255
    band[50:90, 40:70] = 0  # courtyard, straddles the strip boundaries
    band[120:150, 100:140] = 255
    band[5, 140] = 255
    return np.stack([band, band // 2, band // 3])


@pytest.fixture
def deepness(tmp_path, tiny):
    return load_model(tiny.deepness_model(tmp_path / "deepness.onnx", tile=64), CPU)


def test_deepness_model_end_to_end_to_geopackage(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    out = tmp_path / "out.gpkg"
    report = run_to_file(deepness, raster, out)
    features, epsg = read_layer(out)
    assert epsg == "32633"
    assert report.tiles_run == report.tiles_total == 9 and report.invalid_dropped == 0
    assert report.provider.primary == "CPUExecutionProvider"
    by_area = sorted(features, key=lambda f: -f[0].area)
    ring, block, speck = (f[0] for f in by_area)
    assert all(f[2] == "building" and f[1] == 1 and f[3] == pytest.approx(1.0) for f in features)
    assert ring.is_valid and len(ring.interiors) == 1
    assert ring.area == pytest.approx((80 * 70 - 40 * 30) * 0.25)
    assert ring.bounds == pytest.approx((500010.0, 3999945.0, 500045.0, 3999985.0))
    assert block.area == pytest.approx(30 * 40 * 0.25) and len(block.interiors) == 0
    assert 0 < speck.area <= 0.25  # a 1 px square: Douglas-Peucker at 1 px may cut a corner
    assert sorted(os.listdir(tmp_path)) == ["deepness.onnx", "out.gpkg", "rgb.tif"]


def test_batches_change_nothing(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    one = [p.geometry.wkt for p in PreparedRun(deepness, raster, RunParams(batch_size=1))]
    three = [p.geometry.wkt for p in PreparedRun(deepness, raster, RunParams(batch_size=3))]
    assert sorted(one) == sorted(three) and len(one) == 3


def test_small_segment_median_filter_removes_specks(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "d.onnx", tile=64)
    from polytopo.models import write_card

    write_card(path, {"seg_small_segment": 3})
    model = load_model(path, CPU)
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    polygons = list(PreparedRun(model, raster))
    assert len(polygons) == 2 and min(p.geometry.area for p in polygons) > 100


def test_output_appears_only_when_complete(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    out = tmp_path / "out.gpkg"
    seen = []

    def progress(done, total):
        seen.append((done, total, out.exists(), sorted(p.name for p in tmp_path.iterdir() if "polytopo-partial" in p.name)))

    run_to_file(deepness, raster, out, progress=progress)
    assert seen[-1][0] == seen[-1][1] == 9
    assert all(not exists and partial for _d, _t, exists, partial in seen)
    assert out.exists() and not [p for p in tmp_path.iterdir() if "partial" in p.name]


def test_cancel_leaves_no_output(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    out = tmp_path / "out.gpkg"
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(InferenceCanceled):
        run_to_file(deepness, raster, out, cancel=cancel)
    assert len(calls) == 3
    assert sorted(os.listdir(tmp_path)) == ["deepness.onnx", "rgb.tif"]


def test_nan_outputs_fail_without_output(tmp_path, tiny):
    model = load_model(tiny.nan_model(tmp_path / "nan.onnx"), CPU)
    raster = tiny.write_raster(tmp_path / "f.tif", np.linspace(0, 1, 64 * 64, dtype=np.float32).reshape(64, 64))
    with pytest.raises(InferenceError, match="NaN"):
        run_to_file(model, raster, tmp_path / "out.gpkg")
    assert not (tmp_path / "out.gpkg").exists()
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


def test_all_nodata_raster_gives_an_empty_layer_with_a_message(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "nd.tif", np.zeros((3, 70, 70), np.uint8), nodata=0)
    report = run_to_file(deepness, raster, tmp_path / "out.gpkg")
    features, _epsg = read_layer(tmp_path / "out.gpkg")
    assert features == [] and report.tiles_run == 0
    assert any("nodata" in message for message in report.messages)


def test_nodata_pixels_never_produce_polygons(tmp_path, tiny):
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card={"polytopo.family": "semantic", "tile_size": 32, "polytopo.input_range": [0, 1]}), CPU)
    image = np.ones((40, 40), np.float32)
    image[:, 20:] = -1.0  # nodata on the right half, which the model would call foreground
    raster = tiny.write_raster(tmp_path / "f.tif", image, nodata=-1.0)
    (polygon,) = list(PreparedRun(model, raster))
    assert polygon.geometry.area == pytest.approx(40 * 20 * 0.25)


def test_raster_without_georeference_gives_pixel_coordinates(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "pix.tif", buildings_image(), geotransform=None)
    out = tmp_path / "out.gpkg"
    with pytest.warns(GeoreferenceWarning):
        report = run_to_file(deepness, raster, out)
    features, epsg = read_layer(out)
    assert epsg is None and any("georeference" in m for m in report.messages)
    ring = max(features, key=lambda f: f[0].area)[0]
    assert ring.bounds == (20.0, 30.0, 90.0, 110.0)


def test_geojson_output(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    run_to_file(deepness, raster, tmp_path / "out.geojson")
    features, _epsg = read_layer(tmp_path / "out.geojson")
    assert len(features) == 3 and max(len(f[0].interiors) for f in features) == 1


def test_resampled_run_keeps_map_geometry(tmp_path, tiny, deepness):
    image = np.repeat(np.repeat(buildings_image(), 2, axis=1), 2, axis=2)  # same ground at 0.25 m
    raster = tiny.write_raster(tmp_path / "fine.tif", image, geotransform=(500000.0, 0.25, 0.0, 4000000.0, 0.0, -0.25))
    polygons = sorted(PreparedRun(deepness, raster), key=lambda p: -p.geometry.area)
    assert len(polygons) == 3
    assert polygons[0].geometry.area == pytest.approx((80 * 70 - 40 * 30) * 0.25)
    assert len(polygons[0].geometry.interiors) == 1


def test_extent_and_aoi_limit_the_area(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    extent = (500045.0, 3999920.0, 500075.0, 4000000.0)  # only the block and the speck
    polygons = list(PreparedRun(deepness, raster, RunParams(extent=extent)))
    assert len(polygons) == 2
    assert all(shapely.box(*extent).contains(p.geometry) for p in polygons)
    aoi = shapely.Polygon([(500000, 3999920), (500075, 3999920), (500075, 3999960)])
    clipped = list(PreparedRun(deepness, raster, RunParams(aoi=aoi)))
    assert clipped and all(shapely.buffer(aoi, 0.5).contains(p.geometry) for p in clipped)


def test_tile_the_memory_cannot_hold(tmp_path, tiny):
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card={"polytopo.family": "semantic"}), CPU)
    raster = tiny.write_raster(tmp_path / "f.tif", np.zeros((16, 16), np.float32))
    with pytest.raises(MemoryBudgetError, match="--tile"):
        PreparedRun(model, raster, RunParams(tile_size_px=200_000))
    with pytest.raises(MemoryBudgetError):
        PreparedRun(model, raster, RunParams(tile_size_px=8, memory_limit_bytes=1000))


def test_dynamic_model_needs_a_tile_size(tmp_path, tiny):
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card={"polytopo.family": "semantic"}), CPU)
    raster = tiny.write_raster(tmp_path / "f.tif", np.zeros((16, 16), np.float32))
    with pytest.raises(ModelCardError, match="'tile_size'"):
        PreparedRun(model, raster)
    assert list(PreparedRun(model, raster, RunParams(tile_size_px=8))) == []


def test_raster_with_too_few_bands(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "gray.tif", np.zeros((16, 16), np.uint8))
    with pytest.raises(RasterError, match="at least 3 bands"):
        PreparedRun(deepness, raster)


def test_sixteen_bit_input_scaled_by_the_card(tmp_path, tiny):
    card = {"polytopo.family": "semantic", "tile_size": 32, "polytopo.input_range": [0, 10000]}
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card=card), CPU)
    image = np.full((40, 40), 4000, np.uint16)
    image[10:30, 10:30] = 9000  # 0.9 after scaling, above 0.5
    raster = tiny.write_raster(tmp_path / "u16.tif", image)
    (polygon,) = list(PreparedRun(model, raster))
    assert polygon.geometry.area == pytest.approx(400 * 0.25) and polygon.score == pytest.approx(0.9)


def test_multiclass_argmax_with_class_thresholds(tmp_path, tiny):
    from onnx import helper

    node = helper.make_node("Identity", ["input"], ["output"])
    card = {
        "polytopo.family": "semantic",
        "class_names": {"0": "background", "1": "road", "2": "grass"},
        "tile_size": 16,
        "polytopo.input_range": [0, 1],
        "polytopo.class_thresholds": [0.0, 0.5, 0.9],
    }
    out = helper.make_tensor_value_info("output", 1, ["N", 3, 16, 16])
    model = load_model(tiny.build(tmp_path / "id.onnx", [node], [tiny.image_input(3, 16)], [out], card), CPU)
    probs = np.zeros((3, 20, 20), np.float32)
    probs[0] = 0.2
    probs[1, :, :10] = 0.6
    probs[2, :, 10:] = 0.8  # below its 0.9 threshold: background wins
    probs[2, 15:, 10:] = 0.95
    raster = tiny.write_raster(tmp_path / "p.tif", probs)
    polygons = sorted(PreparedRun(model, raster), key=lambda p: p.class_id)
    assert [(p.class_id, p.class_name) for p in polygons] == [(1, "road"), (2, "grass")]
    assert polygons[1].geometry.area == pytest.approx(5 * 10 * 0.25)


def test_existing_output_is_refused_before_work(tmp_path, tiny, deepness):
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    out = tmp_path / "out.gpkg"
    out.write_bytes(b"keep me")
    with pytest.raises(OutputError, match="--overwrite"):
        run_to_file(deepness, raster, out)
    assert out.read_bytes() == b"keep me"
    run_to_file(deepness, raster, out, overwrite=True)
    assert len(read_layer(out)[0]) == 3


def test_random_content_gives_only_valid_polygons(tmp_path, tiny):
    card = {"polytopo.family": "semantic", "tile_size": 32, "tiles_overlap": 20, "polytopo.input_range": [0, 1]}
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card=card), CPU)
    mask = np.random.default_rng(7).random((90, 100)) < 0.5
    raster = tiny.write_raster(tmp_path / "noise.tif", mask.astype(np.float32))
    polygons = list(PreparedRun(model, raster))
    assert polygons and all(p.geometry.is_valid and p.geometry.geom_type == "Polygon" for p in polygons)
    unsimplified = RunParams()
    total = sum(p.geometry.area for p in PreparedRun(load_model(
        tiny.semantic_band_model(tmp_path / "m0.onnx", card={**card, "polytopo.simplify_tolerance_px": 0}), CPU), raster, unsimplified))
    assert total == pytest.approx(mask.sum() * 0.25)


def test_cli_run_writes_geopackage(tmp_path, tiny, capsys):
    model = tiny.deepness_model(tmp_path / "deepness.onnx", tile=64)
    raster = tiny.write_raster(tmp_path / "rgb.tif", buildings_image())
    out = tmp_path / "cli.gpkg"
    status = main(["run", "--model", model, "--raster", raster, "--out", str(out), "--provider", "cpu", "--batch", "2", "--quiet"])
    assert status == 0
    assert "wrote 3 polygons" in capsys.readouterr().err
    assert len(read_layer(out)[0]) == 3
    status = main(["run", "--model", model, "--raster", raster, "--out", str(out), "--quiet"])
    assert status == 1 and "--overwrite" in capsys.readouterr().err
    status = main(["run", "--model", model, "--raster", raster, "--out", str(tmp_path / "t.gpkg"), "--tile", "32", "--quiet"])
    assert status == 1 and "tile" in capsys.readouterr().err


def test_outline_offset_moves_every_ring_outward_by_the_cards_pixels(tmp_path, tiny):
    """``polytopo.outline_offset_px`` grows exteriors and shrinks holes by that many model pixels, corners square."""
    card = {"polytopo.family": "semantic", "tile_size": 32, "tiles_overlap": 20, "polytopo.input_range": [0, 1],
            "polytopo.simplify_tolerance_px": 0}
    mask = np.zeros((64, 64), np.float32)
    mask[10:30, 10:40] = 1
    mask[15:25, 20:30] = 0  # a 10 x 10 px courtyard
    mask[40:50, 10:20] = 1
    mask[40:50, 30:45] = 1
    mask[42:50, 37:38] = 0  # a 1 px wide inlet: the offset closes it and fills it, it makes no hole
    raster = tiny.write_raster(tmp_path / "blocks.tif", mask)
    runs = {}
    for offset in (0.0, 1.0):
        path = tiny.semantic_band_model(tmp_path / f"m{offset}.onnx", card={**card, "polytopo.outline_offset_px": offset})
        runs[offset] = sorted((p.geometry for p in PreparedRun(load_model(path, CPU), raster)), key=lambda g: -g.area)
    pixel = 0.5  # map units per pixel of the test rasters
    assert [g.area / pixel**2 for g in runs[0.0]] == [500, 142, 100]
    block, notched, small = runs[1.0]
    assert block.area / pixel**2 == 32 * 22 - 8 * 8 and small.area / pixel**2 == 12 * 12
    assert len(block.interiors) == 1 and shapely.equals(block, runs[0.0][0].buffer(pixel, join_style="mitre"))
    assert notched.area / pixel**2 == 17 * 12 and not notched.interiors


def test_outline_offset_out_of_range_is_a_card_error(tmp_path, tiny):
    card = {"polytopo.family": "semantic", "tile_size": 32, "polytopo.input_range": [0, 1]}
    for bad in (-1, 9, "wide"):
        path = tiny.semantic_band_model(tmp_path / "bad.onnx", card={**card, "polytopo.outline_offset_px": bad})
        with pytest.raises(ModelCardError, match="outline_offset_px"):
            load_model(path, CPU)
