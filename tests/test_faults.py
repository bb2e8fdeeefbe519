"""Faults and load: runs killed with SIGKILL, disks that fill up, six runs at once.

Nothing a killed or failed run leaves may look complete (an output folder with
``summary.json``, a GeoPackage at the output path), and the next run into the same place
must succeed without manual cleanup.
"""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from confined import needs_confinement, run_confined
from polytopo_testing import semantic_band_model
from reliability import case

from polytopo.core.output_safety import MARKER_NAME

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
EVALUATE = [sys.executable, "-m", "polytopo.evaluator", "--quiet", "--bootstrap", "0"]
BUILDINGS = 576
FAST_EVALUATION = ("--no-plots", "--no-gpkg")
VECTORIZE = [sys.executable, "-m", "polytopo.models", "run", "--quiet", "--provider", "cpu"]


def _square(x, y, side):
    return [x, y, x + side, y, x + side, y + side, x, y + side]


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    """200 buildings with a courtyard on 2 images; predictions shifted by 0.5 px."""
    folder = tmp_path_factory.mktemp("coco")
    gt = {"images": [{"id": i} for i in range(2)], "annotations": []}
    pred = []
    for k in range(200):
        x, y, image = 30 * (k % 10), 30 * (k // 40 % 10), k // 100
        gt["annotations"].append({"id": k, "image_id": image, "category_id": 1, "iscrowd": 0,
                                  "segmentation": [_square(x, y, 20), _square(x + 7, y + 7, 6)]})
        pred.append({"image_id": image, "category_id": 1, "score": 0.5 + (k % 7) / 20,
                     "segmentation": [_square(x + 0.5, y, 20), _square(x + 7.5, y + 7, 6)]})
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "pred.json").write_text(json.dumps(pred))
    return folder / "gt.json", folder / "pred.json"


@pytest.fixture(scope="module")
def raster(tmp_path_factory):
    """A 1536 × 1536 px Byte GeoTIFF of 576 courtyard buildings and a model that reads it."""
    from osgeo import gdal, osr

    folder = tmp_path_factory.mktemp("raster")
    image = np.zeros((1536, 1536), np.uint8)
    for row in range(24):
        for col in range(24):
            image[row * 64 + 8:row * 64 + 56, col * 64 + 8:col * 64 + 56] = 255
            image[row * 64 + 24:row * 64 + 40, col * 64 + 24:col * 64 + 40] = 0
    dataset = gdal.GetDriverByName("GTiff").Create(str(folder / "image.tif"), 1536, 1536, 1, gdal.GDT_Byte)
    dataset.SetGeoTransform((440000.0, 0.5, 0.0, 4640000.0, 0.0, -0.5))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32616)
    dataset.SetProjection(srs.ExportToWkt())
    dataset.GetRasterBand(1).WriteArray(image)
    del dataset
    card = {"polytopo.family": "semantic", "seg_thresh": 0.5, "tile_size": 64, "tiles_overlap": 25,
            "class_names": {"0": "building"}, "polytopo.input_range": [0, 255]}
    model = semantic_band_model(folder / "band.onnx", 1, tile=64, card=card)
    return folder / "image.tif", Path(model)


def _evaluate(coco, out, *extra):
    return [*EVALUATE, "--gt", str(coco[0]), "--pred", str(coco[1]), "--out", str(out), *extra]


def _vectorize(raster, out, *extra):
    return [*VECTORIZE, "--model", str(raster[1]), "--raster", str(raster[0]), "--out", str(out), *extra]


def _kill_when(command, folder, moment):
    """Start ``command``; SIGKILL it ``moment`` seconds in, or (moment None) once a temporary appears in ``folder``."""
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    while process.poll() is None and time.monotonic() - started < 60:
        partial = any("polytopo-partial" in p.name and "probe" not in p.name for p in folder.iterdir())
        if (moment is None and partial) or (moment is not None and time.monotonic() - started >= moment):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    process.wait()
    return process.returncode


def _complete_folder(out):
    """Whether ``out`` is a finished output: marker complete, every file it lists present."""
    marker = json.loads((out / MARKER_NAME).read_text())
    return marker["complete"] and all((out / name).is_file() for name in marker["files"])


@case("kill -9 of the evaluator while starting and while writing", "evaluator CLI",
      "no output folder, or a complete one (never one that only looks complete); the next run removes the "
      "leftovers and succeeds")
