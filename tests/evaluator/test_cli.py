"""The command line: outputs, exit codes and one-line messages on bad input."""

import json
import subprocess
import sys

import pytest
from polytopo_testing import COCO_GT, COCO_PRED

from polytopo.evaluator.cli.evaluate import main

GT, PRED = COCO_GT, COCO_PRED


@pytest.fixture
def files(tmp_path):
    def write(gt=GT, pred=PRED):
        gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
        gt_path.write_text(gt if isinstance(gt, str) else json.dumps(gt))
        pred_path.write_text(pred if isinstance(pred, str) else json.dumps(pred))
        return gt_path, pred_path
    return write


def _run(capsys, *args):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_writes_every_output(files, tmp_path, capsys):
    gt, pred = files()
    out = tmp_path / "report"
    status, stdout, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", out, "--bootstrap", "20", "--quiet")
    assert status == 0, err
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv",
            "evaluation.gpkg", "precision_recall.png", "simple_to_complex.png", "wrong_topo.png"} <= names
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["Topo-EM"] == 1.0 and summary["metrics"]["Hole-F1"] == 1.0
    assert summary["parameters"]["ring_match_threshold"] == 0.1 and summary["profile"] == "paper"
    assert summary["counts"]["gt_holes"] == 1 and "versions" in summary
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


def test_table_on_stdout(files, tmp_path, capsys):
    gt, pred = files()
    status, stdout, _ = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--no-plots",
                             "--bootstrap", "0")
    assert status == 0
    assert "Hole-F1" in stdout and "Topo-EM" in stdout and "1.0000" in stdout


def test_existing_output_is_kept_without_overwrite(files, tmp_path, capsys):
    gt, pred = files()
    out = tmp_path / "o"
    assert _run(capsys, "--gt", gt, "--pred", pred, "--out", out, "--quiet", "--no-plots")[0] == 0
    before = (out / "summary.json").stat().st_mtime_ns
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", out, "--quiet")
    assert status == 2 and "--overwrite" in err and err.count("\n") == 1
    assert (out / "summary.json").stat().st_mtime_ns == before


def test_never_overwrites_a_folder_holding_an_input(files, tmp_path, capsys):
    gt, pred = files()
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path, "--overwrite", "--quiet")
    assert status == 2 and "contains the input" in err
    assert gt.exists() and pred.exists()


@pytest.mark.parametrize("gt, pred, expected", [
    ("{not json", PRED, "cannot be parsed"),
    ({"images": []}, PRED, "'annotations' list"),
    (GT, {"oops": 1}, "list of prediction records"),
    (GT, [{"image_id": 1, "segmentation": [[0, 0, 20, 0, 20, 20]]}], "'score'"),
    (GT, [{"image_id": 1, "score": 1, "segmentation": [[0, 0, 20, 0, 0, 0]]}], "at least 3 distinct points"),
    (GT, [{"image_id": 1, "score": 1, "segmentation": [[0, 0, "NaN", 0, 20, 20]]}], "not strings"),
    (GT, [{"image_id": 1, "score": 1, "segmentation": [[0, 0, 20, 0, 20]]}], "even number"),
])
def test_bad_input_gives_one_line_and_status_2(files, tmp_path, capsys, gt, pred, expected):
    gt_path, pred_path = files(gt, pred)
    status, _, err = _run(capsys, "--gt", gt_path, "--pred", pred_path, "--out", tmp_path / "o", "--quiet")
    assert status == 2
    line = [line for line in err.splitlines() if "error:" in line]
    assert len(line) == 1 and expected in line[0], err
    assert not (tmp_path / "o").exists()


def test_default_score_fills_missing_scores(files, tmp_path, capsys):
    gt, pred = files(pred=[{k: v for k, v in PRED[0].items() if k != "score"}])
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--default-score", "0.5",
                          "--quiet")
    assert status == 0, err


def test_image_ids_only_in_predictions_warn(files, tmp_path, capsys):
    gt, pred = files(pred=PRED + [{**PRED[0], "image_id": 99}])
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--quiet")
    assert status == 0 and "appear only in the predictions" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["counts"]["images_only_in_predictions"] == 1


