"""NumPy's huge-page advice is off while a command line runs, back after it, and a user's own setting stands."""

import pytest
from numpy.core import multiarray

from polytopo.core.huge_pages import ADVICE_VARIABLE, no_huge_page_advice
from polytopo.evaluator.cli.shared import run_guarded


def advice():
    now = multiarray._set_madvise_hugepage(True)
    multiarray._set_madvise_hugepage(now)
    return now


@pytest.fixture()
def advising(monkeypatch):
    monkeypatch.delenv(ADVICE_VARIABLE, raising=False)
    before = multiarray._set_madvise_hugepage(True)
    yield
    multiarray._set_madvise_hugepage(before)


def test_the_advice_is_off_inside_and_back_after(advising):
    with no_huge_page_advice():
        assert advice() is False
    assert advice() is True


def test_a_users_setting_stands(advising, monkeypatch):
    monkeypatch.setenv(ADVICE_VARIABLE, "1")
    with no_huge_page_advice():
        assert advice() is True


def test_the_command_lines_run_without_the_advice(advising):
    seen = []

    class Args:
        debug = False

    assert run_guarded(lambda args: seen.append(advice()), Args()) == 0
    assert seen == [False] and advice() is True