def test_a_killed_evaluation_leaves_nothing_that_looks_complete(coco, tmp_path):
    out = tmp_path / "out"
    killed = []
    for moment in (0.5, None):  # importing, writing (a temporary exists)
        status = _kill_when(_evaluate(coco, out), tmp_path, moment)
        if status == -signal.SIGKILL:
            killed.append(moment)
            assert not out.exists() or _complete_folder(out), moment
        if out.exists():  # the run had finished its output before the kill: a legitimate result
            shutil.rmtree(out)
    assert None in killed  # at least the kill while writing happened
    done = subprocess.run(_evaluate(coco, out), env=ENV, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / MARKER_NAME).read_text())["complete"] is True
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # the killed runs' temporaries are gone


@case("kill -9 of the vectorizer during inference and writing", "models CLI",
      "no file at the output path, or a complete one; the next run removes the leftovers and succeeds")
def test_a_killed_vectorization_leaves_nothing_that_looks_complete(raster, tmp_path):
    out = tmp_path / "out.gpkg"
    killed = []
    for moment in (0.8, None, 2.0):  # importing, inference starting (the writer's temporary exists), later
        status = _kill_when(_vectorize(raster, out), tmp_path, moment)
        if status == -signal.SIGKILL:
            killed.append(moment)
            assert not out.exists() or len(_vector_features(out)) == BUILDINGS, moment
        out.unlink(missing_ok=True)
    assert None in killed
    done = subprocess.run(_vectorize(raster, out), env=ENV, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["out.gpkg"]


def _full_disk(command, disk, size):
    """Run ``command`` with a ``size`` tmpfs on ``disk``; return (process, what the disk held afterwards)."""
    listing = f"; status=$?; echo '--listing--'; ls -A {shlex.quote(str(disk))}; exit $status"
    done = run_confined(["sh", "-c", shlex.join(map(str, command)) + listing], tmpfs=[(disk, size)], env=ENV)
    output, _, listing_text = done.stdout.partition("--listing--")
    return done, listing_text.split()


@needs_confinement
@case("evaluator output on a disk that fills up mid-write", "evaluator CLI",
      "exit 2: Expected free disk space to write ... the disk holding ... is full ...; nothing left behind")
def test_evaluator_on_a_disk_that_fills_up(coco, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    done, left = _full_disk(_evaluate(coco, disk / "out"), disk, "256k")
    assert done.returncode == 2 and "is full" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and left == []


@needs_confinement
@case("vectorizer output on a disk that fills up mid-write", "models CLI",
      "exit 1: Expected free disk space to write ... is full ...; nothing left behind")
def test_vectorizer_on_a_disk_that_fills_up(raster, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    done, left = _full_disk(_vectorize(raster, disk / "out.gpkg"), disk, "128k")
    assert done.returncode == 1 and "is full" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert left == []


def _vector_features(path):
    from osgeo import ogr

    dataset = ogr.Open(str(path))
    features = sorted((f.GetGeometryRef().ExportToWkt(), round(f.GetField("score"), 9)) for f in dataset.GetLayer(0))
    del dataset
    return features


@case("four evaluations and two vectorizations at once into different folders", "evaluator CLI, models CLI",
      "no shared temporary names, no interference: the same numbers and polygons as each run alone")
def test_six_runs_at_once_give_the_numbers_of_one_run_alone(coco, raster, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    part = ("--extent", "440000,4639808,440192,4640000")  # 384 px square: 81 tiles
    subprocess.run(_evaluate(coco, alone / "eval", *FAST_EVALUATION), env=ENV, check=True)
    subprocess.run(_vectorize(raster, alone / "v.gpkg", *part), env=ENV, check=True)
    together = tmp_path / "together"
    together.mkdir()
    commands = [_evaluate(coco, together / f"eval{k}", *FAST_EVALUATION) for k in range(4)]
    commands += [_vectorize(raster, together / f"v{k}.gpkg", *part) for k in range(2)]
    processes = [subprocess.Popen(c, env=ENV, stderr=subprocess.PIPE, text=True) for c in commands]
    assert [p.wait(timeout=300) for p in processes] == [0] * 6, [p.stderr.read() for p in processes]
    for p in processes:
        p.stderr.close()
    expected = json.loads((alone / "eval" / "summary.json").read_text())["metrics"]
    for k in range(4):
        assert json.loads((together / f"eval{k}" / "summary.json").read_text())["metrics"] == expected
    for k in range(2):
        assert _vector_features(together / f"v{k}.gpkg") == _vector_features(alone / "v.gpkg")
    assert sorted(p.name for p in together.iterdir()) == sorted([f"eval{k}" for k in range(4)] + ["v0.gpkg", "v1.gpkg"])
