"""Reading OGR polygon layers into pixel instances: formats, CRS, frames, grouping, errors."""

import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import shapely

from polytopo.core.errors import InputFormatError, InvalidParameterError
from polytopo.core.vector_files import PixelFrame, frame_for_bounds, ogr_exceptions, require_osgeo
from polytopo.evaluator.inputs.io_vector import load_vector_layer

pytest.importorskip("osgeo", reason="GDAL's Python bindings are needed to write the test layers")

UTM = 32633
SQUARE_WITH_HOLE = "POLYGON ((500000 5000010, 500010 5000010, 500010 5000000, 500000 5000000, 500000 5000010), " \
    "(500002 5000008, 500004 5000008, 500004 5000006, 500002 5000006, 500002 5000008))"
SQUARE_EAST = "POLYGON ((500020 5000010, 500030 5000010, 500030 5000000, 500020 5000000, 500020 5000010))"


def write_layer(path, features, *, driver="GPKG", epsg=UTM, geometry="Polygon", fields=None, name="layer"):
    """Write ``features`` = [(WKT, WKB bytes or None, {field: value})] to a new OGR file."""
    with ogr_exceptions() as (_, ogr, osr):
        srs = None
        if epsg is not None:
            srs = osr.SpatialReference()
            srs.ImportFromEPSG(epsg)
            srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        dataset = ogr.GetDriverByName(driver).CreateDataSource(str(path))
        layer = dataset.CreateLayer(name, srs, getattr(ogr, f"wkb{geometry}"))
        for field_name, kind in (fields or {}).items():
            layer.CreateField(ogr.FieldDefn(field_name, kind))
        for shape, values in features:
            feature = ogr.Feature(layer.GetLayerDefn())
            for field_name, value in values.items():
                if value is None:
                    feature.SetFieldNull(field_name)
                else:
                    feature.SetField(field_name, value)
            if isinstance(shape, bytes):
                feature.SetGeometry(ogr.CreateGeometryFromWkb(shape))
            elif shape is not None:
                feature.SetGeometry(ogr.CreateGeometryFromWkt(shape))
            layer.CreateFeature(feature)
        layer, dataset = None, None
    return path


def to_epsg(wkt, source_epsg, target_epsg):
    """``wkt`` reprojected with OGR (traditional x/y order), as WKT."""
    with ogr_exceptions() as (_, ogr, osr):
        source, target = osr.SpatialReference(), osr.SpatialReference()
        source.ImportFromEPSG(source_epsg)
        target.ImportFromEPSG(target_epsg)
        for srs in (source, target):
            srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        geometry = ogr.CreateGeometryFromWkt(wkt)
        geometry.Transform(osr.CoordinateTransformation(source, target))
        return geometry.ExportToWkt()


def ogr_types():
    _, ogr, _ = require_osgeo()
    return ogr


@pytest.fixture
def reference_gpkg(tmp_path):
    ogr = ogr_types()
    return write_layer(
        tmp_path / "reference.gpkg",
        [(SQUARE_WITH_HOLE, {"tile": "a"}), (SQUARE_EAST, {"tile": "b"})],
        fields={"tile": ogr.OFTString},
    )


def test_geopackage_reference_defines_frame_and_keeps_holes(reference_gpkg):
    """The frame origin is the extent's top-left corner; y grows downwards; holes survive."""
    gt, frame = load_vector_layer(reference_gpkg, pixel_size=0.5)
    assert (frame.origin_x, frame.origin_y, frame.pixel_size) == (500000.0, 5000010.0, 0.5)
    assert "32633" in frame.crs_wkt
    assert [i.source_id for i in gt.instances] == [1, 2]
    first = gt.instances[0]
    assert first.score == 1.0 and first.image_id == 0 and gt.image_ids == (0,)
    assert shapely.Polygon(first.exterior).bounds == (0.0, 0.0, 20.0, 20.0)
    assert first.hole_count == 1
    assert shapely.Polygon(first.holes[0]).bounds == (4.0, 4.0, 8.0, 8.0)
    assert shapely.Polygon(gt.instances[1].exterior).bounds == (40.0, 0.0, 60.0, 20.0)


def test_geojson_in_degrees_with_pixel_size(tmp_path):
    """A GeoJSON layer in EPSG:4326 is read lon/lat with a pixel size in degrees."""
    path = write_layer(
        tmp_path / "gt.geojson",
        [("POLYGON ((10 50, 10.001 50, 10.001 49.999, 10 49.999, 10 50))", {})],
        driver="GeoJSON",
        epsg=4326,
    )
    gt, frame = load_vector_layer(path, pixel_size=1e-5)
    assert (frame.origin_x, frame.origin_y) == (10.0, 50.0)
    assert gt.instances[0].source_id == 0
    np.testing.assert_allclose(shapely.Polygon(gt.instances[0].exterior).bounds, (0, 0, 100, 100), atol=1e-6)


