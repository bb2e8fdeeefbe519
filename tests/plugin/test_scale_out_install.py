"""The optional scale-out group (Dask): reported without blocking, installed hash-checked on request.

The checks and installs inject their import function and pip runner as in
``test_dependencies.py``; only :func:`test_a_real_install_of_the_group_imports_dask` runs
pip against PyPI, and only when ``POLYTOPO_NETWORK_TESTS=1``.
"""

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from dock_testing import make_dock, set_up_evaluation
from polytopo_testing import wait_until
from stand_ins import real_core

from polytopo.core.cluster import COMMAND_LINE, open_client, require_distributed
from polytopo.core.errors import MissingDependencyError
from polytopo.plugin.setup.dependencies import (
    SCALE_OUT,
    check_dependencies,
    find_without_importing,
    install_missing,
)
from polytopo.plugin.setup.wheel_hashes import WHEEL_HASHES

VERSIONS = {"numpy": "1.24.2", "shapely": "2.1.2", "scipy": "1.10.1", "onnxruntime": "1.20.1"}
DASK = {"dask": "2026.8.0", "distributed": "2026.8.0"}


def fake_import(versions):
    """Return an import function that knows only ``versions`` ({module: version})."""

    def import_module(name):
        if name not in versions:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return types.SimpleNamespace(__version__=versions[name])

    return import_module


def report_without_dask(folder, found=None):
    """A report whose required packages are all there and whose scale-out group finds only ``found``."""
    return check_dependencies(import_module=fake_import(VERSIONS), folder=folder, find_module=fake_import(found or {}))


@pytest.fixture
def no_distributed(monkeypatch):
    """Make ``import distributed`` fail, as in a QGIS whose Python lacks Dask."""
    monkeypatch.setitem(sys.modules, "distributed", None)


def test_missing_dask_is_reported_but_does_not_block_loading(tmp_path):
    """The required packages decide ``ok``; the group is named, with the plugin's install entry."""
    report = report_without_dask(tmp_path)
    assert report.ok and report.missing == () and report.installable == ()
    assert report.missing_groups == (SCALE_OUT,) and report.installable_groups == (SCALE_OUT,)
    message = report.optional_message()
    assert "dask>=2026.8: not installed" in message and "distributed>=2026.8: not installed" in message
    assert "runs in the QGIS process without them" in message
    assert "Plugins ▸ PolyTopo ▸ Install Dask for workers" in message
    assert report_without_dask(tmp_path, DASK).optional_message() == ""


def test_dask_of_another_version_on_qgis_path_is_not_installable(tmp_path):
    """The plugin folder comes last on the path, so an old Dask there must be fixed in QGIS's Python."""
    report = report_without_dask(tmp_path, {"dask": "2023.1.0", "distributed": "2023.1.0"})
    assert report.missing_groups == (SCALE_OUT,) and report.installable_groups == ()
    assert "install them into QGIS's Python" in report.optional_message()
    outcome = install_missing(report, python="python3", run=pytest.fail, groups=(SCALE_OUT,))
    assert not outcome.ok and outcome.command == ()


def test_the_group_install_carries_require_hashes_and_a_hash_for_every_pin(tmp_path):
    """Asked for the group: every pin, dependencies included, each with its wheels' hashes, pip hash-checking."""
    folder = tmp_path / ".deps" / "py311-linux-x86_64"
    recorded = []

    def run(command, **kwargs):
        recorded.append((command, Path(command[-1]).read_text(encoding="utf-8").splitlines()))
        return subprocess.CompletedProcess(command, 0, stdout="Successfully installed dask distributed", stderr="")

    outcome = install_missing(report_without_dask(folder), python="/usr/bin/python3.11", run=run, groups=(SCALE_OUT,))
    assert outcome.ok and folder.is_dir()
    ((command, lines),) = recorded
    assert {"--require-hashes", "--no-deps", "--only-binary=:all:"} <= set(command)
    assert command[command.index("--target") + 1] == str(folder)
    assert [line.split()[0] for line in lines] == list(SCALE_OUT.pins)
    for line in lines:
        pin, *hashes = line.split()
        assert hashes == [f"--hash=sha256:{digest}" for digest in WHEEL_HASHES[pin]], pin
    assert {"dask==2026.8.0", "distributed==2026.8.0"} <= set(SCALE_OUT.pins)


def test_the_pins_of_the_group_match_the_requirements_file(repo_root):
    """dask and distributed are installed in QGIS at the versions requirements.txt pins."""
    pinned = dict(line.strip().split("==") for line in (repo_root / "requirements.txt").read_text().splitlines()
                  if "==" in line and not line.startswith("#"))
    for requirement in SCALE_OUT.requirements:
        assert requirement.pin == f"{requirement.name}=={pinned[requirement.name]}"
        assert requirement.pin in SCALE_OUT.pins


def test_the_install_button_of_missing_packages_leaves_the_group_out(tmp_path):
    """Without ``groups`` the group is never installed: nothing to do when only Dask is missing."""
    outcome = install_missing(report_without_dask(tmp_path), python="python3", run=pytest.fail)
    assert not outcome.ok and outcome.command == ()
    assert "Nothing to install" in outcome.output_tail and "Install Dask for workers" in outcome.output_tail


