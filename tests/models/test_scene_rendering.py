"""Rendering building geometry into imagery: roofs, courtyards, shadows, and the files written."""

import numpy as np
import pytest
from osgeo import gdal, ogr, osr

from polytopo.models.scene_rendering import (
    SCENE_LABEL,
    RenderParams,
    SceneRenderingError,
    read_buildings,
    render_scene,
)

CRS = "EPSG:3067"
ORIGIN = (385000.0, 6672000.0)
SIZE_M = 30.0
PARAMS = RenderParams(pixel_m=0.3, shadow_m=(1.5, 1.5), blur_px=0.0, noise=0.0)


def polygon(wkt):
    return ogr.CreateGeometryFromWkt(wkt)


def courtyard_building():
    """A 18 m square block 6 m from the frame's west and north edges, with a 6 m courtyard in its middle."""
    x0, y0 = ORIGIN[0] + 6, ORIGIN[1] - 6
    outer = f"{x0} {y0}, {x0 + 18} {y0}, {x0 + 18} {y0 - 18}, {x0} {y0 - 18}, {x0} {y0}"
    inner = f"{x0 + 6} {y0 - 6}, {x0 + 12} {y0 - 6}, {x0 + 12} {y0 - 12}, {x0 + 6} {y0 - 12}, {x0 + 6} {y0 - 6}"
    return polygon(f"POLYGON (({outer}), ({inner}))")


@pytest.fixture
def texture(tmp_path):
    path = tmp_path / "texture.tif"
    dataset = gdal.GetDriverByName("GTiff").Create(str(path), 64, 64, 1, gdal.GDT_UInt16)
    dataset.GetRasterBand(1).WriteArray(np.random.default_rng(3).integers(200, 1200, (64, 64)).astype(np.uint16))
    del dataset
    return path


def pixel(x_m, y_m):
    """(row, col) of the point x_m east and y_m south of the frame's top-left corner."""
    return int(y_m / PARAMS.pixel_m), int(x_m / PARAMS.pixel_m)


def test_roof_courtyard_and_shadow_are_drawn_where_the_geometry_says(texture):
    scene = render_scene([courtyard_building()], texture, CRS, ORIGIN, SIZE_M, PARAMS)
    assert scene.image.shape == (3, 100, 100) and scene.image.dtype == np.uint8
    assert scene.geotransform == (ORIGIN[0], 0.3, 0.0, ORIGIN[1], 0.0, -0.3)
    assert scene.hole_count == 1
    brightness = scene.image.astype(float).mean(axis=0)
    roof = brightness[pixel(8, 8)]
    # The sun is in the south-west: shadows fall 1.5 m to the north-east of every roof pixel.
    courtyard_lit = brightness[pixel(17.5, 12.5)]  # north-east corner of the courtyard
    courtyard_shaded = brightness[pixel(12.5, 17.5)]  # south-west corner: shaded by the inner walls
    ground_shaded = brightness[pixel(15, 5.25)]  # just north of the block
    ground_lit = brightness[pixel(2, 28)]
    assert courtyard_shaded < 0.7 * courtyard_lit
    assert ground_shaded < 0.7 * ground_lit
    assert abs(roof - courtyard_lit) > 5  # the courtyard is ground, not roof


def test_the_files_carry_the_image_the_footprints_and_the_label(texture, tmp_path):
    scene = render_scene([courtyard_building()], texture, CRS, ORIGIN, SIZE_M, PARAMS)
    raster, labels = tmp_path / "scene.tif", tmp_path / "scene.gpkg"
    scene.write(raster, labels)
    dataset = gdal.Open(str(raster))
    assert dataset.RasterCount == 3 and dataset.GetMetadataItem("POLYTOPO_SCENE") == SCENE_LABEL
    assert np.array_equal(dataset.ReadAsArray(), scene.image)
    srs = osr.SpatialReference(wkt=dataset.GetProjection())
    assert srs.GetAuthorityCode(None) == "3067"
    written = ogr.Open(str(labels))
    layer = written.GetLayer(0)
    feature = layer.GetNextFeature()
    assert layer.GetFeatureCount() == 1 and feature.GetField("holes") == 1
    assert feature.GetGeometryRef().GetArea() == pytest.approx(18 * 18 - 6 * 6)


def test_buildings_are_read_reprojected_and_clipped_to_the_frame(tmp_path):
    path = tmp_path / "osm.gpkg"
    source = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    layer = source.CreateLayer("buildings", srs, ogr.wkbPolygon)
    layer.CreateField(ogr.FieldDefn("building", ogr.OFTString))
    target, wgs84 = osr.SpatialReference(), osr.SpatialReference()
    target.ImportFromEPSG(3067)
    wgs84.ImportFromEPSG(4326)
    for item in (target, wgs84):
        item.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    to_wgs84 = osr.CoordinateTransformation(target, wgs84)
    for tag, geometry in (("yes", courtyard_building()), (None, courtyard_building())):
        geometry.Transform(to_wgs84)
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(geometry)
        feature.SetField("building", tag)
        layer.CreateFeature(feature)
    del source
    half = read_buildings(path, "buildings", CRS, ORIGIN, 15.0, attribute_filter="building IS NOT NULL")
    assert len(half) == 1  # the untagged copy is filtered out
    assert half[0].GetArea() == pytest.approx(9 * 9 - 3 * 3, rel=1e-3)  # clipped: the block's and courtyard's corner
    with pytest.raises(SceneRenderingError, match="layer 'nothing'"):
        read_buildings(path, "nothing", CRS, ORIGIN, 15.0)


