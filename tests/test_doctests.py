"""The Examples sections of the docstrings of the pure packages run and give what they show.

Every module of ``polytopo.core``, ``polytopo.evaluator`` and ``polytopo.models`` (with their sub-packages)
runs its examples; the training code (``polytopo.training``, a package of its own) is not
among them, since most of it needs PyTorch, which the inference engine does not install.
"""

import doctest
import importlib
import pkgutil

import pytest

#: Package -> (sub-packages left out, fewest examples expected in it).
PACKAGES = {
    "polytopo.core": ((), 5),
    "polytopo.evaluator": ((), 30),
    "polytopo.models": ((), 60),
}


def _failed_walk(name):
    raise ImportError(f"Expected every sub-package to import for its docstring examples, but {name} failed")


def package_modules(package, exclude=()):
    """Dotted names of every module of ``package`` and its sub-packages, without ``__main__``."""
    names = []
    root = importlib.import_module(package)
    for _, name, _ in pkgutil.walk_packages(root.__path__, package + ".", onerror=_failed_walk):
        left_out = any(name == skip or name.startswith(skip + ".") for skip in exclude)
        if not left_out and name.rsplit(".", 1)[-1] != "__main__":
            names.append(name)
    return sorted(names)


MODULES = {package: package_modules(package, exclude) for package, (exclude, _) in PACKAGES.items()}


@pytest.mark.parametrize("name", [name for names in MODULES.values() for name in names],
                         ids=lambda name: name.removeprefix("polytopo."))
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("package", PACKAGES)
def test_examples_exist(package):
    finder = doctest.DocTestFinder()
    examples = sum(len(test.examples) for name in MODULES[package] for test in finder.find(importlib.import_module(name)))
    assert examples >= PACKAGES[package][1]
