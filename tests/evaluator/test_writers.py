"""Writers: CSV, JSON and GeoPackage content, atomic replacement, overwrite and input protection."""

import csv
import gc
import json
import zipfile

import numpy as np
import pytest
import shapely

from polytopo.core.errors import InvalidParameterError
from polytopo.core.vector_files import PixelFrame, ogr_exceptions
from polytopo.evaluator.outputs.writers import (
    atomic_output,
    error_layers,
    write_csv,
    write_geopackage,
    write_summary_json,
)

pytest.importorskip("osgeo", reason="GDAL's Python bindings are needed to write and read GeoPackages")

SQUARE_WITH_HOLE = shapely.Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(4, 4), (8, 4), (8, 8), (4, 8)]])
SQUARE = shapely.box(40, 0, 60, 20)


@pytest.fixture
def utm_frame():
    with ogr_exceptions() as (_, _, osr):
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(32633)
        wkt = srs.ExportToWkt()
    return PixelFrame(wkt, origin_x=500000.0, origin_y=5000010.0, pixel_size=0.5)


def records():
    return [
        {"fid_ref": 7, "iou": 0.75, "error_class": "ok", "valid": True, "geometry": SQUARE_WITH_HOLE},
        {"fid_ref": None, "iou": float("nan"), "error_class": "unmatched", "valid": False, "geometry": SQUARE},
    ]


def read_gpkg(path):
    """{layer: (srs authority code or None, {field: type name}, [(values, WKT)])} read with OGR."""
    with ogr_exceptions() as (_, ogr, _):
        dataset = ogr.Open(str(path))
        layers = {}
        for index in range(dataset.GetLayerCount()):
            layer = dataset.GetLayerByIndex(index)
            definition = layer.GetLayerDefn()
            fields = {}
            for field_index in range(definition.GetFieldCount()):
                field = definition.GetFieldDefn(field_index)
                subtype = ogr.GetFieldSubTypeName(field.GetSubType())
                fields[field.GetName()] = field.GetTypeName() + ("" if subtype == "None" else f"({subtype})")
            srs = layer.GetSpatialRef()
            code = srs.GetAuthorityCode(None) if srs is not None else None
            rows = []
            for feature in layer:
                geometry = feature.GetGeometryRef()
                rows.append((feature.items(), geometry.ExportToIsoWkt() if geometry is not None else None))
            layers[layer.GetName()] = (code, fields, rows)
        layer, dataset = None, None
    return layers


