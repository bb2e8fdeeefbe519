"""Column blocks: cores tile the grid, pieces cut at seams merge into the whole-map polygons, end to end too."""

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st

from polytopo.models import PreparedRun, RunParams, SessionParams, load_model, write_card
from polytopo.models import pipeline
from polytopo.models.raster.column_blocks import SeamMerger, column_blocks
from polytopo.models.polygons.polygonize import label_components, polygonize_mask
from polytopo.models.polygons.strip_polygonizer import NO_CLASS, StripPolygonizer
from polytopo.models.raster.tiling import tile_origins

CPU = SessionParams(provider="cpu")


def by_blocks(classes, col_cuts, row_cuts, scores=None, min_area_px2=0.0, min_hole_area_px2=0.0):
    """Polygonize ``classes`` (class 0) in column blocks cut at ``col_cuts``, each in strips cut at ``row_cuts``."""
    scores = np.ones(classes.shape, np.float32) if scores is None else scores
    merger = SeamMerger(min_area_px2, min_hole_area_px2)
    height, width = classes.shape
    cols = [0, *sorted(col_cuts), width]
    rows = [0, *sorted(row_cuts), height]
    geometries, values = [], []
    for k, (c0, c1) in enumerate(zip(cols[:-1], cols[1:])):
        strips = StripPolygonizer(c1 - c0, [0], min_area_px2, min_hole_area_px2, column_offset_px=c0,
                                  seam_left=k > 0, seam_right=k < len(cols) - 2)
        for i, (r0, r1) in enumerate(zip(rows[:-1], rows[1:])):
            for batch in strips.push(classes[r0:r1, c0:c1], scores[r0:r1, c0:c1], final=i == len(rows) - 2):
                if batch.on_seam:
                    merger.add(batch.class_id, batch.geometries, batch.scores)
                else:
                    geometries.extend(batch.geometries)
                    values.extend(batch.scores)
        for _class_id, merged, merged_scores in merger.end_block(c1 if k < len(cols) - 2 else None):
            geometries.extend(merged)
            values.extend(merged_scores)
    assert merger.pending_count == 0
    return geometries, values


def assert_same_polygons(got, expected):
    """Every polygon of ``got`` equals exactly one of ``expected`` (topologically) and the counts match."""
    assert len(got) == len(expected)
    tree = shapely.STRtree(expected)
    for polygon in got:
        assert polygon.is_valid and polygon.geom_type == "Polygon"
        matches = [i for i in tree.query(polygon, predicate="covers") if expected[i].equals(polygon)]
        assert len(matches) == 1, polygon.wkt


def test_cores_tile_the_grid_and_blocks_hold_every_tile_covering_their_core():
    width, tile, overlap = 5000, 512, 64
    origins = tile_origins(width, tile, tile - overlap)
    blocks = column_blocks(width, origins, tile, overlap, 1200)
    assert len(blocks) > 2
    assert blocks[0].core_col0_px == 0 and blocks[-1].core_col1_px == width
    for left, right in zip(blocks[:-1], blocks[1:]):
        assert left.core_col1_px == right.core_col0_px
        assert right.first_fresh_tile_col == left.tile_col_indices[-1] + 1
    for block in blocks:
        for x in (block.core_col0_px, block.core_col1_px - 1):
            covering = {j for j, o in enumerate(origins) if o <= x < o + tile}
            assert covering <= set(block.tile_col_indices.tolist())
        assert block.window_col0_px <= block.core_col0_px and block.core_col1_px <= block.window_col0_px + block.window_width_px
    assert len(column_blocks(4096, tile_origins(4096, tile, tile - overlap), tile, overlap, 4096)) == 1


def test_ring_building_across_a_column_seam_and_a_strip_boundary_is_one_polygon_with_its_hole():
    classes = np.full((20, 24), NO_CLASS, np.int16)
    classes[4:16, 4:18] = 0
    classes[7:13, 7:15] = NO_CLASS  # the courtyard is crossed by both cuts
    scores = np.full(classes.shape, 0.5, np.float32)
    scores[:, 11:] = 0.9
    geometries, values = by_blocks(classes, [11], [10], scores=scores)
    assert len(geometries) == 1
    (polygon,) = geometries
    assert polygon.is_valid and len(polygon.interiors) == 1
    assert polygon.area == 12 * 14 - 6 * 8
    assert polygon.bounds == (4.0, 4.0, 18.0, 16.0)
    assert len(polygon.exterior.coords) == 5 and len(polygon.interiors[0].coords) == 5  # no seam vertices left
    pixels = classes == 0
    assert values[0] == pytest.approx(scores[pixels].mean())


def test_filters_apply_to_the_merged_polygon_not_to_its_pieces():
    classes = np.full((10, 12), NO_CLASS, np.int16)
    classes[2:8, 2:10] = 0
    classes[4:6, 5:7] = NO_CLASS  # a 4 px hole, cut in two by the seam
    geometries, _ = by_blocks(classes, [6], [], min_area_px2=30, min_hole_area_px2=3)
    assert len(geometries) == 1 and len(geometries[0].interiors) == 1  # each half is 22 px and has no hole
    geometries, _ = by_blocks(classes, [6], [], min_area_px2=30, min_hole_area_px2=5)
    assert len(geometries) == 1 and len(geometries[0].interiors) == 0
    geometries, _ = by_blocks(classes, [6], [], min_area_px2=45)
    assert geometries == []


