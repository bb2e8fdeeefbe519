"""The inference engine's command line never destroys an input or an existing file."""

import hashlib
import json
import os
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
from confined import needs_confinement, run_confined
from osgeo import ogr, osr
from reliability import case

from polytopo.models.cli import main

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().err


def _aoi(path):
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    layer = dataset.CreateLayer("aoi", srs, ogr.wkbPolygon)
    feature = ogr.Feature(layer.GetLayerDefn())
    feature.SetGeometry(ogr.CreateGeometryFromWkt("POLYGON((500000 3999990,500020 3999990,500020 4000000,"
                                                  "500000 4000000,500000 3999990))"))
    layer.CreateFeature(feature)
    del dataset
    return path


@pytest.fixture
def scene(tmp_path, tiny):
    band = np.zeros((48, 48), np.uint8)
    band[8:40, 8:40] = 255
    band[16:32, 16:32] = 0
    raster = tiny.write_raster(tmp_path / "image.gpkg", np.stack([band] * 3), driver="GPKG")
    model = tiny.deepness_model(tmp_path / "model.onnx", tile=32)
    return raster, model, _aoi(tmp_path / "aoi.gpkg")


@pytest.mark.parametrize("target", [
    pytest.param("raster", marks=case("run --out X.gpkg --overwrite where X.gpkg is the input raster (GeoPackage)",
                                      "models CLI", "exit 1: Expected an output path different from every input "
                                      "but X.gpkg is the input ...; raster untouched")),
    pytest.param("aoi", marks=case("run --out the --aoi file --overwrite", "models CLI",
                                   "exit 1: Expected an output path different from every input ...; AOI untouched")),
])
def test_run_never_writes_an_input(scene, capsys, target):
    raster, model, aoi = scene
    out = {"raster": raster, "aoi": aoi}[target]
    before = _digest(out)
    status, err = _cli(capsys, "run", "--model", model, "--raster", raster, "--aoi", aoi, "--out", out,
                       "--overwrite", "--quiet", "--provider", "cpu")
    assert status == 1 and "is the input" in err and "Traceback" not in err
    assert _digest(out) == before


@case("write-card --out EXISTING without --overwrite", "models CLI",
      "exit 1: Expected no file at EXISTING but one exists; pass --overwrite ...; the file is untouched")
def test_write_card_never_replaces_a_file_without_overwrite(scene, tmp_path, capsys):
    raster, model, _ = scene
    before = _digest(raster)
    status, err = _cli(capsys, "write-card", model, "--set", "polytopo.licence=\"MIT\"", "--out", raster)
    assert status == 1 and "--overwrite" in err and _digest(raster) == before
    copy = tmp_path / "copy.onnx"
    assert _cli(capsys, "write-card", model, "--set", "polytopo.licence=\"MIT\"", "--out", copy)[0] == 0
    assert _cli(capsys, "write-card", model, "--set", "polytopo.licence=\"BSD\"", "--out", copy, "--overwrite")[0] == 0


@case("write-card --from CARD.json --out CARD.json --overwrite", "models CLI",
      "exit 1: Expected an output path different from every input ...")
def test_write_card_never_writes_its_card_json(scene, tmp_path, capsys):
    _, model, _ = scene
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"polytopo.licence": "MIT"}))
    status, err = _cli(capsys, "write-card", model, "--from", card, "--out", card, "--overwrite")
    assert status == 1 and "is the input" in err
    assert json.loads(card.read_text()) == {"polytopo.licence": "MIT"}


