"""The command line runs with one BLAS thread and gives the host's BLAS threads back after."""

import threadpoolctl

from polytopo.core.blas_threads import single_blas_thread
from polytopo.evaluator.cli.shared import run_guarded


def blas_threads():
    """Thread counts of the BLAS libraries loaded in this process."""
    return [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]


def test_single_blas_thread_limits_and_restores():
    """Inside the context every loaded BLAS uses one thread; the previous counts come back after."""
    import numpy  # noqa: F401 - loads the BLAS library

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert before, "numpy's BLAS library should be visible to threadpoolctl"
        with single_blas_thread():
            assert blas_threads() == [1] * len(before)
        assert blas_threads() == before


def test_command_line_runs_with_one_blas_thread():
    """``run_guarded``, which both command lines go through, runs its function with one BLAS thread."""
    seen = []

    class Args:
        debug = True

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        assert run_guarded(lambda args: seen.append(blas_threads()), Args()) == 0
        assert blas_threads() == [2] * len(seen[0])
    assert seen and seen[0] == [1] * len(seen[0])
