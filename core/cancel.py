"""How a run is asked to stop: the one cancel convention of the evaluator and the engine.

A run takes ``cancel``: None (never canceled) or a *cancel check*, a callable without
arguments that returns True once whoever started the run wants it to stop: a
:class:`CancelToken`, ``QgsFeedback.isCanceled``, ``threading.Event().is_set``. The run
asks the check at each of its progress steps (each evaluator phase, each finished
partition on a cluster, each inference batch) and, when it says stop, raises its package's
canceled exception (:class:`.errors.EvaluationCanceled`,
:class:`polytopo.models.errors.InferenceCanceled`) before anything is written, so a
canceled run leaves no output. Progress callbacks only report; they never cancel.

>>> token = CancelToken()
>>> raise_if_canceled(token, RuntimeError, "evaluation")
>>> token.request()
>>> raise_if_canceled(token, RuntimeError, "evaluation")
Traceback (most recent call last):
...
RuntimeError: The evaluation was canceled; no output was written.
"""

import threading

__all__ = ["CancelToken", "raise_if_canceled", "checked_phases"]


class CancelToken:
    """A cancel request: one side calls :meth:`request`, the run calls the token (a cancel check).

    Safe to request from another thread than the one that runs.
    """

    def __init__(self):
        self._requested = threading.Event()

    def request(self):
        """Ask the run to stop at its next progress step."""
        self._requested.set()

    def __call__(self):
        """Return True once a cancel was requested."""
        return self._requested.is_set()


def raise_if_canceled(cancel, error, what):
    """Raise ``error`` when the cancel check ``cancel`` says stop (None never does).

    Parameters
    ----------
    cancel : callable or None
        The cancel check (see the module docstring).
    error : type
        The package's canceled exception.
    what : str
        What runs ("evaluation", "inference"), for the message.
    """
    if cancel is not None and cancel():
        raise error(f"The {what} was canceled; no output was written.")


def checked_phases(progress, cancel, error, what):
    """A phase callback that reports each phase to ``progress``, then asks ``cancel``.

    Parameters
    ----------
    progress : callable or None
        ``progress(phase_name)``, called first; None reports nothing.
    cancel, error, what
        As for :func:`raise_if_canceled`.

    Returns
    -------
    callable
        ``step(phase_name)``.
    """

    def step(name):
        if progress is not None:
            progress(name)
        raise_if_canceled(cancel, error, what)

    return step
