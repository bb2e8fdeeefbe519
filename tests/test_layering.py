"""The pure packages never import QGIS or Qt.

``evaluator/`` and ``models/`` must run outside QGIS (command line, notebooks,
clusters), so no module there may import ``qgis``, ``PyQt5``, ``PyQt6`` (which
also covers ``qgis.PyQt``) or PolyTopo's own ``plugin`` package, the one place
that does. The scan reads the source with :mod:`ast`: nothing is imported.
"""

import ast

import pytest

PURE_PACKAGES = ("evaluator", "models", "training")
FORBIDDEN_TOP_LEVEL = frozenset({"qgis", "PyQt5", "PyQt6"})
PLUGIN_PACKAGE = "plugin"
DYNAMIC_IMPORTERS = frozenset({"import_module", "__import__"})


def resolve_relative(module, level, package_parts):
    """Return the absolute dotted parts that ``from <level dots><module>`` names.

    ``package_parts`` is the importing module's package inside the repository
    root (e.g. ``["evaluator"]``); the root itself is the package ``polytopo``.
    """
    base = ["polytopo", *package_parts]
    if level > len(base):
        return None
    parts = base[: len(base) - level + 1]
    return parts + (module.split(".") if module else [])


def is_forbidden(parts):
    """Tell whether the dotted name ``parts`` is QGIS, Qt or ``polytopo.plugin``."""
    if not parts:
        return False
    if parts[0] in FORBIDDEN_TOP_LEVEL:
        return True
    return parts[:2] == ["polytopo", PLUGIN_PACKAGE]