def test_help_states_units():
    result = subprocess.run([sys.executable, "-m", "polytopo.evaluator", "--help"], capture_output=True, text=True,
                            cwd="/", check=True)
    for phrase in ("px²", "pixels", "map units per pixel", "--profile", "--min-hole-area", "--score-field"):
        assert phrase in result.stdout


def test_profile_reference_code_from_the_command_line(files, tmp_path, capsys):
    gt, pred = files()
    status, _, _ = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--profile", "reference-code",
                        "--quiet", "--no-plots", "--no-gpkg")
    assert status == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["reference_metrics"]["hole"]["tp"] == 1
    assert summary["parameters"]["ring_match_threshold"] == 0.5


def test_a_failure_while_writing_leaves_no_output(files, tmp_path, capsys, monkeypatch):
    import polytopo.evaluator.outputs.writers as writers

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(writers, "write_geopackage", broken)
    gt, pred = files()
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--quiet")
    assert status == 2 and "is full" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


def _write_layer(path, crs_epsg, features, fields):
    from osgeo import ogr, osr

    srs = osr.SpatialReference()
    srs.ImportFromEPSG(crs_epsg)
    srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    layer = dataset.CreateLayer("buildings", srs, ogr.wkbMultiPolygon)
    for name, kind in fields:
        layer.CreateField(ogr.FieldDefn(name, kind))
    for wkt, values in features:
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(ogr.CreateGeometryFromWkt(wkt))
        for name, value in values.items():
            feature.SetField(name, value)
        layer.CreateFeature(feature)
    dataset = None


def test_vector_layers_in_different_crs(tmp_path, capsys):
    """GT in UTM 16N (m), predictions in Web Mercator: reprojected, scaled by 0.5 m/px."""
    from osgeo import ogr, osr

    x0, y0 = 740000.0, 3730000.0
    courtyard = (f"POLYGON(({x0} {y0},{x0 + 20} {y0},{x0 + 20} {y0 + 20},{x0} {y0 + 20},{x0} {y0}),"
                 f"({x0 + 5} {y0 + 5},{x0 + 10} {y0 + 5},{x0 + 10} {y0 + 10},{x0 + 5} {y0 + 10},{x0 + 5} {y0 + 5}))")
    _write_layer(tmp_path / "gt.gpkg", 32616, [(courtyard, {})], [])
    source, target = osr.SpatialReference(), osr.SpatialReference()
    source.ImportFromEPSG(32616)
    target.ImportFromEPSG(3857)
    for srs in (source, target):
        srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    geometry = ogr.CreateGeometryFromWkt(courtyard)
    geometry.Transform(osr.CoordinateTransformation(source, target))
    _write_layer(tmp_path / "pred.gpkg", 3857, [(geometry.ExportToWkt(), {"conf": 0.8})],
                 [("conf", ogr.OFTReal)])
    status, _, err = _run(capsys, "--gt", tmp_path / "gt.gpkg", "--pred", tmp_path / "pred.gpkg", "--pixel-size", "0.5",
                          "--score-field", "conf", "--out", tmp_path / "o", "--quiet", "--no-plots")
    assert status == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["metrics"]["Topo-EM"] == 1.0 and summary["metrics"]["AP50"] == pytest.approx(1.0)
    assert summary["metrics"]["E-BIoU"] > 0.99
    dataset = ogr.Open(str(tmp_path / "o" / "evaluation.gpkg"))
    scored = dataset.GetLayerByName("predictions")
    assert scored.GetSpatialRef().GetAuthorityCode(None) == "32616"
    feature = scored.GetNextFeature()
    polygon = feature.GetGeometryRef()
    if polygon.GetGeometryType() in (ogr.wkbMultiPolygon, ogr.wkbMultiPolygon25D):
        polygon = polygon.GetGeometryRef(0)
    assert polygon.GetGeometryCount() == 2  # exterior and the courtyard, in map units
    assert abs(polygon.GetGeometryRef(0).GetX(0) - 740000.0) < 1e-3


