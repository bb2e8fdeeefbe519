"""Peak resident memory of a process, and a Dask worker preload that records it for each worker.

As a preload (``DASK_DISTRIBUTED__WORKER__PRELOAD='["…/peak_memory.py"]'`` in the
environment of the command that starts the workers, with ``POLYTOPO_PEAK_DIR`` naming a
folder), every worker writes its peak resident memory (KiB) to ``worker-PID`` in that
folder when it closes, so a benchmark can read the peaks of worker processes that a
command line started and closed itself (:func:`read_worker_peaks`).
"""

import os
import resource
from pathlib import Path

__all__ = ["PEAK_DIR_ENV", "peak_rss_mib", "preload_environment", "read_worker_peaks", "dask_teardown"]

PEAK_DIR_ENV = "POLYTOPO_PEAK_DIR"


def peak_rss_mib():
    """Peak resident memory of the calling process, MiB (``VmHWM`` where /proc has it, else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def preload_environment(folder):
    """Environment variables that make Dask workers started under them record their peaks in ``folder``."""
    return {PEAK_DIR_ENV: str(folder), "DASK_DISTRIBUTED__WORKER__PRELOAD": f'["{Path(__file__).resolve()}"]'}


def read_worker_peaks(folder):
    """Peak resident memory (MiB) of every worker that recorded one in ``folder``, by process id."""
    return {int(path.name.split("-", 1)[1]): int(path.read_text()) / 1024.0
            for path in sorted(Path(folder).glob("worker-*"))}


def dask_teardown(worker):
    """Dask preload hook: write this worker's peak (KiB) to ``$POLYTOPO_PEAK_DIR/worker-PID``."""
    folder = os.environ.get(PEAK_DIR_ENV)
    if folder:
        Path(folder, f"worker-{os.getpid()}").write_text(str(round(peak_rss_mib() * 1024)))