def test_shapefile_inside_a_zip_archive(tmp_path):
    """A Shapefile is read directly and through a /vsizip/ path."""
    folder = tmp_path / "shp"
    folder.mkdir()
    write_layer(folder / "gt.shp", [(SQUARE_EAST, {})], driver="ESRI Shapefile")
    archive = tmp_path / "gt.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for part in folder.iterdir():
            bundle.write(part, part.name)
    direct, _ = load_vector_layer(folder / "gt.shp", pixel_size=1.0)
    zipped, frame = load_vector_layer(f"/vsizip/{archive}/gt.shp", pixel_size=1.0)
    assert len(zipped) == len(direct) == 1
    assert (frame.origin_x, frame.origin_y) == (500020.0, 5000010.0)
    np.testing.assert_array_equal(zipped.instances[0].exterior, direct.instances[0].exterior)


def test_degrees_without_pixel_size_is_an_error(tmp_path):
    """A geographic CRS needs an explicit pixel size in degrees."""
    path = write_layer(tmp_path / "gt.gpkg", [("POLYGON ((10 50, 11 50, 11 49, 10 50))", {})], epsg=4326)
    with pytest.raises(InvalidParameterError, match="is in degrees; pass --pixel-size in degrees per pixel "
                                                    "or reproject to a projected CRS"):
        load_vector_layer(path)


def test_projected_without_pixel_size_is_an_error(reference_gpkg):
    """A vector layer has no resolution: the message asks for map units (metre) per pixel."""
    with pytest.raises(InvalidParameterError, match=r"pass --pixel-size in map units \(metre\) per pixel"):
        load_vector_layer(reference_gpkg)


def test_prediction_in_another_crs_is_reprojected(tmp_path, reference_gpkg):
    """A prediction layer in EPSG:4326 lands on the reference's pixels (UTM 33N frame)."""
    path = write_layer(
        tmp_path / "pred.gpkg",
        [(to_epsg(SQUARE_WITH_HOLE, UTM, 4326), {"score": 0.9})],
        epsg=4326,
        fields={"score": ogr_types().OFTReal},
    )
    gt, frame = load_vector_layer(reference_gpkg, pixel_size=0.5)
    pred, same_frame = load_vector_layer(path, frame=frame, score_field="score", role="pred")
    assert same_frame is frame
    (instance,) = pred.instances
    assert instance.score == 0.9
    np.testing.assert_allclose(instance.exterior, gt.instances[0].exterior, atol=1e-6)
    np.testing.assert_allclose(instance.holes[0], gt.instances[0].holes[0], atol=1e-6)


def test_target_srs_reprojects_the_reference(tmp_path):
    """target_srs moves the reference (and so the frame) into another CRS."""
    path = write_layer(tmp_path / "gt.gpkg", [(to_epsg(SQUARE_EAST, UTM, 4326), {})], epsg=4326)
    gt, frame = load_vector_layer(path, pixel_size=1.0, target_srs=f"EPSG:{UTM}")
    assert "32633" in frame.crs_wkt
    np.testing.assert_allclose((frame.origin_x, frame.origin_y), (500020.0, 5000010.0), atol=1e-6)
    np.testing.assert_allclose(shapely.Polygon(gt.instances[0].exterior).bounds, (0, 0, 10, 10), atol=1e-6)


def test_both_layers_without_crs_warn(tmp_path):
    """Without any CRS the coordinates are compared as they are, with a warning."""
    gt_path = write_layer(tmp_path / "gt.gpkg", [(SQUARE_EAST, {})], epsg=None)
    pred_path = write_layer(tmp_path / "pred.gpkg", [(SQUARE_EAST, {})], epsg=None)
    gt, frame = load_vector_layer(gt_path, pixel_size=2.0)
    assert frame.crs_wkt is None
    with pytest.warns(UserWarning, match="neither this layer nor the reference layer has a CRS"):
        pred, _ = load_vector_layer(pred_path, frame=frame, default_score=1.0, role="pred")
    np.testing.assert_array_equal(pred.instances[0].exterior, gt.instances[0].exterior)


