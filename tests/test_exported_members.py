"""Every module declares its public surface in ``__all__``, and keeps it true.

For each module of the packages (``evaluator``, ``models``, ``plugin`` and the
root ``__init__.py``) the source is read with :mod:`ast`, nothing is imported:

* ``__all__`` is assigned once at module level, to a list or tuple of strings;
* it names no name twice, and every name it lists is bound in the module
  (or may be supplied by a module-level ``__getattr__``);
* every public class and function defined in the module is listed (helpers
  that are not part of the surface start with an underscore).
"""

import ast

import pytest

PACKAGES = ("evaluator", "models", "plugin")


def package_modules(repo_root):
    """Return the root ``__init__.py`` and every module of the packages, sorted."""
    modules = [repo_root / "__init__.py"]
    for package in PACKAGES:
        modules += sorted(
            path for path in (repo_root / package).rglob("*.py") if "__pycache__" not in path.parts
        )
    return modules


def top_level_statements(body):
    """Yield the module-level statements, including those inside if/try/with blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
            blocks += [handler.body for handler in getattr(node, "handlers", [])]
            for block in blocks:
                yield from top_level_statements(block)


def bound_names(tree):
    """Return the names bound at module level (definitions, assignments, imports)."""
    names = set()
    for node in top_level_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def declared_all(tree):
    """Return the module's ``__all__`` node value, or None without one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return node.value
    return None


def surface_problems(source, filename):
    """Return one message per problem with the ``__all__`` of ``source``."""
    tree = ast.parse(source, filename=filename)
    value = declared_all(tree)
    if value is None:
        return [f"{filename}: expected a module-level __all__ but found none"]
    try:
        exported = ast.literal_eval(value)
    except ValueError:
        exported = None
    if not isinstance(exported, (list, tuple)) or not all(isinstance(n, str) for n in exported):
        return [
            f"{filename}:{value.lineno} expected __all__ to be a literal list of strings "
            f"but got {ast.unparse(value)!r}; write the names out"
        ]
    problems = [
        f"{filename}: __all__ lists {name!r} {exported.count(name)} times"
        for name in sorted(set(exported))
        if exported.count(name) > 1
    ]
    bound = bound_names(tree)
    if "__getattr__" not in bound:  # a module __getattr__ may supply any name lazily
        problems += [
            f"{filename}: __all__ lists {name!r}, which the module does not define"
            for name in exported
            if name not in bound
        ]
    defined = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    problems += [
        f"{filename}:{node.lineno} public {node.name!r} is missing from __all__ "
        "(add it, or rename it with a leading underscore)"
        for node in defined
        if not node.name.startswith("_") and node.name not in exported
    ]
    return problems


def test_every_module_declares_a_true_and_complete_all(repo_root):
    """Each package module passes every check listed in this file's docstring."""
    modules = package_modules(repo_root)
    problems = []
    for path in modules:
        problems += surface_problems(
            path.read_text(encoding="utf-8"), str(path.relative_to(repo_root))
        )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(): pass", "expected a module-level __all__ but found none"),
        ("__all__ = ['f', 'f']\ndef f(): pass", "__all__ lists 'f' 2 times"),
        ("__all__ = ['g']", "__all__ lists 'g', which the module does not define"),
        ("__all__ = []\nclass Public: pass", ":2 public 'Public' is missing from __all__"),
        ("__all__ = ['a'] + other.__all__", ":1 expected __all__ to be a literal list"),
    ],
)
def test_checker_names_the_problem(source, expected):
    """Each kind of problem is reported once, with the file (and line where known)."""
    (problem,) = surface_problems(source, "models/example.py")
    assert problem.startswith("models/example.py")
    assert expected in problem


def test_checker_accepts_reexports_constants_and_private_helpers():
    """Re-exported imports, constants, guarded imports and ``_helpers`` pass."""
    source = (
        "from .boundary import boundary_iou\n"
        "import numpy as np\n"
        "__all__ = ['boundary_iou', 'GAMMA', 'score', 'kernel']\n"
        "GAMMA: float = 0.1\n"
        "def score(): pass\n"
        "def _helper(): pass\n"
        "try:\n    from ._fast import kernel\nexcept ImportError:\n    kernel = None\n"
    )
    assert surface_problems(source, "evaluator/__init__.py") == []


def test_checker_trusts_a_module_getattr_for_lazy_names():
    """Names a module-level ``__getattr__`` can supply need not be bound."""
    source = "__all__ = ['Session']\ndef __getattr__(name): ...\n"
    assert surface_problems(source, "models/__init__.py") == []


EVALUATOR_SURFACE = (
    "ClusterError", "Evaluation", "EvaluationParams", "EvaluatorError", "InputFormatError", "Instance",
    "InstanceSet", "InvalidParameterError", "MissingDependencyError", "PROFILES", "PixelFrame", "SCORE_FIELD",
    "assign_images", "atomic_output", "error_layers", "evaluate", "evaluate_files", "format_table", "frame_for_bounds",
    "implied_score_field", "instances_from_geometries", "instances_from_geometry", "load_coco_ground_truth",
    "load_coco_predictions", "load_inputs", "load_vector_layer", "map_partitions", "open_client", "params_for",
    "write_geopackage", "write_report", "write_summary_json",
    "boundary_iou", "polis", "mta", "hole_f1", "topo_em",
)


def test_evaluator_package_exports_exactly_the_pinned_surface():
    """``polytopo.evaluator`` exports what the plugin and models use from it, and nothing dead."""
    import polytopo.evaluator as evaluator

    assert sorted(evaluator.__all__) == sorted(EVALUATOR_SURFACE)
    assert all(hasattr(evaluator, name) for name in EVALUATOR_SURFACE)


MODELS_SURFACE = (
    "GeoreferenceWarning", "InferenceCanceled", "InferenceError", "LoadedModel", "MapPolygon", "MemoryBudgetError",
    "ModelCard", "ModelCardError", "ModelFileError", "ModelsError", "OutputError", "PreparedRun", "Prompt",
    "ProviderError", "RasterError", "RunParams", "RunReport", "SessionParams",
    "describe_model", "example_card", "load_model", "prompts_from_geometries", "prompts_from_vector", "read_card",
    "run_to_file", "write_card",
)


def test_models_package_exports_exactly_the_pinned_surface():
    """``polytopo.models`` exports what users call: loading and running a model, the card, prompts, results, errors.

    The engine's parts (tiling, polygonization, card checks, sessions, decoders) are imported
    from their own modules.
    """
    import polytopo.models as models

    assert sorted(models.__all__) == sorted(MODELS_SURFACE)
    assert all(hasattr(models, name) for name in MODELS_SURFACE)
