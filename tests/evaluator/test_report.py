"""write_report and the column writers give the same files as writing record by record.

The reference path below is the straightforward writer the column writers replace: one
``csv.writer.writerow`` per record with each value converted on its own, and one OGR
feature per record with each field set through OGR (field types inferred from the
values, a declared kind only for an all-None field). Its outputs are compared with
today's on the bundled ptb_small fixtures (paper and reference-code profiles) and on
hand-made layers that hold every geometry type and value kind the writers accept.

Equality means: CSV and JSON files byte for byte. GeoPackages read back: every layer's
geometry type, CRS, extent and feature count, every field's name, type and subtype,
every feature's fid, values and geometry blob (the bytes GDAL stores), the R-tree
entries, the tables, triggers and indexes of the file (their SQL) and the GeoPackage
metadata tables, except the ``last_change`` timestamps of ``gpkg_contents``.
"""

import csv
import json
import math
import sqlite3

import numpy as np
import pytest
import shapely

from polytopo.evaluator.run.api import evaluate, load_inputs
from polytopo.core.geopackage_publish import mark_layers
from polytopo.core.vector_files import PixelFrame, ogr_exceptions
from polytopo.evaluator.outputs.records import FIELD_KINDS
from polytopo.evaluator.outputs.report import write_report
from polytopo.evaluator.outputs.writers import RecordTable, error_layers, write_csv, write_geopackage

pytest.importorskip("osgeo", reason="GDAL's Python bindings are needed to write and read GeoPackages")

_TABLES = ("predictions", "references", "missed_holes", "hallucinated_holes")