def test_crs_on_one_side_only_is_an_error(tmp_path, reference_gpkg):
    """A missing CRS on either side is refused, naming the other side's CRS."""
    bare = write_layer(tmp_path / "bare.gpkg", [(SQUARE_EAST, {})], epsg=None)
    _, frame = load_vector_layer(reference_gpkg, pixel_size=1.0)
    with pytest.raises(InputFormatError, match=r"expected a CRS like the reference layer's .*EPSG:32633"):
        load_vector_layer(bare, frame=frame, default_score=1.0, role="pred")
    _, bare_frame = load_vector_layer(bare, pixel_size=1.0)
    with pytest.raises(InputFormatError, match=r"expected no CRS like the reference layer but got .*EPSG:32633"):
        load_vector_layer(reference_gpkg, frame=bare_frame, default_score=1.0, role="pred")


def test_multipolygon_is_exploded_into_parts(tmp_path):
    """Each part of a MultiPolygon becomes an instance with the feature's FID."""
    multi = shapely.MultiPolygon([shapely.from_wkt(SQUARE_WITH_HOLE), shapely.from_wkt(SQUARE_EAST)]).wkt
    path = write_layer(tmp_path / "gt.gpkg", [(multi, {})], geometry="MultiPolygon")
    gt, _ = load_vector_layer(path, pixel_size=1.0)
    assert [(i.source_id, i.part, i.hole_count) for i in gt.instances] == [(1, 0, 1), (1, 1, 0)]


def test_null_and_empty_geometries_are_skipped_and_counted(tmp_path):
    """NULL and empty geometries give no instance but are counted by reason."""
    path = write_layer(tmp_path / "gt.gpkg", [(None, {}), ("POLYGON EMPTY", {}), (SQUARE_EAST, {}), (None, {})])
    gt, _ = load_vector_layer(path, pixel_size=1.0)
    assert [i.source_id for i in gt.instances] == [3]
    assert gt.skipped == {"null_geometry": 2, "empty_geometry": 1}


def test_empty_layers_load(tmp_path, reference_gpkg):
    """An empty reference puts the origin at (0, 0); an empty prediction layer gives no instances."""
    empty = write_layer(tmp_path / "empty.gpkg", [])
    gt, frame = load_vector_layer(empty, pixel_size=1.0, patch_size_px=16)
    assert (len(gt), gt.image_ids, frame.origin_x, frame.origin_y) == (0, (), 0.0, 0.0)
    _, reference_frame = load_vector_layer(reference_gpkg, pixel_size=1.0)
    pred, _ = load_vector_layer(empty, frame=reference_frame, default_score=1.0, role="pred")
    assert (len(pred), pred.image_ids, pred.skipped) == (0, (0,), {})


def test_curved_geometry_is_linearized(tmp_path):
    """A CurvePolygon is read as its linear approximation."""
    curve = "CURVEPOLYGON (CIRCULARSTRING (500000 5000000, 500010 5000010, 500020 5000000, 500010 4999990, " \
        "500000 5000000))"
    path = write_layer(tmp_path / "gt.gpkg", [(curve, {})], geometry="CurvePolygon")
    gt, frame = load_vector_layer(path, pixel_size=1.0)
    exterior = gt.instances[0].exterior
    assert len(exterior) > 20
    radius = np.hypot(exterior[:, 0] - 10.0, exterior[:, 1] - (frame.origin_y - 5000000.0))
    np.testing.assert_allclose(radius, 10.0, atol=1e-6)


def test_missing_score_field_lists_the_fields(reference_gpkg):
    """A score field that does not exist is named with the fields that do."""
    with pytest.raises(InputFormatError, match=r"score field 'confidence' but the layer has none; "
                                               r"available fields: \['tile'\]"):
        load_vector_layer(reference_gpkg, pixel_size=1.0, score_field="confidence", role="pred")


def test_prediction_without_score_needs_a_default(reference_gpkg):
    """Unscored predictions need --score-field or --default-score."""
    with pytest.raises(InputFormatError, match="pass --score-field NAME .* or --default-score S"):
        load_vector_layer(reference_gpkg, pixel_size=1.0, role="pred")
    pred, _ = load_vector_layer(reference_gpkg, pixel_size=1.0, default_score=0.25, role="pred")
    assert {i.score for i in pred.instances} == {0.25}


def test_null_score_uses_default_or_fails_with_fid(tmp_path):
    """A NULL score takes the default score; without one the FID and field are named."""
    ogr = ogr_types()
    path = write_layer(tmp_path / "pred.gpkg", [(SQUARE_EAST, {"p": 0.7}), (SQUARE_WITH_HOLE, {"p": None})],
                       fields={"p": ogr.OFTReal})
    pred, _ = load_vector_layer(path, pixel_size=1.0, score_field="p", default_score=0.1, role="pred")
    assert [i.score for i in pred.instances] == [0.7, 0.1]
    with pytest.raises(InputFormatError, match="feature FID 2 field 'p': expected a score but got NULL"):
        load_vector_layer(path, pixel_size=1.0, score_field="p", role="pred")


