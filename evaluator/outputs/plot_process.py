"""The plots of a one-process evaluation, drawn by a child process that got Matplotlib ready meanwhile.

Importing Matplotlib and drawing the plots takes about a second of one core, in a process
whose other phases leave a core idle at the start (reading the inputs) and at the end
(writing the tables). :func:`plot_process` starts a child Python process
(``python -m`` this module) that imports Matplotlib and draws a small figure while this
process reads and scores the inputs; :meth:`PlotProcess.start` sends it the summary's
plotted entries (a pickle, through its standard input) as soon as they exist, and
:meth:`PlotProcess.pngs` reads back the PNG bytes (through its standard output) once the
tables are written. They are the bytes :func:`.plots.plot_pngs` draws in this process.

Nothing outlives the block: the child ignores Ctrl-C (the command line handles it and ends
the child), ends when its standard input closes (also when this process is killed), and
is ended and reaped when the block ends. A child that could not start, died, or failed to
draw gives None, and the caller draws the plots itself (which raises the failure's own
error where there is one).
"""

import contextlib
import os
import pickle
import subprocess
import sys

__all__ = ["PlotProcess", "plot_process"]


class PlotProcess:
    """A child process that draws the plots of one evaluation (:func:`plot_process`)."""

    def __init__(self):
        # the child finds this package where this process does
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
        self._child = subprocess.Popen(  # noqa: S603 - this interpreter running this module
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=environment)
        self._sent = False

    @property
    def pid(self):
        """The child's process id."""
        return self._child.pid

    def start(self, plotted):
        """Send the plotted entries (:data:`.plots.PLOTTED_ENTRIES` of a summary); the child draws them now.

        Returns True when they were sent, False when the child is gone.
        """
        try:
            pickle.dump(plotted, self._child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._child.stdin.close()
        except (OSError, ValueError):  # the child ended (BrokenPipeError; ValueError: pipe closed)
            return False
        self._sent = True
        return True

    def pngs(self):
        """The plots the child drew: output name → (file name, PNG bytes); None when it did not draw them."""
        if not self._sent:
            return None
        try:
            reply = self._child.stdout.read()
            self._child.wait()
            # the reply of this process's own child, through a private pipe
            return pickle.loads(reply) if self._child.returncode == 0 and reply else None  # nosec B301
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def close(self):
        """End the child when it still runs and reap it."""
        for pipe in (self._child.stdin, self._child.stdout):
            with contextlib.suppress(OSError, ValueError):
                pipe.close()
        if self._child.poll() is None:
            self._child.kill()
        self._child.wait()


@contextlib.contextmanager
def plot_process(enabled=True):
    """Yield a started :class:`PlotProcess` (None when not ``enabled`` or it cannot start); ended at the block's end."""
    if not enabled:
        yield None
        return
    try:
        process = PlotProcess()
    except OSError:
        yield None
        return
    try:
        yield process
    finally:
        process.close()


def _serve():
    """The child: read the plotted entries while Matplotlib gets ready, draw them, write the PNGs."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    received = []
    reader = threading.Thread(target=lambda: received.append(sys.stdin.buffer.read()), daemon=True)
    reader.start()
    from .plots import plot_pngs, png_bytes, precision_recall_figure

    png_bytes(precision_recall_figure({}))  # imports, fonts and the Agg canvas, before the data comes
    reader.join()
    if not received[0]:
        return 0  # the parent ended without sending: nothing to draw
    pngs = plot_pngs(pickle.loads(received[0]))  # nosec B301: sent by the parent through a private pipe
    sys.stdout.buffer.write(pickle.dumps(pngs, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