def _reference_value(value):
    """One value as the record-by-record writers convert it: None, bool, int, float or str."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _reference_csv(records, path):
    columns = [name for name in records[0] if name != "geometry"] if records else []
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for record in records:
            row = []
            for name in columns:
                value = _reference_value(record[name])
                row.append("" if value is None else int(value) if isinstance(value, bool) else
                           repr(value) if isinstance(value, float) else value)
            writer.writerow(row)


def _reference_kind(values, hint):
    seen = {"bool" if isinstance(v, bool) else type(v).__name__ for v in values if v is not None}
    if not seen:
        return hint or "str"
    if seen == {"str"}:
        return "str"
    return "float" if "float" in seen else "bool" if seen == {"bool"} else "int"


def _reference_geopackage(path, layers, frame=None, field_kinds=None):
    """Write the layers feature by feature through OGR (the path the column writer replaced)."""
    with ogr_exceptions() as (_, ogr, osr):
        srs = None
        if frame is not None:
            srs = osr.SpatialReference()
            srs.ImportFromWkt(frame.crs_wkt)
            srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
        for name, records, geometry_type in layers:
            columns = [key for key in records[0] if key != "geometry"] if records else []
            values = {c: [_reference_value(r[c]) for r in records] for c in columns}
            kinds = {c: _reference_kind(values[c], (field_kinds or {}).get(c)) for c in columns}
            options = ["FID=fid"] + (["GEOMETRY_NAME=geometry"] if geometry_type else [])
            layer = dataset.CreateLayer(name, srs if geometry_type else None,
                                        getattr(ogr, f"wkb{geometry_type}") if geometry_type else ogr.wkbNone,
                                        options=options)
            types = {"bool": ogr.OFTInteger, "int": ogr.OFTInteger64, "float": ogr.OFTReal, "str": ogr.OFTString}
            for column in columns:
                definition = ogr.FieldDefn(column, types[kinds[column]])
                if kinds[column] == "bool":
                    definition.SetSubType(ogr.OFSTBoolean)
                layer.CreateField(definition)
            layer.StartTransaction()
            for index, record in enumerate(records):
                feature = ogr.Feature(layer.GetLayerDefn())
                for field_index, column in enumerate(columns):
                    value = values[column][index]
                    if value is None:
                        feature.SetFieldNull(field_index)
                    elif kinds[column] == "str":
                        feature.SetFieldString(field_index, value)
                    elif kinds[column] == "float":
                        feature.SetField(field_index, float(value))
                    else:
                        feature.SetFieldInteger64(field_index, int(value))
                geometry = record.get("geometry")
                if geometry_type and geometry is not None:
                    if frame is not None:
                        geometry = frame.to_map(geometry)
                    if geometry_type.startswith("Multi") and geometry.geom_type == geometry_type[5:]:
                        multi = getattr(shapely, geometry_type)
                        geometry = multi([geometry]) if not geometry.is_empty else multi()
                    feature.SetGeometryDirectly(ogr.CreateGeometryFromWkb(shapely.to_wkb(geometry)))
                layer.CreateFeature(feature)
            layer.CommitTransaction()
        layer = dataset = None
    mark_layers(path)  # as every GeoPackage PolyTopo writes: its layers marked as PolyTopo's


def _gpkg_content(path):
    """What a GeoPackage holds, read back through OGR and SQLite (timestamps left out)."""
    content = {}
    with ogr_exceptions() as (_, ogr, _):
        dataset = ogr.Open(str(path))
        for index in range(dataset.GetLayerCount()):
            layer = dataset.GetLayerByIndex(index)
            definition = layer.GetLayerDefn()
            fields = [(definition.GetFieldDefn(i).GetName(), definition.GetFieldDefn(i).GetType(),
                       definition.GetFieldDefn(i).GetSubType()) for i in range(definition.GetFieldCount())]
            srs = layer.GetSpatialRef()
            features = []
            for feature in layer:
                geometry = feature.GetGeometryRef()
                features.append((feature.GetFID(), feature.items(),
                                 bytes(geometry.ExportToIsoWkb()) if geometry is not None else None))
            content[layer.GetName()] = {
                "type": layer.GetGeomType(), "srs": srs.ExportToWkt() if srs is not None else None,
                "count": layer.GetFeatureCount(), "fields": fields, "features": features}
        layer = dataset = None
    connection = sqlite3.connect(str(path))
    try:
        content["schema"] = sorted(connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        content["gpkg_contents"] = sorted(connection.execute(
            "SELECT table_name, data_type, identifier, description, min_x, min_y, max_x, max_y, srs_id "
            "FROM gpkg_contents"))
        tables = {name for _, name, _, _ in content["schema"]}
        for table in ("gpkg_geometry_columns", "gpkg_extensions", "gpkg_ogr_contents", "gpkg_spatial_ref_sys",
                      "sqlite_sequence"):
            if table in tables:
                content[table] = sorted(connection.execute(f"SELECT * FROM {table}"), key=repr)
        for (table,) in connection.execute("SELECT table_name FROM gpkg_contents").fetchall():
            columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
            content[f"rows {table}"] = connection.execute(f'SELECT * FROM "{table}" ORDER BY fid').fetchall()
            if "geometry" in columns:
                content[f"rtree {table}"] = connection.execute(
                    f'SELECT * FROM "rtree_{table}_geometry" ORDER BY id').fetchall()
    finally:
        connection.close()
    return content


def _assert_same_gpkg(path, reference):
    ours, theirs = _gpkg_content(path), _gpkg_content(reference)
    assert ours.keys() == theirs.keys()
    for key in theirs:
        assert ours[key] == theirs[key], key


@pytest.fixture(scope="module", params=["paper", "reference-code"])
def fixture_evaluation(request, fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, frame = load_inputs(folder / "gt.json", folder / "pred.json")
    return evaluate(gt, pred, profile=request.param, bootstrap_resamples=20), frame


def test_report_files_equal_the_record_by_record_writers(fixture_evaluation, tmp_path):
    """CSV tables byte for byte, the GeoPackage feature for feature, on the ptb_small fixtures."""
    evaluation, frame = fixture_evaluation
    files = write_report(evaluation, tmp_path / "out", frame=frame, plots=False)
    records = evaluation.records
    assert len(records["predictions"]) == 233 and len(records["references"]) == 261
    for name in _TABLES:
        _reference_csv(records[name], tmp_path / f"{name}.csv")
        assert files[f"{name}_csv"].read_bytes() == (tmp_path / f"{name}.csv").read_bytes(), name
    reference = tmp_path / "reference.gpkg"
    named = [(name, records[name]) for name in _TABLES] + [
        ("unmatched_predictions", [r for r in records["predictions"] if r["error_class"] == "unmatched"]),
        ("missed_references", [r for r in records["references"] if r["error_class"] == "missed"])]
    layers = [(name, rows, "MultiPolygon" if any(r["geometry"].geom_type == "MultiPolygon" for r in rows)
               else "Polygon") for name, rows in named]
    _reference_geopackage(reference, layers, frame, FIELD_KINDS)
    _assert_same_gpkg(files["geopackage"], reference)
    written = _gpkg_content(files["geopackage"])
    assert written["predictions"]["count"] == 233
    assert {name: content["count"] for name, content in written.items() if isinstance(content, dict)} == {
        name: len(table) for name, table, _ in error_layers(*(records[name] for name in _TABLES))}


def _utm_frame():
    with ogr_exceptions() as (_, _, osr):
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(32633)
        wkt = srs.ExportToWkt()
    return PixelFrame(wkt, origin_x=500000.0, origin_y=5000010.0, pixel_size=0.5)


def _mixed_layers():
    """Layers with every geometry type, empty and missing geometries, and every kind of value."""
    ring = shapely.Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(4, 4), (8, 4), (8, 8), (4, 8)]])
    polygons = [
        {"n": np.int64(1), "ok": np.True_, "x": np.float32(0.25), "s": "a,\"b\"", "nan": float("nan"),
         "empty": None, "score": 1, "geometry": ring},
        {"n": 2**62, "ok": False, "x": 1.0 / 3.0, "s": "é", "nan": None, "empty": None, "score": 0.5,
         "geometry": shapely.MultiPolygon([shapely.box(30, 0, 40, 5), shapely.box(50, 0, 51, 1)])},
        {"n": None, "ok": None, "x": -0.0, "s": None, "nan": np.float64("nan"), "empty": None, "score": None,
         "geometry": shapely.Polygon()},
        {"n": -3, "ok": True, "x": 1e300, "s": "", "nan": None, "empty": None, "score": 2.5, "geometry": None},
    ]
    points = [{"k": 1, "geometry": shapely.Point(3.5, 4.25)}, {"k": 2, "geometry": shapely.Point()},
              {"k": 3, "geometry": shapely.MultiPoint([(1, 2), (3, 4)])}]
    lines = [{"k": 1, "geometry": shapely.LineString([(0, 0), (5, 7)])},
             {"k": 2, "geometry": shapely.MultiLineString([[(0, 0), (1, 1)], [(2, 2), (3, 5)]])}]
    return [
        ("polygons", polygons, "MultiPolygon"),
        ("points", points, "MultiPoint"),
        ("single_points", points[:2], "Point"),
        ("lines", lines, "MultiLineString"),
        ("table", [{"metric": "AP", "value": 0.5}, {"metric": "MTA", "value": None}], None),
        ("empty", [], "Polygon"),
    ]


@pytest.mark.parametrize("frame", [None, _utm_frame()], ids=["pixels", "utm"])
def test_geopackage_equals_the_record_by_record_writer(tmp_path, frame):
    """Every geometry type, empty and missing geometries, NumPy scalars, NaN, bools, big ints, quotes."""
    layers = _mixed_layers()
    kinds = {"empty": "float", "score": "float"}
    path = write_geopackage(tmp_path / "new.gpkg", layers, frame, field_kinds=kinds)
    _reference_geopackage(tmp_path / "reference.gpkg", layers, frame, kinds)
    _assert_same_gpkg(path, tmp_path / "reference.gpkg")


def test_csv_equals_the_record_by_record_writer(tmp_path):
    """A table written from its columns equals one written row by row, and a RecordTable serves both writers."""
    records = _mixed_layers()[0][1]
    table = RecordTable.from_records(records)
    write_csv(table, tmp_path / "new.csv")
    _reference_csv(records, tmp_path / "reference.csv")
    assert (tmp_path / "new.csv").read_bytes() == (tmp_path / "reference.csv").read_bytes()
    assert (tmp_path / "new.csv").read_text(encoding="utf-8").splitlines()[1:3] == [
        '1,1,0.25,"a,""b""",,,1', f"{2**62},0,{1.0 / 3.0!r},é,,,0.5"]


