"""The engine never imports QGIS or Qt, and its public surface is what __all__ says."""

import ast
import pathlib
import subprocess
import sys
import types

import polytopo.models

MODELS = pathlib.Path(polytopo.models.__file__).parent
FORBIDDEN = ("qgis", "PyQt5", "PyQt6", "PySide2", "PySide6", "qtpy", "sip")


def imported_modules(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_no_module_of_models_imports_qgis_or_qt():
    offenders = {
        str(path.relative_to(MODELS)): name
        for path in MODELS.rglob("*.py")
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN
    }
    assert offenders == {}


def test_importing_the_engine_loads_no_qgis_or_qt_module():
    code = (
        "import sys, polytopo.models, polytopo.models.cli, polytopo.models.run_command; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_every_module_declares_all_and_exports_exist():
    for path in MODELS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)]
        assert "__all__" in names, path
    for name in polytopo.models.__all__:
        assert hasattr(polytopo.models, name), name
    assert sorted(polytopo.models.__all__) == sorted(set(polytopo.models.__all__))


def test_the_package_namespace_holds_only_its_surface_and_submodules():
    """``polytopo.models.X`` is either a name of ``__all__`` or a submodule: internals are not re-exported."""
    public = {name for name, value in vars(polytopo.models).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public == set(polytopo.models.__all__)