def test_polygons_touching_only_at_a_corner_across_the_seam_stay_apart():
    classes = np.full((6, 6), NO_CLASS, np.int16)
    classes[1:3, 1:3] = 0
    classes[3:5, 3:5] = 0
    geometries, _ = by_blocks(classes, [3], [3])
    assert len(geometries) == 2 and all(g.area == 4 for g in geometries)


@given(
    st.integers(0, 2**31 - 1),
    st.integers(6, 28),
    st.integers(6, 28),
    st.floats(0.2, 0.8),
    st.lists(st.integers(1, 27), max_size=4),
    st.lists(st.integers(1, 27), max_size=3),
    st.sampled_from([(0.0, 0.0), (3.0, 2.0)]),
)
def test_random_masks_in_blocks_and_strips_equal_whole_map_polygons(seed, height, width, density, col_cuts, row_cuts, filters):
    rng = np.random.default_rng(seed)
    mask = rng.random((height, width)) < density
    scores = rng.random((height, width)).astype(np.float32)
    classes = np.where(mask, 0, NO_CLASS).astype(np.int16)
    col_cuts = sorted({c for c in col_cuts if c < width})
    row_cuts = sorted({r for r in row_cuts if r < height})
    got, got_scores = by_blocks(classes, col_cuts, row_cuts, scores=scores, min_area_px2=filters[0], min_hole_area_px2=filters[1])
    whole = polygonize_mask(mask, min_area_px2=filters[0], min_hole_area_px2=filters[1])
    expected = list(whole.geometries)
    assert_same_polygons(got, expected)
    labels, _ = label_components(mask)
    means = {int(label): scores[labels == label].mean() for label in whole.labels}
    tree = shapely.STRtree(expected)
    for polygon, score in zip(got, got_scores):
        (index,) = [i for i in tree.query(polygon, predicate="covers") if expected[i].equals(polygon)]
        assert score == pytest.approx(means[int(whole.labels[index])], rel=1e-5)


def run_polygons(model, raster, monkeypatch, block_px):
    monkeypatch.setattr(pipeline, "COLUMN_BLOCK_PX", block_px)
    prediction = PreparedRun(model, raster, RunParams())
    polygons = list(prediction)
    return prediction, polygons


def test_end_to_end_blocks_give_the_same_polygons_and_scores_as_one_block(tmp_path, tiny, monkeypatch):
    """A tile-dependent model (tile mean subtracted) on noise: any blending difference at a seam would show."""
    path = tiny.tile_mean_model(tmp_path / "mean.onnx", tile=32)
    write_card(path, {"polytopo.simplify_tolerance_px": 0})  # simplified rings may start elsewhere: compare exact polygons
    model = load_model(path, CPU)
    image = np.random.default_rng(3).random((70, 150)).astype(np.float32)
    image[20:50, 40:110] = 1.0
    image[28:42, 60:90] = 0.0  # a ring building whose courtyard crosses the seams and a tile row
    raster = tiny.write_raster(tmp_path / "noise.tif", image)
    single, whole = run_polygons(model, raster, monkeypatch, 10_000)
    blocked, parts = run_polygons(model, raster, monkeypatch, 40)
    assert len(single.blocks) == 1 and len(blocked.blocks) >= 3
    assert blocked.report.tiles_run == single.report.tiles_run == single.report.tiles_total
    assert blocked.report.tiles_rerun > 0
    assert blocked.report.invalid_dropped == 0
    assert len(parts) == len(whole)
    key = lambda p: (round(p.geometry.area, 6), round(p.geometry.centroid.x, 4), round(p.geometry.centroid.y, 4))
    for a, b in zip(sorted(whole, key=key), sorted(parts, key=key)):
        assert a.geometry.equals(b.geometry)
        assert a.class_id == b.class_id and a.score == pytest.approx(b.score, rel=1e-5)
    ring = max(parts, key=lambda p: p.geometry.area)
    assert len(ring.geometry.interiors) >= 1


def test_polygon_cut_by_a_seam_next_to_blocks_without_valid_pixels_still_comes_out(tmp_path, tiny, monkeypatch):
    card = {"polytopo.family": "semantic", "tile_size": 32, "tiles_overlap": 20, "polytopo.input_range": [0, 1],
            "polytopo.simplify_tolerance_px": 0}
    model = load_model(tiny.semantic_band_model(tmp_path / "m.onnx", card=card), CPU)
    image = np.zeros((40, 200), np.float32)
    image[10:30, 20:75] = 1.0
    image[15:25, 30:40] = 0.0  # a hole
    image[:, 75:] = -1.0  # nodata: the blocks on the right have no valid pixel
    raster = tiny.write_raster(tmp_path / "half.tif", image, nodata=-1.0)
    prediction, polygons = run_polygons(model, raster, monkeypatch, 40)
    assert len(prediction.blocks) >= 4
    assert prediction.report.tiles_run < prediction.report.tiles_total  # the all-nodata tiles were skipped
    (polygon,) = polygons
    expected = shapely.Polygon([(20, 10), (75, 10), (75, 30), (20, 30)], [[(30, 15), (40, 15), (40, 25), (30, 25)]])
    to_pixels = lambda xy: (xy - (500000.0, 4000000.0)) / (0.5, -0.5)
    assert shapely.transform(polygon.geometry, to_pixels).equals(expected)