def test_declared_kinds_fix_the_field_type_and_are_checked(tmp_path):
    """A declared float field is Real even when every value is an integer; a string in it is refused."""
    from polytopo.core.errors import InvalidParameterError

    path = write_geopackage(tmp_path / "t.gpkg", [("layer", [{"score": 1}, {"score": 2}], None)],
                            field_kinds={"score": "float"})
    content = _gpkg_content(path)
    with ogr_exceptions() as (_, ogr, _):
        assert content["layer"]["fields"] == [("score", ogr.OFTReal, ogr.OFSTNone)]
    assert [items for _, items, _ in content["layer"]["features"]] == [{"score": 1.0}, {"score": 2.0}]
    with pytest.raises(InvalidParameterError, match="field 'score': expected float values as its schema declares"):
        write_geopackage(tmp_path / "u.gpkg", [("layer", [{"score": "high"}], None)], field_kinds={"score": "float"})
    assert not (tmp_path / "u.gpkg").exists()


def test_summary_json_and_marker_are_written_with_the_tables(fixture_evaluation, tmp_path):
    """summary.json is the evaluation's summary, the marker lists every file, and no plot is drawn without plots."""
    evaluation, frame = fixture_evaluation
    files = write_report(evaluation, tmp_path / "out", frame=frame, plots=False, geopackage=False)
    assert json.loads(files["summary"].read_text())["profile"] == evaluation.summary["profile"]
    assert not list((tmp_path / "out").glob("*.png"))
    assert sorted(files) == ["hallucinated_holes_csv", "missed_holes_csv", "predictions_csv", "references_csv",
                             "summary"]


