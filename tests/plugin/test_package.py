"""``scripts/package`` builds a plugin ZIP that QGIS installs and starts, and that the official repository accepts.

The ZIP is written into the test's temporary folder (the output folder is the
script's argument), never into the repository's ``dist/``. :func:`repository_problems`
repeats, offline, the checks of the QGIS plugin repository's upload validator
(``plugins/validator.py`` of ``qgis/QGIS-Django``); only whether the URLs answer
cannot be checked here.
"""

import configparser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

LOADER_SCRIPT = Path(__file__).with_name("start_plugin_like_qgis.py")
TIMEOUT_S = 120
TOP_LEVEL = {"metadata.txt", "__init__.py", "version.py", "LICENSE", "README.md", "core", "evaluator", "models", "plugin", "resources"}
FORBIDDEN_PARTS = {"tests", "benchmarks", "scripts", "docs", ".venv", ".git", ".ci", ".deps", "__pycache__", "dist"}
REQUIRED_METADATA = ("name", "qgisMinimumVersion", "description", "about", "version", "author", "email",
                     "repository", "tracker")
#: The official repository's upload limit, bytes.
MAX_ZIP_BYTES = 25_000_000
#: URL keys the validator parses (homepage too: a missing one fails its URL check).
URL_KEYS = {"tracker": "http://bugs", "repository": "http://repo", "homepage": "http://homepage"}
FORBIDDEN_FOLDERS = ("__MACOSX", ".git", "__pycache__")


def repository_problems(archive):
    """What the QGIS plugin repository's validator would refuse in ``archive``, as a list of reasons.

    Checks: size at most 25,000,000 bytes; a readable ZIP without CRC errors; no ``..`` or
    absolute names, no ``.pyc``, no ``__MACOSX``/``.git``/``__pycache__`` folder; exactly one
    top folder, a Python identifier matching ``[A-Za-z][A-Za-z0-9_-]+``, holding ``__init__.py``,
    ``metadata.txt`` (a ``[general]`` section that parses with the default interpolation) and
    ``LICENSE``; the required keys present and non-empty; well-formed tracker, repository and
    homepage URLs (not the placeholders); an author without slashes; the icon in the ZIP.
    """
    problems = []
    size = Path(archive).stat().st_size
    if size > MAX_ZIP_BYTES:
        problems.append(f"size {size} > {MAX_ZIP_BYTES} bytes")
    try:
        zip_file = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        return problems + [f"not a ZIP: {exc}"]
    with zip_file:
        names = zip_file.namelist()
        for name in names:
            parts = name.split("/")
            if ".." in name or name.startswith("/"):
                problems.append(f"path information in {name}")
            if ".pyc" in name:
                problems.append(f".pyc file {name}")
            problems += [f"{folder} folder in {name}" for folder in FORBIDDEN_FOLDERS if folder in parts]
        bad = zip_file.testzip()
        if bad:
            problems.append(f"CRC error in {bad}")
        tops = sorted({name.split("/")[0] for name in names})
        if len(tops) != 1 or not names or "/" not in names[0]:
            return problems + [f"expected one top folder, got {tops}"]
        top = tops[0]
        if not (top.isidentifier() and top.isascii() and re.match(r"^[A-Za-z][A-Za-z0-9_-]+$", top)):
            problems.append(f"top folder {top!r} is not an ASCII Python identifier")
        for required in ("__init__.py", "metadata.txt", "LICENSE"):
            if f"{top}/{required}" not in names:
                problems.append(f"no {top}/{required}")
        if f"{top}/metadata.txt" not in names:
            return problems
        parser = configparser.ConfigParser()  # the validator's parser: default interpolation
        parser.optionxform = str
        try:
            parser.read_file(io.StringIO(zip_file.read(f"{top}/metadata.txt").decode("utf-8")))
            metadata = dict(parser.items("general"))
        except (configparser.Error, UnicodeDecodeError) as exc:
            return problems + [f"metadata.txt does not parse: {exc}"]
        problems += [f"metadata {key} missing or empty" for key in REQUIRED_METADATA if not metadata.get(key, "").strip()]
        for key, placeholder in URL_KEYS.items():
            url = metadata.get(key, "").strip()
            parsed = urlparse(url)
            if url == placeholder or not (parsed.scheme in ("http", "https") and parsed.netloc):
                problems.append(f"metadata {key} is not a well-formed URL: {url!r}")
        if "/" in metadata.get("author", ""):
            problems.append("author contains a slash")
        if metadata.get("icon") and f"{top}/{metadata['icon'].removeprefix('./')}" not in names:
            problems.append(f"icon {metadata['icon']} not in the ZIP")
    return problems


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


def bundled_files(root):
    """The .onnx files the zoo index marks bundled."""
    index = json.loads((root / "models" / "zoo" / "index.json").read_text(encoding="utf-8"))
    return {entry["file"] for entry in index["models"] if entry.get("bundled") is True}


