"""One hypothesis settings profile for the whole suite, with its example count from the environment."""

import ast
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis_profile import HYPOTHESIS_EXAMPLES, PROFILE, hypothesis_examples

TESTS = Path(__file__).resolve().parent


def test_every_property_test_runs_under_the_ci_profile():
    assert settings.default.max_examples == settings.get_profile(PROFILE).max_examples == hypothesis_examples()
    assert settings.default.derandomize is True and settings.default.database is None
    assert settings.default.deadline is None


def test_the_environment_sets_the_number_of_examples():
    assert hypothesis_examples({}) == HYPOTHESIS_EXAMPLES
    assert hypothesis_examples({"POLYTOPO_HYPOTHESIS_EXAMPLES": " 1000 "}) == 1000
    for bad in ("many", "0", "-5", "2.5"):
        with pytest.raises(pytest.UsageError, match=f"Expected POLYTOPO_HYPOTHESIS_EXAMPLES .* but got '{bad}'"):
            hypothesis_examples({"POLYTOPO_HYPOTHESIS_EXAMPLES": bad})


def test_no_test_sets_hypothesis_settings_of_its_own():
    """A ``@settings(...)`` on a test would override the profile (and the environment) for it."""
    own = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == "settings":
                    own.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert own == []
