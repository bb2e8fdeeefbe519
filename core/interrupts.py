"""Whether Ctrl-C was pressed during a command, even where a library turned it into another error.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. A few
library calls catch it and raise their own error instead: NumPy's parsing of a buffer
format, for one, reports ``ValueError: 'O' is not a valid PEP 3118 buffer format string``
when the interrupt lands inside it. A command line that reported that error would send
its user after a fault that does not exist. :func:`interrupts_noted` keeps a record of
every SIGINT of its block, so the command can say *interrupted* whatever was raised.

>>> with interrupts_noted() as interrupted:
...     interrupted()
False
"""

import contextlib
import signal
import threading

__all__ = ["interrupts_noted"]


@contextlib.contextmanager
def interrupts_noted():
    """Yield a check that returns True once SIGINT arrived during the block.

    In the main thread, while SIGINT has Python's default handler, the block's handler
    notes the signal and then raises ``KeyboardInterrupt`` as the default does. Elsewhere
    (another thread, a host such as QGIS that set its own handler, a shell that ignores
    SIGINT) nothing changes and the check always returns False.
    """
    arrived = []
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield lambda: False
        return

    def noting(signum, frame):
        arrived.append(signum)
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, noting)
    try:
        yield lambda: bool(arrived)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
