"""Ctrl-C is reported as an interruption by both command lines, also where a library turned it into its own error.

NumPy's buffer-format parser, for one, answers an interrupt that lands inside it with a
``ValueError``; the functions below do the same on purpose: they send this process SIGINT,
catch the ``KeyboardInterrupt`` and raise another error.
"""

import os
import signal

import pytest

from polytopo.core.interrupts import interrupts_noted
from polytopo.evaluator.cli.shared import run_guarded
from reliability import case


@pytest.fixture(autouse=True)
def pythons_sigint_handler():
    """Python's own SIGINT handler during each test, as a command started from a terminal has it.

    A test run that a non-interactive shell starts in the background inherits SIGINT
    ignored; these tests are not about that case (``test_a_host_handler_is_left_alone`` is).
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_becomes(error):
    def handler(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs at the next bytecode boundary
                pass
        except KeyboardInterrupt:
            raise error from None
        raise AssertionError("SIGINT did not raise KeyboardInterrupt")
    return handler


class _Args:
    debug = False


def test_the_check_notes_sigint_and_the_default_handler_comes_back():
    with interrupts_noted() as interrupted:
        assert not interrupted()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        assert interrupted()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_host_handler_is_left_alone():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_noted() as interrupted:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            assert not interrupted()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("error", [
    pytest.param(ValueError("'O' is not a valid PEP 3118 buffer format string"), id="numpy-buffer-format",
                 marks=case("Ctrl-C that a library answers with its own error (NumPy: ValueError: 'O' is not a "
                            "valid PEP 3118 buffer format string)", "evaluator CLI",
                            "exit 130: interrupted; no output folder was written (never 'unexpected failure')")),
    pytest.param(RuntimeError("worker lost"), id="another-error"),
])
def test_the_evaluator_reports_an_interrupt_that_came_back_as_another_error(capsys, error):
    assert run_guarded(_interrupt_becomes(error), _Args()) == 130
    err = capsys.readouterr().err
    assert err.strip() == "polytopo.evaluator: interrupted; no output folder was written"


def test_the_evaluator_still_reports_errors_without_an_interrupt(capsys):
    def failing(args):
        raise ValueError("broken")

    assert run_guarded(failing, _Args()) == 1
    assert "unexpected failure: ValueError: broken" in capsys.readouterr().err


@case("Ctrl-C that a library answers with its own error", "models CLI",
      "exit 130: interrupted; no output file was written ...; no traceback")
def test_the_models_command_reports_an_interrupt_that_came_back_as_another_error(capsys, monkeypatch):
    from polytopo.models import cli

    monkeypatch.setattr(cli, "_cmd_zoo", _interrupt_becomes(ValueError("'O' is not a valid PEP 3118 buffer format")),
                        raising=True)
    assert cli.main(["zoo"]) == 130
    assert "interrupted; no output file was written" in capsys.readouterr().err