def test_the_zip_holds_every_module_and_resource(package, repo_root):
    """Each source and resource file of the plugin parts is in the ZIP; documentation-only files are not."""
    _, names = package
    expected, doc_only = set(), set()
    for folder in ("core", "evaluator", "models", "plugin", "resources"):
        for path in (repo_root / folder).rglob("*"):
            relative = path.relative_to(repo_root)
            if path.is_file() and not {"__pycache__", "tests"} & set(relative.parts) and path.suffix != ".pyc":
                is_doc = path.suffix == ".md" or (folder == "models" and path.suffix in (".png", ".jpg"))
                (doc_only if is_doc else expected).add("polytopo/" + relative.as_posix())
    expected = {name for name in expected if not name.endswith(".onnx")}
    assert expected <= set(names)
    assert not doc_only & set(names), sorted(doc_only & set(names))
    assert "polytopo/resources/icon.svg" in names
    assert "polytopo/models/zoo/index.json" in names


def test_the_zip_carries_only_the_bundled_model(package, repo_root):
    """Of the zoo's .onnx files only the one the index marks bundled is in the ZIP; the index lists them all."""
    archive, names = package
    bundled = bundled_files(repo_root)
    assert len(bundled) == 1
    assert {name.rsplit("/", 1)[-1] for name in names if name.endswith(".onnx")} == bundled
    with zipfile.ZipFile(archive) as zip_file:
        index = json.loads(zip_file.read("polytopo/models/zoo/index.json"))
    pack = [entry for entry in index["models"] if not entry.get("bundled")]
    for entry in pack:
        url = entry.get("url") or index["release_url"] + entry["file"]
        assert url.startswith("https://github.com/polytopo/polytopo/releases/download/") and url.endswith(entry["file"])
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]) and entry["size_bytes"] > 0


def test_the_zip_passes_the_plugin_repository_checks(package):
    """Size, one identifier top folder with __init__.py, metadata.txt and LICENSE, no caches, complete metadata, URLs."""
    archive, _ = package
    assert repository_problems(archive) == []
    assert archive.stat().st_size <= MAX_ZIP_BYTES


def test_the_readme_states_the_zip_size(package, repo_root):
    """The README's ZIP size is the measured one, within 5 % (code edits move it a little; a new model more)."""
    archive, _ = package
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    (stated,) = re.findall(r"The ZIP of version [0-9.]+ has \*\*([0-9,]+) bytes\*\*", readme)
    size = archive.stat().st_size
    assert abs(int(stated.replace(",", "")) - size) <= 0.05 * size, (
        f"README states {stated} bytes but scripts/package built {size:,}; measure it again and update the README")


def test_the_metadata_urls_are_where_the_readme_says_the_code_lives(package, repo_root):
    """tracker and repository name the repository the README gives; about says what the plugin needs."""
    archive, _ = package
    with zipfile.ZipFile(archive) as zip_file:
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(zip_file.read("polytopo/metadata.txt").decode("utf-8"))
    general = parser["general"]
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    (code_url,) = set(re.findall(r"The code lives at <(https://[^>]+)>", readme))
    assert general["repository"] == code_url
    assert general["tracker"] == f"{code_url}/issues" and f"<{code_url}/issues>" in readme
    about = general["about"]
    assert "\n" not in about.strip()
    for needed in ("shapely", "onnxruntime", "first", "Dask", "optional"):
        assert needed in about, needed


def write_zip(path, entries):
    with zipfile.ZipFile(path, "w") as zip_file:
        for name, data in entries.items():
            zip_file.writestr(name, data)
    return path


