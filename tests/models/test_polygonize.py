"""Pixel-edge polygonization: exact shapes, holes, pinch points, and validity on random masks."""

import numpy as np
import shapely
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from osgeo import gdal, ogr

from polytopo.models.polygons.polygonize import label_components, polygonize_mask


def rasterize(polygons, shape):
    """Count, per pixel, how many polygons contain the pixel centre."""
    ys, xs = np.mgrid[0:shape[0], 0:shape[1]] + 0.5
    cover = np.zeros(shape, int)
    for polygon in polygons:
        cover += shapely.contains_xy(polygon, xs, ys)
    return cover


def check_exact(mask):
    labels, count = label_components(mask)
    result = polygonize_mask(mask, labels)
    assert len(result) == count
    for polygon, label, area in zip(result.geometries, result.labels, result.areas_px2):
        assert polygon.geom_type == "Polygon"
        assert polygon.is_valid, shapely.is_valid_reason(polygon)
        assert area == polygon.area == (labels == label).sum()
    np.testing.assert_array_equal(rasterize(result.geometries, mask.shape), mask.astype(int))
    return result


def test_square_ring_has_one_hole():
    mask = np.zeros((7, 7), bool)
    mask[1:6, 1:6] = True
    mask[2:5, 2:5] = False
    (polygon,) = check_exact(mask).geometries
    assert len(polygon.interiors) == 1
    assert shapely.Polygon(polygon.interiors[0]).area == 9
    assert len(polygon.exterior.coords) == 5  # corners only


def test_courtyard_with_island_gives_two_polygons():
    mask = np.zeros((9, 9), bool)
    mask[1:8, 1:8] = True
    mask[2:7, 2:7] = False
    mask[4, 4] = True
    result = check_exact(mask)
    holes = sorted(len(p.interiors) for p in result.geometries)
    assert holes == [0, 1]


def test_diagonal_pixels_are_separate_polygons():
    mask = np.array([[1, 0], [0, 1]], bool)
    result = check_exact(mask)
    assert len(result) == 2
    assert result.geometries[0].touches(result.geometries[1])


def test_hole_touching_the_exterior_at_a_point_is_a_valid_hole():
    # the background pixel (1, 1) touches the outside only diagonally, at vertex (1, 1)
    mask = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 1]], bool)
    (polygon,) = check_exact(mask).geometries
    assert len(polygon.interiors) == 1
    assert polygon.exterior.intersection(polygon.interiors[0]).geom_type == "Point"


def test_two_holes_touching_at_a_point():
    mask = np.ones((4, 4), bool)
    mask[1, 1] = mask[2, 2] = False
    (polygon,) = check_exact(mask).geometries
    assert len(polygon.interiors) == 2


def test_min_area_and_min_hole_area():
    mask = np.zeros((10, 10), bool)
    mask[1:8, 1:8] = True
    mask[3, 3] = False  # 1 px hole
    mask[4:6, 5:7] = False  # 4 px hole
    mask[9, 9] = True  # 1 px speck
    result = polygonize_mask(mask, min_area_px2=2, min_hole_area_px2=2)
    (polygon,) = result.geometries
    assert len(polygon.interiors) == 1 and shapely.Polygon(polygon.interiors[0]).area == 4
    assert result.areas_px2[0] == polygon.area == 49 - 4


def test_empty_mask():
    assert len(polygonize_mask(np.zeros((4, 5), bool))) == 0


def test_same_components_as_gdal_polygonize():
    rng = np.random.default_rng(3)
    mask = rng.random((40, 50)) < 0.45
    ours = polygonize_mask(mask).geometries
    dataset = gdal.GetDriverByName("MEM").Create("", 50, 40, 1, gdal.GDT_Byte)
    dataset.GetRasterBand(1).WriteArray(mask.astype(np.uint8))
    source = ogr.GetDriverByName("Memory").CreateDataSource("")
    layer = source.CreateLayer("p")
    layer.CreateField(ogr.FieldDefn("v", ogr.OFTInteger))
    gdal.Polygonize(dataset.GetRasterBand(1), dataset.GetRasterBand(1), layer, 0)
    theirs = [shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb())) for f in layer]
    # without a geotransform GDAL also uses (column, row) pixel coordinates
    assert len(ours) == len(theirs)
    assert np.isclose(sum(g.area for g in ours), sum(g.area for g in theirs))
    assert shapely.union_all(ours).symmetric_difference(shapely.union_all(theirs)).area < 1e-9


@given(arrays(bool, st.tuples(st.integers(1, 14), st.integers(1, 14))))
def test_random_masks_give_valid_exact_polygons(mask):
    """Definition 15 on random masks: simple rings, holes inside, no crossing, non-empty."""
    check_exact(mask)


@given(st.integers(0, 2**32 - 1), st.floats(0.2, 0.8))
def test_larger_random_masks_stay_valid(seed, density):
    mask = np.random.default_rng(seed).random((48, 48)) < density
    check_exact(mask)
