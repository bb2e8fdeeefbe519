"""SciPy's functions, imported on first use and under one lock, so that threads never race to import them.

A first import of a SciPy subpackage imports many others (``scipy.optimize`` imports
``scipy.spatial``; both import ``scipy.sparse.linalg``). Two threads making the first imports
of two of them at once can each hold a module the other needs; Python breaks that deadlock by
handing one of them a partially initialized module, and the import fails ("cannot import name
... most likely due to a circular import"). The evaluator's kernels run on threads
(:mod:`.kernel_threads`), so every SciPy import they make goes through here: one lock, one
import at a time. Imported on first use, SciPy costs nothing to a process that never calls
these (a cluster's client, which only hands out and merges partitions).
"""

import threading

__all__ = ["kd_tree", "linear_sum_assignment"]

_LOCK = threading.Lock()


def kd_tree():
    """:class:`scipy.spatial.cKDTree`, imported under the lock."""
    with _LOCK:
        from scipy.spatial import cKDTree
    return cKDTree


def linear_sum_assignment():
    """:func:`scipy.optimize.linear_sum_assignment`, imported under the lock."""
    with _LOCK:
        from scipy.optimize import linear_sum_assignment as assignment
    return assignment
