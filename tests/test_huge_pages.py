"""NumPy's huge-page advice is off while a command line runs, back after it, and a user's own setting stands."""

import pytest
from numpy.core import multiarray

from numpy_advice import huge_page_advice

from polytopo.core.huge_pages import ADVICE_VARIABLE, no_huge_page_advice
from polytopo.evaluator.cli.shared import run_guarded


@pytest.fixture()
def advising(monkeypatch):
    monkeypatch.delenv(ADVICE_VARIABLE, raising=False)
    before = multiarray._set_madvise_hugepage(True)
    yield
    multiarray._set_madvise_hugepage(before)


def test_the_advice_is_off_inside_and_back_after(advising):
    with no_huge_page_advice():
        assert huge_page_advice() is False
    assert huge_page_advice() is True


def test_a_users_setting_stands(advising, monkeypatch):
    monkeypatch.setenv(ADVICE_VARIABLE, "1")
    with no_huge_page_advice():
        assert huge_page_advice() is True


def test_the_command_lines_run_without_the_advice(advising):
    seen = []

    class Args:
        debug = False

    assert run_guarded(lambda args: seen.append(huge_page_advice()), Args()) == 0
    assert seen == [False] and huge_page_advice() is True
