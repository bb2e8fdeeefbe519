"""AOI and prompt files are read by the evaluator's OGR reader; a bad file is a VectorInputError."""

import pytest
import shapely

from polytopo.core.vector_files import ogr_exceptions
from polytopo.models.errors import ModelsError, VectorInputError
from polytopo.models.vector_input import read_aoi, read_geometries

pytest.importorskip("osgeo")


def _write(path, wkts, *, epsg=4326, kind="Polygon"):
    with ogr_exceptions() as (_, ogr, osr):
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(epsg)
        srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
        layer = dataset.CreateLayer("layer", srs, getattr(ogr, f"wkb{kind}"))
        for wkt in wkts:
            feature = ogr.Feature(layer.GetLayerDefn())
            feature.SetGeometry(ogr.CreateGeometryFromWkt(wkt))
            layer.CreateFeature(feature)
        dataset = None
    return path


def _utm_wkt():
    with ogr_exceptions() as (_, _ogr, osr):
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(32633)
        return srs.ExportToWkt()


def test_features_are_reprojected_to_the_raster_crs(tmp_path):
    """Longitude/latitude come back as easting/northing of the target CRS (axis order x, y)."""
    path = _write(tmp_path / "aoi.gpkg", ["POLYGON ((15 45, 15.001 45, 15.001 45.001, 15 45))"])
    (geometry,) = read_geometries(path, _utm_wkt())
    min_x, min_y, _, _ = geometry.bounds
    assert 499_000 < min_x < 501_000 and 4_980_000 < min_y < 4_990_000


def test_without_target_crs_coordinates_stay():
    geometries = read_geometries('{"type": "Point", "coordinates": [3, 4]}')
    assert [geometry.wkt for geometry in geometries] == ["POINT (3 4)"]


def test_aoi_is_the_union_of_the_polygons(tmp_path):
    path = _write(tmp_path / "aoi.gpkg", ["POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))", "POLYGON ((1 0, 3 0, 3 2, 1 2, 1 0))"])
    assert read_aoi(path).area == pytest.approx(6.0)


@pytest.mark.parametrize("content", [None, b"not a vector file"])
def test_a_bad_vector_file_names_the_file_and_the_fix(tmp_path, content):
    """A missing or unreadable file is a VectorInputError (a ModelsError and a ValueError), never a RasterError."""
    path = tmp_path / "aoi.gpkg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(VectorInputError, match=r"aoi\.gpkg.*; check") as caught:
        read_aoi(path)
    assert isinstance(caught.value, ModelsError) and isinstance(caught.value, ValueError)


def test_an_aoi_without_polygons_is_refused(tmp_path):
    path = _write(tmp_path / "points.gpkg", ["POINT (1 2)"], kind="Point")
    with pytest.raises(VectorInputError, match=r"Expected polygons in the AOI file .*points\.gpkg but found none"):
        read_aoi(path)
    assert shapely.equals(read_geometries(path)[0], shapely.Point(1, 2))
