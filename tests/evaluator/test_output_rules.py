"""The evaluator never destroys the user's files: the output-safety rules on the command line."""

import json
import os
import subprocess
import sys
import zipfile

import pytest
from polytopo_testing import COCO_GT, COCO_PRED
from confined import needs_confinement, run_confined
from reliability import case

from polytopo.core import output_safety
from polytopo.evaluator.cli.evaluate import main

GT, PRED = COCO_GT, COCO_PRED
FAST = ("--quiet", "--no-plots", "--bootstrap", "0")


def _run(capsys, *args):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.err


def _zipped_shapefile(folder, name):
    """A Shapefile of one square with a hole (EPSG:3857), zipped to ``folder/name.zip``."""
    from osgeo import ogr, osr

    plain = folder / f"{name}-plain"
    plain.mkdir()
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(3857)
    dataset = ogr.GetDriverByName("ESRI Shapefile").CreateDataSource(str(plain / f"{name}.shp"))
    layer = dataset.CreateLayer(name, srs, ogr.wkbPolygon)
    layer.CreateField(ogr.FieldDefn("score", ogr.OFTReal))
    feature = ogr.Feature(layer.GetLayerDefn())
    feature.SetField("score", 0.9)
    feature.SetGeometry(ogr.CreateGeometryFromWkt("POLYGON((0 0,10 0,10 10,0 10,0 0),(3 3,6 3,6 6,3 6,3 3))"))
    layer.CreateFeature(feature)
    del dataset
    archive = folder / f"{name}.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for part in sorted(plain.iterdir()):
            handle.write(part, part.name)
    return archive


@case("--overwrite into an existing folder PolyTopo did not write (holds thesis.txt)", "evaluator CLI",
      "exit 2: Expected an empty folder or a previous PolyTopo output ... never replaced; thesis.txt kept")
def test_a_folder_polytopo_did_not_write_is_never_replaced(coco_files, tmp_path, capsys):
    gt, pred = coco_files
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "thesis.txt").write_text("four years")
    status, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", documents, "--overwrite", *FAST)
    assert status == 2 and "never replaced" in err and "thesis.txt" in err and err.count("\n") == 1
    assert sorted(p.name for p in documents.iterdir()) == ["thesis.txt"]
    assert (documents / "thesis.txt").read_text() == "four years"


@case("--overwrite of a previous output where the user added a file", "evaluator CLI",
      "exit 0: only the files listed in .polytopo-output.json are replaced; the user's file is kept")
def test_overwrite_replaces_only_the_files_polytopo_wrote(coco_files, tmp_path, capsys):
    gt, pred = coco_files
    out = tmp_path / "out"
    assert _run(capsys, "--gt", gt, "--pred", pred, "--out", out, *FAST)[0] == 0
    marker = json.loads((out / output_safety.MARKER_NAME).read_text())
    assert marker["producer"] == "PolyTopo" and marker["complete"] is True and "summary.json" in marker["files"]
    (out / "notes.txt").write_text("my notes")
    status, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", out, "--overwrite", "--no-gpkg", *FAST)
    assert status == 0, err
    assert (out / "notes.txt").read_text() == "my notes"
    assert not (out / "evaluation.gpkg").exists()  # written by the first run, listed, so replaced
    assert "evaluation.gpkg" not in json.loads((out / output_safety.MARKER_NAME).read_text())["files"]
    (out / "evaluation.gpkg").write_text("the user's own file of a name PolyTopo writes")
    status, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", out, "--overwrite", *FAST)
    assert status == 2 and "did not write" in err
    assert (out / "evaluation.gpkg").read_text().startswith("the user's own") and (out / "summary.json").exists()


@case("input given as /vsizip/DIR/x.zip/x.shp inside the --overwrite folder", "evaluator CLI",
      "exit 2: Expected an output path different from every input but DIR contains the input ...; zip kept")
def test_an_input_inside_a_zip_in_the_output_folder_is_recognised(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    output_safety.publish_folder(_staged(tmp_path), out)  # a previous PolyTopo output ...
    archive = _zipped_shapefile(out, "layer")  # ... in which the user keeps the inputs
    name = f"/vsizip/{archive}/layer.shp"
    status, err = _run(capsys, "--gt", name, "--pred", name, "--pixel-size", "0.5", "--score-field", "score",
                       "--out", out, "--overwrite", *FAST)
    assert status == 2 and "contains the input" in err and "layer.zip" in err
    assert archive.is_file() and zipfile.ZipFile(archive).namelist()


def _staged(folder):
    staging = folder / output_safety.partial_name("out")
    staging.mkdir()
    (staging / "summary.json").write_text("{}")
    return staging


@case("/vsizip//absolute/path.zip/x.shp given from a folder other than /", "evaluator CLI",
      "exit 0: the path is passed to GDAL as written (no // collapsing)")
def test_vsizip_with_an_absolute_path_works_from_any_folder(tmp_path):
    archive = _zipped_shapefile(tmp_path, "layer")
    name = f"/vsizip//{str(archive).lstrip('/')}/layer.shp"
    work = tmp_path / "elsewhere"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "polytopo.evaluator", "--gt", name, "--pred", name, "--pixel-size",
                           "0.5", "--score-field", "score", "--out", "o", *FAST], cwd=work, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads((work / "o" / "summary.json").read_text())["metrics"]["Hole-F1"] == 1.0


@case("leftovers of a killed run (.polytopo-partial-* of a dead process)", "evaluator CLI",
      "exit 0: removed at the next run into the same folder; temporaries of running processes kept")
def test_stale_leftovers_of_killed_runs_are_removed(coco_files, tmp_path, capsys):
    gt, pred = coco_files
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    pid = int(dead.stdout)
    host = output_safety.partial_name("x").split("-")[2]
    stale = tmp_path / f".polytopo-partial-{host}-{pid}-0a0a-out"
    stale.mkdir()
    (stale / "summary.json").write_text("{}")
    (tmp_path / f".polytopo-partial-{host}-{pid}-0b0b-evaluation.gpkg").write_bytes(b"half")
    live = tmp_path / output_safety.partial_name("other")
    live.mkdir()
    status, err = _run(capsys, "--gt", gt, "--pred", pred, "--out", tmp_path / "out", *FAST)
    assert status == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "gt.json", "out", "pred.json"])


@needs_confinement
@case("--out in a read-only folder", "evaluator CLI",
      "exit 2 before loading: Expected a writable folder ... read-only")
def test_a_read_only_output_folder_is_named_before_the_work(coco_files, tmp_path):
    gt, pred = coco_files
    locked = tmp_path / "locked"
    locked.mkdir()
    done = run_confined([sys.executable, "-m", "polytopo.evaluator", "--gt", gt, "--pred", pred,
                         "--out", locked / "out", *FAST], read_only=[locked], cwd=tmp_path,
                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 2, done.stderr
    assert "read-only" in done.stderr and "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_input_files_follow_gdal(tmp_path):
    """Sidecars GDAL lists and archives behind /vsizip/ count as inputs; network names add nothing."""
    archive = _zipped_shapefile(tmp_path, "layer")
    plain = tmp_path / "layer-plain" / "layer.shp"
    files = output_safety.input_files([str(plain), f"/vsizip/{archive}/layer.shp", "/vsicurl/https://example.org/a"])
    assert str(archive) in files
    assert {str(plain.with_suffix(s)) for s in (".shp", ".shx", ".dbf", ".prj")} <= files
    with pytest.raises(output_safety.UnsafeOutputError, match="layer.dbf"):
        output_safety.check_file_output(plain.with_suffix(".dbf"), inputs=[str(plain)], overwrite=True)
