"""instance, rings, vertex-mask and promptable decoders, end to end on tiny ONNX models and as pure functions."""

import numpy as np
import pytest
import shapely
from osgeo import ogr, osr

from polytopo.models import (
    InferenceError,
    PreparedRun,
    RunParams,
    SessionParams,
    load_model,
    prompts_from_geometries,
    prompts_from_vector,
    run_to_file,
)
from polytopo.models.decoders.rings import assemble_rings, ring_polygon
from polytopo.models.decoders.object_stitching import suppress_duplicates
from polytopo.models.decoders.vertex_mask import heatmap_peaks, snap_to_peaks

CPU = SessionParams(provider="cpu")
GT = (500000.0, 0.5, 0.0, 4000000.0, 0.0, -0.5)


def to_map(x, y):
    return GT[0] + x * GT[1], GT[3] + y * GT[5]


def ring_mask(shape, top, left, size, hole_top, hole_left, hole_size):
    mask = np.zeros(shape, np.float32)
    mask[top:top + size, left:left + size] = 1
    mask[hole_top:hole_top + hole_size, hole_left:hole_left + hole_size] = 0
    return mask


# ---------------------------------------------------------------- instance


def test_instance_model_one_polygon_per_instance_across_tiles(tmp_path, tiny):
    model = load_model(tiny.instance_model(tmp_path / "inst.onnx", tile=32), CPU)
    band_a = ring_mask((96, 96), 26, 26, 14, 30, 30, 6)  # seen whole by one tile, cut by others
    band_b = np.zeros((96, 96), np.float32)
    band_b[60:70, 10:20] = 1
    raster = tiny.write_raster(tmp_path / "two.tif", np.stack([band_a, band_b]))
    polygons = sorted(PreparedRun(model, raster), key=lambda p: -p.score)
    assert [round(p.score, 3) for p in polygons] == [0.9, 0.8]
    ring, block = (p.geometry for p in polygons)
    assert ring.is_valid and len(ring.interiors) == 1 and ring.area == pytest.approx((196 - 36) * 0.25)
    assert ring.bounds == pytest.approx((*to_map(26, 40), *to_map(40, 26)))
    assert block.area == pytest.approx(100 * 0.25) and polygons[0].class_name == "building"


def test_instance_masks_exclude_nodata(tmp_path, tiny):
    model = load_model(tiny.instance_model(tmp_path / "inst.onnx", tile=32), CPU)
    band_a = np.zeros((32, 32), np.float32)
    band_a[4:20, 4:20] = 1
    band_b = band_a.copy()
    band_a[4:20, 4:8] = -1  # nodata strip inside the instance
    raster = tiny.write_raster(tmp_path / "nd.tif", np.stack([band_a, band_b * 0]), nodata=-1)
    (polygon,) = list(PreparedRun(model, raster))
    assert polygon.geometry.area == pytest.approx(16 * 12 * 0.25)


def test_suppress_duplicates_is_class_aware():
    boxes = np.array([shapely.box(0, 0, 10, 10), shapely.box(1, 0, 11, 10), shapely.box(0, 0, 10, 10)])
    kept = suppress_duplicates(boxes, np.array([0.9, 0.8, 0.7]), np.array([0, 0, 1]), 0.5)
    assert kept.tolist() == [0, 2]


# ---------------------------------------------------------------- rings

OUTER = [(4, 4), (28, 4), (28, 28), (4, 28)]
HOLE = [(10, 10), (22, 10), (22, 22), (10, 22)]
ISLAND = [(14, 14), (18, 14), (18, 18), (14, 18)]
NAN = (np.nan, np.nan)


def padded(rings, vertices=6):
    return [list(ring) + [NAN] * (vertices - len(ring)) for ring in rings]


def test_rings_model_assembles_holes_by_containment(tmp_path, tiny):
    rings = padded([OUTER, HOLE, ISLAND, [(0, 0), (3, 0), (3, 3)]])
    model = load_model(tiny.rings_model(tmp_path / "rings.onnx", rings, [0.9, 0.8, 0.7, 0.1], tile=32), CPU)
    raster = tiny.write_raster(tmp_path / "one.tif", np.ones((32, 32), np.float32))
    polygons = sorted(PreparedRun(model, raster), key=lambda p: -p.geometry.area)
    assert len(polygons) == 2  # the 0.1 ring is below det_conf
    outer, island = polygons
    assert len(outer.geometry.interiors) == 1 and outer.score == pytest.approx(0.9)
    assert outer.geometry.area == pytest.approx((576 - 144) * 0.25)
    assert island.score == pytest.approx(0.7) and len(island.geometry.interiors) == 0