def test_image_field_groups_features(tmp_path):
    """Each distinct value of the image field is an image, in order of first appearance."""
    ogr = ogr_types()
    path = write_layer(
        tmp_path / "gt.gpkg",
        [(SQUARE_EAST, {"tile": 7}), (None, {"tile": 3}), (SQUARE_WITH_HOLE, {"tile": 7})],
        fields={"tile": ogr.OFTInteger},
    )
    gt, _ = load_vector_layer(path, pixel_size=1.0, image_field="tile")
    assert gt.image_ids == (7, 3)
    assert [i.image_id for i in gt.instances] == [7, 7]
    assert gt.by_image()[3] == []


def test_string_image_field_and_missing_image_field(reference_gpkg):
    """String image ids are kept; a missing image field names the available fields."""
    gt, _ = load_vector_layer(reference_gpkg, pixel_size=1.0, image_field="tile")
    assert gt.image_ids == ("a", "b")
    with pytest.raises(InputFormatError, match=r"image field 'tile_id' .* available fields: \['tile'\]"):
        load_vector_layer(reference_gpkg, pixel_size=1.0, image_field="tile_id")


def test_patch_grid_groups_by_representative_point(tmp_path):
    """Features go to the patch holding their representative point; the origin snaps to the grid."""
    bowtie = "POLYGON ((500055 5000010, 500065 5000000, 500065 5000010, 500055 5000000, 500055 5000010))"
    path = write_layer(tmp_path / "gt.gpkg", [(SQUARE_WITH_HOLE, {}), (SQUARE_EAST, {}), (bowtie, {})])
    gt, frame = load_vector_layer(path, pixel_size=1.0, patch_size_px=25)
    assert (frame.origin_x, frame.origin_y, frame.patch_size_px) == (500000.0, 5000025.0, 25)
    assert [i.image_id for i in gt.instances] == ["r0_c0", "r0_c1", "r0_c2"]
    assert gt.image_ids == ("r0_c0", "r0_c1", "r0_c2")
    pred, _ = load_vector_layer(path, frame=frame, default_score=1.0, role="pred")
    assert [i.image_id for i in pred.instances] == ["r0_c0", "r0_c1", "r0_c2"]


def test_category_field_filters_features(tmp_path):
    """Only the requested categories are kept; the others are counted."""
    ogr = ogr_types()
    path = write_layer(tmp_path / "gt.gpkg", [(SQUARE_EAST, {"kind": 1}), (SQUARE_WITH_HOLE, {"kind": 2})],
                       fields={"kind": ogr.OFTInteger})
    gt, _ = load_vector_layer(path, pixel_size=1.0, category_field="kind", categories={2})
    assert [(i.source_id, i.category_id) for i in gt.instances] == [(2, 2)]
    assert gt.skipped == {"other_category": 1}
    both, _ = load_vector_layer(path, pixel_size=1.0, category_field="kind", image_field="kind")
    assert [(i.image_id, i.category_id) for i in both.instances] == [(1, 1), (2, 2)]


def test_non_finite_coordinates_name_the_feature(tmp_path):
    """NaN coordinates are refused with the file, FID and field."""
    ring = np.array([[0, 0], [np.nan, 0], [1, 1], [0, 0]], dtype="<f8")
    wkb = struct.pack("<BIII", 1, 3, 1, len(ring)) + ring.tobytes()
    path = write_layer(tmp_path / "gt.gpkg", [(SQUARE_EAST, {}), (wkb, {})])
    with pytest.raises(InputFormatError, match=r"gt\.gpkg layer 'layer' feature FID 2 field 'geometry': "
                                               "expected finite coordinates"):
        load_vector_layer(path, pixel_size=1.0)


def test_degenerate_ring_names_the_feature(tmp_path):
    """A ring of fewer than 3 distinct points is refused with the FID."""
    path = write_layer(tmp_path / "gt.gpkg", [("POLYGON ((0 0, 1 1, 0 0, 0 0))", {})])
    with pytest.raises(InputFormatError, match="feature FID 1 field 'geometry' part 0 exterior: expected a ring "
                                               "with at least 3 distinct points but got 2"):
        load_vector_layer(path, pixel_size=1.0)