def test_csv_drops_geometry_and_writes_empty_for_missing(tmp_path):
    """Geometry is dropped, NaN and None are empty, bools are 1/0, NumPy scalars are plain."""
    rows = records()
    rows[0]["iou"] = np.float32(0.5)
    path = write_csv(rows, tmp_path / "features.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table == [["fid_ref", "iou", "error_class", "valid"], ["7", "0.5", "ok", "1"], ["", "", "unmatched", "0"]]


def test_csv_needs_the_same_keys(tmp_path):
    """Records with other keys are refused, naming the record."""
    with pytest.raises(InvalidParameterError, match="but record 1 has"):
        write_csv([{"a": 1}, {"b": 2}], tmp_path / "x.csv")


def test_empty_csv_writes_the_given_header(tmp_path):
    """An empty table still gets its header when the fields are given."""
    path = write_csv([], tmp_path / "empty.csv", fields=["iou", "geometry", "score"])
    assert path.read_bytes() == b"iou,score\r\n"


def test_failed_csv_leaves_neither_target_nor_temporary(tmp_path):
    """A value that cannot be written fails mid-write and removes the temporary file."""
    rows = [{"a": 1}, {"a": 2}, {"a": [1, 2]}]
    with pytest.raises(InvalidParameterError, match="record 2 field 'a': expected a number, string, bool or None"):
        write_csv(rows, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def test_existing_target_needs_overwrite(tmp_path):
    """An existing file is kept unless overwrite is passed."""
    target = tmp_path / "summary.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        write_summary_json({"a": 1}, target)
    assert target.read_text(encoding="utf-8") == "old"
    write_summary_json({"a": 1}, target, overwrite=True)
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": 1}


def test_inputs_are_never_written(tmp_path):
    """A protected input is refused even with overwrite, also through a symlink or a /vsizip/ path."""
    source = tmp_path / "gt.csv"
    source.write_text("input", encoding="utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(source)
    for target in (source, link):
        with pytest.raises(InvalidParameterError, match="Expected an output path different from every input"):
            write_csv([{"a": 1}], target, overwrite=True, protect=[source])
    archive = tmp_path / "gt.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("gt.geojson", "{}")
    with pytest.raises(InvalidParameterError, match="is the input /vsizip/"):
        write_summary_json({}, archive, overwrite=True, protect=[f"/vsizip/{archive}/gt.geojson"])
    assert source.read_text(encoding="utf-8") == "input"


def test_missing_folder_is_reported(tmp_path):
    """The output folder must exist."""
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_csv([{"a": 1}], tmp_path / "no" / "out.csv")


def test_atomic_output_uses_a_hidden_sibling(tmp_path):
    """The temporary file lies next to the target, keeps its suffix, and becomes the target."""
    with atomic_output(tmp_path / "plot.png") as temporary:
        assert temporary.parent == tmp_path and temporary.suffix == ".png" and temporary.name.startswith(".")
        temporary.write_bytes(b"png")
        assert not (tmp_path / "plot.png").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_summary_json_converts_nan_and_numpy(tmp_path):
    """NaN and infinity become null; NumPy scalars and arrays become numbers and lists."""
    summary = {"AP": np.float64(0.5), "MTA": float("nan"), "HD95": float("inf"), "counts": np.arange(3),
               "nested": {"n": np.int32(4), "ok": np.bool_(True), "pair": (1, None)}}
    path = write_summary_json(summary, tmp_path / "summary.json")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "AP": 0.5, "MTA": None, "HD95": None, "counts": [0, 1, 2], "nested": {"n": 4, "ok": True, "pair": [1, None]}
    }
    with pytest.raises(InvalidParameterError, match=r"summary\['bad'\]: expected a number"):
        write_summary_json({"bad": object()}, tmp_path / "bad.json")


def test_summary_json_float_lists_keep_null_for_non_finite_and_other_lists_name_their_bad_item(tmp_path):
    """A long list of floats (a PR curve) goes out in one pass with NaN and infinities as null; a
    list holding anything else is checked item by item, and an unwritable item is named."""
    curve = [0.5, float("nan"), float("-inf"), 1.0, 0.0, -0.0] * 1000
    path = write_summary_json({"pr_curve": {"precision": curve}}, tmp_path / "summary.json")
    assert json.loads(path.read_text(encoding="utf-8"))["pr_curve"]["precision"] == [
        value if np.isfinite(value) else None for value in curve]
    with pytest.raises(InvalidParameterError, match=r"summary\['curve'\]\[2\]: expected a number"):
        write_summary_json({"curve": [0.5, 1.0, object()]}, tmp_path / "bad.json")
    mixed = [1, 0.5, np.float64(0.25), True, None]
    path = write_summary_json({"mixed": mixed}, tmp_path / "mixed.json")
    assert json.loads(path.read_text(encoding="utf-8")) == {"mixed": [1, 0.5, 0.25, True, None]}


def test_record_table_columns_follow_the_field_order_for_any_number_of_fields():
    """Records are read into one column per field, in the order asked for, with or without
    geometry, for one field, several or none."""
    from polytopo.evaluator.outputs.writers import RecordTable

    rows = [{"a": 1, "b": 2.5, "geometry": None}, {"b": float("nan"), "a": 3}]
    table = RecordTable.from_records(rows, fields=["b", "a"])
    assert table.fields == ("b", "a") and table.columns == ([2.5, None], [1, 3])
    assert RecordTable.from_records([{"a": 1}, {"a": 2}]).columns == ([1, 2],)
    assert RecordTable.from_records([{"geometry": None}]).columns == ()
    assert RecordTable.from_records([], fields=["a"]).columns == ([],)
    with pytest.raises(InvalidParameterError, match="record 1 has"):
        RecordTable.from_records([{"a": 1}, {"a": 1, "c": 2}])


def test_geopackage_round_trip_with_crs_fields_and_holes(tmp_path, utm_frame):
    """Layers come back with their CRS, typed fields, NULLs and map-unit geometry with holes."""
    path = write_geopackage(tmp_path / "errors.gpkg", [("predictions", records(), "Polygon")], utm_frame)
    layers = read_gpkg(path)
    code, fields, rows = layers["predictions"]
    assert code == "32633"
    assert fields == {"fid_ref": "Integer64", "iou": "Real", "error_class": "String", "valid": "Integer(Boolean)"}
    assert [values for values, _ in rows] == [
        {"fid_ref": 7, "iou": 0.75, "error_class": "ok", "valid": 1},
        {"fid_ref": None, "iou": None, "error_class": "unmatched", "valid": 0},
    ]
    first = shapely.from_wkt(rows[0][1])
    assert len(first.interiors) == 1
    assert first.equals_exact(utm_frame.to_map(SQUARE_WITH_HOLE), 1e-9)
    assert first.bounds == (500000.0, 5000000.0, 500010.0, 5000010.0)


def test_geopackage_without_frame_keeps_pixels_and_promotes_to_multi(tmp_path):
    """Without a frame geometry is written as given, without CRS; Polygons join a MultiPolygon layer."""
    multi = shapely.MultiPolygon([SQUARE, shapely.box(70, 0, 80, 10)])
    rows = [{"n": 1, "geometry": SQUARE_WITH_HOLE}, {"n": 2, "geometry": multi}, {"n": 3, "geometry": None}]
    path = write_geopackage(tmp_path / "pixels.gpkg", [("parts", rows, "MultiPolygon"), ("table", [{"k": "v"}], None)])
    layers = read_gpkg(path)
    code, _, written = layers["parts"]
    assert code is None
    assert shapely.from_wkt(written[0][1]).equals(shapely.MultiPolygon([SQUARE_WITH_HOLE]))
    assert shapely.from_wkt(written[1][1]).equals(multi)
    assert written[2][1] is None
    assert layers["table"][2] == [({"k": "v"}, None)]


def test_failed_geopackage_leaves_nothing(tmp_path, utm_frame):
    """A bad second layer fails after the first was written; no target or temporary file stays."""
    bad = [{"value": {"not": "flat"}, "geometry": SQUARE}]
    with pytest.raises(InvalidParameterError, match="field 'value': expected a number, string, bool or None"):
        write_geopackage(tmp_path / "out.gpkg", [("good", records(), "Polygon"), ("bad", bad, "Polygon")], utm_frame)
    gc.collect()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("rows", "geometry_type", "message"),
    [
        ([{"fid": 1, "geometry": SQUARE}], "Polygon", "expected no field named 'fid'"),
        ([{"a": 1, "geometry": SQUARE}, {"a": "x", "geometry": SQUARE}], "Polygon", "strings mixed with numbers"),
        ([{"a": 2**64, "geometry": SQUARE}], "Polygon", "fits in 64 bits"),
        ([{"a": 1, "geometry": shapely.Point(0, 0)}], "Polygon", "expected a Polygon geometry but got Point"),
        ([{"a": 1, "geometry": "POINT (0 0)"}], "Point", "expected a shapely geometry or None"),
        ([{"a": 1}], "Surface", "expected a geometry type of"),
    ],
)
def test_geopackage_refuses_unwritable_records(tmp_path, rows, geometry_type, message):
    """Each kind of unwritable record is named, and nothing is left behind."""
    with pytest.raises(InvalidParameterError, match=message):
        write_geopackage(tmp_path / "out.gpkg", [("layer", rows, geometry_type)])
    assert list(tmp_path.iterdir()) == []


def test_geopackage_overwrite(tmp_path):
    """An existing GeoPackage is written only with overwrite, and then keeps the layers it had."""
    target = tmp_path / "out.gpkg"
    write_geopackage(target, [("first", [{"a": 1, "geometry": SQUARE}], "Polygon")])
    with pytest.raises(FileExistsError):
        write_geopackage(target, [("second", [], "Polygon")])
    write_geopackage(target, [("second", [], "Polygon")], overwrite=True)
    assert sorted(read_gpkg(target)) == ["first", "second"]
    write_geopackage(target, [("first", [], "Polygon")], overwrite=True)
    assert {name: len(rows) for name, (_, _, rows) in read_gpkg(target).items()} == {"first": 0, "second": 0}


def test_error_layers_select_unmatched_and_missed(tmp_path, utm_frame):
    """The six error layers hold the right records and write to one GeoPackage."""
    gt = [{"error_class": "missed", "geometry": SQUARE}, {"error_class": "ok", "geometry": SQUARE_WITH_HOLE}]
    hole = [{"ring": 1, "geometry": shapely.Polygon(SQUARE_WITH_HOLE.interiors[0])}]
    multi = [{"ring": 2, "geometry": shapely.MultiPolygon([SQUARE])}]
    layers = error_layers(records(), gt, hole, multi)
    assert [(name, len(rows), kind) for name, rows, kind in layers] == [
        ("predictions", 2, "Polygon"),
        ("references", 2, "Polygon"),
        ("missed_holes", 1, "Polygon"),
        ("hallucinated_holes", 1, "MultiPolygon"),
        ("unmatched_predictions", 1, "Polygon"),
        ("missed_references", 1, "Polygon"),
    ]
    written = read_gpkg(write_geopackage(tmp_path / "errors.gpkg", layers, utm_frame))
    assert [values["error_class"] for values, _ in written["unmatched_predictions"][2]] == ["unmatched"]
    assert [values["error_class"] for values, _ in written["missed_references"][2]] == ["missed"]
    assert {code for code, _, _ in written.values()} == {"32633"}


def test_all_null_fields_take_their_hinted_type(tmp_path):
    """A float field that is NULL in every record stays Real, not String, when hinted."""
    from osgeo import ogr

    from polytopo.evaluator.outputs.records import FIELD_KINDS
    from polytopo.evaluator.outputs.writers import write_geopackage

    records = [{"iou": None, "hole_f1": None, "geometry": shapely.box(0, 0, 1, 1)}]
    path = write_geopackage(tmp_path / "t.gpkg", [("layer", records, "Polygon")], field_kinds=FIELD_KINDS)
    dataset = ogr.Open(str(path))
    definition = dataset.GetLayerByName("layer").GetLayerDefn()
    kinds = {definition.GetFieldDefn(i).GetName(): definition.GetFieldDefn(i).GetType()
             for i in range(definition.GetFieldCount())}
    assert kinds == {"iou": ogr.OFTReal, "hole_f1": ogr.OFTReal}


def test_the_summary_json_is_the_standard_indented_json_with_its_long_float_lists_made_at_once():
    """Long float lists (the PR curve) are encoded by the C encoder and laid out as the indenting encoder does."""
    import random

    from polytopo.evaluator.outputs.writers import _indented_json

    generator = random.Random(7)

    def value(depth=0):
        pick = generator.random()
        if depth > 3 or pick < 0.3:
            return generator.choice([1.5, -0.0, 1e-300, 3, "x, y", None, True, 12345678.9, "ü", '"quoted"'])
        if pick < 0.6:
            return {f"k{i}": value(depth + 1) for i in range(generator.randint(0, 4))}
        if pick < 0.8:
            return [generator.choice([generator.random(), None, 1e20, -2.5e-7])
                    for _ in range(generator.choice([0, 3, 63, 64, 100]))]
        return [value(depth + 1) for _ in range(generator.randint(0, 3))]

    for _ in range(300):
        data = {"a": value(), "pr_curve": {"precision": [generator.random() for _ in range(200)],
                                           "nested": [[0.25] * 70, [None] * 65, []]}, "b": value()}
        assert _indented_json(data) == json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
