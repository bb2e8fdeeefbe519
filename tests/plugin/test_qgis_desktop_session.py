"""The dock evaluates and exports inside the ``qgis`` executable (see tests/support/qgis_code_session.py).

The executable links the distribution's GEOS into the global symbol scope; a shapely
wheel bound to it fails the GeoPackage export ("WKB output dimension must be 2 or 3").
Each case starts QGIS desktop under its own X server (``xvfb-run -a``) with a
throw-away profile and the plugin folder on ``QGIS_PLUGINPATH``; shapely comes from
this interpreter's packages through ``PYTHONPATH``. A machine without Xvfb fails with
the install hint: it is never counted as passed.
"""

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

SESSION_SCRIPT = Path(__file__).parents[1] / "support" / "qgis_code_session.py"
SESSION_TIMEOUT_S = 240
#: Layers the dock adds for one evaluation (the scored layers, the error layers, the summary).
LAYERS_ADDED = ["Hallucinated holes", "Missed holes", "Missed references", "Predictions", "References",
                "Summary", "Unmatched predictions"]


def run_session(tmp_path, plugin_folder, dock_from, enable_plugin):
    """Run QGIS desktop with the session script; return the ``session.json`` it wrote."""
    xvfb_run = shutil.which("xvfb-run")
    assert xvfb_run is not None, "xvfb-run is missing: run scripts/setup --dev (it installs the apt package xvfb)"
    assert shutil.which("qgis") is not None, "the qgis executable is missing: install the apt package qgis"
    config = tmp_path / "qgis-config"
    settings = config / "profiles" / "default" / "QGIS"
    settings.mkdir(parents=True)
    plugins = "[PythonPlugins]\npolytopo=true\n\n" if enable_plugin else ""
    (settings / "QGIS3.ini").write_text(plugins + "[qgis]\nshowTips=false\ncheckVersion=false\n", encoding="utf-8")
    out = tmp_path / "session"
    out.mkdir()
    (tmp_path / "xdg").mkdir(mode=0o700)
    python_path = [str(plugin_folder), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QGIS_CUSTOM_CONFIG_PATH": str(config),
           "QGIS_PLUGINPATH": str(plugin_folder), "XDG_RUNTIME_DIR": str(tmp_path / "xdg"),
           "PYTHONPATH": os.pathsep.join(python_path), "POLYTOPO_SESSION_OUT": str(out),
           "POLYTOPO_SESSION_DOCK_FROM": dock_from}
    env.pop("DISPLAY", None)
    done = subprocess.run([xvfb_run, "-a", "-s", "-screen 0 1280x900x24", "qgis", "--nologo", "--noversioncheck",
                           "--code", str(SESSION_SCRIPT)],
                          env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False)
    record_path = out / "session.json"
    assert record_path.is_file(), f"Expected the session to write {record_path}:\n{done.stdout}{done.stderr}"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert "error" not in record, record["error"]
    return record, out


def exported_layers(path):
    from osgeo import ogr

    source = ogr.Open(str(path))
    assert source is not None, f"Expected a GeoPackage at {path}"
    return {source.GetLayer(i).GetName(): source.GetLayer(i).GetFeatureCount() for i in range(source.GetLayerCount())}


@pytest.mark.parametrize("dock_from, enable_plugin", [("plugin", True), ("import", False)],
                         ids=["plugin-started-by-qgis", "dock-imported-by-the-script"])
def test_the_dock_evaluates_and_exports_in_qgis_desktop(tmp_path, plugin_folder, dock_from, enable_plugin):
    """QGIS starts the plugin before a ``--code`` script runs; a script may also import the dock itself."""
    record, out = run_session(tmp_path, plugin_folder, dock_from, enable_plugin)
    assert ("polytopo" in record["plugins_at_script_start"]) is enable_plugin
    assert record["shapely_on_qgis_geos"] is False, record["messages"]
    assert record["evaluated"] is True, record["messages"]
    assert record["layers_added"] == LAYERS_ADDED
    layers = exported_layers(out / "evaluation.gpkg")
    assert layers["predictions"] == 4 and layers["references"] == 4, layers
