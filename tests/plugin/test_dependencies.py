"""The dependency check finds missing packages, and the installer's paths and commands are right.

Every test injects its import function, interpreter probe and pip runner: nothing is
installed and no network is used.
"""

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from polytopo.plugin.setup import dependencies
from polytopo.plugin.setup.dependencies import (
    REQUIREMENTS,
    SCALE_OUT,
    activate_folder,
    check_dependencies,
    deps_folder,
    find_python,
    install_command,
    install_missing,
    pip_environment,
    platform_key,
)
from polytopo.plugin.setup.wheel_hashes import WHEEL_HASHES

VERSIONS = {"numpy": "1.24.2", "shapely": "2.1.2", "scipy": "1.10.1", "onnxruntime": "1.20.1"}


def fake_import(versions, broken=()):
    """Return an import function that knows only ``versions`` ({module: version})."""

    def import_module(name):
        if name in broken:
            raise ImportError(f"libgeos_c.so.1: cannot open shared object file (importing {name})")
        if name not in versions:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return types.SimpleNamespace(__version__=versions[name])

    return import_module


def test_everything_present_is_ok(tmp_path):
    """The versions the project pins pass the check."""
    report = check_dependencies(import_module=fake_import(VERSIONS), folder=tmp_path)
    assert report.ok
    assert report.missing == ()
    assert [status.version for status in report.statuses] == [VERSIONS[r.module] for r in REQUIREMENTS]


def test_the_real_environment_passes():
    """The test environment itself has every package (the plugin tests rely on it)."""
    report = check_dependencies()
    assert report.ok, report.message()


def test_a_missing_package_is_reported_with_its_pin(tmp_path):
    """A package that does not import is missing, installable, and named in the message."""
    versions = {k: v for k, v in VERSIONS.items() if k != "onnxruntime"}
    report = check_dependencies(import_module=fake_import(versions), folder=tmp_path)
    assert not report.ok
    assert report.missing_names() == ["onnxruntime"]
    (status,) = report.missing
    assert status.problem == "not installed; provided by onnxruntime or onnxruntime-gpu"
    assert [r.pin for r in report.installable] == ["onnxruntime==1.20.1"]
    assert "onnxruntime==1.20.1" in report.message()
    assert str(tmp_path) in report.message()


def test_too_old_shapely_is_reported(tmp_path):
    """shapely 1.8 imports but fails the >=2 requirement."""
    report = check_dependencies(import_module=fake_import({**VERSIONS, "shapely": "1.8.5.post1"}),
                                folder=tmp_path)
    (status,) = report.missing
    assert status.requirement.name == "shapely"
    assert status.version == "1.8.5.post1"
    assert status.problem == "version 1.8.5.post1 is older than 2.0"
    # the plugin-local folder comes last on the path: it cannot replace a shapely found before it
    assert report.installable == ()
    assert "install shapely>=2.0,<3 into QGIS's Python" in report.message()
    assert "Install button" not in report.message()


def test_a_module_that_fails_to_import_says_why(tmp_path):
    """An ImportError raised inside the package (a missing shared library) is shown, not hidden."""
    report = check_dependencies(import_module=fake_import(VERSIONS, broken=("shapely",)), folder=tmp_path)
    (status,) = report.missing
    assert status.problem.startswith("fails to import (libgeos_c.so.1: cannot open shared object file")


def test_numpy_2_is_reported_but_not_installed_into_the_folder(tmp_path):
    """A loaded NumPy 2 cannot be replaced by a plugin-local copy: the message says where to fix it."""
    report = check_dependencies(import_module=fake_import({**VERSIONS, "numpy": "2.1.0"}), folder=tmp_path)
    assert report.missing_names() == ["numpy"]
    assert report.installable == ()
    message = report.message()
    assert "version 2.1.0 is not below 2" in message
    assert "install numpy>=1.24,<2 into QGIS's Python" in message
    assert "Install button" not in message
    outcome = install_missing(report, python="python3", run=pytest.fail)
    assert not outcome.ok
    assert outcome.command == ()


