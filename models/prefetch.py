"""Work ahead of the consumer in one background thread, in order, with a bounded queue.

The pipeline reads the next tiles and runs ``session.run`` on them while the
calling thread blends, polygonizes and writes the previous ones.
onnxruntime and GDAL release the GIL while they work, so the two threads
overlap even though the decoders are Python code. Results come back in item
order; the worker is never more than ``depth`` results ahead, which bounds
the memory held in the queue to ``depth`` results (plus the one being made).
"""

import queue
import threading

__all__ = ["Prefetcher"]

_POLL_SECONDS = 0.1
"""How often a worker blocked on a full queue checks whether it was closed."""


class Prefetcher:
    """Iterate ``items`` in a background thread; iterate the prefetcher to get them in order.

    Parameters
    ----------
    items : iterable
        Iterated by the worker thread only: a generator whose iteration does
        the work (reading, ``session.run``) runs that work in the worker.
    depth : int
        Items the worker may hold ready before the consumer takes them
        (at least 1).

    Notes
    -----
    An exception raised while iterating ``items`` stops the worker and is
    raised by the iteration at the position where it happened,
    after every earlier result. :meth:`close` stops the worker, waits for
    the item in progress and drops what was not taken; iterating to the end
    or leaving a ``with`` block closes too. The thread is a daemon, so a
    consumer that forgets to close never blocks interpreter exit.

    Examples
    --------
    >>> with Prefetcher((i * i for i in range(4)), depth=2) as squares:
    ...     list(squares)
    [0, 1, 4, 9]
    """

    _END = object()

    def __init__(self, items, depth):
        if depth < 1:
            raise ValueError(f"Expected a prefetch depth of at least 1 but got {depth}.")
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=self._work, args=(items,), name="polytopo-prefetch", daemon=True)
        self._thread.start()

    def _put(self, entry):
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, items):
        try:
            for item in items:
                if self._stop.is_set() or not self._put((item, None)):
                    return
        except BaseException as error:  # handed to the consumer, which raises it
            self._put((None, error))
            return
        self._put((self._END, None))

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        result, error = self._queue.get()
        if error is not None or result is self._END:
            self.close()
            if error is not None:
                raise error
            raise StopIteration
        return result

    def close(self):
        """Stop the worker, wait for the item in progress and drop pending results."""
        self._finished = True
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                pass
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
