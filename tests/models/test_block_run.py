"""Whole maps in grid blocks: the blocks' polygons, merged at the seams, are the single-process run's."""

import numpy as np
import pytest
import shapely
from osgeo import ogr

from polytopo.models import RunParams, SessionParams, load_model, run_to_file
from polytopo.models.raster.block_run import run_blocks
from polytopo.models.errors import ModelCardError
from polytopo.models.raster.grid_blocks import grid_blocks
from polytopo.models.raster.tiling import tile_origins

CPU = SessionParams(provider="cpu")
CPU1 = SessionParams(provider="cpu", intra_op_threads=1)


def read_layer(path):
    """(wkb of the normalized geometry, class_name, score) of every feature, sorted."""
    dataset = ogr.Open(str(path))
    layer = dataset.GetLayer(0)
    rows = []
    for feature in layer:
        geometry = shapely.normalize(shapely.from_wkb(bytes(feature.GetGeometryRef().ExportToWkb())))
        rows.append((geometry.wkb, feature.GetField("class_name"), feature.GetField("score")))
    return sorted(rows)


def assert_same_output(got, expected):
    assert [(g, name) for g, name, _s in got] == [(g, name) for g, name, _s in expected]
    assert [s for _g, _n, s in got] == pytest.approx([s for _g, _n, s in expected], rel=1e-9)


def test_block_cores_tile_the_grid_and_each_block_runs_the_tiles_covering_its_core():
    tile, overlap = 32, 8
    cols, rows = tile_origins(150, tile, tile - overlap), tile_origins(110, tile, tile - overlap)
    blocks = grid_blocks(150, 110, cols, rows, tile, overlap, 50)
    cover = np.zeros((110, 150), int)
    for block in blocks:
        r0, r1, c0, c1 = block.rows.core_row0_px, block.rows.core_row1_px, block.cols.core_col0_px, block.cols.core_col1_px
        cover[r0:r1, c0:c1] += 1
        for y in (r0, r1 - 1):
            assert {i for i, o in enumerate(rows) if o <= y < o + tile} <= set(block.rows.tile_row_indices.tolist())
    assert (cover == 1).all()
    assert len({b.row for b in blocks}) > 1 and len({b.col for b in blocks}) > 1


def ring_at_a_corner(tmp_path, tiny):
    """A tile-dependent model on noise with a ring building whose courtyard contains a block corner."""
    path = tiny.tile_mean_model(tmp_path / "mean.onnx", tile=32)
    image = 0.3 * np.random.default_rng(5).random((110, 150)).astype(np.float32)
    image[25:75, 30:95] = 1.0
    image[38:62, 45:80] = 0.0  # the courtyard; blocks of 50 px meet at (x 59, y 59) inside it
    return path, tiny.write_raster(tmp_path / "noise.tif", image)


def test_ring_building_across_a_block_corner_is_one_polygon_and_the_output_equals_one_process(tmp_path, tiny):
    model_path, raster = ring_at_a_corner(tmp_path, tiny)
    single = run_to_file(load_model(model_path, CPU), raster, tmp_path / "single.gpkg")
    report = run_blocks(model_path, raster, tmp_path / "blocks.gpkg", None, session=CPU, block_px=50)
    assert report.tiles_run == single.tiles_run == single.tiles_total
    assert report.tiles_rerun > 0 and report.invalid_dropped == 0
    got, expected = read_layer(tmp_path / "blocks.gpkg"), read_layer(tmp_path / "single.gpkg")
    assert_same_output(got, expected)
    to_pixels = lambda xy: (xy - (500000.0, 4000000.0)) / (0.5, -0.5)
    polygons = [shapely.transform(shapely.from_wkb(g), to_pixels) for g, _n, _s in got]
    (ring,) = [p for p in polygons if p.contains(shapely.Point(31, 26))]
    assert len(ring.interiors) == 1 and ring.area > 40 * 50
    tile, overlap = 32, 5  # the card's 15 % of 32 px
    blocks = grid_blocks(150, 110, tile_origins(150, tile, tile - overlap), tile_origins(110, tile, tile - overlap), tile, overlap, 50)
    corners = [(b.cols.core_col0_px, b.rows.core_row0_px) for b in blocks if b.rows.seam_top and b.cols.seam_left]
    assert (59, 59) in corners  # where four blocks meet, inside the courtyard
    assert shapely.Polygon(ring.interiors[0]).contains(shapely.Point(59, 59))


def test_an_overlap_of_more_than_half_a_tile_still_gives_the_single_process_output(tmp_path, tiny):
    """With 20 px of overlap on 32-px tiles a core's last columns are covered by two tiles of the next block."""
    model_path, raster = ring_at_a_corner(tmp_path, tiny)
    params = RunParams(overlap_px=20)
    run_to_file(load_model(model_path, CPU), raster, tmp_path / "single.gpkg", params)
    run_blocks(model_path, raster, tmp_path / "blocks.gpkg", None, params, CPU, block_px=50)
    assert_same_output(read_layer(tmp_path / "blocks.gpkg"), read_layer(tmp_path / "single.gpkg"))


def test_a_decoder_that_needs_neighbouring_pixels_is_refused_before_any_block_runs(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", card={"polytopo.family": "semantic", "tile_size": 32,
                                                                "seg_small_segment": 3, "polytopo.input_range": [0, 1]})
    raster = tiny.write_raster(tmp_path / "r.tif", np.zeros((40, 40), np.float32))
    with pytest.raises(ModelCardError, match="Expected a model whose decoder can run in blocks.*0 workers"):
        run_blocks(path, raster, tmp_path / "out.gpkg", None, session=CPU, block_px=20)
    assert not (tmp_path / "out.gpkg").exists()


def test_blocks_on_two_workers_equal_the_single_process_run(tmp_path, tiny, dask_client):
    model_path, raster = ring_at_a_corner(tmp_path, tiny)
    run_to_file(load_model(model_path, CPU), raster, tmp_path / "single.gpkg")
    done = []
    report = run_blocks(model_path, raster, tmp_path / "blocks.gpkg", dask_client, session=CPU1, block_px=50,
                        progress=lambda k, n: done.append((k, n)))
    assert done[-1] == (9, 9) and report.tiles_rerun > 0
    assert len(dask_client.scheduler_info()["workers"]) == 2
    assert_same_output(read_layer(tmp_path / "blocks.gpkg"), read_layer(tmp_path / "single.gpkg"))


def test_a_minimum_hole_area_override_fills_the_courtyard_across_blocks_as_in_one_process(tmp_path, tiny):
    """The 24 x 35 px courtyard straddles a block corner: a minimum hole area of 900 px² fills it in both runs."""
    model_path, raster = ring_at_a_corner(tmp_path, tiny)
    params = RunParams(min_hole_area_px=900)
    run_to_file(load_model(model_path, CPU), raster, tmp_path / "single.gpkg", params)
    run_blocks(model_path, raster, tmp_path / "blocks.gpkg", None, params, CPU, block_px=50)
    got = read_layer(tmp_path / "blocks.gpkg")
    assert_same_output(got, read_layer(tmp_path / "single.gpkg"))
    ring = max((shapely.from_wkb(g) for g, _n, _s in got), key=lambda p: p.area)
    assert len(ring.interiors) == 0 and ring.area > 50 * 65 * 0.25 * 0.9  # the whole block, m² at 0.5 m/px