def imported_names(tree, package_parts):
    """Yield ``(line, dotted name)`` for every import in ``tree``.

    Covers ``import x``, ``from x import y``, relative imports, and calls of
    ``importlib.import_module("x")`` / ``__import__("x")`` with a literal name.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = resolve_relative(node.module, node.level, package_parts)
            else:
                parts = node.module.split(".")
            if parts is not None:
                yield node.lineno, parts
                for alias in node.names:
                    yield node.lineno, [*parts, alias.name]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if (
                name in DYNAMIC_IMPORTERS
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                yield node.lineno, first.value.split(".")


def find_violations(source, filename, package_parts):
    """Return ``"file:line imports name"`` for each forbidden import in ``source``."""
    tree = ast.parse(source, filename=filename)
    return [
        f"{filename}:{line} imports {'.'.join(parts)}"
        for line, parts in imported_names(tree, package_parts)
        if is_forbidden(parts)
    ]


def pure_modules(repo_root):
    """Return every ``.py`` file under the pure packages, sorted."""
    return sorted(
        path
        for package in PURE_PACKAGES
        for path in (repo_root / package).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def test_pure_packages_import_neither_qgis_nor_qt(repo_root):
    """No module under evaluator/ or models/ imports QGIS, Qt or polytopo.plugin."""
    modules = pure_modules(repo_root)
    assert modules, (
        f"Expected Python modules under {', '.join(PURE_PACKAGES)} but found none; "
        "run the tests from a complete checkout."
    )
    violations = []
    for path in modules:
        relative = path.relative_to(repo_root)
        violations += find_violations(
            path.read_text(encoding="utf-8"), str(relative), list(relative.parent.parts)
        )
    assert violations == [], (
        "Expected evaluator/ and models/ to stay free of QGIS and Qt but got:\n"
        + "\n".join(violations)
        + "\nMove QGIS-facing code to plugin/ and pass plain data in."
    )


@pytest.mark.parametrize(
    "source",
    [
        "import qgis.core",
        "import PyQt5.QtCore as qtc",
        "from PyQt6 import QtGui",
        "from qgis.PyQt.QtCore import QVariant",
        "from ..plugin import provider",
        "from .. import plugin",
        "from polytopo.plugin.processing.provider import PolyTopoProvider",
        "import importlib\nimportlib.import_module('qgis.core')",
        "def f():\n    return __import__('PyQt5')",
    ],
)
def test_scanner_reports_each_forbidden_import_with_file_and_line(source):
    """Every import form of a forbidden module is caught and located."""
    violations = find_violations(source, "evaluator/example.py", ["evaluator"])
    last_line = source.count("\n") + 1
    assert violations
    assert all(v.startswith(f"evaluator/example.py:{last_line} imports ") for v in violations)


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np",
        "from osgeo import gdal",
        "from . import boundary",
        "from ..evaluator import matching",
        "from .qgis_free import helper",
        "import importlib\nimportlib.import_module('onnxruntime')",
    ],
)
def test_scanner_accepts_imports_of_pure_code(source):
    """Imports of pure libraries and sibling modules are not reported."""
    assert find_violations(source, "models/example.py", ["models"]) == []


def computed_imports(source, filename):
    """``"file:line"`` of every ``import_module`` / ``__import__`` call whose module name is computed.

    A name built at run time hides the import (and any import cycle it closes) from every
    tool that reads the code; a literal name is still read by :func:`imported_names`.
    """
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name in DYNAMIC_IMPORTERS and not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                found.append(f"{filename}:{node.lineno}")
    return found


#: The packages' lazy public names (PEP 562): the names and their modules are literals in each
#: package's ``__init__.py``; this module only imports what those tables name.
LAZY_NAMESPACE = "core/lazy_names.py"


@pytest.mark.parametrize("package", ("core", "evaluator", "models"))
def test_the_pure_packages_import_their_modules_by_name(repo_root, package):
    """The profile registry (and every module of the pure packages) imports what it runs with plain imports."""
    found = []
    for path in sorted((repo_root / package).rglob("*.py")):
        relative = str(path.relative_to(repo_root))
        if relative != LAZY_NAMESPACE:
            found += computed_imports(path.read_text(encoding="utf-8"), relative)
    assert found == [], "Expected plain imports but these build module names at run time:\n" + "\n".join(found)


def test_the_scanner_finds_a_computed_import():
    assert computed_imports("from importlib import import_module\nimport_module(f'.{name}', 'x')", "m.py") == ["m.py:2"]
    assert computed_imports("import_module('.paper', 'x')", "m.py") == []


#: Plugin folder → the plugin folders it must not import (the run API sits below both front ends).
PLUGIN_LAYERS = {"runs": ("gui", "processing"), "processing": ("gui",), "gui": ("processing",)}


def test_the_plugins_run_api_imports_neither_front_end(repo_root):
    """runs/ never imports gui/ or processing/; the dock and Processing do not import each other."""
    found = []
    for folder, forbidden in PLUGIN_LAYERS.items():
        for path in sorted((repo_root / "plugin" / folder).rglob("*.py")):
            relative = path.relative_to(repo_root)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(relative))
            for line, parts in imported_names(tree, list(relative.parent.parts)):
                if parts[:2] == ["polytopo", "plugin"] and len(parts) > 2 and parts[2] in forbidden:
                    found.append(f"{relative}:{line} imports {'.'.join(parts)}")
    assert found == [], "Expected the plugin's layers to point down only but got:\n" + "\n".join(sorted(set(found)))


#: Package → the PolyTopo packages it may import (besides itself). ``core`` sits below both
#: engines and imports only the version; the evaluator and the engine never import each other.
PACKAGE_LAYERS = {
    "core": ("version",),
    "evaluator": ("core", "version"),
    "models": ("core", "version"),
}


def upward_imports(repo_root, package, allowed):
    """``"file:line imports name"`` for each import of a PolyTopo package outside ``allowed``."""
    found = []
    for path in sorted((repo_root / package).rglob("*.py")):
        relative = path.relative_to(repo_root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(relative))
        for line, parts in imported_names(tree, list(relative.parent.parts)):
            if parts[:1] == ["polytopo"] and len(parts) > 1 and parts[1] not in (package, *allowed):
                found.append(f"{relative}:{line} imports {'.'.join(parts)}")
    return sorted(set(found))


@pytest.mark.parametrize("package", sorted(PACKAGE_LAYERS))
def test_each_package_imports_only_the_layers_below_it(repo_root, package):
    """core imports nothing of PolyTopo but the version; evaluator and models import core, not each other."""
    found = upward_imports(repo_root, package, PACKAGE_LAYERS[package])
    assert found == [], (
        f"Expected {package}/ to import only {', '.join(PACKAGE_LAYERS[package])} of PolyTopo but got:\n"
        + "\n".join(found) + "\nMove what both need into core/."
    )


def test_the_direction_scan_reports_an_upward_import(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "example.py").write_text("from ..evaluator.tables import metric_table\n", encoding="utf-8")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "example.py").write_text("from ..version import __version__\nfrom . import errors\n",
                                                  encoding="utf-8")
    assert upward_imports(tmp_path, "models", PACKAGE_LAYERS["models"]) == [
        "models/example.py:1 imports polytopo.evaluator.tables",
        "models/example.py:1 imports polytopo.evaluator.tables.metric_table",
    ]
    assert upward_imports(tmp_path, "core", PACKAGE_LAYERS["core"]) == []