def test_non_polygon_layer_is_refused(tmp_path):
    """A line layer is refused with its name and geometry type."""
    path = write_layer(tmp_path / "roads.gpkg", [("LINESTRING (0 0, 1 1)", {})], geometry="LineString",
                       name="roads")
    with pytest.raises(InputFormatError, match="layer 'roads': expected a Polygon or MultiPolygon layer but got "
                                               "geometry type Line String"):
        load_vector_layer(path, pixel_size=1.0)


def test_several_layers_need_a_layer_name(tmp_path, reference_gpkg):
    """A multi-layer dataset asks for a layer and lists the names."""
    write_layer(reference_gpkg.with_name("two.gpkg"), [(SQUARE_EAST, {})], name="first")
    two = reference_gpkg.with_name("two.gpkg")
    with ogr_exceptions() as (_, ogr, _):
        dataset = ogr.Open(str(two), update=1)
        dataset.CreateLayer("second", None, ogr.wkbPolygon)
        dataset = None
    with pytest.raises(InputFormatError, match=r"has 2 layers \['first', 'second'\]; pass one of them"):
        load_vector_layer(two, pixel_size=1.0)
    gt, _ = load_vector_layer(two, layer="first", pixel_size=1.0)
    assert len(gt) == 1


def test_missing_file_is_reported(tmp_path):
    """A path that does not exist says so."""
    with pytest.raises(InputFormatError, match="file not found"):
        load_vector_layer(tmp_path / "nothing.gpkg", pixel_size=1.0)


def test_frame_round_trip_is_exact_to_1e_9():
    """to_map(to_pixels(g)) gives g back, on UTM-sized coordinates."""
    rng = np.random.default_rng(0)
    frame = PixelFrame(None, origin_x=500123.25, origin_y=5000987.5, pixel_size=0.3, patch_size_px=512)
    polygons = shapely.polygons(rng.uniform([500000, 5000000], [501000, 5001000], size=(50, 5, 2)))
    back = frame.to_map(frame.to_pixels(polygons))
    np.testing.assert_allclose(shapely.get_coordinates(back), shapely.get_coordinates(polygons), rtol=0, atol=1e-9)
    pixels = shapely.get_coordinates(frame.to_pixels(polygons))
    again = shapely.get_coordinates(frame.to_pixels(frame.to_map(shapely.points(pixels))))
    np.testing.assert_allclose(again, pixels, rtol=0, atol=1e-9)


def test_frame_checks_its_fields():
    """A frame needs a positive pixel size and an integer patch size."""
    with pytest.raises(InvalidParameterError, match="Expected pixel_size to be a positive number"):
        PixelFrame(None, 0.0, 0.0, 0.0)
    with pytest.raises(InvalidParameterError, match="Expected patch_size_px to be a positive integer"):
        frame_for_bounds((0, 0, 1, 1), pixel_size=1.0, patch_size_px=2.5)


def test_evaluator_modules_import_without_gdal(tmp_path):
    """io_vector, writers and plots import when osgeo is missing; reading then explains how to install it."""
    script = (
        "import sys; sys.modules['osgeo'] = None\n"
        "import polytopo.evaluator.inputs.io_vector as m, polytopo.evaluator.outputs.writers, polytopo.evaluator.outputs.plots\n"
        "try:\n    m.load_vector_layer('x.gpkg', pixel_size=1.0)\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=tmp_path)
    assert "apt-get install python3-gdal" in result.stdout


def test_predictions_loaded_against_an_already_loaded_reference_equal_a_fresh_load(tmp_path, reference_gpkg):
    """Method comparisons read the reference once; the predictions land in the same frame."""
    from polytopo.evaluator import load_inputs

    path = write_layer(tmp_path / "pred.gpkg", [(to_epsg(SQUARE_WITH_HOLE, UTM, 4326), {"score": 0.9})],
                       epsg=4326, fields={"score": ogr_types().OFTReal})
    gt, pred, frame = load_inputs(reference_gpkg, path, pixel_size=0.5, score_field="score")
    again_gt, again_pred, again_frame = load_inputs("not read", path, pixel_size=0.5, score_field="score",
                                                    reference=(gt, frame))
    assert again_gt is gt and again_frame is frame
    assert [i.score for i in again_pred.instances] == [i.score for i in pred.instances]
    for a, b in zip(again_pred.instances, pred.instances):
        assert np.array_equal(a.exterior, b.exterior) and all(map(np.array_equal, a.holes, b.holes))
    coco = tmp_path / "coco.json"
    coco.write_text("[]")
    with pytest.raises(InputFormatError, match="both inputs as COCO JSON or both as vector layers"):
        load_inputs(reference_gpkg, coco, reference=(gt, frame))
