"""What both evaluator command lines share: the scale-out options and the guarded run.

:func:`run_guarded` gives the exit statuses of :mod:`.cli` (0 on success; 2 with a one-line
reason on bad input or parameters; 130 when interrupted; 1 with a one-line reason on an
unexpected failure, ``--debug`` shows the traceback) to ``python -m polytopo.evaluator``
and to its ``compare`` subcommand (:mod:`.compare_cli`).

Ctrl-C is reported as *interrupted* also where a library turned it into an error of its
own (:mod:`polytopo.core.interrupts`). A shell shows 130 for every interrupted run; a
process that started the command directly may see it ended by SIGINT instead (Python
3.11 ends that way after its clean-up when the interrupt landed inside an ``exec`` of a
text, as a dataclass's first import runs one, even though the command caught it).
"""

import sys
import warnings
from pathlib import Path

from ...core.blas_threads import single_blas_thread
from ...core.huge_pages import no_huge_page_advice
from ...core.cluster import AUTO_WORKERS, auto_local_workers, workers_or_auto_option
from ...core.kernel_threads import threads_option
from ...core.machine import usable_cores
from ...core.errors import EvaluatorError
from ...core.interrupts import interrupts_noted

__all__ = ["add_cluster_options", "input_bytes", "resolved_workers", "run_guarded", "workers_read_inputs"]


def add_cluster_options(parser):
    """The ``--workers`` / ``--scheduler`` options (Dask scale-out, see docs/scale-out.md)."""
    group = parser.add_argument_group("scale-out on Dask (same numbers as one process)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--workers", type=workers_or_auto_option, default=AUTO_WORKERS,
                       help="worker processes of a local Dask cluster started for the run; 0: this process (its GIL-free "
                            "kernels on threads over the cores); "
                            "auto (default): one per core where the inputs are large enough for a cluster to pay, "
                            "else this process")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="address of a running Dask scheduler (started with 'dask scheduler' and 'dask worker')")
    group.add_argument("--threads", type=threads_option, default=None, metavar="N",
                       help="when this process evaluates (no cluster): threads for its kernels that run without "
                            "the GIL (default: every core it may run on; 1: one thread)")


def input_bytes(paths):
    """Bytes of the input files ``paths`` (a folder: its files; a GDAL ``/vsi`` path or a missing one: 0)."""
    total = 0
    for path in map(Path, paths):
        if str(path).startswith("/vsi") or not path.exists():
            continue
        files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
        total += sum(f.stat().st_size for f in files)
    return total


def resolved_workers(args, inputs):
    """``args.workers`` as a number: ``auto`` becomes :func:`.cluster.auto_local_workers` of the inputs' size.

    Unless ``args.quiet``, says on stderr when ``auto`` starts a cluster and how to avoid it.
    """
    if args.workers != AUTO_WORKERS:
        return args.workers
    if args.scheduler is not None:
        return 0
    size, cores = input_bytes(inputs), usable_cores()
    workers = auto_local_workers(size, cores)
    if workers and not args.quiet:
        print(f"polytopo.evaluator: the inputs are {size / 1e6:.1f} MB: running on a local cluster of {workers} "
              f"workers for the {cores} cores here (--workers 0 runs in this process)", file=sys.stderr)
    return workers


def workers_read_inputs(args, workers, vector_options, params, sweeps=False):
    """Whether a command line's cluster workers read its COCO JSON inputs (:mod:`..run.read_on_workers`).

    On a cluster (``workers`` or ``--scheduler``), with none of the option names
    ``vector_options`` (options only vector layers read) given, for a profile and sweeps
    :func:`..run.read_on_workers.applies_to` accepts.
    """
    from ..run.read_on_workers import applies_to

    return bool((workers or args.scheduler is not None)
                and all(getattr(args, name, None) is None for name in vector_options) and applies_to(params, sweeps))


def run_guarded(func, args):
    """Call ``func(args)`` with one BLAS thread and turn its failures into one line and an exit status.

    See the module docstring for the exit statuses, :mod:`.blas_threads` for the BLAS limit
    and :mod:`.huge_pages` for NumPy's huge-page advice, off meanwhile.
    """
    with (warnings.catch_warnings(record=True) as caught, single_blas_thread(), no_huge_page_advice(),
          interrupts_noted() as interrupted):
        warnings.simplefilter("always")
        try:
            func(args)
        except KeyboardInterrupt:
            return _interrupted()
        except Exception as exc:  # noqa: BLE001 - one line for the user, traceback with --debug
            if interrupted():  # the Ctrl-C came back as another error
                return _interrupted()
            if isinstance(exc, (EvaluatorError, FileExistsError)):
                _report_warnings(caught)
                print(f"polytopo.evaluator: error: {exc}", file=sys.stderr)
                return 2
            if args.debug:
                raise
            print(f"polytopo.evaluator: unexpected failure: {type(exc).__name__}: {exc} (rerun with --debug)",
                  file=sys.stderr)
            return 1
    _report_warnings(caught)
    return 0


def _interrupted():
    print("polytopo.evaluator: interrupted; no output folder was written", file=sys.stderr)
    return 130


def _report_warnings(caught):
    """Print each warning once: a comparison whose workers read the files warns of the ground truth per method."""
    for message in dict.fromkeys(str(warning.message) for warning in caught):
        print(f"polytopo.evaluator: warning: {message}", file=sys.stderr)