def test_plots_equal_savefig_byte_for_byte(fixture_evaluation, tmp_path):
    """Each PNG drawn once on its canvas has the bytes Matplotlib's savefig gives for the same figure."""
    from polytopo.evaluator.outputs import plots

    evaluation, _ = fixture_evaluation
    files = write_report(evaluation, tmp_path / "out", plots=True, geopackage=False)
    summary = evaluation.summary
    curve = summary["pr_curve"]
    figures = {
        "precision_recall": plots.precision_recall_figure(
            {f"IoU {curve['iou_threshold']:g}": (curve["precision"], curve["recall"])}),
        "simple_to_complex": plots.simple_to_complex_figure(summary["simple_to_complex"]),
        "wrong_topo": plots.wrong_topo_figure(summary["wrong_topo"]),
    }
    for name, figure in figures.items():
        figure.savefig(tmp_path / f"{name}.png", format="png")
        assert files[name].read_bytes() == (tmp_path / f"{name}.png").read_bytes(), name


def test_no_plots_leaves_matplotlib_unimported(fixtures_dir, tmp_path):
    """``--no-plots`` writes every other output without importing Matplotlib (a fresh interpreter)."""
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    script = ("import sys\nfrom polytopo.evaluator.cli.evaluate import main\n"
              f"status = main(['--gt', {str(folder / 'gt.json')!r}, '--pred', {str(folder / 'pred.json')!r}, "
              f"'--out', {str(tmp_path / 'out')!r}, '--no-plots', '--quiet', '--bootstrap', '0'])\n"
              "print(status, 'matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "False"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")) == [
        "evaluation.gpkg", "hallucinated_holes.csv", "missed_holes.csv", "predictions.csv", "references.csv",
        "summary.json"]


def test_in_one_process_the_geopackage_is_written_on_its_own_thread_while_the_plots_are_drawn(
        fixture_evaluation, tmp_path, monkeypatch):
    """On two or more cores the GeoPackage goes to a thread of its own (GDAL lets go of the GIL) while this one draws;
    a failure there is raised here and leaves no output."""
    import threading

    from polytopo.core import machine
    from polytopo.evaluator.outputs import writers

    evaluation, frame = fixture_evaluation
    real = writers.write_geopackage
    threads = []

    def noted(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(writers, "write_geopackage", noted)
    monkeypatch.setattr(machine, "usable_cores", lambda: 2)
    write_report(evaluation, tmp_path / "threaded", frame=frame)
    write_report(evaluation, tmp_path / "unplotted", frame=frame, plots=False)
    monkeypatch.setattr(machine, "usable_cores", lambda: 1)
    write_report(evaluation, tmp_path / "one-core", frame=frame)
    assert threads[0].startswith("polytopo-gpkg") and threads[1:] == [threading.current_thread().name] * 2
    for name in ("threaded", "one-core"):
        assert _gpkg_content(tmp_path / name / "evaluation.gpkg") == _gpkg_content(tmp_path / "unplotted" /
                                                                                  "evaluation.gpkg")
        assert (tmp_path / name / "precision_recall.png").read_bytes() == (
            tmp_path / "threaded" / "precision_recall.png").read_bytes()

    def failing(*args, **kwargs):
        raise OSError("disk gone while writing the GeoPackage")

    monkeypatch.setattr(writers, "write_geopackage", failing)
    monkeypatch.setattr(machine, "usable_cores", lambda: 2)
    with pytest.raises(OSError, match="disk gone"):
        write_report(evaluation, tmp_path / "failed", frame=frame)
    assert not (tmp_path / "failed").exists() and [p.name for p in tmp_path.iterdir() if "failed" in p.name] == []
