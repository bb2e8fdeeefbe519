"""Dask clusters for scale-out: open one, check it, map work over it, close it.

Both pure packages partition their work on a :class:`distributed.Client` (the
evaluator by image, the vectorizer by image or raster block). This module is the one
place that starts a ``distributed.LocalCluster``, connects to a running scheduler,
checks that the workers run the same PolyTopo as the client and maps a function over
partitions with results in order. ``dask`` and ``distributed`` are imported lazily, so
the single-process path never pays for them.

Inside QGIS ``sys.executable`` is the QGIS binary, not a Python interpreter: worker
processes of a local cluster are started with :func:`worker_python` instead.
"""

import concurrent.futures
import contextlib
import logging
import multiprocessing
import multiprocessing.resource_tracker
import multiprocessing.spawn
import os
import pickle
import shutil
import sys
import urllib.parse
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

from .errors import ClusterError, InvalidParameterError, MissingDependencyError
from .gc_pause import paused_gc
from .huge_pages import ADVICE_VARIABLE
from .machine import available_memory_bytes, usable_cores

__all__ = ["AUTO_CLUSTER_MIN_BYTES", "AUTO_WORKER_MEMORY_BYTES", "AUTO_WORKERS", "COMMAND_LINE",
           "LOCAL_WORKERS_PER_CORE", "SCHEDULER_TIMEOUT_S", "WORKER_BYTES_CHUNK", "auto_local_workers",
           "check_cluster_choice", "check_scheduler_address", "client_of", "client_starting", "fetch_kept",
           "fetched_kept", "require_open", "ClusterAsker", "local_workers_option", "map_partitions",
           "max_local_workers", "open_client", "require_distributed", "split_workers", "started_on_worker", "task_slots",
           "worker_bytes_started", "worker_python", "workers_or_auto_option", "write_worker_bytes"]

SCHEDULER_TIMEOUT_S = 10.0
"""Seconds to wait for a scheduler (and its first worker) to answer before giving up."""

LOCAL_CLUSTER_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    f"distributed.nanny.pre-spawn-environ.{ADVICE_VARIABLE}": "0",
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}
"""Dask configuration that local clusters run with (scheduler, nannies and workers).

* Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``. Setting that
  variable at all turns off glibc's adaptive mmap threshold, so every array above 128 KiB
  is mapped and unmapped afresh, page faults included: the evaluator's per-image work then
  takes 1.15-1.25x the CPU time it takes in one process (measured on the 4x benchmark set).
  Local workers therefore start without it.
* Workers start with ``NUMPY_MADVISE_HUGEPAGE=0``: no transparent-huge-page advice on
  NumPy's large arrays (:mod:`.huge_pages`). Where the starting process has the variable
  set, the workers inherit its value instead (:func:`_local_cluster_config`).
* Each worker samples the stack of its running task every 10 ms for the dashboard's
  *Profile* page, and the sampling thread takes the GIL from the partition each time: off.
* Every process checks every 20 ms whether its event loop is blocked (for the "event loop
  was unresponsive" warning): once a second is enough for that warning.

The last two made the 2-worker command line on the 16x benchmark set about 3 s shorter
(``benchmarks/README.md``, *Scale-out measurements*). ``docs/scale-out.md`` (*Worker environment*)
gives the same settings for ``dask worker``. None of them changes a number.
"""


@dataclass(frozen=True)
class ClusterAsker:
    """Who asks for a cluster, in the words of the message when Dask is missing.

    Attributes
    ----------
    options : str
        What the user set to ask for a cluster (``"--workers/--scheduler"``).
    how_to_install : str
        How that user installs ``dask`` and ``distributed`` (``"install them with ..."``).
    in_process : str
        How that user runs without a cluster instead (``"run with 0 workers ..."``).
    """

    options: str
    how_to_install: str
    in_process: str


#: The command lines' words (the default of :func:`require_distributed`).
COMMAND_LINE = ClusterAsker(
    "--workers/--scheduler", "install them with 'pip install -r requirements.txt' (dask and distributed are pinned "
    "there)", "run with 0 workers and no --scheduler")


def require_distributed(asker=COMMAND_LINE):
    """Import and return :mod:`distributed`, or fail saying how ``asker``'s user installs it.

    Parameters
    ----------
    asker : ClusterAsker
        Who asks (the command lines by default; the plugin passes its own words).

    Returns
    -------
    module
        ``distributed``.

    Raises
    ------
    MissingDependencyError
        ``dask`` or ``distributed`` cannot be imported.
    """
    try:
        import distributed
    except ImportError as exc:
        raise MissingDependencyError(
            f"Expected the packages 'dask' and 'distributed' for {asker.options} but they cannot be imported "
            f"({exc}); {asker.how_to_install}, or {asker.in_process}.") from exc
    return distributed


