"""One BLAS thread for the evaluator's command-line runs.

The evaluator's numpy work is elementwise arithmetic, sorting, grouped reductions and
small matrix products (Matplotlib's 3×3 affine transforms while it draws the plots); none
of it is faster with a multi-threaded BLAS, whose idle worker threads busy-wait after each
call. With OpenBLAS on two cores a run of the 1× benchmark set spends about 5 % more CPU
time for the same wall time, and drawing the plots twice its CPU time. Dask workers
already get one BLAS thread from ``distributed``.
"""

import contextlib

__all__ = ["single_blas_thread"]


def single_blas_thread():
    """A context in which the BLAS libraries loaded in this process use one thread.

    NumPy, and with it its BLAS library, is imported first, since only loaded libraries
    can be limited. The previous limits come back when the context ends. The limit is set through
    ``threadpoolctl`` (a runtime dependency); where it is not installed, the context
    leaves the BLAS threads as they are.

    Returns
    -------
    contextlib.AbstractContextManager
    """
    import numpy  # noqa: F401 - loads the BLAS library, which must be loaded to be limited

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