@pytest.mark.parametrize("content, expected", [
    pytest.param(None, "cannot be read", id="missing", marks=case("write-card --from a missing JSON file", "models CLI",
                                                    "exit 1: Expected a readable JSON file for --from ...")),
    pytest.param("{oops", "cannot be parsed", id="malformed", marks=case("write-card --from a malformed JSON file", "models CLI",
                                                         "exit 1: Expected a JSON object ... cannot be parsed")),
    pytest.param("[1, 2]", "got a list", id="list", marks=case("write-card --from a JSON list", "models CLI",
                                                    "exit 1: Expected a JSON object of card entries ... got a list")),
])
def test_write_card_from_a_bad_json_file(scene, tmp_path, capsys, content, expected):
    _, model, _ = scene
    card = tmp_path / "card.json"
    if content is not None:
        card.write_text(content)
    status, err = _cli(capsys, "write-card", model, "--from", card)
    assert status == 1 and expected in err and err.count("\n") == 1


@pytest.mark.parametrize("bands", [
    pytest.param("a", marks=case("run --bands a", "models CLI",
                                 "exit 2 (usage): expected comma-separated 1-based band numbers ...")),
    pytest.param("0,1", marks=case("run --bands 0,1", "models CLI",
                                   "exit 2 (usage): expected comma-separated 1-based band numbers ...")),
])
def test_bad_bands_are_a_usage_error(scene, tmp_path, capsys, bands):
    raster, model, _ = scene
    with pytest.raises(SystemExit) as stop:
        main(["run", "--model", model, "--raster", raster, "--out", str(tmp_path / "o.gpkg"), "--bands", bands])
    assert stop.value.code == 2 and "1-based band numbers" in capsys.readouterr().err


@needs_confinement
@case("run --out into a read-only folder", "models CLI",
      "exit 1 before loading the model: Expected a writable folder ... read-only")
def test_run_into_a_read_only_folder(scene, tmp_path):
    raster, model, _ = scene
    locked = tmp_path / "locked"
    locked.mkdir()
    done = run_confined([sys.executable, "-m", "polytopo.models", "run", "--model", model, "--raster", raster,
                         "--out", locked / "o.gpkg", "--quiet"], read_only=[locked], env=ENV)
    assert done.returncode == 1 and "read-only" in done.stderr and "Traceback" not in done.stderr, done.stderr


@needs_confinement
@case("write-card --out onto a full disk", "models CLI",
      "exit 1: Expected free disk space to write ... the disk holding ... is full; nothing left behind")
def test_write_card_onto_a_full_disk(scene, tmp_path):
    _, model, _ = scene
    disk = tmp_path / "disk"
    disk.mkdir()
    command = shlex.join([sys.executable, "-m", "polytopo.models", "write-card", str(model), "--set",
                          'polytopo.licence="MIT"', "--out", str(disk / "m.onnx")])
    done = run_confined(["sh", "-c", f"{command}; status=$?; ls -A {shlex.quote(str(disk))}; exit $status"],
                        tmpfs=[(disk, "16k")], fill=[(disk / "filler", 16)], env=ENV)
    assert done.returncode == 1 and "is full" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.split() == ["filler"]  # nothing half-written left on the full disk


@case("Ctrl-C during run (KeyboardInterrupt while polygons are written)", "models CLI",
      "exit 130: interrupted; no output file was written ...; no traceback, no file or temporary left")
def test_ctrl_c_during_run_is_one_line_and_leaves_nothing(scene, capsys, tmp_path, monkeypatch):
    from polytopo.models import writer

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.VectorWriter, "write", interrupted)
    raster, model, _ = scene
    before = sorted(p.name for p in tmp_path.iterdir())
    status, err = _cli(capsys, "run", "--model", model, "--raster", raster, "--out", tmp_path / "out.gpkg", "--quiet")
    assert status == 130 and "interrupted; no output file was written" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@case("run --prompts P.gpkg with a semantic model", "models CLI",
      "exit 1: Expected --prompts only with a model that takes prompts but MODEL is a 'semantic' model, which would "
      "ignore it; drop --prompts")
def test_prompts_for_a_model_without_prompts_are_refused(scene, capsys, tmp_path):
    raster, model, aoi = scene
    status, err = _cli(capsys, "run", "--model", model, "--raster", raster, "--out", tmp_path / "out.gpkg",
                       "--prompts", aoi, "--quiet")
    assert status == 1 and "Expected --prompts only with a model that takes prompts" in err
    assert not (tmp_path / "out.gpkg").exists()


