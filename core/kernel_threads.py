"""Threads for the GIL-free kernels of a one-process run: GEOS set operations and KD-tree queries.

Shapely's vectorized GEOS functions and SciPy's KD-tree queries run without holding
Python's global interpreter lock, so one process can spread one large call over the
machine's cores: :func:`chunked` cuts the arrays into one piece per thread and computes
the pieces at once (the results are the same, element for element),
:func:`query_workers` is the ``workers`` argument of a KD-tree query,
:func:`ordered_map` runs independent batches of one computation side by side and
:func:`side_by_side` independent computations (their numpy and GEOS calls overlap where
they let go of the lock). Outside a :func:`kernel_threads` block (a Dask worker, which
has one core), and inside the block's own threads, everything runs in the calling thread.
"""

import collections
import contextlib
import contextvars
import numbers
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np

from .errors import InvalidParameterError

__all__ = ["MIN_CHUNK_ITEMS", "beside", "checked_thread_count", "chunked", "kernel_threads", "ordered_map",
           "query_workers", "side_by_side", "threads_option"]

MIN_CHUNK_ITEMS = 512
"""Fewest elements per piece: a smaller call stays in the calling thread (a thread's hand-off costs more)."""

_THREADS = contextvars.ContextVar("polytopo_kernel_threads", default=None)
_DONE = object()


def checked_thread_count(threads):
    """``threads`` as an int when it is a whole number >= 1; else :class:`~.errors.InvalidParameterError` saying so."""
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise InvalidParameterError(f"Expected threads to be a whole number >= 1 (1: one thread) but got {threads!r}.")
    return int(threads)


def threads_option(text):
    """The ``--threads`` value of a command line: a whole number >= 1 (:class:`argparse.ArgumentTypeError` else)."""
    import argparse

    try:
        return checked_thread_count(int(text))
    except ValueError:  # not a number, or InvalidParameterError (a ValueError too)
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 but got {text!r}") from None


@contextlib.contextmanager
def kernel_threads(count):
    """Within the block, :func:`chunked`, :func:`ordered_map` and :func:`query_workers` use ``count`` threads.

    1 or less: none. The block's thread pool (``count`` threads) is shut down when it
    ends. The setting belongs to the calling thread (a context variable): work running on
    the pool's threads runs there alone.
    """
    threaded = count > 1
    with ThreadPoolExecutor(count, thread_name_prefix="polytopo-kernel") if threaded else contextlib.nullcontext() as pool:
        token = _THREADS.set((pool, int(count)) if threaded else None)
        try:
            yield
        finally:
            _THREADS.reset(token)


def query_workers():
    """The ``workers`` argument of a SciPy KD-tree query: the block's thread count, 1 outside a block."""
    state = _THREADS.get()
    return 1 if state is None else state[1]


def chunked(func, *arrays):
    """``func(*arrays)`` for an element-wise vectorized ``func`` of equal-length 1-D arrays, in pieces on the threads.

    The pieces (at least :data:`MIN_CHUNK_ITEMS` elements each, at most one per thread)
    are computed at once, the first in the calling thread, and joined in order; an
    exception of any piece is raised here.
    """
    state = _THREADS.get()
    length = len(arrays[0])
    if state is None or length < 2 * MIN_CHUNK_ITEMS:
        return func(*arrays)
    pool, count = state
    bounds = np.linspace(0, length, min(count, length // MIN_CHUNK_ITEMS) + 1).astype(np.int64)
    later = [pool.submit(func, *(array[lo:hi] for array in arrays)) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    first = func(*(array[bounds[0]:bounds[1]] for array in arrays))
    return np.concatenate([first] + [future.result() for future in later])


def ordered_map(func, items):
    """Yield ``func(item)`` for each of ``items`` in order, up to the block's thread count computed at once.

    Outside a block, and for a single item (whose own calls then use the threads), one
    after the other in the calling thread. An exception of ``func`` is raised when its
    item's turn comes.
    """
    state = _THREADS.get()
    items = list(items)
    if state is None or len(items) < 2:
        yield from map(func, items)
        return
    pool, count = state
    running = collections.deque(pool.submit(func, item) for item in items[:count])
    later = iter(items[count:])
    while running:
        result = running.popleft().result()
        following = next(later, _DONE)
        if following is not _DONE:
            running.append(pool.submit(func, following))
        yield result


def side_by_side(*calls):
    """The results of ``calls`` (functions of no argument), in order.

    In a block whose thread count is at most the number of calls, the calls run on its
    threads at once, each in one thread (the glue of one overlaps the GIL-free kernels of
    another, which pieces of a single call cannot do), longest first as given; each runs
    in a copy of the caller's context (its progress reporter, say) with no threads of its
    own. Otherwise (outside a block, or more threads than calls) one after the other in
    the calling thread, whose own kernels then use the threads. An exception of a call is
    raised here once every call has ended.
    """
    state = _THREADS.get()
    if state is None or state[1] > len(calls):
        return [call() for call in calls]
    futures = [state[0].submit(contextvars.copy_context().run, _on_one_thread, call) for call in calls]
    wait(futures)
    return [future.result() for future in futures]


@contextlib.contextmanager
def beside(call):
    """Context manager: ``call()`` (a function of no argument) runs while the block runs; yields its future.

    In a block of :func:`kernel_threads` with threads, ``call`` runs on a thread of its own
    (with no threads of its own, in a copy of the caller's context) at the same time as the
    block's work, which keeps the block's threads: a short computation then fills the time
    the block's threads leave a core idle. Otherwise it runs in the calling thread before
    the block. The future's ``result()`` gives its value or raises its exception; the block
    ends only once ``call`` has.

    Examples
    --------
    >>> with kernel_threads(2), beside(lambda: 6 * 7) as answer:
    ...     other = sum(range(4))
    >>> answer.result(), other
    (42, 6)
    """
    state = _THREADS.get()
    if state is None:
        done = Future()
        try:
            done.set_result(call())
        except Exception as error:  # raised by result(), as a thread's would be
            done.set_exception(error)
        yield done
        return
    with ThreadPoolExecutor(1, thread_name_prefix="polytopo-beside") as extra:
        yield extra.submit(contextvars.copy_context().run, _on_one_thread, call)


def _on_one_thread(call):
    """``call()`` with no kernel threads (run in a copied context: the caller's setting is untouched)."""
    _THREADS.set(None)
    return call()
