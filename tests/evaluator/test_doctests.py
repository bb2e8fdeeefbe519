"""The Examples sections of the evaluator's docstrings run and give what they show."""

import doctest
import importlib
import pkgutil

import pytest

import polytopo.evaluator

MODULES = sorted(name for _, name, _ in pkgutil.iter_modules(polytopo.evaluator.__path__) if name != "__main__")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"polytopo.evaluator.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_examples_exist():
    finder = doctest.DocTestFinder()
    examples = sum(len(test.examples) for name in MODULES
                   for test in finder.find(importlib.import_module(f"polytopo.evaluator.{name}")))
    assert examples >= 30
