"""Real Dask clusters: a 2-process LocalCluster, ordered results, named failures, version checks."""

import os
import signal
import time
from pathlib import Path

import pytest
from numpy_advice import huge_page_advice
from reliability import case

from polytopo.core.cluster import fetch_kept, fetched_kept, map_partitions, open_client, worker_python
from polytopo.core.errors import ClusterError, InvalidParameterError


def square(x):
    return x * x


def fail_on_three(x):
    if x == 3:
        raise ZeroDivisionError("three is not allowed")
    return x


def square_keeping_bytes(x):
    """A small result and a large value (1 MiB) that stays where it was made."""
    return x * x, bytes([x]) * (1 << 20)


def first_byte_keeping_all(part):
    return part[0], part


def kept_size_and_worker(value):
    from distributed import get_worker

    return len(value), value[0], get_worker().address


def pretend_other_version():
    import polytopo.version

    polytopo.version.__version__ = "0.0.0-other"
    return polytopo.version.__version__


@pytest.fixture(scope="module")
def local_client():
    with open_client(workers=2) as client:
        yield client


def test_zero_workers_without_scheduler_runs_in_process():
    with open_client(0) as client:
        assert client is None
        assert map_partitions(client, square, [1, 2, 3]) == [1, 4, 9]


def test_local_cluster_has_two_worker_processes_and_keeps_order(local_client):
    assert len(local_client.scheduler_info()["workers"]) == 2
    seen = []
    result = map_partitions(local_client, square, range(20), progress=lambda d, t: seen.append((d, t)))
    assert result == [x * x for x in range(20)]
    assert seen[-1] == (20, 20) and len(seen) == 20


def test_a_failing_partition_is_named(local_client):
    with pytest.raises(ClusterError, match=r"c to finish .* ZeroDivisionError: three is not allowed"):
        map_partitions(local_client, fail_on_three, [1, 2, 3], names=["a", "b", "c"])


def test_an_unreachable_scheduler_fails_within_the_timeout():
    start = time.monotonic()
    with pytest.raises(ClusterError, match="Expected a Dask scheduler answering at tcp://127.0.0.1:9"):
        with open_client(scheduler="tcp://127.0.0.1:9", timeout_s=2):
            pass
    assert time.monotonic() - start < 10


def test_workers_and_scheduler_together_are_refused():
    with pytest.raises(InvalidParameterError, match="either workers or a scheduler"):
        with open_client(2, "tcp://127.0.0.1:8786"):
            pass


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_worker_counts_are_refused(bad):
    with pytest.raises(InvalidParameterError, match="workers to be a whole number"):
        with open_client(bad):
            pass


def test_worker_python_is_an_interpreter():
    assert "python" in worker_python().rsplit("/", 1)[-1]


def test_a_worker_with_another_version_is_refused():
    from polytopo import __version__
    from polytopo.core.cluster import _check_versions

    with open_client(workers=1) as client:
        client.run(pretend_other_version)
        with pytest.raises(ClusterError, match=rf"polytopo {__version__} .* runs polytopo 0.0.0-other"):
            _check_versions(client)


def environment_variable(name):
    import os

    return os.environ.get(name)


def test_local_workers_start_without_the_malloc_trim_threshold(local_client):
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_, which slows numpy's large arrays; local workers go without it."""
    seen = local_client.run(environment_variable, "MALLOC_TRIM_THRESHOLD_")
    assert len(seen) == 2
    assert set(seen.values()) == {None}


def test_local_workers_start_without_numpys_huge_page_advice(local_client):
    """Transparent huge pages on short-lived large arrays can stall in the kernel; local workers go without."""
    assert set(local_client.run(environment_variable, "NUMPY_MADVISE_HUGEPAGE").values()) == {"0"}
    assert set(local_client.run(huge_page_advice).values()) == {False}


def test_local_workers_inherit_a_huge_page_setting_the_user_made(monkeypatch):
    """A NUMPY_MADVISE_HUGEPAGE set where the cluster starts reaches the workers unchanged."""
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    with open_client(workers=1) as client:
        assert set(client.run(environment_variable, "NUMPY_MADVISE_HUGEPAGE").values()) == {"1"}
        assert set(client.run(huge_page_advice).values()) == {True}


def dask_setting(name):
    import dask.config

    return dask.config.get(name)


def worker_profile_samples(dask_worker):
    """Whether the worker runs its stack sampler, and the samples it has taken since its last cycle."""
    return "profile" in dask_worker.periodic_callbacks, dask_worker.profile_recent["count"]


