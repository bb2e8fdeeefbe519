"""Each vocabulary is spelled once: metric, error-class, profile and family names come from their tables.

A name of one of these vocabularies may appear as a string literal only in the table that
declares it, in the modules that compute it (a profile computes its metrics and names its
own profile; a metric module computes the metrics of its rows), and as the argument of the
table's own lookup (``metric("AP50")``, ``metric_names(...)``, ``family_row(...)``,
``profile_named(...)``, ``error_class(...)``), which fails at once on a name the table does
not have. Everywhere else (reports, plots, the dock, Processing, the main job, the zoo)
reads the table, so a renamed or added entry cannot leave a stale copy behind. Docstrings
and longer texts that mention a name are not literals of it; only a constant equal to a
name counts. The shipped packages are scanned (``training/`` is development code that is
not shipped; its recipes name the family each model is trained for). The scan reads the
source with :mod:`ast`.
"""

import ast
from dataclasses import dataclass

import pytest

from polytopo.evaluator.tables.error_classes import ERROR_CLASSES
from polytopo.evaluator.tables.metric_table import METRICS
from polytopo.evaluator.tables.profiles import PROFILE_NAMES
from polytopo.models.decoders.families import FAMILIES

SCANNED = ("core", "evaluator", "models", "plugin")
LOOKUPS = frozenset({"metric", "metric_names", "family_row", "profile_named", "error_class", "error_layer"})
"""The tables' checking lookups: a name passed to one of them is checked, not copied."""


@dataclass(frozen=True)
class Vocabulary:
    """One vocabulary: its names, the file that declares them and the folders that compute them."""

    names: frozenset
    table: str
    computed_in: tuple = ()


VOCABULARIES = {
    "metric": Vocabulary(frozenset(m.name for m in METRICS), "evaluator/tables/metric_table.py",
                         ("evaluator/metrics/", "evaluator/profiles/")),
    "error class": Vocabulary(frozenset(c.name for c in ERROR_CLASSES), "evaluator/tables/error_classes.py"),
    "profile": Vocabulary(frozenset(PROFILE_NAMES), "evaluator/tables/profiles.py", ("evaluator/profiles/",)),
    "family": Vocabulary(frozenset(FAMILIES), "models/decoders/families.py"),
}

#: (file, literal) pairs where the same word names something else, with the reason.
OTHER_MEANINGS = {
    # ``rings``: the output role of the rings family (the roles are the family table's own
    # column) and the metric table's ring-scope column.
    ("models/decoders/rings.py", "rings"),
    ("evaluator/tables/metric_table.py", "rings"),
    # The profile offered when the evaluator's dependencies cannot be imported yet (the
    # registry itself cannot load then); Processing shows its install instructions.
    ("plugin/processing/evaluation_parameters.py", "paper"),
}


def docstring_nodes(tree):
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    # attribute docstrings: a string expression right after an assignment
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for before, after in zip(block, block[1:]):
                if (isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr)
                        and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                    found.add(id(after.value))
    return found


def looked_up(tree):
    """The ids of the string constants passed straight to a table lookup (:data:`LOOKUPS`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in LOOKUPS:
                found.update(id(argument) for argument in node.args if isinstance(argument, ast.Constant))
    return found


def stray_literals(source, relative):
    """``"file:line kind 'name'"`` for each vocabulary literal outside its table and computing modules."""
    tree = ast.parse(source, filename=relative)
    skipped = docstring_nodes(tree) | looked_up(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skipped:
            continue
        for kind, vocabulary in VOCABULARIES.items():
            if node.value not in vocabulary.names or (relative, node.value) in OTHER_MEANINGS:
                continue
            if relative == vocabulary.table or relative.startswith(vocabulary.computed_in):
                continue
            found.append(f"{relative}:{node.lineno} {kind} {node.value!r}")
    return found


def test_vocabulary_names_are_read_from_their_tables(repo_root):
    """No metric, error-class, profile or family name is spelled outside its table and computing code."""
    found = []
    for package in SCANNED:
        for path in sorted((repo_root / package).rglob("*.py")):
            relative = path.relative_to(repo_root).as_posix()
            found += stray_literals(path.read_text(encoding="utf-8"), relative)
    assert found == [], (
        "Expected vocabulary names to be read from their tables (metric_table, error_classes, profiles, "
        "families) but these spell one by hand:\n" + "\n".join(found)
    )


@pytest.mark.parametrize("source, expected", [
    ("COLUMNS = ('AP50', 'Hole-F1')", ["plugin/x.py:1 metric 'AP50'", "plugin/x.py:1 metric 'Hole-F1'"]),
    ("def f(card):\n    return card.family == 'frame-field'", ["plugin/x.py:2 family 'frame-field'"]),
    ("PROFILE = 'paper'", ["plugin/x.py:1 profile 'paper'"]),
    ("KIND = 'missed hole'", ["plugin/x.py:1 error class 'missed hole'"]),
])
def test_the_scan_finds_a_literal_of_each_vocabulary(source, expected):
    assert stray_literals(source, "plugin/x.py") == expected


@pytest.mark.parametrize("source, relative", [
    ('"""The AP50 of the paper profile."""', "plugin/x.py"),
    ("X = 1\n'''AP50'''", "plugin/x.py"),
    ("message = f'AP50 is {value}'", "plugin/x.py"),
    ("SHOWN = metric_names('AP50', 'Hole-F1')", "plugin/x.py"),
    ("row = family_row('semantic')", "plugin/x.py"),
    ("summary['AP50'] = ap", "evaluator/profiles/paper.py"),
    ("NAME = 'paper'", "evaluator/profiles/paper.py"),
])
def test_the_scan_leaves_docstrings_sentences_and_computing_modules_alone(source, relative):
    assert stray_literals(source, relative) == []
