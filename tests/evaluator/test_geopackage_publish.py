"""Writing into an existing GeoPackage adds PolyTopo's layers and keeps every layer of the user's."""

import sqlite3

import pytest
import shapely

from polytopo.core import geopackage_publish
from polytopo.core.geopackage_publish import PRODUCER_URI, layer_owners
from polytopo.core.vector_files import PixelFrame, ogr_exceptions
from polytopo.core.output_safety import OutputExistsError
from polytopo.evaluator.outputs.writers import write_geopackage
from reliability import case

pytest.importorskip("osgeo", reason="GDAL's Python bindings are needed to write and read GeoPackages")

ROADS = [f"LINESTRING ({i} 0, {i} 10)" for i in range(5)]


def _user_geopackage(path, layer="roads", epsg=32633, wkt=None):
    """A user's GeoPackage: a line layer with 5 features, a style row and a metadata entry of its own."""
    with ogr_exceptions() as (_, ogr, osr):
        srs = osr.SpatialReference()
        if wkt:
            srs.ImportFromWkt(wkt)
        else:
            srs.ImportFromEPSG(epsg)
        dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
        roads = dataset.CreateLayer(layer, srs, ogr.wkbLineString)
        roads.CreateField(ogr.FieldDefn("name", ogr.OFTString))
        for index, text in enumerate(ROADS):
            feature = ogr.Feature(roads.GetLayerDefn())
            feature.SetField("name", f"road {index}")
            feature.SetGeometry(ogr.CreateGeometryFromWkt(text))
            roads.CreateFeature(feature)
        roads.SetMetadataItem("OWNER", "me")
        dataset = None
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE layer_styles (id INTEGER PRIMARY KEY AUTOINCREMENT, f_table_catalog TEXT, "
                           "f_table_schema TEXT, f_table_name TEXT, f_geometry_column TEXT, styleName TEXT, "
                           "styleQML TEXT, styleSLD TEXT, useAsDefault BOOLEAN, description TEXT, owner TEXT, "
                           "ui TEXT, update_time DATETIME DEFAULT CURRENT_TIMESTAMP)")
        connection.execute("INSERT INTO layer_styles (f_table_name, f_geometry_column, styleName, styleQML, "
                           "useAsDefault) VALUES (?, 'geom', 'mine', '<qgis/>', 1)", (layer,))
    return path


def _read(path):
    """Layer name → (feature count, sorted field values of 'name' or None, CRS name) as GDAL reads them."""
    with ogr_exceptions() as (_, ogr, _osr):
        dataset = ogr.Open(str(path))
        out = {}
        for index in range(dataset.GetLayerCount()):
            layer = dataset.GetLayer(index)
            names = sorted(f.GetField("name") for f in layer) if layer.FindFieldIndex("name", True) >= 0 else None
            srs = layer.GetSpatialRef()
            out[layer.GetName()] = (layer.GetFeatureCount(), names, srs.GetName() if srs else None)
        return out


def _styles(path):
    with sqlite3.connect(path) as connection:
        return sorted(connection.execute("SELECT f_table_name, styleName FROM layer_styles").fetchall())


def _frame(epsg=32633):
    with ogr_exceptions() as (_, _, osr):
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(epsg)
        return PixelFrame(srs.ExportToWkt(), origin_x=500000.0, origin_y=5000010.0, pixel_size=0.5)


def _polygons(count):
    return [("polygons", [{"geometry": shapely.box(2 * i, 0, 2 * i + 1, 1), "v": i} for i in range(count)],
             "Polygon")]


@case("an existing GeoPackage holding the user's layers as output, overwrite on", "evaluator API, models CLI, "
      "plugin (dock, Processing)", "PolyTopo's layers are added in one SQLite transaction; every other layer, its "
      "style and metadata kept; PolyTopo's own layers of the same name replaced on the next run")