def test_local_workers_run_without_the_stack_sampler_and_with_a_slow_tick(local_client):
    """The 10 ms stack sampler and the 20 ms loop tick take the GIL from partitions; local clusters turn them down."""
    assert set(local_client.run(dask_setting, "distributed.worker.profile.enabled").values()) == {False}
    assert set(local_client.run(dask_setting, "distributed.admin.tick.interval").values()) == {"1s"}
    local_client.submit(time.sleep, 0.3, pure=False).result()
    assert set(local_client.run(worker_profile_samples).values()) == {(False, 0)}


def test_a_large_partition_travels_without_a_dask_warning(local_client, recwarn):
    parts = [bytes(6 << 20) for _ in range(2)]
    assert map_partitions(local_client, len, parts, packed=True) == [6 << 20] * 2
    assert not [w for w in recwarn if "large graph" in str(w.message)]


def test_kept_values_stay_on_the_worker_that_made_them(local_client):
    """Only the small results come back; each kept value is read where it lies, until released."""
    results, kept = map_partitions(local_client, square_keeping_bytes, [1, 2, 3, 4], packed=True, keep=True)
    assert results == [1, 4, 9, 16] and len(kept) == 4
    holders = local_client.who_has(kept)
    read = [fetch_kept(k, kept_size_and_worker, name=f"value {n}") for n, k in enumerate(kept)]
    assert [(size, first) for size, first, _ in read] == [(1 << 20, n) for n in (1, 2, 3, 4)]
    # read on the worker that holds it: nothing was moved to another one, nothing to the client
    assert [where for _, _, where in read] == [holders[k.key][0] for k in kept]
    del kept
    deadline = time.monotonic() + 10
    while any(key.startswith("kept-") for key in local_client.who_has()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [key for key in local_client.who_has() if key.startswith("kept-")]


def slow_square(x):
    time.sleep(0.05)
    return x * x


def slow_square_keeping_bytes(x):
    time.sleep(0.05)
    return square_keeping_bytes(x)


def _tasks_named(client, prefix, released=True):
    """Tasks of the scheduler whose key starts with ``prefix``; without ``released``, only those not released
    (waiting, running or holding a value), not those kept as a kept value's lineage."""
    return client.run_on_scheduler(lambda dask_scheduler: sum(
        1 for key, task in dask_scheduler.tasks.items()
        if str(key).startswith(prefix) and (released or task.state != "released")))


@pytest.mark.parametrize("keep", [False, True])
def test_packed_partitions_are_submitted_a_few_at_a_time(local_client, keep):
    """At most ``in_flight`` partitions are in the task graph at once; the results keep their order."""
    func = slow_square_keeping_bytes if keep else slow_square
    seen = []
    out = map_partitions(local_client, func, range(9), packed=True, keep=keep, in_flight=3, progress=lambda done, total:
                         seen.append(_tasks_named(local_client, func.__name__, released=False)))
    results = out[0] if keep else out
    assert results == [x * x for x in range(9)] and len(seen) == 9
    # counted before the next one is submitted; with keep, a partition's value is held until its result and
    # its kept value are taken from it, so one or two more may be counted
    assert 1 <= max(seen) <= (6 if keep else 3)
    if keep:
        assert [fetch_kept(k, len, name="kept") for k in out[1]] == [1 << 20] * 9


def timed_nap(x):
    """Sleeps 0.4 s; returns when it started and ended (seconds of the machine's monotonic clock)."""
    started = time.monotonic()
    time.sleep(0.4)
    return started, time.monotonic()


def test_every_thread_of_a_many_threaded_worker_gets_a_partition():
    """By default two partitions per worker thread are in flight: a worker with 6 threads runs 6 at once (with
    two per worker process, as before, it ran 4 at once and left 2 threads idle)."""
    from distributed import Client, LocalCluster

    from polytopo.core.cluster import task_slots

    with LocalCluster(n_workers=1, threads_per_worker=6, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        assert task_slots(client) == 6
        spans = map_partitions(client, timed_nap, range(12), packed=True)
    moments = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = [0]
    for _, change in moments:
        running.append(running[-1] + change)
    assert max(running) == 6


def long_first_then_worker(x):
    """Partition 0 takes 2 s, the others 0.1 s; returns the worker it ran on."""
    from distributed import get_worker

    time.sleep(2.0 if x == 0 else 0.1)
    return get_worker().address


PLACED = {}
"""Partition key -> (worker restrictions, loose, worker it went to), noted by the scheduler of the local cluster
(which runs in this process)."""


def _note_placements(dask_scheduler):
    from distributed.diagnostics.plugin import SchedulerPlugin

    class NotePlacements(SchedulerPlugin):
        name = "note-placements"

        def transition(self, key, start, finish, *args, **kwargs):
            if finish == "processing" and str(key).startswith("long_first_then_worker"):
                task = dask_scheduler.tasks[key]
                PLACED[key] = (set(task.worker_restrictions or ()), task.loose_restrictions,
                               task.processing_on.address)

    dask_scheduler.add_plugin(NotePlacements(), idempotent=True)


def test_the_next_partition_goes_to_the_worker_that_finished_one(local_client):
    """Two partitions in flight per worker: each partition after the first four is sent, loosely, to the worker
    that has just finished one; while one worker runs a long partition, all of them run on the other."""
    local_client.run_on_scheduler(_note_placements)
    PLACED.clear()
    where = map_partitions(local_client, long_first_then_worker, range(12), packed=True, in_flight=4)
    order = sorted(PLACED, key=lambda key: int(str(key).rsplit("-", 1)[1]))
    assert len(order) == 12
    assert all(not PLACED[key][0] for key in order[:4])
    assert all(PLACED[key][0] == {PLACED[key][2]} and PLACED[key][1] for key in order[4:])
    other = next(address for address in where if address != where[0])
    assert set(where[4:]) == {other}


def kept_length(value):
    return len(value)


def kept_length_unless(value, bad):
    if value[0] == bad:
        raise ArithmeticError(f"value {bad} is bad")
    return len(value)


def test_kept_values_are_fetched_in_groups_within_a_size(local_client, monkeypatch):
    """``fetched_kept`` yields in order; every value's task goes at once, and the results come in groups (one fetch
    each) whose sizes fit ``in_flight_size``, always at least one."""
    _, kept = map_partitions(local_client, square_keeping_bytes, range(1, 9), packed=True, keep=True)
    names = [f"value {n}" for n in range(8)]
    fetches, gather = [], local_client.gather
    monkeypatch.setattr(local_client, "gather", lambda futures, **options: (fetches.append(len(futures)),
                                                                            gather(futures, **options))[1])

    def groups(**options):
        fetches.clear()
        values = fetched_kept(kept, kept_length, names=names, **options)
        assert next(values) == 1 << 20
        # all sent at once: every one but the first group's is still there
        assert _tasks_named(local_client, "kept_length") >= 8 - fetches[0]
        assert list(values) == [1 << 20] * 7
        return list(fetches)

    assert groups() == [1] * 8
    assert groups(sizes=[1] * 8, in_flight_size=3) == [3, 3, 2]
    assert groups(sizes=[5] * 8, in_flight_size=3) == [1] * 8
    assert groups(sizes=[2, 1, 1, 5, 1, 1, 1, 1], in_flight_size=4) == [3, 1, 4]
    deadline = time.monotonic() + 10
    while _tasks_named(local_client, "kept_length") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _tasks_named(local_client, "kept_length") == 0  # each released once read
    assert list(fetched_kept([b"ab", b"c"], kept_length, names=["a", "c"], sizes=[1, 1], in_flight_size=9)) == [2, 1]
    # a failed value's error names it when its group's turn comes; the values before it are read
    values = fetched_kept(kept, kept_length_unless, 6, names=names, sizes=[1] * 8, in_flight_size=2)
    assert [next(values) for _ in range(4)] == [1 << 20] * 4
    with pytest.raises(ClusterError, match="Expected value 5 to finish on its Dask worker but it failed: "
                                           "ArithmeticError: value 6 is bad"):
        next(values)


def test_kept_values_do_not_hold_the_partitions_in_the_task_graph(local_client):
    """Once the map returns, the tasks that carried the partitions' bytes are forgotten; the kept values stay."""
    parts = [bytes([n]) * (2 << 20) for n in range(4)]
    results, kept = map_partitions(local_client, first_byte_keeping_all, parts, packed=True, keep=True)
    assert results == [0, 1, 2, 3]
    deadline = time.monotonic() + 10
    while _tasks_named(local_client, "first_byte_keeping_all") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _tasks_named(local_client, "first_byte_keeping_all") == 0
    assert [fetch_kept(k, len, name="kept") for k in kept] == [2 << 20] * 4
    assert [fetch_kept(k, bytes.__getitem__, 0, name="kept") for k in kept] == [0, 1, 2, 3]


@case("a worker killed (SIGKILL) after its partition, holding that partition's records",
      "evaluator on a cluster whose workers read their partitions",
      "Dask reads and scores the partition again on another worker; the records are there when written")
def test_partitions_sent_at_once_keep_their_order_and_a_kept_value_is_made_again_when_its_worker_dies():
    """With ``at_once`` every partition goes in one graph with its result's and kept value's tasks: the kept value
    depends on the partition's task, so when the worker holding it dies, Dask makes it again on another worker
    (the scheduler keeps the partition's bytes for that; one at a time, a kept value is detached instead)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster, set_as_default=False) as client:
        seen = []
        results, kept = map_partitions(client, square_keeping_bytes, [5, 6, 7, 8, 9], packed=True, keep=True,
                                       at_once=True, progress=lambda done, total: seen.append((done, total)))
        assert results == [25, 36, 49, 64, 81] and seen == [(n, 5) for n in range(1, 6)]
        assert _tasks_named(client, "square_keeping_bytes") == 5  # the partitions' tasks, as the values' lineage
        with pytest.raises(ValueError, match="packed=True with at_once=True"):
            map_partitions(client, square, [1], at_once=True)
        with pytest.raises(ClusterError, match="Expected partition 3 to finish on its Dask worker but it failed: "
                                               "ZeroDivisionError: three is not allowed"):
            map_partitions(client, fail_on_three, range(5), packed=True, at_once=True)
        holder = client.who_has([kept[0]])[kept[0].key][0]
        nanny = next(nanny for nanny in cluster.workers.values() if nanny.worker_address == holder)
        os.kill(nanny.process.pid, signal.SIGKILL)  # the worker dies with its memory; its nanny starts another
        deadline = time.monotonic() + 30
        while holder in client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert holder not in client.scheduler_info()["workers"]
        size, first, where = fetch_kept(kept[0], kept_size_and_worker, name="kept 0")
        assert (size, first) == (1 << 20, 5) and where != holder
        assert fetch_kept(kept[1], kept_size_and_worker, name="kept 1")[:2] == (1 << 20, 6)


def started_at(x):
    """When this partition started on its worker (ns of the worker's monotonic clock), and the value."""
    return time.monotonic_ns(), x


def test_partitions_sent_at_once_start_in_the_order_given():
    """One worker thread runs the partitions of one graph one after another in the order of the list (a plan whose
    groups shrink along it relies on that); Dask alone would take them in descending order of their keys' text
    (9, 8, ..., 3, 29, ..., 20, 2, 19, ... for 30)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster, set_as_default=False) as client:
        for count in (30, 101):
            got = map_partitions(client, started_at, list(range(count)), packed=True, at_once=True)
            assert [x for _, x in got] == list(range(count))
            starts = [at for at, _ in got]
            assert starts == sorted(starts)


def test_kept_values_without_a_cluster_are_the_values(local_client):
    results, kept = map_partitions(None, square_keeping_bytes, [2, 3], keep=True)
    assert results == [4, 9] and [len(k) for k in kept] == [1 << 20] * 2
    assert fetch_kept(kept[0], len, name="a value") == 1 << 20
    with pytest.raises(ValueError, match="packed=True"):
        map_partitions(local_client, square_keeping_bytes, [2], keep=True)


def test_a_kept_value_read_after_its_client_closed_is_a_clear_error():
    with open_client(workers=1) as client:
        _, kept = map_partitions(client, square_keeping_bytes, [5], packed=True, keep=True)
    with pytest.raises(ClusterError, match="value 0 depends on to be open, but it is closed.*before closing"):
        fetch_kept(kept[0], len, name="value 0")


def test_a_kept_value_is_read_where_its_partition_lies_and_named_elsewhere(local_client):
    """The kept half is read from the worker's memory; a worker without the value says so (the map then takes it
    again where the value lies now, or the error stands when its worker is gone)."""
    from polytopo.core.cluster import _detached_kept, _kept_of, _result_of

    first, second = sorted(local_client.scheduler_info()["workers"])
    made = local_client.submit(square_keeping_bytes, 7, workers=[first], allow_other_workers=False, pure=False)
    made.result()  # done: the kept half can be taken
    assert _result_of(_detached_kept(local_client, made, 0), "kept") == bytes([7]) * (1 << 20)
    elsewhere = local_client.submit(_kept_of, made.key, workers=[second], allow_other_workers=False, pure=False)
    with pytest.raises(ClusterError, match=f"value kept from {made.key} on its worker but it is not there"):
        _result_of(elsewhere, "kept")


def test_results_come_straight_from_workers_the_client_can_reach(local_client):
    """A local cluster's client fetches results from the workers, not through the scheduler; a running cluster's
    client does so only when it can connect to every worker (here one that gives an address nothing listens on)."""
    import socket
    import subprocess
    import sys

    from distributed import Client

    from polytopo.core.cluster import _workers_reachable

    assert local_client.direct_to_workers is True and _workers_reachable(local_client)

    def free_port():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    port, nowhere = free_port(), free_port()
    dask = str(Path(sys.executable).with_name("dask"))
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    processes.append(subprocess.Popen(
        [dask, "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-dashboard", "--no-nanny",
         "--listen-address", "tcp://127.0.0.1:0", "--contact-address", f"tcp://127.0.0.1:{nowhere}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        with Client(f"tcp://127.0.0.1:{port}", set_as_default=False, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
            started = time.monotonic()
            assert _workers_reachable(client, timeout_s=0.5) is False
            assert time.monotonic() - started < 5
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