def worker_python():
    """Return the Python interpreter that local worker processes are started with.

    Returns
    -------
    str
        ``sys.executable`` when it is a Python interpreter of the running installation
        (inside ``sys.exec_prefix``); otherwise ``python3.X`` or ``python3`` of
        ``sys.exec_prefix``, or the ``python3`` on ``PATH``. Inside QGIS
        ``sys.executable`` is the QGIS binary, or whatever ``python3`` QGIS found on
        ``PATH`` (another installation, e.g. a pyenv shim, whose workers could not
        import QGIS's packages): both are passed over for the interpreter QGIS runs.

    Raises
    ------
    ClusterError
        When no Python interpreter can be found.
    """
    current = Path(os.path.abspath(sys.executable or ""))
    if (current.name.startswith("python") and current.is_file()
            and current.is_relative_to(os.path.abspath(sys.exec_prefix))):
        return str(current)
    for candidate in (Path(sys.exec_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}",
                      Path(sys.exec_prefix) / "bin" / "python3"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("python3")
    if found:
        return found
    raise ClusterError(
        f"Expected a Python interpreter to start Dask workers with but sys.executable is {sys.executable!r} "
        "and no python3 was found; give the address of a running scheduler instead (--scheduler).")


LOCAL_WORKERS_PER_CORE = 4
"""A local cluster gets at most this many worker processes per CPU core (:func:`max_local_workers`)."""


def max_local_workers():
    """The most worker processes a local cluster may start here: :data:`LOCAL_WORKERS_PER_CORE` per core.

    Each worker is a Python process with its own copy of the libraries (about 150 MB) and
    one thread; beyond a few per core they only contend for the cores and the memory.
    """
    return LOCAL_WORKERS_PER_CORE * (os.cpu_count() or 1)


def local_workers_option(text):
    """The ``--workers`` value of a command line: a whole number from 0 to :func:`max_local_workers`.

    Raises
    ------
    argparse.ArgumentTypeError
        Another value; the message gives the range and what to do beyond it.
    """
    import argparse

    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 but got {text!r}") from None
    try:
        _check_workers(workers)
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return workers


AUTO_WORKERS = "auto"
"""The ``--workers`` value that lets the evaluator choose (:func:`auto_local_workers`)."""

AUTO_CLUSTER_MIN_BYTES = 6_000_000
"""Input size (bytes, all inputs of a run) from which ``--workers auto`` starts a local cluster.

Below it a cluster's fixed cost (starting the worker processes, their imports, sending
the partitions) outweighs what the cores gain over one process, which spreads its
GIL-free kernels over the cores on threads (benchmarks/README.md, *Workers by default*)."""


AUTO_WORKER_MEMORY_BYTES = 512 * 2**20
"""Memory ``--workers auto`` counts per worker process (its libraries and a partition's share)."""


def auto_local_workers(input_bytes, cores=None, memory_bytes=None):
    """Worker processes ``--workers auto`` starts: one per core, or 0 (this process) where a cluster does not pay.

    Parameters
    ----------
    input_bytes : int
        Size of the run's inputs, bytes.
    cores : int, optional
        Usable cores (default :func:`.machine.usable_cores`).
    memory_bytes : int, optional
        Memory available (default :func:`.machine.available_memory_bytes`; unknown: no limit).

    Returns
    -------
    int
        0 on one core or for inputs under :data:`AUTO_CLUSTER_MIN_BYTES`, else the cores,
        at most one worker per :data:`AUTO_WORKER_MEMORY_BYTES` of available memory (0 when
        that leaves fewer than 2).

    Examples
    --------
    >>> auto_local_workers(50_000_000, cores=2, memory_bytes=2**34), auto_local_workers(1_000, cores=2)
    (2, 0)
    >>> auto_local_workers(50_000_000, cores=1), auto_local_workers(50_000_000, cores=64, memory_bytes=2**32)
    (0, 8)
    """
    cores = usable_cores() if cores is None else cores
    memory_bytes = available_memory_bytes() if memory_bytes is None else memory_bytes
    workers = cores if memory_bytes is None else min(cores, memory_bytes // AUTO_WORKER_MEMORY_BYTES)
    return workers if workers >= 2 and input_bytes >= AUTO_CLUSTER_MIN_BYTES else 0


def workers_or_auto_option(text):
    """A ``--workers`` value that may also be ``auto`` (:data:`AUTO_WORKERS`); else as :func:`local_workers_option`."""
    return AUTO_WORKERS if text.strip().lower() == AUTO_WORKERS else local_workers_option(text)


def _check_workers(workers):
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InvalidParameterError(f"Expected workers to be a whole number >= 0 but got {workers!r}.")
    limit = max_local_workers()
    if workers > limit:
        raise InvalidParameterError(
            f"Expected at most {limit} local workers ({LOCAL_WORKERS_PER_CORE} per core of the {os.cpu_count() or 1} "
            f"cores here) but got {workers}; more processes than that only compete for the cores and memory. For "
            "more workers start a cluster on more machines and pass its scheduler address (--scheduler).")


#: Dask transports whose addresses are ``PROTOCOL://HOST:PORT``.
_SCHEDULER_PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")


def check_scheduler_address(address):
    """Return a Dask scheduler address ``PROTOCOL://HOST:PORT``, or refuse it with what is wrong.

    Parameters
    ----------
    address : str
        ``tcp://HOST:PORT`` (or another Dask transport: ``tls``, ``ws``, ``wss``,
        ``ucx``); ``HOST:PORT`` alone means ``tcp://HOST:PORT``, as for Dask. HOST is a
        name, an IPv4 address or an IPv6 address in brackets; PORT is 1–65535.
        Surrounding blanks are ignored.

    Returns
    -------
    str
        The address with its protocol.

    Raises
    ------
    InvalidParameterError
        The address has another form.

    Examples
    --------
    >>> check_scheduler_address(" 10.0.0.5:8786 ")
    'tcp://10.0.0.5:8786'
    >>> check_scheduler_address("tcp://10.0.0.5")  # doctest: +IGNORE_EXCEPTION_DETAIL +ELLIPSIS
    Traceback (most recent call last):
    InvalidParameterError: Expected ... but got 'tcp://10.0.0.5': it has no port from 1 to 65535 after the host ...
    """
    text = str(address).strip()
    full = text if "://" in text else f"tcp://{text}"
    try:
        parts = urllib.parse.urlsplit(full)
    except ValueError:  # an unclosed IPv6 bracket
        parts = None
    try:
        port = None if parts is None else parts.port
    except ValueError:  # not a number, or outside 0–65535
        port = None
    if parts is None:
        problem = "its host is not a name, an IPv4 address or an IPv6 address in brackets"
    elif parts.scheme not in _SCHEDULER_PROTOCOLS:
        problem = f"its protocol {parts.scheme!r} is not one of {', '.join(_SCHEDULER_PROTOCOLS)}"
    elif not parts.hostname or " " in parts.netloc:
        problem = "it names no host"
    elif port is None or not 1 <= port <= 65535:
        problem = "it has no port from 1 to 65535 after the host (':8786' is Dask's default)"
    elif parts.path or parts.query or parts.fragment or parts.username:
        problem = "it has more than HOST:PORT after the protocol"
    else:
        return full
    raise InvalidParameterError(
        f"Expected a Dask scheduler address tcp://HOST:PORT (for example tcp://192.168.1.20:8786) but got "
        f"{text!r}: {problem}.")


def check_cluster_choice(workers=0, scheduler=None):
    """Check where a run's work goes: a local cluster, a running scheduler, or this process.

    Parameters
    ----------
    workers : int
        Worker processes of a local cluster; 0 for none.
    scheduler : str or None
        Address of a running scheduler (see :func:`check_scheduler_address`).

    Returns
    -------
    tuple
        ``(workers, scheduler)``, the address as :func:`check_scheduler_address` returns it.

    Raises
    ------
    InvalidParameterError
        ``workers`` is not a whole number >= 0 or exceeds :func:`max_local_workers`, both are
        given, or the address is malformed.
    """
    _check_workers(workers)
    if scheduler is not None and workers:
        raise InvalidParameterError(
            f"Expected either workers or a scheduler address but got both (workers={workers}, "
            f"scheduler={scheduler!r}); give one.")
    return workers, None if scheduler is None else check_scheduler_address(scheduler)


def _worker_version():
    from ..version import __version__

    return __version__


def _check_versions(client):
    """Refuse workers whose PolyTopo version differs from the client's."""
    from ..version import __version__

    try:
        found = client.run(_worker_version)
    except Exception as exc:  # a worker without polytopo cannot even unpickle the call
        raise ClusterError(
            f"Expected every Dask worker to import polytopo {__version__} but asking them failed: {exc}. "
            "Install the same PolyTopo on every worker.") from exc
    wrong = {address: version for address, version in found.items() if version != __version__}
    if wrong:
        address, version = sorted(wrong.items())[0]
        raise ClusterError(
            f"Expected every Dask worker to run polytopo {__version__} (the client's version) but worker "
            f"{address} runs polytopo {version} ({len(wrong)} of {len(found)} workers differ). Install the "
            "same version everywhere.")


@contextlib.contextmanager
def open_client(workers=0, scheduler=None, *, timeout_s=SCHEDULER_TIMEOUT_S):
    """Yield a ``distributed.Client`` for the run, or None to run in this process.

    Parameters
    ----------
    workers : int
        Worker processes of a ``LocalCluster`` started for the run and closed after it
        (one thread each); 0 with no ``scheduler`` runs in this process.
    scheduler : str or None
        Address of a running scheduler (``tcp://HOST:PORT``, started with
        ``dask scheduler`` and ``dask worker``); excludes ``workers``.
    timeout_s : float
        Seconds to wait for the scheduler and for at least one worker.

    Yields
    ------
    distributed.Client or None

    Raises
    ------
    ClusterError
        The scheduler does not answer within ``timeout_s``, it has no worker, or a
        worker runs another PolyTopo version.
    InvalidParameterError
        ``workers`` is negative, both ``workers`` and ``scheduler`` are given, or the
        address is not ``tcp://HOST:PORT`` (:func:`check_cluster_choice`).
    MissingDependencyError
        A cluster is asked for but ``dask`` or ``distributed`` cannot be imported
        (:func:`require_distributed`, in the command lines' words).
    """
    workers, scheduler = check_cluster_choice(workers, scheduler)
    if scheduler is None and workers == 0:
        yield None
        return
    distributed = require_distributed()
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            stack.callback(_reap_helpers)  # runs last: after the cluster and its workers are gone
            stack.callback(multiprocessing.set_executable, multiprocessing.spawn.get_executable())
            multiprocessing.set_executable(worker_python())
            stack.enter_context(_dask_config(_local_cluster_config()))
            # Worker logs stay quiet (shutdown races log heartbeat tracebacks); a failure
            # reaches the caller as an exception from map_partitions instead.
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL))
            address = cluster.scheduler_address
        else:
            address = scheduler
        try:
            client = stack.enter_context(distributed.Client(address, timeout=timeout_s, set_as_default=False))
        except (OSError, TimeoutError) as exc:
            raise ClusterError(
                f"Expected a Dask scheduler answering at {address} but got no answer within {timeout_s:g} s "
                f"({exc}). Start one with 'dask scheduler' and 'dask worker {address}', or use --workers N "
                "for a local cluster.") from exc
        try:
            client.wait_for_workers(1, timeout=timeout_s)
        except TimeoutError as exc:
            raise ClusterError(
                f"Expected at least one Dask worker at {address} but none joined within {timeout_s:g} s; "
                f"start one with 'dask worker {address}'.") from exc
        _check_versions(client)
        client.direct_to_workers = scheduler is None or _workers_reachable(client)
        yield client


