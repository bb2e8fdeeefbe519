"""The one hypothesis settings profile of the test suite, ``ci``.

Every property test runs the same :data:`HYPOTHESIS_EXAMPLES` examples on every run
(derandomized, no example database, so a failure shows on every machine alike), with no
deadline. ``POLYTOPO_HYPOTHESIS_EXAMPLES=N`` runs N examples per test instead, e.g.
``POLYTOPO_HYPOTHESIS_EXAMPLES=1000 scripts/test tests/models`` for a longer local run.
Tests set no example counts or other settings of their own.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

__all__ = ["HYPOTHESIS_EXAMPLES", "PROFILE", "ENVIRONMENT_VARIABLE", "hypothesis_examples", "load_ci_profile"]

HYPOTHESIS_EXAMPLES = 40
"""Examples per property test unless :data:`ENVIRONMENT_VARIABLE` says otherwise."""

PROFILE = "ci"
ENVIRONMENT_VARIABLE = "POLYTOPO_HYPOTHESIS_EXAMPLES"


def hypothesis_examples(environ=os.environ):
    """Examples per property test: the value of :data:`ENVIRONMENT_VARIABLE` when set, else the default.

    Raises
    ------
    pytest.UsageError
        When the variable is set to anything but a whole number of 1 or more.
    """
    text = environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not text:
        return HYPOTHESIS_EXAMPLES
    if not text.isdigit() or int(text) < 1:
        raise pytest.UsageError(f"Expected {ENVIRONMENT_VARIABLE} to be a whole number of examples per property "
                                f"test (1 or more) but got {text!r}; set it to e.g. 1000, or unset it for the "
                                f"default of {HYPOTHESIS_EXAMPLES}.")
    return int(text)


def load_ci_profile(environ=os.environ):
    """Register the ``ci`` profile and make it the one every property test runs under."""
    settings.register_profile(
        PROFILE,
        max_examples=hypothesis_examples(environ),
        derandomize=True,
        database=None,
        deadline=None,
        # the metric properties evaluate whole scenes drawn large: slow, big data generation is expected
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(PROFILE)
