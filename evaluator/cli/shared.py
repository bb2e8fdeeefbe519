"""What both evaluator command lines share: the scale-out options and the guarded run.

:func:`run_guarded` gives the exit statuses of :mod:`.cli` (0 on success; 2 with a one-line
reason on bad input or parameters; 130 when interrupted; 1 with a one-line reason on an
unexpected failure, ``--debug`` shows the traceback) to ``python -m polytopo.evaluator``
and to its ``compare`` subcommand (:mod:`.compare_cli`).
"""

import sys
import warnings

from ...core.blas_threads import single_blas_thread
from ...core.cluster import local_workers_option
from ...core.errors import EvaluatorError

__all__ = ["add_cluster_options", "run_guarded"]


def add_cluster_options(parser):
    """The ``--workers`` / ``--scheduler`` options (Dask scale-out, see docs/scale-out.md)."""
    group = parser.add_argument_group("scale-out on Dask (same numbers as one process)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--workers", type=local_workers_option, default=0,
                       help="worker processes of a local Dask cluster started for the run (default 0: this process)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="address of a running Dask scheduler (started with 'dask scheduler' and 'dask worker')")


def run_guarded(func, args):
    """Call ``func(args)`` with one BLAS thread and turn its failures into one line and an exit status.

    See the module docstring for the exit statuses and :mod:`.blas_threads` for the BLAS limit.
    """
    with warnings.catch_warnings(record=True) as caught, single_blas_thread():
        warnings.simplefilter("always")
        try:
            func(args)
        except (EvaluatorError, FileExistsError) as exc:
            _report_warnings(caught)
            print(f"polytopo.evaluator: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("polytopo.evaluator: interrupted; no output folder was written", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - one line for the user, traceback with --debug
            if args.debug:
                raise
            print(f"polytopo.evaluator: unexpected failure: {type(exc).__name__}: {exc} (rerun with --debug)",
                  file=sys.stderr)
            return 1
    _report_warnings(caught)
    return 0


def _report_warnings(caught):
    for warning in caught:
        print(f"polytopo.evaluator: warning: {warning.message}", file=sys.stderr)