def test_rings_duplicates_across_tiles_are_suppressed(tmp_path, tiny):
    model = load_model(tiny.rings_model(tmp_path / "rings.onnx", padded([OUTER]), [0.9], tile=32), CPU)
    from polytopo.models import write_card

    write_card(model.path, {"det_iou_thresh": 0.3})
    model = load_model(model.path, CPU)
    raster = tiny.write_raster(tmp_path / "wide.tif", np.ones((32, 40), np.float32))
    polygons = list(PreparedRun(model, raster, RunParams(overlap_px=24)))  # two tiles, 8 px apart
    assert len(polygons) == 1


def test_rings_clipped_to_valid_pixels(tmp_path, tiny):
    model = load_model(tiny.rings_model(tmp_path / "rings.onnx", padded([OUTER]), [0.9], tile=32), CPU)
    image = np.ones((32, 32), np.float32)
    image[:, 16:] = -1
    raster = tiny.write_raster(tmp_path / "half.tif", image, nodata=-1)
    (polygon,) = list(PreparedRun(model, raster))
    assert polygon.geometry.area == pytest.approx(12 * 24 * 0.25)


def test_assemble_rings_nesting_parity_and_merged_holes():
    outer = shapely.box(0, 0, 20, 20)
    hole_a, hole_b = shapely.box(2, 2, 8, 8), shapely.box(6, 6, 12, 12)  # overlapping holes
    island = shapely.box(3, 3, 5, 5)  # inside hole_a: a new exterior
    crossing = shapely.box(15, 15, 25, 25)  # crosses the outer ring: its own exterior
    result = assemble_rings([outer, hole_a, hole_b, island, crossing], [0.9, 0.5, 0.5, 0.4, 0.3], [0, 0, 0, 1, 0])
    shapes = sorted(((round(p.area), len(p.interiors), s, label) for p, s, label in result), reverse=True)
    assert shapes == [(400 - 68, 1, 0.9, 0), (100, 0, 0.3, 0), (4, 0, 0.4, 1)]
    assert all(p.is_valid for p, _s, _l in result)


def test_ring_polygon_repairs_a_bow_tie_and_drops_degenerate_rings():
    polygon, repaired = ring_polygon([(0, 0), (4, 4), (4, 0), (0, 4)])
    assert repaired and polygon.is_valid and polygon.area == pytest.approx(4.0)
    assert ring_polygon([(0, 0), (1, 1), NAN, NAN]) == (None, False)


# ---------------------------------------------------------------- vertex-mask


def test_vertex_mask_model_takes_vertices_from_heatmap_peaks(tmp_path, tiny):
    model = load_model(tiny.vertex_mask_model(tmp_path / "vm.onnx", tile=32), CPU)
    mask = ring_mask((40, 40), 4, 6, 28, 14, 16, 8).astype(np.float32)  # rows 4..32, cols 6..34
    mask[4, 10:14] = 0  # ragged edges the snapping must ignore
    mask[31, 20] = 0
    heat = np.zeros((40, 40), np.float32)
    outer_corners = [(4, 6), (4, 33), (31, 33), (31, 6)]  # (row, col) of the corner pixels
    hole_corners = [(14, 16), (14, 23), (21, 23), (21, 16)]
    for r, c in outer_corners + hole_corners:
        heat[r, c] = 1.0
    raster = tiny.write_raster(tmp_path / "vm.tif", np.stack([mask, heat]))
    (polygon,) = list(PreparedRun(model, raster))
    geometry = polygon.geometry
    assert geometry.is_valid and len(geometry.interiors) == 1
    exterior = {tuple(np.round(xy, 6)) for xy in geometry.exterior.coords}
    assert exterior == {to_map(c + 0.5, r + 0.5) for r, c in outer_corners}
    hole = {tuple(np.round(xy, 6)) for xy in geometry.interiors[0].coords}
    assert hole == {to_map(c + 0.5, r + 0.5) for r, c in hole_corners}