def test_absent_numpy_is_installable(tmp_path):
    """Without any NumPy nothing loaded one yet, so the pinned NumPy goes into the folder too."""
    versions = {k: v for k, v in VERSIONS.items() if k != "numpy"}
    report = check_dependencies(import_module=fake_import(versions), folder=tmp_path)
    assert [r.pin for r in report.installable] == ["numpy==1.24.2"]


def test_pins_match_the_requirements_file(repo_root):
    """The pins installed in QGIS are the versions the project tests with (requirements.txt)."""
    pinned = {}
    for line in (repo_root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.strip().split("==")
            pinned[name] = version
    for requirement in REQUIREMENTS:
        name, version = requirement.pin.split("==")
        if name in pinned:
            assert pinned[name] == version, f"{requirement.pin} differs from requirements.txt"
    assert {"numpy", "shapely", "onnxruntime"} <= set(pinned)


@pytest.mark.parametrize(("version_info", "system", "machine", "key"), [
    ((3, 11, 2), "linux", "x86_64", "py311-linux-x86_64"),
    ((3, 12, 0), "win32", "AMD64", "py312-win32-amd64"),
    ((3, 9, 18), "darwin", "arm64", "py39-darwin-arm64"),
])
def test_platform_key_separates_interpreters(version_info, system, machine, key):
    """Compiled packages differ per Python version and platform, so the folder name does too."""
    assert platform_key(version_info, system, machine) == key


def test_deps_folder_lies_in_the_plugin_folder(tmp_path):
    """The folder is ``<plugin>/.deps/<key>``, by default under the real plugin folder."""
    assert deps_folder(tmp_path, "py311-linux-x86_64") == tmp_path / ".deps" / "py311-linux-x86_64"
    assert deps_folder() == dependencies.PLUGIN_DIR / ".deps" / platform_key()
    assert (dependencies.PLUGIN_DIR / "metadata.txt").is_file()


def test_activate_folder_appends_once_and_only_when_present(tmp_path):
    """An existing folder goes last on the path, once; a missing one is left out."""
    path = ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"]
    assert activate_folder(tmp_path / "absent", path) is False
    assert path == ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"]
    assert activate_folder(tmp_path, path) is True
    assert activate_folder(tmp_path, path) is True
    assert path == ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages", str(tmp_path)]


def test_the_activated_folder_never_shadows_the_standard_library(tmp_path):
    """A ``json.py`` dropped into the folder is not what ``import json`` finds (fresh interpreter)."""
    (tmp_path / "json.py").write_text("raise SystemExit('shadowed')\n", encoding="utf-8")
    code = ("import sys\nfrom polytopo.plugin.setup.dependencies import activate_folder\n"
            f"activate_folder({str(tmp_path)!r})\nsys.modules.pop('json', None)\nimport json\n"
            "print(json.__file__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert str(tmp_path) not in result.stdout


def test_a_package_in_the_activated_folder_imports(tmp_path):
    """After activation a module installed into the folder is importable (fresh interpreter)."""
    (tmp_path / "polytopo_probe_pkg.py").write_text("__version__ = '9.9'\n", encoding="utf-8")
    code = ("import sys\nfrom polytopo.plugin.setup.dependencies import activate_folder\n"
            f"activate_folder({str(tmp_path)!r})\nimport polytopo_probe_pkg\nprint(polytopo_probe_pkg.__version__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "9.9"


def probe_run(versions):
    """Return a subprocess.run stand-in for interpreter probes: ``{path: 'X.Y'}``."""
    calls = []

    def run(command, **kwargs):
        calls.append(command[0])
        if command[0] not in versions:
            raise FileNotFoundError(command[0])
        return subprocess.CompletedProcess(command, 0, stdout=versions[command[0]] + "\n", stderr="")

    run.calls = calls
    return run


def test_find_python_takes_a_python_executable_as_is():
    """Outside QGIS (or in QGIS on some builds) sys.executable is the interpreter itself."""
    run = probe_run({"/venv/bin/python3": "3.11"})
    found = find_python("/venv/bin/python3", prefixes=(), version_info=(3, 11), run=run,
                        which=lambda name: None, is_file=lambda path: True)
    assert found == "/venv/bin/python3"


def test_find_python_skips_the_qgis_binary():
    """When sys.executable is the QGIS program, the interpreter in the prefix is found instead."""
    run = probe_run({"/usr/bin/python3.11": "3.11"})
    found = find_python("/usr/bin/qgis", prefixes=("/usr",), version_info=(3, 11), run=run,
                        which=lambda name: None, is_file=lambda path: path in ("/usr/bin/qgis", "/usr/bin/python3.11"))
    assert found == "/usr/bin/python3.11"
    assert "/usr/bin/qgis" not in run.calls


def test_find_python_on_osgeo4w_layout():
    """OSGeo4W: qgis-bin.exe in bin/, the interpreter in apps/Python312/python.exe."""
    prefix = "C:/OSGeo4W"
    python = str(Path(prefix) / "apps" / "Python312" / "python.exe")
    run = probe_run({python: "3.12"})
    found = find_python(f"{prefix}/bin/qgis-bin.exe", prefixes=(prefix,), version_info=(3, 12), run=run,
                        which=lambda name: None, is_file=lambda path: path == python)
    assert found == python


def test_find_python_rejects_another_python_version():
    """A python3 on the PATH of another version would install packages this QGIS cannot import."""
    run = probe_run({"/usr/local/bin/python3": "3.8"})
    found = find_python("/usr/bin/qgis", prefixes=(), version_info=(3, 11), run=run,
                        which=lambda name: "/usr/local/bin/python3" if name == "python3" else None,
                        is_file=lambda path: True)
    assert found is None


def test_find_python_finds_the_interpreter_running_the_tests():
    """With the real defaults the running interpreter (or its twin) is found."""
    found = find_python()
    assert found is not None
    result = subprocess.run([found, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                            text=True, check=True, timeout=60)
    assert result.stdout.strip() == str(sys.version_info[:2])


def test_install_command_targets_the_folder_without_dependencies():
    """pip gets --target, --no-deps (no second NumPy), binary wheels only, isolated, PyPI, hashes required."""
    command = install_command("/usr/bin/python3.11", Path("/p/.deps/py311-linux-x86_64"), "/t/requirements.txt")
    assert command[:5] == ["/usr/bin/python3.11", "-m", "pip", "install", "--isolated"]
    assert command[command.index("--target") + 1] == str(Path("/p/.deps/py311-linux-x86_64"))
    assert command[command.index("--index-url") + 1] == "https://pypi.org/simple"
    assert {"--no-deps", "--only-binary=:all:", "--require-hashes"} <= set(command)
    assert command[-2:] == ["-r", "/t/requirements.txt"]


def test_every_pin_has_the_hashes_of_its_wheels():
    """Hash-checking mode needs a hash for every pin the installer may ask for."""
    assert sorted(WHEEL_HASHES) == sorted([r.pin for r in REQUIREMENTS] + list(SCALE_OUT.pins))
    for pin, digests in WHEEL_HASHES.items():
        assert digests and len(set(digests)) == len(digests), pin
        assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in digests), pin


def test_pip_runs_without_the_users_pip_configuration():
    """PIP_* variables (an index URL, a config file) never reach pip; config files are switched off."""
    env = pip_environment({"PATH": "/bin", "PIP_INDEX_URL": "http://evil/simple", "pip_config_file": "/x.conf"})
    assert env == {"PATH": "/bin", "PIP_CONFIG_FILE": os.devnull}


def test_install_missing_runs_pip_into_the_folder(tmp_path):
    """The installer runs the command it reports, creates the folder and reports pip's output."""
    folder = tmp_path / ".deps" / "py311-linux-x86_64"
    versions = {k: v for k, v in VERSIONS.items() if k not in ("scipy", "onnxruntime")}
    report = check_dependencies(import_module=fake_import(versions), folder=folder)
    commands, requirements = [], []

    def run(command, **kwargs):
        commands.append(command)
        requirements.append(Path(command[-1]).read_text(encoding="utf-8").splitlines())
        assert kwargs["env"]["PIP_CONFIG_FILE"] == os.devnull
        return subprocess.CompletedProcess(command, 0, stdout="Successfully installed scipy onnxruntime", stderr="")

    outcome = install_missing(report, python="/usr/bin/python3.11", run=run)
    assert outcome.ok
    assert folder.is_dir()
    assert commands == [list(outcome.command)]
    (lines,) = requirements
    assert [line.split()[0] for line in lines] == ["scipy==1.10.1", "onnxruntime==1.20.1"]
    assert lines[0].split()[1:] == [f"--hash=sha256:{digest}" for digest in WHEEL_HASHES["scipy==1.10.1"]]
    assert not Path(commands[0][-1]).exists()  # the private requirements folder is gone afterwards
    assert outcome.output_tail == "Successfully installed scipy onnxruntime"


def test_install_missing_reports_a_pip_failure(tmp_path):
    """A failing pip gives ok=False and the end of its error output."""
    versions = {k: v for k, v in VERSIONS.items() if k != "shapely"}
    report = check_dependencies(import_module=fake_import(versions), folder=tmp_path)

    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, stdout="", stderr="ERROR: No matching distribution")

    outcome = install_missing(report, python="python3", run=run)
    assert not outcome.ok
    assert outcome.output_tail == "ERROR: No matching distribution"


def test_install_missing_without_an_interpreter_explains_the_manual_command(tmp_path):
    """No usable interpreter: nothing runs and the message gives the command to run by hand."""
    versions = {k: v for k, v in VERSIONS.items() if k != "shapely"}
    report = check_dependencies(import_module=fake_import(versions), folder=tmp_path)
    outcome = install_missing(report, run=pytest.fail, find=lambda: None)
    assert not outcome.ok
    assert f"--target {tmp_path} shapely==2.1.2" in outcome.output_tail


def test_require_for_processing_raises_a_processing_error(qgis_app):
    """An algorithm needing a missing package fails with the message, not an ImportError."""
    from qgis.core import QgsProcessingException

    dependencies.require_for_processing(["shapely", "scipy"])
    without_onnxruntime = fake_import({k: v for k, v in VERSIONS.items() if k != "onnxruntime"})
    with pytest.raises(QgsProcessingException, match="onnxruntime>=1.16: not installed"):
        dependencies.require_for_processing(["onnxruntime"], import_module=without_onnxruntime)
    with pytest.raises(ValueError, match="Expected requirement names"):
        dependencies.require_for_processing(["torch"])


BLOCKED_START = r'''
import importlib.abc, json, sys
from unittest import mock

BLOCKED = tuple(sys.argv[1:])

class Block(importlib.abc.MetaPathFinder):
    """Make the packages named on the command line look uninstalled."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
from qgis.core import QgsApplication
from qgis.gui import QgisInterface
app = QgsApplication([], True)
app.initQgis()
log = []
app.messageLog().messageReceived.connect(lambda message, tag, level: log.append([tag, message]))
import polytopo
headless = polytopo.classFactory(None)
headless.initProcessing()
registered = [p.id() for p in QgsApplication.processingRegistry().providers()].count("polytopo")
headless.unload()
iface = mock.Mock(spec=QgisInterface)
desktop = polytopo.classFactory(iface)
desktop.initGui()
pushed = iface.messageBar.return_value.pushWidget.call_count
dock = desktop.show_dock()
desktop.unload()
print(json.dumps({"registered": registered, "log": log, "pushed": pushed, "dock": dock is None,
                  "missing": desktop.dependency_report.missing_names()}))
app.exitQgis()
'''


@pytest.mark.parametrize("blocked", [("onnxruntime",), ("shapely", "onnxruntime")])
def test_the_plugin_loads_without_its_packages(tmp_path, qgis_env, blocked):
    """With packages missing the plugin still starts headless and in desktop, and says what is missing."""
    result = subprocess.run([sys.executable, "-c", BLOCKED_START, *blocked], env=qgis_env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["registered"] == 1
    assert outcome["missing"] == list(blocked)
    (entry,) = [message for tag, message in outcome["log"] if tag == "PolyTopo"][:1]
    assert f"{blocked[0]}>=" in entry and ": not installed" in entry
    assert outcome["pushed"] == 1
    assert outcome["dock"] is True
