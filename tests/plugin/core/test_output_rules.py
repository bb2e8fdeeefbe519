"""The plugin's writers follow the output-safety rules: no user file lost, nothing half-written."""

import os
import sys
from pathlib import Path

import pytest
from confined import needs_confinement, run_confined
from reliability import case

from polytopo.core import output_safety
from polytopo.plugin.runs import vectorize
from polytopo.plugin.errors import OutputExistsError
from polytopo.plugin.runs.evaluation import evaluate_layers
from polytopo.plugin.runs.export import export_run

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "QT_QPA_PLATFORM": "offscreen"}
SCRIPT = Path(__file__).with_name("confined_run.py")


@pytest.fixture(scope="module")
def run(scene):
    prediction, reference = scene.layers()
    return evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score")


@case("report folder holding report.html and summary.json that PolyTopo did not write, Replace on",
      "plugin evaluate (dock, Processing)", "OutputExistsError: ... never replaced; every file kept")
def test_a_report_lookalike_is_never_replaced(run, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for name, text in (("report.html", "<p>my report</p>"), ("summary.json", "{}"), ("thesis.txt", "keep")):
        (folder / name).write_text(text)
    with pytest.raises(OutputExistsError, match="never replaced"):
        export_run(run, tmp_path / "e.gpkg", folder, overwrite=True)
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "summary.json", "thesis.txt"]
    assert (folder / "report.html").read_text() == "<p>my report</p>"


@case("vectorize to a GeoPackage: provenance metadata", "plugin vectorize (dock, Processing)",
      "written into the finished file before it moves into place: a kill never leaves an output without it")
def test_vectorize_writes_metadata_before_the_output_appears(vectorize_inputs, tmp_path, monkeypatch):
    from qgis.core import QgsRasterLayer

    out = tmp_path / "out.gpkg"
    seen = []
    real = vectorize._save_metadata

    def spy(path, provenance):
        seen.append((Path(path) != out, out.exists()))
        real(path, provenance)

    monkeypatch.setattr(vectorize, "_save_metadata", spy)
    raster = QgsRasterLayer(str(vectorize_inputs.raster), "image")
    result = vectorize.vectorize_layer(raster, vectorize_inputs.model, provider="cpu", output_path=out)
    assert seen == [(True, False)]  # into the temporary file, while the output did not exist yet
    assert result.features == 2 and result.provenance["features"] == 2
    assert _has_qgis_metadata(out)


def _has_qgis_metadata(path):
    from osgeo import ogr

    dataset = ogr.Open(str(path))
    rows = dataset.ExecuteSQL("SELECT metadata FROM gpkg_metadata")
    found = any("provenance" in (row.GetField(0) or "") for row in rows)
    dataset.ReleaseResultSet(rows)
    return found


@case("plugin start after a run was killed", "plugin start (QGIS desktop, qgis_process)",
      "temporary folders of dead runs holding only unfinished files are removed; finished temporary layers kept")
def test_plugin_start_removes_stale_temporary_folders(qgis_app, tmp_path, monkeypatch):
    import tempfile

    import polytopo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = _dead_pid()
    host = output_safety.partial_name("x").split("-")[2]
    unfinished = tmp_path / f"polytopo-partial-{host}-{dead}-01-run"
    (unfinished / f".polytopo-partial-{host}-{dead}-02-out.gpkg").mkdir(parents=True)
    finished = tmp_path / f"polytopo-partial-{host}-{dead}-03-run"
    finished.mkdir()
    (finished / "out.gpkg").write_bytes(b"a finished layer")
    plugin = polytopo.classFactory(None)
    plugin.initProcessing()
    try:
        assert not unfinished.exists() and (finished / "out.gpkg").exists()
    finally:
        plugin.unload()


def _dead_pid():
    import subprocess

    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)


@needs_confinement
@case("vectorize into a read-only folder", "plugin vectorize (dock, Processing)",
      "RunFailedError before the inference: Expected a writable folder ... read-only")
def test_vectorize_into_a_read_only_folder(vectorize_inputs, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    done = run_confined([sys.executable, SCRIPT, "vectorize", vectorize_inputs.raster, vectorize_inputs.model,
                         locked / "out.gpkg"], read_only=[locked], env=ENV)
    assert done.stdout.strip().startswith("RunFailedError:") and "read-only" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr  # a clean exit, not a crash after the message


@needs_confinement
@case("evaluate and export onto a disk that fills up mid-write", "plugin evaluate (dock, Processing)",
      "RunFailedError: ... the disk holding ... is full ...; nothing left behind")
def test_export_onto_a_disk_that_fills_up(scene, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    command = [sys.executable, SCRIPT, "export", scene.prediction, scene.reference, scene.pixel_size,
               disk / "e.gpkg", disk / "report"]
    listing = f"; echo status $?; ls -A {disk}"
    done = run_confined(["sh", "-c", " ".join(f"'{part}'" for part in map(str, command)) + listing],
                        tmpfs=[(disk, "160k")], env=ENV)
    first, status, *rest = done.stdout.split("\n", 2)
    assert first.startswith("RunFailedError:") and "is full" in first, done.stdout + done.stderr
    assert status == "status 0", done.stdout + done.stderr  # a clean exit, not a crash after the message
    assert "".join(rest).split() == []  # the small disk holds nothing afterwards