def test_vector_layer_without_pixel_size_is_refused(tmp_path, capsys):
    square = "POLYGON((0 0,10 0,10 10,0 10,0 0))"
    _write_layer(tmp_path / "gt.gpkg", 32616, [(square, {})], [])
    _write_layer(tmp_path / "pred.gpkg", 32616, [(square, {})], [])
    status, _, err = _run(capsys, "--gt", tmp_path / "gt.gpkg", "--pred", tmp_path / "pred.gpkg",
                          "--default-score", "1", "--out", tmp_path / "o", "--quiet")
    assert status == 2 and "pixel" in err.lower()


def test_degenerate_rings_can_be_dropped_and_counted(files, tmp_path, capsys):
    degenerate = {"image_id": 1, "score": 0.5, "segmentation": [[0, 0, 20, 0, 0, 0]]}
    bad_hole = {**PRED[0], "segmentation": PRED[0]["segmentation"] + [[1, 1, 2, 2, 1, 1]]}
    gt, pred = files(pred=[bad_hole, degenerate])
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--quiet")
    assert status == 2 and "--drop-degenerate-rings" in err
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--quiet",
                          "--drop-degenerate-rings", "--no-plots")
    assert status == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["counts"]["skipped"]["pred"] == {"degenerate_hole": 1, "degenerate_exterior": 1}
    assert summary["counts"]["pred_instances"] == 1 and summary["counts"]["pred_holes"] == 1


@pytest.mark.parametrize("mode", ["raster", "vector"])
def test_iou_option_selects_the_coco_iou_mode(files, tmp_path, capsys, mode):
    """``--iou`` reaches the parameters; raster is the coco default, vector stays available."""
    gt, pred = files(pred=[{**PRED[0], "segmentation": [[0.4, 0.3, 20.4, 0.3, 20.4, 20.3, 0.4, 20.3]]}])
    out = tmp_path / mode
    args = ["--gt", gt, "--pred", pred, "--out", out, "--profile", "coco", "--no-plots", "--bootstrap", "0",
            "--quiet"] + (["--iou", mode] if mode == "vector" else [])
    status, _, err = _run(capsys, *args)
    assert status == 0, err
    assert json.loads((out / "summary.json").read_text())["parameters"]["iou_mode"] == mode


def test_raster_iou_outside_coco_is_a_one_line_error(files, tmp_path, capsys):
    gt, pred = files()
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--iou", "raster")
    assert status == 2 and "raster IoU is a mode of the coco profile" in err and "Traceback" not in err


def test_progress_bar_shows_points_inside_the_pair_metrics_phase(files, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bar, not log lines
    gt, pred = files()
    status, _, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--no-plots", "--no-gpkg",
                          "--bootstrap", "0")
    assert status == 0
    assert "pair metrics: 8/8 points" in err


def test_progress_in_a_log_is_plain_lines(tmp_path, fixtures_dir):
    """stderr not a terminal (a log file, CI): one short line per phase, no carriage-return bar."""
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    done = subprocess.run([sys.executable, "-m", "polytopo.evaluator", "--gt", str(folder / "gt.json"), "--pred",
                           str(folder / "pred.json"), "--out", str(tmp_path / "o"), "--no-plots", "--no-gpkg",
                           "--bootstrap", "0"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr
    lines = done.stderr.splitlines()
    assert "polytopo.evaluator: load" in lines and "polytopo.evaluator: write" in lines
    assert max(len(line) for line in lines) < 200


@pytest.mark.parametrize("profile, prefix", [("p3", "P3-"), ("p3-code", "P3code-")])
def test_the_p3_profiles_print_their_own_metrics(files, tmp_path, capsys, profile, prefix):
    """--profile p3 / p3-code: the console table lists the P3 metrics too, not only the paper's."""
    gt, pred = files()
    status, out, _ = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "o", "--no-plots", "--no-gpkg",
                          "--bootstrap", "0", "--profile", profile)
    assert status == 0
    rows = [line.split()[0] for line in out.splitlines() if line.startswith(f"  {prefix}")]
    assert f"{prefix}IoU" in rows and f"{prefix}POLIS" in rows and f"{prefix}N-ratio" in rows
    assert out.rstrip().endswith("(summary.json, per-feature CSV)")