def test_snap_falls_back_when_peaks_are_missing():
    stairs = shapely.Polygon([(0, 0), (5, 0), (5, 1), (6, 1), (6, 6), (0, 6)])
    assert snap_to_peaks(stairs, np.empty((0, 2)), 1.0, 1.0).equals(shapely.simplify(stairs, 1.0, preserve_topology=True))
    partial = snap_to_peaks(stairs, np.array([[0.1, 0.1]]), 1.0, 1.0)
    assert partial.is_valid and (0.1, 0.1) in list(partial.exterior.coords)


def test_heatmap_plateau_is_one_peak():
    heat = np.zeros((6, 6))
    heat[2:4, 2:4] = 1.0
    assert heatmap_peaks(heat, 0.5).tolist() == [[3.0, 3.0]]


# ---------------------------------------------------------------- promptable


def buildings_band():
    band = ring_mask((64, 64), 4, 4, 20, 9, 9, 8)
    band[36:50, 30:60] = 1
    return band


def test_promptable_model_with_box_prompts(tmp_path, tiny):
    model = load_model(tiny.promptable_models(tmp_path, tile=32), CPU)
    raster = tiny.write_raster(tmp_path / "b.tif", buildings_band())
    ring_box = shapely.box(*to_map(3, 25), *to_map(25, 3))
    block_box = shapely.box(*to_map(29, 51), *to_map(61, 35))  # wider than the overlap: cut at a tile edge
    prompts = prompts_from_geometries([ring_box, block_box, shapely.box(9e5, 9e6, 9e5 + 1, 9e6 + 1)])
    prediction = PreparedRun(model, raster, RunParams(prompts=prompts))
    polygons = sorted(prediction, key=lambda p: -p.geometry.area)
    assert prediction.decoder.dropped_prompts == 1
    assert prediction.report.tiles_run == 2
    ring = polygons[-1].geometry if len(polygons[-1].geometry.interiors) else polygons[0].geometry
    assert len(ring.interiors) == 1 and ring.area == pytest.approx((400 - 64) * 0.25)
    assert all(p.score == pytest.approx(1.0) for p in polygons) and len(polygons) == 2


def test_prompts_from_a_vector_file_and_from_another_model(tmp_path, tiny):
    raster = tiny.write_raster(tmp_path / "b.tif", buildings_band())
    path = str(tmp_path / "prompts.gpkg")
    source = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    layer = source.CreateLayer("p", srs, ogr.wkbPolygon)
    feature = ogr.Feature(layer.GetLayerDefn())
    feature.SetGeometry(ogr.CreateGeometryFromWkt(shapely.box(*to_map(3, 25), *to_map(25, 3)).wkt))
    layer.CreateFeature(feature)
    source = None
    prompts = prompts_from_vector(path, srs.ExportToWkt())
    assert [p.kind for p in prompts] == ["box"]
    model = load_model(tiny.promptable_models(tmp_path, tile=32), CPU)
    (polygon,) = list(PreparedRun(model, raster, RunParams(prompts=prompts)))
    assert len(polygon.geometry.interiors) == 1

    detector = load_model(tiny.instance_model(tmp_path / "inst.onnx", tile=32), CPU)
    two_band = tiny.write_raster(tmp_path / "two.tif", np.stack([buildings_band() * 0, ring_mask((64, 64), 4, 4, 20, 9, 9, 8)]))
    boxes = prompts_from_geometries([p.geometry for p in PreparedRun(detector, two_band)])
    out = tmp_path / "sam.gpkg"
    report = run_to_file(model, raster, out, RunParams(prompts=boxes))
    assert report.polygon_count == 1


def test_promptable_without_prompts_is_an_error(tmp_path, tiny):
    model = load_model(tiny.promptable_models(tmp_path, tile=32), CPU)
    raster = tiny.write_raster(tmp_path / "b.tif", buildings_band())
    with pytest.raises(InferenceError, match="--prompts"):
        PreparedRun(model, raster)


def test_every_family_has_a_decoder_and_an_example_card():
    from polytopo.models.card.model_card import FAMILIES, example_card
    from polytopo.models.decoders import DECODERS

    assert sorted(DECODERS) == sorted(FAMILIES)
    assert all(example_card(family)["polytopo.family"] == family for family in FAMILIES)