def test_an_empty_frame_is_refused(texture):
    with pytest.raises(SceneRenderingError, match="Expected buildings inside"):
        render_scene([], texture, CRS, ORIGIN, SIZE_M, PARAMS)


def write_city(root, offsets):
    """Write the Helsinki footprint file under ``root`` with a courtyard building at each (dx, dy) metres east and
    south of a 240 m cell's top-left corner; return that corner."""
    from polytopo.training.rendered import CITIES, FRAME_M

    relative, layer_name, crs = CITIES["helsinki"]
    path = root / relative
    path.parent.mkdir(parents=True)
    source = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    srs = osr.SpatialReference()
    srs.SetFromUserInput(crs)
    layer = source.CreateLayer(layer_name, srs, ogr.wkbPolygon)
    busy = (ORIGIN[0] // FRAME_M * FRAME_M, ORIGIN[1] // FRAME_M * FRAME_M + FRAME_M)  # a cell's top-left corner
    for dx, dy in offsets:
        building = courtyard_building()
        for ring_index in range(building.GetGeometryCount()):
            ring = building.GetGeometryRef(ring_index)
            for point in range(ring.GetPointCount()):
                x, y = ring.GetPoint_2D(point)
                ring.SetPoint_2D(point, busy[0] + (x - ORIGIN[0]) + dx, busy[1] - (ORIGIN[1] - y) - dy)
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(building)
        layer.CreateFeature(feature)
    del source
    return busy


def test_training_frames_are_the_cells_with_the_most_courtyard_buildings(tmp_path, texture):
    """city_frames ranks 240 m cells by buildings with holes; rendered_samples draws them as grid samples."""
    from polytopo.training.rendered import FRAME_M, city_frames, rendered_samples

    busy = write_city(tmp_path, ((10, 10), (40, 10), (10, 60), (FRAME_M + 10, 10)))  # three in one cell, one in the next
    assert city_frames(tmp_path, "helsinki", count=2) == [busy, (busy[0] + FRAME_M, busy[1])]
    samples = rendered_samples(tmp_path, texture, ["helsinki"], 30.0)
    assert [sample.name for sample in samples] == ["rendered-helsinki-0", "rendered-helsinki-1"]
    first = samples[0]
    assert first.image.shape == (3, 800, 800) and first.valid.all() and first.gsd_cm == pytest.approx(30.0)
    assert len(first.polygons) == 3 and all(len(p.interiors) == 1 for p in first.polygons)
    assert first.polygons[0].bounds == pytest.approx((10 / 0.3 + 20, 10 / 0.3 + 20, 10 / 0.3 + 80, 10 / 0.3 + 80))


def test_the_evaluation_square_and_the_main_job_scene_are_kept_out_of_training(tmp_path, texture):
    """kept_out names the frames sharing ground with the city's 480 m evaluation square (from its best frame) or
    with the main job's Helsinki scene; rendered_samples skips them only when asked, and the main job's square is
    the one the main job renders."""
    from polytopo.plugin.demo import hole_scene
    from polytopo.training.rendered import (EVALUATION_SQUARE_M, FRAME_M, MAIN_JOB_SQUARES, city_frames,
                                            evaluation_square, kept_out, rendered_samples)

    assert MAIN_JOB_SQUARES["helsinki"] == (hole_scene.FRAME_ORIGIN_M, hole_scene.FRAME_M)
    # three buildings in the best cell; one a frame east (inside the evaluation square), one three frames east and
    # one south (outside it, but its cell overlaps the main job's scene by 18 m), one five frames east (clear of both)
    busy = write_city(tmp_path, ((10, 10), (40, 10), (10, 60), (FRAME_M + 10, 10), (3 * FRAME_M + 10, FRAME_M + 10),
                                 (5 * FRAME_M + 10, 10)))
    frames = city_frames(tmp_path, "helsinki", count=10)
    assert frames == [busy, (busy[0] + FRAME_M, busy[1]), (busy[0] + 3 * FRAME_M, busy[1] - FRAME_M),
                      (busy[0] + 5 * FRAME_M, busy[1])]
    assert evaluation_square(tmp_path, "helsinki") == (busy, EVALUATION_SQUARE_M)
    assert kept_out(tmp_path, "helsinki", frames) == frames[:3]
    assert kept_out(tmp_path, "helsinki", frames[3:]) == []
    kept = rendered_samples(tmp_path, texture, ["helsinki"], 60.0, frames=10, keep_out=True)
    assert [sample.name for sample in kept] == ["rendered-helsinki-3"]
    everything = rendered_samples(tmp_path, texture, ["helsinki"], 60.0, frames=10)
    assert len(everything) == 4


def test_every_courtyard_square_of_a_city_is_drawn_side_by_side(tmp_path, texture):
    """rendered_city_squares: each square in its grid cell, black between them, the references moved with it."""
    from types import SimpleNamespace

    import shapely
    from polytopo.training.errors import TrainingError
    from polytopo.training.heldout import SQUARES_GAP_PX, rendered_city_squares
    from polytopo.training.rendered import FRAME_M

    busy = write_city(tmp_path, ((10, 10), (40, 10), (10, 60), (FRAME_M + 10, 10), (3 * FRAME_M + 10, 10),
                                 (5 * FRAME_M + 10, 10)))
    shared = SimpleNamespace(root=tmp_path, atlanta_raster=texture)
    (heldout,) = rendered_city_squares(shared, tmp_path / "work", 60.0, "helsinki")
    side, step = 400, 400 + SQUARES_GAP_PX  # 240 m at 60 cm
    assert heldout.key == "helsinki-rendered-squares" and heldout.synthetic and heldout.split == "held-out"
    assert "its 4 240 m squares" in heldout.title and "6 buildings, 6 courtyards" in heldout.title
    assert heldout.geotransform == (busy[0], 0.6, 0.0, busy[1], 0.0, -0.6)
    image = gdal.Open(str(heldout.raster)).ReadAsArray()
    assert image.shape == (3, side + step, side + step)  # 4 squares: 2 x 2
    assert not image[:, :, side:step].any() and not image[:, side:step, :].any()  # the gaps are black
    assert image[:, :side, :side].any() and image[:, step:, step:].any()
    pixels = [((x - busy[0]) / 0.6, (busy[1] - y) / 0.6)
              for x, y in (shapely.get_coordinates(shapely.centroid(heldout.reference)))]
    cells = sorted((int(row // step), int(col // step)) for col, row in pixels)
    assert cells == [(0, 0)] * 3 + [(0, 1), (1, 0), (1, 1)]
    # each building keeps its place inside its square: 10 m east and south of the corner plus 6 m + 9 m to its centre
    assert all((col % step, row % step) == pytest.approx((25 / 0.6, 25 / 0.6), abs=1e-6)
               for col, row in pixels if (col % step) < 50 and (row % step) < 50)
    assert sum(shapely.get_num_interior_rings(heldout.reference)) == 6
    empty = tmp_path / "empty"
    write_city(empty, ())
    with pytest.raises(TrainingError, match="Expected a building with a courtyard"):
        rendered_city_squares(SimpleNamespace(root=empty, atlanta_raster=texture), tmp_path / "work", 60.0, "helsinki")


def test_split_buildings_cut_a_courtyard_block_into_touching_parts_around_an_open_yard():
    """split_buildings: the parts lie in the building, touch each other, and none of them keeps the courtyard."""
    import shapely
    from polytopo.training.rendered import SPLIT_MIN_M2, split_buildings

    block = courtyard_building()  # 324 - 36 = 288 m², one courtyard
    shed = polygon(f"POLYGON (({ORIGIN[0] + 40} {ORIGIN[1] - 40}, {ORIGIN[0] + 45} {ORIGIN[1] - 40}, "
                   f"{ORIGIN[0] + 45} {ORIGIN[1] - 45}, {ORIGIN[0] + 40} {ORIGIN[1] - 45}, "
                   f"{ORIGIN[0] + 40} {ORIGIN[1] - 40}))")  # 25 m², under SPLIT_MIN_M2
    assert shed.GetArea() < SPLIT_MIN_M2 < block.GetArea()
    whole = shapely.from_wkb(bytes(block.ExportToWkb()))
    complete = 0
    for seed in range(8):
        out = split_buildings([block, shed], 1.0, np.random.default_rng(seed))
        parts = [shapely.from_wkb(bytes(part.ExportToWkb())) for part in out[:-1]]
        assert out[-1] is shed and 2 <= len(parts) <= 4
        union = shapely.union_all(parts)
        assert union.difference(whole).area < 1e-6  # inside the building
        assert sum(part.area for part in parts) == pytest.approx(union.area, rel=1e-9)  # no overlaps
        assert whole.area - union.area < 4 * 4.0  # at most slivers under 4 m² are dropped
        assert all(shapely.get_num_interior_rings(part) == 0 for part in parts)  # cut through the courtyard
        if union.area == pytest.approx(whole.area, rel=1e-9):  # no sliver dropped: every part touches another
            complete += 1
            assert all(any(part.distance(other) < 1e-9 for other in parts if other is not part) for part in parts)
    assert complete >= 4
    assert split_buildings([block, shed], 0.0, np.random.default_rng(0)) == [block, shed]
