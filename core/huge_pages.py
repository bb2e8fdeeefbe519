"""No transparent-huge-page advice on NumPy's large arrays for the evaluator's command-line runs.

NumPy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every
array of 4 MiB or more. Where the kernel then compacts memory to find a huge page at the
first touch (``/sys/kernel/mm/transparent_hugepage/defrag`` set to ``madvise``, a common
default), a short-lived large array can stall for milliseconds in the kernel. The
evaluator makes many of them (a file's bytes and the arrays indexed over them, each
partition's ring tables): on a 2-core machine with that setting, indexing the 16x
benchmark set's ground truth (39 MB) in a fresh process took 0.37-1.23 s with the advice
and 0.45-0.60 s without, and the 2-worker command line on that set 0.91 times the wall
and 0.90 times the CPU time (``benchmarks/README.md``, *Huge pages*). Local workers start
without the advice (:data:`.cluster.LOCAL_CLUSTER_CONFIG`); ``docs/scale-out.md`` gives
the same setting for ``dask worker``. A ``NUMPY_MADVISE_HUGEPAGE`` the user set is left as
it is. No number changes.
"""

import contextlib
import os

__all__ = ["ADVICE_VARIABLE", "no_huge_page_advice"]

ADVICE_VARIABLE = "NUMPY_MADVISE_HUGEPAGE"
"""NumPy's environment variable for the advice (read when NumPy is imported; "0" turns it off)."""


@contextlib.contextmanager
def no_huge_page_advice():
    """A context in which NumPy gives no huge-page advice for new arrays, unless :data:`ADVICE_VARIABLE` is set.

    The previous setting comes back when the context ends. NumPy versions without the
    switch (``numpy.core.multiarray._set_madvise_hugepage``) are left as they are.
    """
    from numpy.core import multiarray

    switch = getattr(multiarray, "_set_madvise_hugepage", None)
    if switch is None or ADVICE_VARIABLE in os.environ:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)
