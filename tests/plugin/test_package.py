"""``scripts/package`` builds a plugin ZIP that QGIS installs and starts.

The ZIP is written into the test's temporary folder (the output folder is the
script's argument), never into the repository's ``dist/``.
"""

import configparser
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

LOADER_SCRIPT = Path(__file__).with_name("start_plugin_like_qgis.py")
TIMEOUT_S = 120
TOP_LEVEL = {"metadata.txt", "__init__.py", "version.py", "LICENSE", "README.md", "evaluator", "models", "plugin", "resources"}
FORBIDDEN_PARTS = {"tests", "benchmarks", "scripts", "docs", ".venv", ".git", ".ci", ".deps", "__pycache__", "dist"}
REQUIRED_METADATA = ("name", "qgisMinimumVersion", "description", "about", "version", "author", "email",
                     "repository")


def build(root, out):
    """Run ``root/scripts/package out`` and return the ZIP path it prints."""
    result = subprocess.run(["bash", str(root / "scripts" / "package"), str(out)], capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def metadata_version(root):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(root / "metadata.txt", encoding="utf-8")
    return parser["general"]["version"]


@pytest.fixture(scope="module")
def package(repo_root, tmp_path_factory):
    """The ZIP built from the repository, and its member names."""
    out = tmp_path_factory.mktemp("dist")
    archive = build(repo_root, out)
    with zipfile.ZipFile(archive) as zip_file:
        names = zip_file.namelist()
    return archive, names


def test_the_zip_is_named_after_the_version(package, repo_root):
    """The output is ``polytopo-<version>.zip`` in the folder given, the only file there."""
    archive, _ = package
    assert archive.name == f"polytopo-{metadata_version(repo_root)}.zip"
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name]


def test_the_zip_has_one_ascii_top_folder_with_the_plugin_parts(package):
    """Everything lies under ``polytopo/``, names are ASCII, and exactly the plugin parts are there."""
    _, names = package
    assert all(name.startswith("polytopo/") and name.isascii() for name in names)
    assert {name.split("/")[1] for name in names} == TOP_LEVEL


def test_the_zip_leaves_out_development_files(package):
    """No tests, benchmarks, scripts, environments, caches or hidden files."""
    _, names = package
    for name in names:
        parts = name.split("/")
        assert not FORBIDDEN_PARTS & set(parts), name
        assert not any(part.startswith(".") for part in parts), name
        assert not name.endswith((".pyc", ".pyo", "~")), name


def test_the_zip_holds_every_module_and_resource(package, repo_root):
    """Each source and resource file of the plugin parts is in the ZIP."""
    _, names = package
    expected = set()
    for folder in ("evaluator", "models", "plugin", "resources"):
        for path in (repo_root / folder).rglob("*"):
            relative = path.relative_to(repo_root)
            if path.is_file() and not {"__pycache__", "tests"} & set(relative.parts) and path.suffix != ".pyc":
                expected.add("polytopo/" + relative.as_posix())
    assert expected <= set(names)
    assert "polytopo/resources/icon.svg" in names


def test_the_metadata_inside_parses_and_is_complete(package, repo_root):
    """metadata.txt in the ZIP parses like QGIS reads it and has every required field."""
    archive, _ = package
    with zipfile.ZipFile(archive) as zip_file:
        text = zip_file.read("polytopo/metadata.txt").decode("utf-8")
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    general = parser["general"]
    for key in REQUIRED_METADATA:
        assert general.get(key, "").strip(), key
    assert general["version"] == metadata_version(repo_root)
    with zipfile.ZipFile(archive) as zip_file:
        assert f"polytopo/{general['icon']}" in zip_file.namelist()


def test_the_extracted_zip_loads_in_qgis(package, tmp_path):
    """Extracted into a plugin folder, ``qgis.utils`` loads, starts and unloads it twice."""
    archive, _ = package
    plugins = tmp_path / "plugins"
    with zipfile.ZipFile(archive) as zip_file:
        zip_file.extractall(plugins)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=str(tmp_path / "config"),
               QGIS_PLUGINPATH=str(plugins), XDG_RUNTIME_DIR=str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir(mode=0o700)
    result_path = tmp_path / "steps.json"
    subprocess.run([sys.executable, str(LOADER_SCRIPT), str(plugins), str(result_path)], env=env, cwd=tmp_path,
                   check=True, timeout=TIMEOUT_S)
    steps = json.loads(result_path.read_text(encoding="utf-8"))
    assert steps["available"] is True
    for start in ("startProcessingPlugin", "startPlugin"):
        assert steps[f"{start}.load"] is True
        assert steps[f"{start}.module_file"] == str(plugins / "polytopo" / "__init__.py")
        assert steps[f"{start}.start"] is True
        assert steps[f"{start}.providers_started"] == 1
        assert steps[f"{start}.unload"] is True
        assert steps[f"{start}.providers_unloaded"] == 0
    assert steps["log"] == []


def test_bundled_models_are_packed_and_junk_is_not(repo_root, tmp_path):
    """A copy of the tree with an .onnx model and stray caches: the model goes in, the junk stays out."""
    tree = tmp_path / "tree"
    for name in ("metadata.txt", "__init__.py", "version.py", "LICENSE", "README.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo_root / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("evaluator", "models", "plugin", "resources", "scripts"):
        shutil.copytree(repo_root / name, tree / name, ignore=ignore)
    (tree / "models" / "zoo").mkdir(exist_ok=True)
    (tree / "models" / "zoo" / "unet_tiny.onnx").write_bytes(b"\x08\x08")
    (tree / "plugin" / "__pycache__").mkdir()
    (tree / "plugin" / "__pycache__" / "dock.cpython-311.pyc").write_bytes(b"")
    (tree / ".deps" / "py311-linux-x86_64").mkdir(parents=True)
    (tree / "models" / "notes.py~").write_text("", encoding="utf-8")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_x.py").write_text("", encoding="utf-8")
    archive = build(tree, tmp_path / "out")
    with zipfile.ZipFile(archive) as zip_file:
        names = set(zip_file.namelist())
    assert "polytopo/models/zoo/unet_tiny.onnx" in names
    assert not any("__pycache__" in n or ".deps" in n or n.endswith("~") or "/tests/" in n for n in names)


def test_a_version_mismatch_stops_the_build(repo_root, tmp_path):
    """metadata.txt and version.py must agree on the version; nothing is written otherwise."""
    tree = tmp_path / "tree"
    shutil.copytree(repo_root, tree, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "tests",
                                                                   "benchmarks", ".*cache"))
    metadata = (tree / "metadata.txt").read_text(encoding="utf-8")
    (tree / "metadata.txt").write_text(metadata.replace(f"version={metadata_version(repo_root)}", "version=9.9.9"),
                                       encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run(["bash", str(tree / "scripts" / "package"), str(out)], capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode != 0
    assert "expected __version__ in version.py to equal version=9.9.9" in result.stderr
    assert list(out.iterdir()) == []


def test_the_output_folder_can_come_from_the_environment(repo_root, tmp_path):
    """Without an argument, POLYTOPO_DIST_DIR names the output folder."""
    out = tmp_path / "from-env"
    result = subprocess.run(["bash", str(repo_root / "scripts" / "package")], capture_output=True, text=True,
                            timeout=TIMEOUT_S, env=dict(os.environ, POLYTOPO_DIST_DIR=str(out)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out / f"polytopo-{metadata_version(repo_root)}.zip")
    assert zipfile.is_zipfile(result.stdout.strip())