def test_the_group_is_found_without_being_imported(tmp_path, monkeypatch):
    """The check at plugin start never runs the group's code (importing Dask would slow every start)."""
    package = tmp_path / "explodes_on_import"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert find_without_importing("explodes_on_import").__version__ == "unknown"
    assert "explodes_on_import" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        find_without_importing("no_such_package_here")


def test_the_command_line_message_names_its_flags_and_the_requirements_file(no_distributed):
    """The CLI's words: --workers/--scheduler and 'pip install -r requirements.txt'."""
    with pytest.raises(MissingDependencyError) as raised, open_client(2):
        pass
    message = str(raised.value)
    assert message.startswith("Expected the packages 'dask' and 'distributed' for --workers/--scheduler but ")
    assert "'pip install -r requirements.txt'" in message and "Plugins" not in message
    assert require_distributed.__defaults__ == (COMMAND_LINE,)


def test_qgis_asks_in_its_own_words(no_distributed):
    """The plugin's words: its fields, Processing's WORKERS and the plugin-menu entry; no command-line flag."""
    from polytopo.plugin.runs.evaluation import QGIS_ASKER

    with pytest.raises(MissingDependencyError) as raised:
        require_distributed(QGIS_ASKER)
    message = str(raised.value)
    assert "for the Workers or Scheduler field (WORKERS in Processing) but they cannot be imported" in message
    assert "Plugins ▸ PolyTopo ▸ Install Dask for workers" in message
    assert "set Workers to 0 and leave Scheduler empty" in message
    assert "--workers" not in message and "requirements.txt" not in message


def test_the_dock_with_two_workers_and_no_dask_shows_the_qgis_message(project, tmp_path, no_distributed):
    """Workers=2 without Dask: said in the Advanced fields at once and refused before any task, in QGIS's words."""
    dock, notifier = make_dock(real_core())
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    dock.cluster_fields.workers.setValue(2)
    assert "Install Dask for workers" in dock.cluster_fields.problem.text()
    assert dock.start_evaluation() is None and dock.evaluation_task is None
    ((level, text),) = notifier.texts
    assert level == "warning"
    assert "Expected the packages 'dask' and 'distributed' for the Workers or Scheduler field" in text
    assert "Plugins ▸ PolyTopo ▸ Install Dask for workers" in text and "--workers" not in text
    assert list(tmp_path.iterdir()) == [] and dock.evaluate_button.isEnabled()
    dock.cluster_fields.workers.setValue(0)
    dock.deleteLater()


def test_the_plugin_menu_offers_the_group_while_it_is_missing(qgis_iface, tmp_path):
    """Dask missing: a menu entry installs the group (groups= passed); once installed the entry goes."""
    from qgis.gui import QgsMessageBar
    from qgis.PyQt import sip

    from polytopo.plugin.plugin_main import MENU_NAME, PolyTopoPlugin
    from polytopo.plugin.setup.dependencies import InstallOutcome

    bar = QgsMessageBar()
    qgis_iface.messageBar.return_value = bar
    reports = [report_without_dask(tmp_path), report_without_dask(tmp_path, DASK)]
    installs = []

    def install(report, groups=()):
        installs.append(groups)
        return InstallOutcome(True, ("python", "-m", "pip"), tmp_path, "Successfully installed dask distributed")

    plugin = PolyTopoPlugin(qgis_iface, check=lambda: reports.pop(0), install=install)
    plugin.initGui()
    try:
        action = plugin.scale_out_action
        assert action.text() == SCALE_OUT.action and action.isEnabled()
        qgis_iface.addPluginToMenu.assert_any_call(MENU_NAME, action)
        assert bar.currentItem() is None  # the required packages are all there: no message
        action.trigger()
        wait_until(lambda: installs and plugin.install_task is None)
        assert installs == [(SCALE_OUT,)]
        qgis_iface.removePluginMenu.assert_any_call(MENU_NAME, action)
        assert plugin.scale_out_action is None
        assert bar.currentItem().text() == f"Python packages installed into {tmp_path}."
    finally:
        plugin.unload()
        sip.delete(bar)


@pytest.mark.skipif(os.environ.get("POLYTOPO_NETWORK_TESTS") != "1", reason="needs PyPI: POLYTOPO_NETWORK_TESTS=1")
def test_a_real_install_of_the_group_imports_dask(tmp_path):
    """pip --require-hashes from PyPI into an empty folder; that folder alone then provides dask and distributed."""
    folder = tmp_path / "deps"
    outcome = install_missing(report_without_dask(folder), python=sys.executable, groups=(SCALE_OUT,))
    assert outcome.ok, outcome.output_tail
    probe = ("import sys; sys.path.append(sys.argv[1]); import dask, distributed; "
             "print(dask.__version__, distributed.__version__, distributed.__file__)")
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(folder)], capture_output=True, text=True,
                            timeout=120, check=True)
    dask_version, distributed_version, location = result.stdout.split()
    assert (dask_version, distributed_version) == ("2026.8.0", "2026.8.0")
    assert Path(location).is_relative_to(folder)