@case("run --workers 1000 on a 2-core machine", "models CLI",
      "exit 2 (usage): Expected at most 8 local workers (4 per core of the 2 cores here) but got 1000 ...; pass "
      "--scheduler for more")
def test_more_local_workers_than_the_machine_holds_are_refused(scene, capsys, tmp_path):
    from polytopo.core.cluster import max_local_workers

    raster, model, _ = scene
    with pytest.raises(SystemExit) as stop:
        main(["run", "--model", str(model), "--raster", str(raster), "--out", str(tmp_path / "o.gpkg"),
              "--workers", str(max_local_workers() + 1)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"Expected at most {max_local_workers()} local workers" in err


@case("a card error (wrong tile_size)", "models CLI, plugin vectorize (dock, Processing)",
      "one line naming the key, the value and the fix, ending \"'python -m polytopo.models example-card semantic' "
      "prints a complete semantic card\"")
def test_a_card_error_is_one_line_and_the_example_is_a_command_away(scene, capsys, tmp_path):
    raster, model, _ = scene
    status, err = _cli(capsys, "write-card", model, "--set", "polytopo.family=\"nonsense\"", "--out",
                       tmp_path / "bad.onnx")
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 1 and len(lines) == 1 and "'polytopo.family'" in lines[0], err
    assert lines[0].endswith("'python -m polytopo.models example-card semantic' prints a complete semantic card.")


def test_example_card_prints_a_card_that_write_card_accepts(capsys, tmp_path):
    from polytopo.models.card.model_card import example_card

    assert main(["example-card", "rings"]) == 0
    assert json.loads(capsys.readouterr().out) == example_card("rings")


@case("a raster whose processed area is 10^6 x 10^6 px (a VRT)", "models CLI",
      "exit 1 before any tile is read: Expected at most 2e+09 model pixels (the run's limit) but the processed area "
      "is 1000000 x 1000000 = 1e+12 model pixels in N tiles, about N days on a 2-core CPU ...; --max-pixels to run it")
def test_a_huge_raster_is_refused_with_the_estimate_before_the_work(scene, capsys, tmp_path):
    from osgeo import gdal

    raster, model, _ = scene
    huge = tmp_path / "huge.vrt"
    source = gdal.Open(str(raster))
    geotransform = source.GetGeoTransform()
    dataset = gdal.Translate(str(huge), source, format="VRT", width=1_000_000, height=1_000_000)
    dataset.SetGeoTransform(geotransform)  # the source's pixel size over a 10^6 px square
    dataset = source = None
    status, err = _cli(capsys, "run", "--model", model, "--raster", huge, "--out", tmp_path / "out.gpkg", "--quiet",
                       "--bands", "1,2,3")
    assert status == 1 and "Expected at most 2e+09 model pixels" in err, err
    assert "1000000 x 1000000 = 1e+12 model pixels" in err and "days on a 2-core CPU" in err and "--max-pixels" in err
    assert not (tmp_path / "out.gpkg").exists()
    status, err = _cli(capsys, "run", "--model", model, "--raster", raster, "--out", tmp_path / "small.gpkg",
                       "--quiet", "--max-pixels", "3000")
    assert status == 0, err  # 48 x 48 px: within a limit of 3000


def test_run_progress_in_a_log_is_plain_lines(scene, tmp_path):
    """stderr not a terminal: a short line at every tenth of the tiles, no carriage-return bar."""
    import subprocess

    raster, model, _ = scene
    done = subprocess.run([sys.executable, "-m", "polytopo.models", "run", "--model", str(model), "--raster",
                           str(raster), "--out", str(tmp_path / "o.gpkg")], capture_output=True, text=True,
                          env=ENV, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "tiles 4/4 (100 %)" in done.stderr.splitlines()