def test_writing_into_a_users_geopackage_keeps_their_layers(tmp_path):
    path = _user_geopackage(tmp_path / "mine.gpkg")
    before = _read(path)
    write_geopackage(path, _polygons(2), frame=_frame(), overwrite=True)
    after = _read(path)
    assert after["roads"] == before["roads"] and after["polygons"][0] == 2
    assert layer_owners(path) == {"polygons": True, "roads": False}
    write_geopackage(path, _polygons(3), frame=_frame(), overwrite=True)  # PolyTopo's layer: replaced
    again = _read(path)
    assert again["roads"] == before["roads"] and again["polygons"][0] == 3
    assert _styles(path) == [("roads", "mine")]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        marks = connection.execute("SELECT count(*) FROM gpkg_metadata WHERE md_standard_uri = ?",
                                   (PRODUCER_URI,)).fetchone()[0]
    assert marks == 1  # one marker, not one per run
    with ogr_exceptions() as (_, ogr, _osr):
        dataset = ogr.Open(str(path))
        layer = dataset.GetLayerByName("polygons")
        layer.SetSpatialFilterRect(500002.1, 5000009.6, 500002.2, 5000009.7)  # the spatial index came along
        assert [f.GetField("v") for f in layer] == [2]
        assert dataset.GetLayerByName("roads").GetMetadataItem("OWNER") == "me"
        dataset = None


@case("an existing GeoPackage whose user layer has the name of a PolyTopo layer", "evaluator API, models CLI, "
      "plugin (dock, Processing)", "OutputExistsError before the work: Expected to write the layer(s) ['polygons'] "
      "into ... a layer of that name that PolyTopo did not write; it is never replaced ...; the file is unchanged")
def test_a_users_layer_of_the_same_name_is_never_replaced(tmp_path):
    path = _user_geopackage(tmp_path / "mine.gpkg", layer="Polygons")  # SQLite names ignore case
    data = path.read_bytes()
    with pytest.raises(OutputExistsError, match=r"layer\(s\) \['polygons'\] .* PolyTopo did not write"):
        write_geopackage(path, _polygons(2), frame=_frame(), overwrite=True)
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.gpkg"]


def test_without_overwrite_an_existing_geopackage_is_still_refused(tmp_path):
    path = _user_geopackage(tmp_path / "mine.gpkg")
    with pytest.raises(OutputExistsError, match="one exists"):
        write_geopackage(path, _polygons(1), frame=_frame())


def test_a_failure_during_the_copy_leaves_the_users_geopackage_as_it_was(tmp_path, monkeypatch):
    """One transaction: a failure after the layers were copied rolls every change back."""
    path = _user_geopackage(tmp_path / "mine.gpkg")
    write_geopackage(path, _polygons(2), frame=_frame(), overwrite=True)
    before = _read(path)

    def fail(connection, names):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(geopackage_publish, "_copy_metadata", fail)
    with pytest.raises(OSError, match="Expected"):
        write_geopackage(path, _polygons(5), frame=_frame(), overwrite=True)
    assert _read(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.gpkg"]


def test_a_crs_id_the_user_file_uses_for_another_crs_gets_a_free_id(tmp_path):
    """GDAL numbers custom CRSs from 100000: two files may use one id for two CRSs."""
    lambert = ('PROJCS["custom",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],'
               'PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Azimuthal_Equal_Area"],'
               'PARAMETER["latitude_of_center",52],PARAMETER["longitude_of_center",10],PARAMETER["false_easting",0],'
               'PARAMETER["false_northing",0],UNIT["metre",1]]')
    ours = lambert.replace('"custom"', '"ours"').replace('"longitude_of_center",10', '"longitude_of_center",20')
    path = _user_geopackage(tmp_path / "mine.gpkg", wkt=lambert)
    with ogr_exceptions() as (_, _, osr):
        srs = osr.SpatialReference()
        srs.ImportFromWkt(ours)
        frame = PixelFrame(srs.ExportToWkt(), origin_x=0.0, origin_y=10.0, pixel_size=1.0)
    write_geopackage(path, _polygons(1), frame=frame, overwrite=True)
    layers = _read(path)
    assert layers["roads"][2] == "custom" and layers["polygons"][2] == "ours"
    with sqlite3.connect(path) as connection:
        ids = dict(connection.execute("SELECT table_name, srs_id FROM gpkg_contents").fetchall())
        blob = connection.execute("SELECT geometry FROM polygons").fetchone()[0]
    assert ids["roads"] != ids["polygons"] >= 100000
    assert int.from_bytes(blob[4:8], "little") == ids["polygons"]