def test_the_repository_checks_catch_what_the_validator_refuses(package, tmp_path):
    """Each check fires on a ZIP that breaks it (so a pass above means something)."""
    archive, _ = package
    with zipfile.ZipFile(archive) as zip_file:
        metadata = zip_file.read("polytopo/metadata.txt").decode("utf-8")
    good = {"polytopo/__init__.py": "", "polytopo/metadata.txt": metadata, "polytopo/LICENSE": "GPL",
            "polytopo/resources/icon.svg": "<svg/>"}
    assert repository_problems(write_zip(tmp_path / "good.zip", good)) == []
    cases = {
        "pyc": ({**good, "polytopo/plugin/x.pyc": ""}, ".pyc file"),
        "cache": ({**good, "polytopo/plugin/__pycache__/x.py": ""}, "__pycache__ folder"),
        "git": ({**good, "polytopo/.git/HEAD": ""}, ".git folder"),
        "macosx": ({**good, "__MACOSX/polytopo/._x": ""}, "expected one top folder"),
        "license": ({k: v for k, v in good.items() if not k.endswith("LICENSE")}, "no polytopo/LICENSE"),
        "init": ({k: v for k, v in good.items() if not k.endswith("__init__.py")}, "no polytopo/__init__.py"),
        "name": ({k.replace("polytopo/", "poly topo/"): v for k, v in good.items()}, "not an ASCII Python identifier"),
        "tracker": ({**good, "polytopo/metadata.txt": re.sub(r"(?m)^tracker=.*$", "tracker=http://bugs", metadata)},
                    "tracker is not a well-formed URL"),
        "email": ({**good, "polytopo/metadata.txt": re.sub(r"(?m)^email=.*$", "email=", metadata)},
                  "email missing or empty"),
        "percent": ({**good, "polytopo/metadata.txt": metadata.replace("[general]", "[general]\nnote=100 %")},
                    "does not parse"),
    }
    for label, (entries, reason) in cases.items():
        problems = repository_problems(write_zip(tmp_path / f"{label}.zip", entries))
        assert any(reason in problem for problem in problems), (label, problems)
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as zip_file:
        for name, data in good.items():
            zip_file.writestr(name, data)
        zip_file.writestr("polytopo/models/zoo/big.onnx", os.urandom(MAX_ZIP_BYTES))
    assert any("size" in problem for problem in repository_problems(big))


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
               QGIS_PLUGINPATH=str(plugins), XDG_RUNTIME_DIR=str(tmp_path / "xdg"), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "xdg").mkdir(mode=0o700)
    (tmp_path / "tmp").mkdir()  # its own temporary folder: the start-up cleanup finds nothing of other runs
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


def copy_tree(repo_root, tree):
    """Copy the packaged parts of the repository (and scripts/) into ``tree``."""
    for name in ("metadata.txt", "__init__.py", "version.py", "LICENSE", "README.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo_root / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("core", "evaluator", "models", "plugin", "resources", "scripts"):
        shutil.copytree(repo_root / name, tree / name, ignore=ignore)


def set_bundled(tree, names):
    """Mark exactly the zoo models ``names`` as bundled in the tree's index."""
    index_path = tree / "models" / "zoo" / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    for entry in index["models"]:
        entry.pop("bundled", None)
        if entry["name"] in names:
            entry["bundled"] = True
    index_path.write_text(json.dumps(index), encoding="utf-8")
    return [entry["file"] for entry in index["models"] if entry["name"] in names]


def test_only_the_bundled_model_is_packed_and_junk_is_not(repo_root, tmp_path):
    """A tree with an unlisted .onnx, another bundled model and stray caches: only the bundled model goes in."""
    tree = tmp_path / "tree"
    copy_tree(repo_root, tree)
    index = json.loads((tree / "models" / "zoo" / "index.json").read_text(encoding="utf-8"))
    other = index["models"][-1]["name"]
    (wanted,) = set_bundled(tree, [other])
    (tree / "models" / "zoo" / "unet_tiny.onnx").write_bytes(b"\x08\x08")
    (tree / "plugin" / "__pycache__").mkdir()
    (tree / "plugin" / "__pycache__" / "dock.cpython-311.pyc").write_bytes(b"")
    (tree / ".deps" / "py311-linux-x86_64").mkdir(parents=True)
    (tree / "models" / "notes.py~").write_text("", encoding="utf-8")
    (tree / "evaluator" / "NOTES.md").write_text("", encoding="utf-8")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_x.py").write_text("", encoding="utf-8")
    archive = build(tree, tmp_path / "out")
    with zipfile.ZipFile(archive) as zip_file:
        names = set(zip_file.namelist())
    assert {name for name in names if name.endswith(".onnx")} == {f"polytopo/models/zoo/{wanted}"}
    assert not any("__pycache__" in n or ".deps" in n or n.endswith(("~", ".md", ".png")) or "/tests/" in n
                   for n in names if n != "polytopo/README.md")


def test_no_bundled_model_or_an_oversized_zip_stops_the_build(repo_root, tmp_path):
    """Without a bundled model, or with every model bundled (over 25,000,000 bytes), nothing is written."""
    tree = tmp_path / "tree"
    copy_tree(repo_root, tree)
    set_bundled(tree, [])
    out = tmp_path / "out"
    result = subprocess.run(["bash", str(tree / "scripts" / "package"), str(out)], capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode != 0 and 'expected one model marked "bundled": true' in result.stderr
    assert list(out.iterdir()) == []
    names = [entry["name"] for entry in json.loads((tree / "models" / "zoo" / "index.json").read_text())["models"]]
    files = set_bundled(tree, names)
    if sum((tree / "models" / "zoo" / name).stat().st_size for name in files) <= MAX_ZIP_BYTES * 1.05:
        pytest.skip("the zoo's models together fit under the limit; no oversized ZIP to build from them")
    result = subprocess.run(["bash", str(tree / "scripts" / "package"), str(out)], capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode != 0 and "expected a ZIP of at most 25,000,000 bytes" in result.stderr
    assert list(out.iterdir()) == []


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