WORKER_PROBE_TIMEOUT_S = 2.0
"""Seconds the client waits for each worker of a running cluster to accept a connection (:func:`_workers_reachable`)."""


def _workers_reachable(client, timeout_s=WORKER_PROBE_TIMEOUT_S):
    """Whether this process can connect to every worker of ``client``'s cluster now.

    Where it can, results come straight from the workers (``direct_to_workers``) instead
    of through the scheduler, which then relays no result's bytes. A client that reaches
    only the scheduler (a tunnel to it, workers behind a firewall) keeps the relay: a
    direct fetch would wait for a connection timeout before falling back to it.
    """
    from distributed.comm import connect

    async def probe(addresses):
        for address in addresses:
            comm = await connect(address, timeout=timeout_s)
            await comm.close()

    try:
        client.sync(probe, list(client.scheduler_info().get("workers", {})))
    except (OSError, TimeoutError):
        return False
    return True


def _reap_helpers():
    """End and reap the helper processes a local cluster leaves: nothing of the run outlives it.

    multiprocessing starts a resource tracker with the first worker process and leaves it
    running until the parent exits, when it would linger unreaped for a moment. Once the
    cluster's close has joined its workers and no other worker process of this process is
    left (another cluster may still run), the tracker is stopped and reaped.
    """
    if multiprocessing.active_children():  # reaps the ended ones; another cluster's workers still use the tracker
        return
    stop = getattr(multiprocessing.resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()


@contextlib.contextmanager
def client_starting(workers=0, scheduler=None, **options):
    """Start :func:`open_client` in a background thread; yield a function that waits for its client.

    Starting a local cluster takes seconds (each worker process imports Python, numpy,
    shapely and Dask); the caller meanwhile does its own work in this thread (loading
    the inputs), then calls the yielded function.

    Parameters
    ----------
    workers, scheduler, **options
        As for :func:`open_client` (``timeout_s``).

    Yields
    ------
    callable
        Without arguments; returns the ``distributed.Client`` or None (as
        :func:`open_client` yields) and raises what :func:`open_client` raised. The
        cluster is closed when the context ends, also when the function was never called.
    """
    with contextlib.ExitStack() as stack, concurrent.futures.ThreadPoolExecutor(1) as pool:
        opening = pool.submit(stack.enter_context, open_client(workers, scheduler, **options))
        yield opening.result


def map_partitions(client, func, partitions, *, names=None, progress=None, retries=1, packed=False, keep=False,
                   in_flight=None, at_once=False):
    """Return ``[func(p) for p in partitions]``, computed on the cluster's workers.

    Parameters
    ----------
    client : distributed.Client or None
        None runs every partition in this process, in order.
    func : callable
        A module-level function (workers import it by name).
    partitions : sequence
        One argument per call; each is sent to one worker.
    names : sequence of str, optional
        A name per partition for messages (e.g. image ids); default ``"partition i"``.
    progress : callable, optional
        ``progress(done, total)`` after each finished partition; when it raises (the
        caller's cancel check, :mod:`.cancel`), the partitions still running are canceled.
    retries : int
        How often Dask retries a partition whose worker died.
    packed : bool
        Send each partition, and its result back, as one pickled byte string. Dask sends
        every numpy array inside an argument or result as a frame of its own; objects made
        of many small arrays (instance sets, ring tables: tens of thousands per
        partition) then cost the client seconds of CPU, one pickled string costs
        milliseconds. Packed partitions must not hold futures (Dask cannot see them).
    keep : bool
        ``func`` returns ``(result, kept)``: only ``result`` comes back (packed, with
        ``packed``); ``kept`` stays in the memory of the worker that made it, for later tasks
        (:func:`fetch_kept`, :func:`write_worker_bytes`) to read where it lies. Without a
        client, ``kept`` is the value itself.
    in_flight : int, optional
        ``packed`` only: partitions submitted but not yet finished, at most (default two
        per thread of the connected workers, at least 4); the next is submitted as one finishes, in order.
        Each submitted partition's bytes are held in the task graph until its task is done.
    at_once : bool
        ``packed`` only: submit every partition at once, in one graph, and let the scheduler
        hand them to the workers, in the order given, as their threads free up (instead of
        ``in_flight`` at a time, each next one to the worker that has just finished one). For small
        partitions (plans of what a worker reads): a partition then costs the client and the
        scheduler a third of the CPU (no message per partition both ways), but the
        scheduler holds every partition's bytes until its task is done (with ``keep``, for
        as long as its kept value lives: Dask makes a kept value lost with its worker again).

    Returns
    -------
    list
        The results in the order of ``partitions``; the client holds only these. With
        ``keep``, ``(results, kept)``: ``kept`` a list of :class:`distributed.Future`
        (each released when dropped) in the same order.

    Raises
    ------
    ClusterError
        A partition failed on its worker (the message names it); the original
        exception is chained. Errors of PolyTopo's own kinds are raised unchanged.
    """
    partitions = list(partitions)
    names = [f"partition {i}" for i in range(len(partitions))] if names is None else list(map(str, names))
    total = len(partitions)
    if client is None:
        results = []
        for done, part in enumerate(partitions, 1):
            results.append(func(part))
            if progress is not None:
                progress(done, total)
        return ([r for r, _ in results], [k for _, k in results]) if keep else results
    distributed = require_distributed()
    if keep and not packed:
        raise ValueError("Expected packed=True with keep=True: kept values stay with packed partitions only")
    if at_once and not packed:
        raise ValueError("Expected packed=True with at_once=True: partitions go at once as packed bytes only")
    if at_once:
        return _gathered(distributed, client, _submitted_at_once(client, func, partitions, keep, retries), None, names,
                         packed, progress, total, keep)
    if not packed:
        futures = client.map(func, partitions, pure=False, retries=retries)
        return _gathered(distributed, client, [(f, None, None) for f in futures], None, names, packed, progress,
                         total, keep)
    submit = _packed_submitter(client, func, partitions, keep, retries)
    # A few partitions in flight per worker: the task graph holds each partition's bytes
    # until its task is done, and a local cluster's scheduler runs in this process.
    first = [submit() for _ in range(min(total, in_flight or _default_in_flight(client)))]
    return _gathered(distributed, client, first, submit, names, packed, progress, total, keep)


def _default_in_flight(client):
    """Partitions submitted at once: two per task slot of the workers now connected (at least 4)."""
    return max(4, 2 * task_slots(client))


def task_slots(client):
    """Tasks the cluster of ``client`` runs at once: the threads of all its workers now connected (at least 1)."""
    return max(1, sum(worker.get("nthreads", 1) for worker in client.scheduler_info().get("workers", {}).values()))


def _packed_submitter(client, func, partitions, keep, retries):
    """A function that submits the next partition, packed, and returns ``(result future, made, None)``.

    Its argument, ``workers``, names the workers the partition should run on (the one
    that has just finished a partition), or None for the scheduler's choice.

    With ``keep`` the result future is ``func``'s result alone, taken where ``made`` (the
    whole return value's future) lies; without, ``made`` is None. Its kept value is taken
    out later (:func:`_detached_kept`), so that no kept value holds the partition's bytes in
    the scheduler. It returns None once every partition is submitted.
    """
    token = uuid.uuid4().hex
    pending = enumerate(partitions)

    def submit(workers=None):
        i, part = next(pending, (None, None))
        if i is None:
            return None
        key = f"{func.__name__}-{token}-{i}"
        with warnings.catch_warnings():
            # The partitions travel in the task graph on purpose (a scattered partition
            # would pin its task to one worker); Dask warns about graphs above 10 MB.
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            made = client.submit(_run_packed, func, _pack(part), keep, retries=retries, key=key, **_placement(workers))
        if not keep:
            return made, None, None
        return client.submit(_item, made, 0, retries=retries, key=f"result-{key}"), made, None

    return submit


def _submitted_at_once(client, func, partitions, keep, retries):
    """Submit every partition, packed, in one graph; return ``(result future, None, kept future or None)`` for each.

    With ``keep``, each partition's result and kept value are tasks of the same graph that
    take them out of its value where it lies: the kept value depends on the partition's
    task, so Dask makes both again if the worker holding it dies, and the scheduler holds
    the partition's bytes for as long as the kept value lives.
    """
    token = uuid.uuid4().hex
    graph, results, kept = {}, [], []
    # Dask runs tasks of equal standing in descending order of their keys: the keys count
    # down, so the workers take the partitions in the order given (as a plan means them)
    digits = len(str(len(partitions)))
    for i, part in enumerate(partitions):
        key = f"{func.__name__}-{token}-{len(partitions) - 1 - i:0{digits}d}"
        graph[key] = (_run_packed, func, _pack(part), keep)
        if keep:
            graph[f"result-{key}"], graph[f"kept-{key}"] = (_item, key, 0), (_item, key, 1)
            results.append(f"result-{key}")
            kept.append(f"kept-{key}")
        else:
            results.append(key)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        futures = client.get(graph, results + kept, sync=False, retries=retries)
    kept_futures = futures[len(results):] if keep else [None] * len(results)
    return [(result, None, kept_future) for result, kept_future in zip(futures[:len(results)], kept_futures)]


def _gathered(distributed, client, submitted, submit_next, names, packed, progress, total, keep):
    """Collect the results of the ``submitted`` triples in partition order, submitting the next as each finishes.

    ``submitted``: ``(result future, made future or None, kept future or None)`` per
    partition (:func:`_packed_submitter`, :func:`_submitted_at_once`).

    ``submit_next(workers)`` (None: everything is submitted already) submits the next
    partition (None when none is left) to the worker that has just finished one: Dask's scheduler, left to itself, may queue
    the last partitions behind each other on one worker while another waits idle
    (measured: one of two workers idle for 1.7 s of a 4.5 s run).

    With ``keep``, each partition's kept value that did not come with it is taken out of its
    ``made`` future as soon as its result is in (:func:`_detached_kept`), so that no kept
    value depends on a task whose specification holds the partition's bytes.
    """
    futures = [f for f, _, _ in submitted]
    made = [m for _, m, _ in submitted]
    index = {future.key: i for i, future in enumerate(futures)}
    results, kept = [None] * total, [k for _, _, k in submitted] + [None] * (total - len(submitted))
    # with their results: the results of partitions that finish together come in one fetch
    running = distributed.as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
    holding = {}  # partition -> tries, while its kept value has not yet read its made
    try:
        for done, (future, value) in enumerate(running, 1):
            i = index.pop(future.key)
            if future.status == "error":
                _result_of(future, names[i])  # raises its error, naming the partition
            results[i], holders = value, None
            if packed:
                # where the partition ran: its kept value is taken there, and the next partition goes there
                packed_result, where = results[i]
                results[i], holders = pickle.loads(packed_result), [where]  # nosec B301: pickled by this run's workers
            future.release()
            if keep and made[i] is not None:
                kept[i] = _detached_kept(client, made[i], 0, holders)
                holding[i] = 0
                _take_kept(client, holding, made, kept)
            follow = submit_next(holders) if submit_next else None
            if follow is not None:
                index[follow[0].key] = len(futures)
                kept[len(futures)] = follow[2]
                futures.append(follow[0])
                made.append(follow[1])
                running.add(follow[0])
            if progress is not None:
                progress(done, total)
        while holding:
            for _ in distributed.as_completed([kept[i] for i in holding], loop=client.loop):
                pass
            _take_kept(client, holding, made, kept)
    except BaseException:
        client.cancel(futures + [f for f in made + kept if f is not None])
        raise
    return (results, kept) if keep else results


KEPT_TRIES = 3
"""How often a kept value is taken from its partition's value (:func:`_detached_kept`) before its error stands."""


def _take_kept(client, holding, made, kept):
    """Release the ``made`` futures whose kept value is taken; take again those that missed it (up to :data:`KEPT_TRIES`)."""
    for i, tries in list(holding.items()):
        if not kept[i].done():
            continue
        if kept[i].status == "error" and tries + 1 < KEPT_TRIES:
            kept[i] = _detached_kept(client, made[i], tries + 1)
            holding[i] = tries + 1
            continue
        made[i].release()
        made[i] = None
        del holding[i]


def _holders(client, future):
    """The addresses of the workers holding ``future``'s value, or None when none is known."""
    return list(client.who_has([future]).get(future.key) or ()) or None


def _detached_kept(client, made, attempt, holders=None):
    """A future of ``made``'s kept value (``made[1]``) that does not depend on ``made`` in the task graph.

    It runs where ``made`` lies now and reads it from that worker's memory (a replica that
    Dask dropped meanwhile makes it fail; the caller then takes it again). Without the
    dependency, ``made`` (whose specification holds the partition's bytes) is forgotten
    once this has run, instead of being kept for as long as the kept value lives; the
    price is that a kept value lost with its worker cannot be made again (reading it then
    fails with a :class:`ClusterError` that says so). ``holders``: where ``made`` lies, when
    the caller has just asked.
    """
    holders = holders or _holders(client, made)
    return client.submit(_kept_of, made.key, pure=False, key=f"kept-{made.key}" + (f"-{attempt}" if attempt else ""),
                         **_placement(holders))


def _kept_of(made_key):
    """Worker side of :func:`_detached_kept`: the kept half of the value ``made_key`` in this worker's memory."""
    from distributed import get_worker

    data = get_worker().data
    if made_key not in data:
        raise ClusterError(f"Expected the value kept from {made_key} on its worker but it is not there: the worker "
                           "that held it left the cluster after its partition was done; evaluate again")
    return data[made_key][1]


def fetch_kept(kept, func, *args, name):
    """``func(kept, *args)`` computed where ``kept`` lies, and its (small) result brought here.

    Parameters
    ----------
    kept : distributed.Future or object
        A value :func:`map_partitions` kept on a worker (``keep=True``), or the value itself
        (a run without a client): then ``func`` runs in this process.
    func : callable
        A module-level function.
    name : str
        What is fetched, for messages.

    Raises
    ------
    ClusterError
        ``func`` failed on the worker, or the worker holding ``kept`` is gone.
    """
    return next(fetched_kept([kept], func, *args, names=[name]))


def fetched_kept(kept_values, func, *args, names, sizes=None, in_flight_size=None, each=None):
    """Yield ``func(kept, *args, *extra)`` for each of ``kept_values`` in order, each computed where it lies.

    :func:`fetch_kept` for many values: every value's task is sent at once (one graph), and
    the results come in groups whose sizes add up to at most ``in_flight_size`` (always
    at least the one read next), each group in one fetch: small values come many at a
    time, large ones one at a time.

    Parameters
    ----------
    kept_values : sequence
        Values :func:`map_partitions` kept on workers, or the values themselves (a run
        without a client: ``func`` runs in this process, one value at a time).
    func : callable
        A module-level function.
    names : sequence of str
        What each fetch brings, for messages.
    sizes : sequence of float, optional
        What each result weighs (rows, bytes: any unit); default 1 each.
    in_flight_size : float, optional
        Most size fetched in one group (one fetch), in the unit of ``sizes``; default: one value at a time.
    each : sequence of tuple, optional
        ``extra``: more arguments for each value, after ``args``; default none.

    Raises
    ------
    ClusterError
        As :func:`fetch_kept`, when the failed value's turn comes.
    """
    client = client_of(kept_values)
    each = [()] * len(kept_values) if each is None else list(each)
    if client is None:
        for kept, extra in zip(kept_values, each):
            yield func(kept, *args, *extra)
        return
    count = len(kept_values)  # at least one: a client was found among them
    sizes = [1.0] * count if sizes is None else list(sizes)
    budget = 1.0 if in_flight_size is None else in_flight_size
    require_open(client, names[0])
    # one graph for all: each value's task is a reference into what its worker holds, or writes a file there
    columns = [[value] * count for value in args] + [list(column) for column in zip(*each)]
    futures = client.map(func, list(kept_values), *columns, pure=False)
    try:
        start = 0
        while start < count:
            end, weight = start + 1, sizes[start]
            while end < count and weight + sizes[end] <= budget:
                weight += sizes[end]
                end += 1
            group = futures[start:end]
            try:
                values = client.gather(group)  # one fetch for the group
            except Exception:
                for future, name in zip(group, names[start:end]):
                    if future.status == "error":
                        _result_of(future, name)  # raises the first failed one's error, naming it
                raise
            for k in range(start, end):
                futures[k].release()
                futures[k] = None
            start = end
            yield from values
    finally:  # a caller that stops reading (an error, a cancel) leaves nothing running
        left = [future for future in futures if future is not None]
        if left and client.status == "running":
            client.cancel(left)


def started_on_worker(client, func, *args, name, workers=None):
    """Start ``func(*args)`` on a worker of ``client`` now; return a function that waits for its (small) result.

    The client goes on with other work while the worker computes; calling the returned
    function (once) brings the result here. Futures among ``args`` arrive as their values.

    Parameters
    ----------
    client : distributed.Client
    func : callable
        A module-level function.
    name : str
        What is computed, for messages.
    workers : list of str, optional
        Workers to run it on, loosely (another takes it if none of them can).

    Raises
    ------
    ClusterError
        ``client`` is closed; from the returned function: ``func`` failed on the worker
        (PolyTopo's own errors are raised unchanged), or its worker is gone.
    """
    require_open(client, name)
    future = client.submit(func, *args, pure=False, **_placement(workers))

    def result():
        try:
            return _result_of(future, name)
        finally:
            future.release()

    return result


def require_open(client, name):
    """Raise :class:`ClusterError` when ``client`` is closed: what its workers kept is gone with it."""
    if client.status in ("closing", "closed"):
        raise ClusterError(f"Expected the Dask client that {name} depends on to be open, but it is closed: values "
                           "kept on its workers are gone; write the outputs before closing the client")


def client_of(values):
    """The :class:`distributed.Client` of the first future among ``values``; None when there is none."""
    for value in values:
        if type(value).__name__ == "Future" and hasattr(value, "client"):
            return value.client
    return None


def _item(value, index):
    """``value[index]`` (runs on the worker that holds ``value``)."""
    return value[index]


def _result_of(future, name):
    """The result of a finished ``future``; a worker's failure as :class:`ClusterError`.

    Errors of PolyTopo's own kinds are raised unchanged (they name their cause).
    """
    try:
        value = future.result()
    except Exception as exc:
        if _is_own_error(exc):
            raise
        raise ClusterError(
            f"Expected {name} to finish on its Dask worker but it failed: {type(exc).__name__}: {exc}") from exc
    return value


WORKER_BYTES_CHUNK = 16 * 2**20
"""Bytes of each piece :func:`write_worker_bytes` fetches from the worker."""


def write_worker_bytes(client, func, argument, handle, *, name, chunk_bytes=WORKER_BYTES_CHUNK, packed=True):
    """Run ``func(argument)``, which returns bytes, on a worker and write them to ``handle`` piece by piece.

    :func:`worker_bytes_started` and then its writer, at once.

    Returns
    -------
    int
        Bytes written.
    """
    return worker_bytes_started(client, func, argument, name=name, chunk_bytes=chunk_bytes, packed=packed)(handle)


def worker_bytes_started(client, func, argument, *, name, chunk_bytes=WORKER_BYTES_CHUNK, packed=True, workers=None):
    """Start ``func(argument)``, which returns bytes, on a worker now; return ``write(handle)`` for its bytes.

    The client goes on with other work while the worker computes. ``write(handle)`` (call
    it once) waits for the bytes and writes them to ``handle`` piece by piece: they stay on
    the worker and the client fetches ``chunk_bytes`` at a time, so it never holds more
    than one piece of a large output (a GeoPackage of hundreds of MB). It returns the
    number of bytes written.

    Parameters
    ----------
    client : distributed.Client
    func : callable
        A module-level function (workers import it by name) returning ``bytes``.
    argument : object
        Its one argument, sent pickled as one byte string (``packed``), or as Dask sends it:
        then large numpy arrays in it travel as frames of their own, without a copy here,
        and futures in its lists and tuples (values :func:`map_partitions` kept on workers)
        arrive as their values, moved from worker to worker.
    name : str
        What the task makes, for messages (``"the GeoPackage"``).
    chunk_bytes : int
    packed : bool
        Pickle ``argument`` into one byte string first (many small arrays: see
        :func:`map_partitions`); False for a few large ones (the copy would double them).
    workers : list of str, optional
        Workers to run it on, loosely (another takes it if none of them can).

    Raises
    ------
    ClusterError
        ``client`` is closed; from ``write``: ``func`` failed on its worker (the message
        names ``name``).
    """
    require_distributed()
    require_open(client, name)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        made = client.submit(_run_to_bytes, func, _pack(argument) if packed else argument, packed, pure=False,
                             key=f"{func.__name__}-{uuid.uuid4().hex}", **_placement(workers))

    def write(handle):
        written = 0
        try:
            while True:
                piece = client.submit(_byte_range, made, written, chunk_bytes, pure=False)
                data = _result_of(piece, name)
                piece.release()
                handle.write(data)
                written += len(data)
                if len(data) < chunk_bytes:
                    return written
        finally:
            client.cancel([made])

    return write


def split_workers(client):
    """The workers of ``client`` split for two long tasks at once: ``([one], the others)``.

    ``(None, None)`` with fewer than two workers (the tasks then share the one there is).
    """
    workers = sorted(client.scheduler_info().get("workers", {}))
    return ([workers[0]], workers[1:]) if len(workers) > 1 else (None, None)


def _placement(workers):
    """``client.submit`` keywords that place a task loosely on ``workers`` (none: anywhere)."""
    return {} if not workers else {"workers": list(workers), "allow_other_workers": True}


@paused_gc()
def _run_to_bytes(func, argument, packed):
    """Worker side of :func:`write_worker_bytes`: ``func`` of the argument (unpickled when ``packed``), as it returns it."""
    return func(pickle.loads(argument) if packed else argument)  # nosec B301: bytes this run pickled on its own client


def _byte_range(data, offset, size):
    """``data[offset:offset + size]`` (runs on the worker that holds ``data``)."""
    return bytes(data[offset:offset + size])


def _local_cluster_config():
    """:data:`LOCAL_CLUSTER_CONFIG` for a cluster started now: without the huge-page setting where the user set it."""
    if ADVICE_VARIABLE not in os.environ:
        return LOCAL_CLUSTER_CONFIG
    return {key: value for key, value in LOCAL_CLUSTER_CONFIG.items() if not key.endswith(f".{ADVICE_VARIABLE}")}


def _dask_config(settings):
    """``dask.config.set(settings)`` (a context manager), importing dask only when a cluster is asked for."""
    import dask.config

    return dask.config.set(settings)


def _pack(value):
    """``value`` pickled into one byte string (its arrays in band, so it travels as one frame)."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


@paused_gc()
def _run_packed(func, packed, keep=False):
    """Worker side of a packed partition: unpickle it, run ``func``, pickle the result.

    Returns ``(pickled result, this worker's address)``: the client places the next
    partition, and the kept value's task, there without asking the scheduler. With
    ``keep``, ``func`` returns ``(result, kept)`` and this ``((pickled result, address),
    kept)``. The cyclic garbage collector is held off meanwhile (:mod:`.gc_pause`).
    """
    from distributed import get_worker

    value = func(pickle.loads(packed))  # nosec B301: bytes this run pickled on its own client
    address = get_worker().address
    return ((_pack(value[0]), address), value[1]) if keep else (_pack(value), address)


def _is_own_error(exc):
    """Tell whether ``exc`` is one of PolyTopo's own errors (any package), which name their cause."""
    return type(exc).__module__.split(".")[0] == __name__.split(".")[0]
