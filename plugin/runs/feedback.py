"""Progress, cancellation and messages of a run, over a duck-typed feedback object.

The runs accept any object with ``setProgress(float)`` (0–100), ``isCanceled()``,
``pushInfo(str)`` and ``reportError(str)``: :class:`qgis.core.QgsProcessingFeedback`
has them, and the dock's task passes an adapter. ``pushWarning(str)`` is used when the
object has it (QgsProcessingFeedback does), else warnings go through ``pushInfo``.

Cancellation follows the convention of :mod:`polytopo.core.cancel`: the feedback
object's ``isCanceled`` is the cancel check handed to the evaluator and the engine
(:func:`cancel_check`), their canceled exceptions become :class:`RunCanceled`
(:meth:`RunSteps.canceled`), and the plugin's own steps (reading layers, writing outputs)
ask the same check (:meth:`RunSteps.check`).
"""

from ..errors import RunCanceled

__all__ = ["WORK_SHARE_PERCENT", "RunSteps", "ScaledFeedback", "cancel_check", "work_and_write"]

#: Share of a run's progress bar taken by the work (evaluation, vectorization); writing
#: the GeoPackage and the report takes the rest, so the bar runs once from 0 to 100 %.
WORK_SHARE_PERCENT = 85.0


def work_and_write(feedback):
    """Feedback objects for the two weighted phases of a run: the work, then writing its outputs.

    Returns
    -------
    tuple of ScaledFeedback
        ``(work, write)``, covering 0–85 % and 85–100 % of ``feedback``'s progress.
    """
    return ScaledFeedback(feedback, 0.0, WORK_SHARE_PERCENT), ScaledFeedback(feedback, WORK_SHARE_PERCENT, 100.0)


def cancel_check(feedback):
    """The cancel check of ``feedback`` for the evaluator and the engine: its ``isCanceled``, or None without one."""
    return feedback.isCanceled if feedback is not None else None


class RunSteps:
    """Report the progress of one run through ``feedback`` and stop it when canceled.

    Parameters
    ----------
    feedback : object or None
        The feedback object described in the module docstring; None reports nothing
        and never cancels.
    what : str
        What runs ("evaluation", "vectorization"), for the cancel message.
    """

    def __init__(self, feedback, what):
        self.feedback = feedback
        self.what = what
        self.warnings = []

    @property
    def cancel(self):
        """The cancel check to hand to the evaluator and the engine (:func:`cancel_check`)."""
        return cancel_check(self.feedback)

    def canceled(self):
        """The :class:`RunCanceled` to raise for this run (also in place of a pure package's canceled exception)."""
        return RunCanceled(f"The {self.what} was canceled; no output was written.")

    def check(self):
        """Raise :class:`RunCanceled` when the feedback object says the user canceled."""
        if self.feedback is not None and self.feedback.isCanceled():
            raise self.canceled()

    def report(self, percent):
        """Report ``percent`` (0–100) done."""
        if self.feedback is not None:
            self.feedback.setProgress(float(max(0.0, min(100.0, percent))))

    def progress(self, percent):
        """Report ``percent`` (0–100) done, then check for cancellation."""
        self.report(percent)
        self.check()

    def info(self, message):
        """Send an informative message."""
        if self.feedback is not None:
            self.feedback.pushInfo(message)

    def warn(self, message):
        """Send a warning and keep it in :attr:`warnings` (for the provenance record)."""
        self.warnings.append(message)
        if self.feedback is None:
            return
        push = getattr(self.feedback, "pushWarning", None)
        if push is not None:
            push(message)
        else:
            self.feedback.pushInfo(f"Warning: {message}")

    def phases(self, start, stop, expected):
        """A callback for phase names that moves progress from ``start`` towards ``stop``.

        Parameters
        ----------
        start, stop : float
            Progress (percent) at the first phase and the most the phases may reach.
        expected : int
            About how many phases will be announced; progress stops at ``stop``.

        Returns
        -------
        callable
            ``callback(phase_name)``: reports the phase and advances progress; it does not
            cancel (the evaluator asks :attr:`cancel` after each phase).
        """
        count = [0]

        def callback(name):
            fraction = min(1.0, count[0] / max(1, expected))
            count[0] += 1
            self.info(f"{self.what.capitalize()}: {name}")
            self.report(start + (stop - start) * fraction)

        return callback


class ScaledFeedback:
    """A feedback object for one part of a longer run: progress 0–100 maps to ``start``–``stop``.

    Parameters
    ----------
    feedback : object or None
        The feedback of the whole run (see the module docstring).
    start, stop : float
        The part of the whole run's progress (percent) this part covers.
    """

    def __init__(self, feedback, start, stop):
        self.feedback = feedback
        self.start = start
        self.stop = stop

    def setProgress(self, percent):  # noqa: N802 - the QgsFeedback name.
        """Report ``percent`` of this part as the matching share of the whole run."""
        if self.feedback is not None:
            self.feedback.setProgress(self.start + (self.stop - self.start) * percent / 100.0)

    def isCanceled(self):  # noqa: N802 - the QgsFeedback name.
        """Whether the whole run was canceled."""
        return self.feedback is not None and self.feedback.isCanceled()

    def pushInfo(self, message):  # noqa: N802 - the QgsProcessingFeedback name.
        """Forward an informative message."""
        if self.feedback is not None:
            self.feedback.pushInfo(message)

    def pushWarning(self, message):  # noqa: N802 - the QgsProcessingFeedback name.
        """Forward a warning (as info when the whole run's feedback has no ``pushWarning``)."""
        if self.feedback is None:
            return
        push = getattr(self.feedback, "pushWarning", None)
        (push or self.feedback.pushInfo)(message)

    def reportError(self, message):  # noqa: N802 - the QgsProcessingFeedback name.
        """Forward an error message."""
        if self.feedback is not None:
            self.feedback.reportError(message)
