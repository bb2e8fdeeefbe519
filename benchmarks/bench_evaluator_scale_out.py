"""Scale-out benchmark of the evaluator on Dask: 1 process vs 2 workers, memory per process, part costs, a projection.

On the ``--scale`` x version (default 4; 16 for the memory goal) of the set of
``osm_benchmark_set.py`` it

1. runs the evaluator's command line (``--profile``, default ``paper`` with the default
   bootstrap; no plots, no GeoPackage) in fresh processes in one process
   (``--workers 0 --threads 1``: one core) and on a local cluster of 2 workers (``--workers 2``), checks that
   every number of both ``summary.json`` agrees within 1e-9 and the per-feature CSVs are
   identical, and prints both wall times (interpreter and cluster start-up included), the
   speed-up, and the peak resident memory of the single process, of the 2-worker run's
   client and of each of its workers (each worker records its own ``VmHWM`` when it
   closes, through the preload of ``peak_memory.py``), with the largest of the three
   against the single process;
2. measures in this process, without a cluster, what a cluster run is made of
   (:func:`part_costs`): for ``paper`` (the workers read their partitions) the serial
   parts (the client's plan, the sets built from the workers' digests, merge, the
   dataset-wide summary, analyses, writing the per-feature CSV text), each task of the
   files' index as ``N`` workers split it (:func:`index_costs`: the chunks' counts, their
   marks, each file's join) and the work of each of the ``4 x 2`` partitions of a
   2-worker run (reading its records, filters, per-image work and its per-feature
   records); for ``reference-code`` the client's reading and partitioning instead; a
   bootstrap chunk's fixed cost and its cost per resample (chunks of 8 and of 64
   resamples), and the scheduler's cost per task (empty tasks on a 2-worker cluster);
3. measures what one more partition costs the client and the scheduler
   (:func:`per_partition_cpu_s`): the same command line against ``dask scheduler`` and two
   ``dask worker`` processes of 1 thread and of 32 threads (8 and up to 256 partitions,
   as 2 and 64 one-thread workers make), the CPU of the client process and of the
   scheduler process at both counts, their differences over the difference in
   partitions: ``c`` (client) and ``s`` (scheduler) seconds per partition;
4. projects the evaluation time on a running cluster (``--scheduler``: its start-up is
   not counted) to 16 and 64 workers with a list-scheduling model. The single process
   takes ``T1 = L + R + (W - reads) + B(1)``; ``N`` workers take

       T(N) = S + I(N) + B(N) + H(N)
       B(N) = ceil(chunks(N) / N) * (f + r(N) g) + k * chunks(N), r(N) = min(64, max(16, ceil(R / N)))
       max(P(N), W / N, 4N max(c, s)) <= H(N) <= W / N + (1 - 1 / N) * P(N) + 4N (c + s)
       P(N) = p * 8 / (4N)

   where L is the single process's loading, R its work after the profile (summary,
   analyses, writing the CSVs), S the serial parts of the cluster run, W the summed work
   of the partitions (their reading and records included; ``reads`` is their reading,
   which one process does in L), H(N) the time from handing out the first of the ``4N``
   partitions to the last one's result: at least the largest partition, an even spread
   of the work and the busier of the client and the scheduler handing them all out and
   taking their results in (they work alongside the workers); at most Graham's bound for
   list scheduling (a worker takes the next partition when it is free, as Dask does) plus
   the client's and the scheduler's whole per-partition CPU, as if none of it overlapped
   the workers' work. P(N) is the largest of ``4N`` partitions, taken as the measured
   largest ``p`` of 8 scaled by their number (a plan's groups shrink along it by the
   same shares at any count, ``planned_shares``, so its first and largest holds the same
   multiple of the mean; no single image is near that size in this set). B(N) is the bootstrap of
   R resamples in ``chunks(N) = ceil(R / r(N))`` chunks of r(N) resamples, one per worker
   (as the evaluator chunks it; one process: chunks of 64, no k), a chunk of r taking
   ``f + r g`` (f its fixed cost, g per resample), k the scheduler cost per (empty)
   task. I(N) is the files' index, split as on N workers: its two rounds of chunk tasks
   and the files' joins, each round the list schedule of its measured tasks plus k per
   task (:func:`index_s`). S is measured for 8 partitions and taken as independent of N
   (it is linear in the instances; what grows with the partitions is in ``c``). It
   assumes every worker on a core of its own, the client and the scheduler on one more each, the scheduler's
   cost per partition with 64 worker processes as with 2 of 32 threads, and network,
   file system and memory bandwidth not limiting. The speed-up printed is ``T1 / T(N)``
   for both bounds; ``T1 / (S + I(64))`` bounds it for any N up to 64 (Amdahl);
5. simulates the schedule at 16 and 64 workers (:func:`simulate`): the ``4N`` partitions
   of the plan a run on ``N`` workers makes are measured one by one in this process,
   region by region alongside the 8 partitions of a 2-worker run
   (:func:`interleaved_partitions`: the machine's speed drifts by 10 % and more over the
   minutes a plan takes, and the wide plans are compared with the one process, whose
   ``T1`` here takes the 8 partitions measured alongside them), and
   ``T(N) = S + I(N) + B(N) + H`` with ``H`` the list
   schedule of exactly those partitions (:func:`scheduled_s`): each worker takes the next
   partition when it is free, one scheduler hands them out one at a time at ``s`` each,
   one client takes the results in one at a time at ``c`` each, as they finish. Under the
   same assumptions as the bounds, it replaces their two worst cases (the largest
   partition last; no overlap of the client's and the scheduler's work with the workers')
   by what the measured partitions and costs give: a point between the bounds. Its
   speed-up is printed against that ``T1`` and against the one-process command line of
   part 1 (measured minutes earlier; it counts the interpreter's start and the loading too).

With ``--figure PNG`` it also draws the speed-up against the number of workers: the
projection's bounds from 2 to 64 workers, the simulated schedule at 16 and 64, the measured
2-worker run, the ideal ``N`` and the goals ``0.8 N`` at 16 and ``0.6 N`` at 64 workers.

The machine's load average is printed before and after each part: on a machine shared
with other jobs the measured 1-vs-2-worker ratio says little; the per-part costs, taken
one after the other in one process, are steadier. Exits 0 after a message when the
shared data folder is absent; 1 when the two runs disagree or one fails.

Run ``python benchmarks/bench_evaluator_scale_out.py --help``.
"""

import argparse
import functools
import heapq
import json
import math
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import osm_benchmark_set
from bench_evaluator import EVALUATOR_MODULE, run_measured
from peak_memory import preload_environment, read_worker_peaks

__all__ = ["PARTITION_TASKS", "draw_speedups", "index_costs", "index_s", "interleaved_partitions", "main", "project",
           "part_costs", "per_partition_cpu_s", "run_with_worker_peaks", "scheduled_s", "serial_s", "simulate",
           "single_process_s", "taper_study", "task_overhead_s"]

PROJECTED_WORKERS = (16, 64)


def _walk(a, b, where=""):
    """Paths of the leaves of two summaries that differ (floats by more than 1e-9)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a if k != "timings" for d in _walk(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: lengths {len(a)} and {len(b)}"]
        return [d for k, (x, y) in enumerate(zip(a, b)) for d in _walk(x, y, f"{where}[{k}]")]
    if isinstance(a, float) and isinstance(b, float):
        same = (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9
        return [] if same else [f"{where}: {a!r} and {b!r}"]
    return [] if a == b else [f"{where}: {a!r} and {b!r}"]


def _timed(func, *args, **kwargs):
    started = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - started


def _noop(value):
    return value


def part_costs(gt_path, pred_path, profile, n_parts, workers_read=True):
    """Seconds of every part of a cluster evaluation, measured in this process.

    The parts are those of the command line on a cluster. For ``paper`` (``workers_read``,
    as ``evaluate`` runs it; ``compare`` reads its files on the client) its workers read
    their own partitions (:mod:`polytopo.evaluator.run.read_on_workers`): the workers index
    chunks of the files, the client plans the partitions from the index, each partition's worker
    reads, scores and encodes its records (CSV rows only, as with ``--no-gpkg``), and the
    client builds the sets from the workers' digests, merges, summarizes and writes the CSV
    text part by part. For ``reference-code`` the client reads the files, partitions the
    instances and builds the records, as on a cluster. Every part runs with the cyclic
    garbage collector held off, as it does in ``evaluate`` and in the workers' tasks, and
    without NumPy's huge-page advice, as in the command line and the local workers
    (:mod:`polytopo.core.huge_pages`).

    Returns
    -------
    dict
        ``serial`` (name → seconds of the run's serial parts), ``single`` (name → seconds
        of the single process's own parts besides the partitions' work), ``partitions``
        (seconds of each partition's work), ``reads`` (of it, reading the partition's
        records: one process reads them in ``single["load"]``), ``partition_mib`` /
        ``result_mib`` (pickled size of each partition sent out and its result sent back,
        where measured), the bootstrap's costs (:func:`_bootstrap_costs`), and where the
        workers read their partitions ``index`` (:func:`index_costs`: each task of the
        index, by worker count).
    """
    from polytopo.core.huge_pages import no_huge_page_advice
    from polytopo.evaluator.tables.params import params_for
    from polytopo.evaluator.run.read_on_workers import applies_to

    params = params_for(profile)
    with no_huge_page_advice():
        if workers_read and applies_to(params):
            return _worker_read_costs(gt_path, pred_path, params, n_parts)
        return _client_read_costs(gt_path, pred_path, params, n_parts)


def _bootstrap_costs(params, outcome):
    """What the bootstrap costs: ``{"bootstrap_resamples", "bootstrap_fixed_s", "bootstrap_row_s"}``.

    A chunk of ``r`` resamples takes ``fixed + r * row`` seconds, fitted to chunks of the
    first 8 and the first 64 resamples.
    """
    from polytopo.evaluator.metrics.analysis import (RESAMPLE_CHUNK, per_image_statistics, resample_metrics,
                                                     resample_weights)

    resamples = params.bootstrap_resamples if params.profile != "reference-code" else 0
    if not resamples:
        return {"bootstrap_resamples": 0, "bootstrap_fixed_s": 0.0, "bootstrap_row_s": 0.0}
    stats = per_image_statistics(outcome)
    rows = next(resample_weights(len(outcome.image_ids), resamples, params.bootstrap_seed))
    few, many = 8, min(RESAMPLE_CHUNK, len(rows))
    few_s = min(_timed(resample_metrics, rows[:few], stats, outcome.ranking)[1] for _ in range(3))
    many_s = _timed(resample_metrics, rows[:many], stats, outcome.ranking)[1]
    row_s = max(0.0, (many_s - few_s) / max(1, many - few))
    return {"bootstrap_resamples": resamples, "bootstrap_fixed_s": max(0.0, few_s - few * row_s),
            "bootstrap_row_s": row_s}


def bootstrap_s(costs, workers, overhead_s=0.0):
    """Seconds of the bootstrap on ``workers`` one-thread workers (1: one process, one chunk after another).

    As the evaluator chunks it (:func:`polytopo.evaluator.run.distributed.resample_rows`): one
    chunk per worker of 16 to 64 resamples, ``ceil(chunks / workers)`` rounds of the largest
    chunk, and the scheduler's ``overhead_s`` for each chunk (not in one process).
    """
    from polytopo.evaluator.metrics.analysis import RESAMPLE_CHUNK
    from polytopo.evaluator.run.distributed import resample_rows

    resamples = costs["bootstrap_resamples"]
    if not resamples:
        return 0.0
    if workers == 1:
        chunks = math.ceil(resamples / RESAMPLE_CHUNK)
        return chunks * costs["bootstrap_fixed_s"] + resamples * costs["bootstrap_row_s"]
    rows = resample_rows(resamples, workers)
    chunks = math.ceil(resamples / rows)
    return (math.ceil(chunks / workers) * (costs["bootstrap_fixed_s"] + rows * costs["bootstrap_row_s"])
            + overhead_s * chunks)


def _worker_read_costs(gt_path, pred_path, params, n_parts):
    """:func:`part_costs` of a run whose workers read their partitions (``evaluate_files_on`` in this process)."""
    from polytopo.core.gc_pause import paused_gc
    from polytopo.evaluator import load_inputs
    from polytopo.evaluator.metrics.analysis import simple_to_complex, wrong_topo
    from polytopo.evaluator.outputs.record_parts import parts_request
    from polytopo.evaluator.run.read_on_workers import (_read_side, evaluate_files_on, indexed_inputs,
                                                        plan_file_parts)
    from polytopo.evaluator.inputs.io_coco import listed_images
    from polytopo.evaluator.tables.error_classes import RECORD_TABLES

    options = {"categories": None, "default_score": None, "drop_degenerate": False}
    with paused_gc(), tempfile.TemporaryDirectory(prefix="polytopo_parts_") as scratch:
        serial, single = {}, {}
        _, single["load"] = _timed(load_inputs, gt_path, pred_path)
        index = index_costs(gt_path, pred_path)
        gt_index, pred_index = indexed_inputs(gt_path, pred_path)

        def plan():
            listed, sizes = listed_images(gt_path, gt_index.skeleton)
            return plan_file_parts(gt_path, pred_path, gt_index, pred_index, listed, sizes, n_parts)

        parts, serial["plan (images[], partitions)"] = _timed(plan)
        reads = []
        for part in parts:
            started = time.perf_counter()
            _read_side(part, "gt", options), _read_side(part, "pred", options)
            reads.append(time.perf_counter() - started)
        marks = []
        _, _, outcome = evaluate_files_on(
            None, gt_path, pred_path, params, lambda name: marks.append((name, time.perf_counter())),
            parts_request(None, False), options, n_parts=n_parts)
        done = time.perf_counter()
        at = dict(marks)
        ends = [moment for name, moment in marks if name.startswith("partition ")]
        partitions = [end - begin for begin, end in zip([at["partitions"], *ends[:-1]], ends)]
        serial["sets from the digests"] = at["merge"] - ends[-1]
        serial["merge"] = at["summary"] - at["merge"]
        single["summary"] = serial["summary"] = done - at["summary"]
        _, single["analyses"] = _timed(lambda: (simple_to_complex(outcome), wrong_topo(outcome)))
        serial["analyses"] = single["analyses"]
        records = outcome.record_parts
        _, single["write CSVs"] = _timed(records.write_csvs,
                                         {name: Path(scratch) / f"{name}.csv" for name in RECORD_TABLES})
        serial["write CSVs"] = single["write CSVs"]
        return {"serial": serial, "single": single, "partitions": partitions, "reads": reads, "index": index,
                **_bootstrap_costs(params, outcome), "partition_mib": [], "result_mib": []}


def interleaved_partitions(gt_path, pred_path, profile, counts):
    """Seconds of each partition of the plans of ``counts`` partitions, measured region by region, in plan order.

    The plans a run whose workers read their partitions makes (``plan_file_parts``) with
    each of ``counts`` groups; each partition runs as a worker runs it (reading its
    records, filters, per-image work, its per-feature CSV records), one after the other in
    this process, with the cyclic garbage collector held off. The partitions of the
    first plan cut the images into regions; each region runs that plan's partition, then
    the partitions of the other plans that start in it, in the order of ``counts``
    (reversed in every other region), so that a change in the machine's speed over the
    minutes it takes falls on every plan alike and the plans' sums compare. One partition
    runs first to warm up (imports) and is not counted. Returns ``{count: [s, ...]}``.
    """
    from polytopo.core.gc_pause import paused_gc
    from polytopo.core.huge_pages import no_huge_page_advice
    from polytopo.evaluator.inputs.io_coco import listed_images
    from polytopo.evaluator.outputs.record_parts import parts_request
    from polytopo.evaluator.run.read_on_workers import (_read_task, _rings_needed_for, indexed_inputs,
                                                        plan_file_parts)
    from polytopo.evaluator.tables.params import params_for

    params = params_for(profile)
    options = {"categories": None, "default_score": None, "drop_degenerate": False}
    gt_index, pred_index = indexed_inputs(gt_path, pred_path)
    listed, sizes = listed_images(gt_path, gt_index.skeleton)
    plans = {n: plan_file_parts(gt_path, pred_path, gt_index, pred_index, listed, sizes, n) for n in counts}
    first = plans[counts[0]]
    rings = _rings_needed_for(params, [image for part in first for image in part.image_ids])
    region_of = {image: k for k, part in enumerate(first) for image in part.image_ids}
    request = parts_request(None, False)
    seconds = {n: [None] * len(plans[n]) for n in counts}
    with no_huge_page_advice(), paused_gc():
        _read_task((plans[counts[-1]][-1], options, params, request, rings))
        for k in range(len(first)):
            for n in counts if k % 2 == 0 else counts[::-1]:
                for i, part in enumerate(plans[n]):
                    if region_of[part.image_ids[0]] == k:
                        seconds[n][i] = _timed(_read_task, (part, options, params, request, rings))[1]
    return seconds


def index_costs(gt_path, pred_path, workers=None):
    """Seconds of each task of the files' index on a cluster of each worker count, measured in this process.

    The evaluator splits each file into ``min(N, ceil(bytes / INDEX_CHUNK_BYTES))`` chunks
    on ``N`` one-thread workers (``coco_index.chunks_for``, called by
    :func:`polytopo.evaluator.run.read_on_workers.indexed_inputs`); each chunking is
    measured once, by ``coco_indexes`` itself with a ``submit`` that times each task: the
    counts of each chunk (round 1), the marks of each chunk (round 2) and the file's join.
    Returns ``{str(N): {"gt": {...}, "pred": {...}}}`` for each of ``workers`` (default: the
    figure's counts), each side ``{"counts": [s, ...], "marks": [s, ...], "join": s}``.
    """
    from polytopo.evaluator.inputs import coco_index as index

    rounds = {index.chunk_counts: "counts", index.chunk_marks: "marks", index.joined_index: "join"}
    measured, by_chunking = {}, {}
    for n in workers or FIGURE_WORKERS:
        sides = {}
        for side, path in (("gt", Path(gt_path)), ("pred", Path(pred_path))):
            chunks = index.chunks_for(path.stat().st_size, n)
            if (side, chunks) not in by_chunking:
                timed = {name: [] for name in rounds.values()}

                def submit(func, *args, timed=timed):
                    value, seconds = _timed(func, *args)
                    timed[rounds[func]].append(seconds)
                    return value

                if index.coco_indexes([path], functools.partial(index.chunks_for, slots=n), submit)[0] is None:
                    raise RuntimeError(f"the index cannot place the records of {path}")
                by_chunking[side, chunks] = {**timed, "join": timed["join"][0]}
            sides[side] = by_chunking[side, chunks]
        measured[str(n)] = sides
    return measured


def index_s(costs, workers, overhead_s=0.0):
    """Seconds of the files' index on ``workers`` one-thread workers (0 where the client reads the files).

    Round 1 (the chunks' counts of every file indexed), round 2 (the chunks' marks), the
    joins: each round the list schedule of its tasks (:func:`scheduled_s`) plus the
    scheduler's ``overhead_s`` per task, one after the other (the client's placing of the
    chunks between the rounds takes microseconds). ``costs["index"]`` holds the sides
    indexed (:func:`index_costs`).
    """
    if "index" not in costs:
        return 0.0
    sides = costs["index"][str(workers)].values()
    rounds = ([t for side in sides for t in side["counts"]], [t for side in sides for t in side["marks"]],
              [side["join"] for side in sides])
    return sum(scheduled_s(tasks, workers, 0.0, 0.0) + overhead_s * len(tasks) for tasks in rounds)


def _client_read_costs(gt_path, pred_path, params, n_parts):
    """:func:`part_costs` of a run whose client reads the files and sends out the partitions' instances.

    Each partition's work includes building and encoding its per-feature records
    (``distributed._match_records_task``, CSV rows only) whose text stays with it, and the
    client writes the CSV text part by part; ``reference-code`` builds its records on the
    client, as on a cluster.
    """
    from polytopo.core.gc_pause import paused_gc
    from polytopo.evaluator import load_inputs
    from polytopo.evaluator.metrics.analysis import simple_to_complex, wrong_topo
    from polytopo.evaluator.outputs.record_parts import RecordParts, parts_request
    from polytopo.evaluator.outputs.records import build_records
    from polytopo.evaluator.run.distributed import (_match_records_task, _rings_needed, merge_partitions,
                                                    partition_images, partition_task)
    from polytopo.evaluator.tables.error_classes import RECORD_TABLES

    with paused_gc(), tempfile.TemporaryDirectory(prefix="polytopo_parts_") as scratch:
        serial = {}
        (gt, pred, _), serial["load"] = _timed(load_inputs, gt_path, pred_path)
        parts, serial["partitioning"] = _timed(partition_images, gt, pred, n_parts)
        task = partition_task(params)
        on_workers = params.profile != "reference-code"
        if on_workers:
            request, rings = parts_request(None, False), _rings_needed(params, parts)
            tasks = [(p.gt_set, p.pred_set, params, request, p.gt_index, p.pred_index, rings) for p in parts]
            task = _match_records_task
        else:
            tasks = [(p.gt_set, p.pred_set, params) for p in parts]
        blobs, serial["pickle partitions"] = _timed(lambda: [pickle.dumps(t, protocol=5) for t in tasks])
        partitions, result_blobs, kept = [], [], []
        for blob in blobs:
            started = time.perf_counter()
            result = task(pickle.loads(blob))
            if on_workers:
                result, part = result
                kept.append(part)
            result_blobs.append(pickle.dumps(result, protocol=5))
            partitions.append(time.perf_counter() - started)
        results, serial["unpickle results"] = _timed(lambda: [pickle.loads(b) for b in result_blobs])
        phases = {}
        outcome, _ = _timed(merge_partitions, gt, pred, params, parts, results,
                            lambda name: phases.setdefault(name, time.perf_counter()))
        done = time.perf_counter()
        serial["merge"] = phases["summary"] - phases["merge"]
        serial["summary"] = done - phases["summary"]
        _, serial["analyses"] = _timed(lambda: (simple_to_complex(outcome), wrong_topo(outcome)))
        if on_workers:
            records = RecordParts([part.outline() for part in kept], request, kept)
            _, serial["write CSVs"] = _timed(records.write_csvs,
                                             {name: Path(scratch) / f"{name}.csv" for name in RECORD_TABLES})
        else:
            _, serial["records"] = _timed(build_records, outcome)
        single = {name: seconds for name, seconds in serial.items() if name not in _CLUSTER_ONLY}
        return {"serial": serial, "single": single, "partitions": partitions, "reads": [0.0] * len(partitions),
                **_bootstrap_costs(params, outcome),
                "partition_mib": [len(b) / 2**20 for b in blobs], "result_mib": [len(b) / 2**20 for b in result_blobs]}


_CLUSTER_ONLY = ("partitioning", "pickle partitions", "unpickle results", "merge")
"""Serial parts of a client-read cluster run that a single process does not have."""


def task_overhead_s(workers=2, tasks=200):
    """Seconds the scheduler adds per task (empty tasks mapped on a local cluster), and the cluster's start-up."""
    from polytopo.core.cluster import map_partitions, open_client

    started = time.perf_counter()
    with open_client(workers) as client:
        startup = time.perf_counter() - started
        map_partitions(client, _noop, range(10))
        _, seconds = _timed(map_partitions, client, _noop, range(tasks))
    return seconds / tasks, startup


PARTITION_TASKS = ("read_task", "match_records_task", "match_task")
"""Names (Dask key prefixes) of the tasks that score one partition, one per partition, whichever path the run takes."""


def per_partition_cpu_s(python, arguments, threads=(1, max(PROJECTED_WORKERS) // 2)):
    """CPU seconds the client and the scheduler spend per partition of a command-line run, measured.

    For each ``threads``, ``dask scheduler`` and two ``dask worker --nthreads T`` processes
    are started on 127.0.0.1 and ``python -m polytopo.evaluator ARGUMENTS(address, out)``
    (a command line with ``--scheduler address`` that writes into the folder ``out``) runs
    against them: it makes ``4 x 2T`` partitions, as a cluster of ``2T`` one-thread
    workers would. The client's CPU (its process) and the scheduler's (its
    process, between just before and just after the run) are read at both counts; the
    differences over the difference in partitions (counted by the scheduler) are the cost
    of one more partition to each: every task, message and reply a partition adds, and
    whatever of the merge grows with their number.

    Returns
    -------
    dict
        ``client_s`` and ``scheduler_s`` (seconds per partition), and per run its
        ``partitions``, ``client_cpu_s``, ``scheduler_cpu_s`` and ``wall_s``.
    """
    import distributed
    import psutil
    from bench_client_share import WORKER_CONFIG, _start_cluster, _stop

    runs = []
    with tempfile.TemporaryDirectory(prefix="polytopo_per_partition_") as scratch:
        scratch = Path(scratch)
        (scratch / "dask").mkdir()
        (scratch / "dask" / "workers.yaml").write_text(WORKER_CONFIG)
        for count in threads:
            address, processes = _start_cluster(python, 2, scratch / "dask", threads=count)
            try:
                scheduler = psutil.Process(processes[0].pid)
                before = sum(scheduler.cpu_times()[:2])
                run = run_measured(python, "module", EVALUATOR_MODULE, arguments(address, scratch / f"t{count}"))
                spent = sum(scheduler.cpu_times()[:2]) - before
                if run.returncode != 0:
                    raise RuntimeError(f"the run against {count}-thread workers failed:\n{run.stderr_tail}")
                with distributed.Client(address, timeout=60) as probe:
                    partitions = probe.run_on_scheduler(lambda dask_scheduler: sum(
                        prefix.state_counts.get("memory", 0) for name, prefix in dask_scheduler.task_prefixes.items()
                        if name in PARTITION_TASKS))
            finally:
                _stop(processes)
            runs.append({"threads": count, "partitions": partitions, "client_cpu_s": run.cpu_s,
                         "scheduler_cpu_s": spent, "wall_s": run.wall_s})
    first, last = runs[0], runs[-1]
    more = last["partitions"] - first["partitions"]
    return {"client_s": (last["client_cpu_s"] - first["client_cpu_s"]) / more,
            "scheduler_s": (last["scheduler_cpu_s"] - first["scheduler_cpu_s"]) / more, "runs": runs}


def single_process_s(costs):
    """Projected seconds of the single process (``T1`` of the module docstring)."""
    return sum(costs["single"].values()) + sum(costs["partitions"]) - sum(costs["reads"]) + bootstrap_s(costs, 1)


def serial_s(costs, overhead_s):
    """``S + I(64)``: what no number of workers up to 64 shortens (Amdahl's limit of the figure)."""
    return sum(costs["serial"].values()) + index_s(costs, max(FIGURE_WORKERS), overhead_s)


def _fixed_s(costs, workers, overhead_s, startup_s=0.0):
    """``S + I(N) + B(N)``: the serial parts, the start-up the loading does not cover, the index, the bootstrap."""
    return (sum(costs["serial"].values()) + max(0.0, startup_s - costs["serial"].get("load", 0.0))
            + index_s(costs, workers, overhead_s) + bootstrap_s(costs, workers, overhead_s))


def project(costs, overhead_s, workers, per_partition, startup_s=0.0):
    """Lower and upper bound of the evaluation seconds on ``workers`` workers (model of the module docstring).

    ``per_partition``: the client's and the scheduler's CPU seconds per partition
    (``client_s``, ``scheduler_s``, as :func:`per_partition_cpu_s` returns them); ``startup_s``: the cluster's start-up, where the run
    starts one (0: a running cluster); it overlaps the client's loading of a run whose
    client reads the files.
    """
    parts = costs["partitions"]
    work = sum(parts)
    largest = max(parts) * len(parts) / (4 * workers)
    client_s, scheduler_s = per_partition["client_s"], per_partition["scheduler_s"]
    fixed = _fixed_s(costs, workers, overhead_s, startup_s)
    handed_out = 4 * workers * max(client_s, scheduler_s)
    return (fixed + max(largest, work / workers, handed_out),
            fixed + work / workers + (1 - 1 / workers) * largest + 4 * workers * (client_s + scheduler_s))


def scheduled_s(partitions, workers, client_s, scheduler_s):
    """Seconds from handing out the first partition to the client taking in the last result, simulated.

    ``partitions``: each partition's seconds of work, in the order they are submitted (as
    the evaluator submits them: one graph, in plan order). The simulation follows the
    list schedule Dask runs: ``workers`` one-thread workers, each takes the next partition
    of the queue when it is free; one scheduler hands the partitions out one at a time,
    spending ``scheduler_s`` on each (its whole cost per partition, charged before the
    partition can start); one client takes the results in one at a time, as they finish,
    spending ``client_s`` on each (its whole cost per partition, charged after the
    partition's end). Transfers take no time (the partitions are plans of what to read,
    the results per-image statistics).
    """
    free = [0.0] * workers  # when each worker is next free, as a heap
    handed = 0.0  # when the scheduler is next free
    ends = []
    for seconds in partitions:
        # the earliest free worker asks next; its requests come in time order, so the scheduler serves them in turn
        handed = max(heapq.heappop(free), handed) + scheduler_s
        heapq.heappush(free, handed + seconds)
        ends.append(handed + seconds)
    taken = 0.0
    for end in sorted(ends):
        taken = max(taken, end) + client_s
    return taken


def simulate(costs, partitions, overhead_s, workers, per_partition):
    """Evaluation seconds on ``workers`` workers with the schedule simulated (:func:`scheduled_s`).

    ``costs``: the part costs of the 8-partition plan (the serial parts ``S``, the
    bootstrap); ``partitions``: each partition's seconds of work in the ``4 workers``-partition
    plan the run makes, measured (:func:`part_costs` with that many). ``T(N) = S + B(N) +``
    the simulated schedule: a point between the bounds of :func:`project` that uses the
    measured spread of the partitions instead of the worst case of list scheduling and
    lets the client's and the scheduler's work overlap the workers' as it does on a cluster.
    """
    return _fixed_s(costs, workers, overhead_s) + scheduled_s(partitions, workers, per_partition["client_s"], per_partition["scheduler_s"])


def taper_study(tapers=(0.0, 0.3, 0.5, 0.7, 0.9), workers=PROJECTED_WORKERS, per_thread=(2, 3, 4, 6), draws=200,
                work_s=125.0, spread=0.17, fixed_s=0.082, per_partition=(0.0045, 0.0045), seed=1):
    """Mean simulated schedule (:func:`scheduled_s`, seconds) of synthetic plans, by taper, workers and groups a thread.

    A plan of ``per_thread x workers`` groups whose shares of ``work_s`` seconds shrink
    along it as :func:`polytopo.evaluator.run.distributed.planned_groups` makes them; each
    group really takes its share times a log-normal factor of standard deviation
    ``spread`` (about what groups of 64 and of 256 measured on the 16x set) plus
    ``fixed_s`` (what one more group costs a worker there), and each costs the client and
    the scheduler ``per_partition``. Returns ``{(workers, per_thread, taper): mean seconds}``.
    """
    import numpy as np

    from polytopo.evaluator.run.distributed import planned_shares

    rng = np.random.default_rng(seed)
    means = {}
    for n in workers:
        for per in per_thread:
            count = per * n
            for taper in tapers:
                share = planned_shares(count, taper) * (work_s / count)
                runs = [scheduled_s((share * rng.lognormal(0.0, spread, count) + fixed_s).tolist(), n,
                                    *per_partition) for _ in range(draws)]
                means[n, per, taper] = float(np.mean(runs))
    return means


FIGURE_WORKERS = (2, 4, 8, 16, 32, 64)
"""Worker counts the figure's projection is drawn at."""
FIGURE_TOP = 128
"""Highest speed-up on the figure's axis; a serial client's limit above it is given in the legend."""


def draw_speedups(path, report):
    """Speed-up over one process against workers (log-log): projection bounds, the measured run, ideal and goals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    costs, single = report["costs"], report["single_process_s"]
    bounds = [project(costs, report["task_overhead_s"], n, report["per_partition"]) for n in FIGURE_WORKERS]
    figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    axes.plot([1, 64], [1, 64], color="0.6", linestyle=":", label="ideal: N")
    axes.fill_between(FIGURE_WORKERS, [single / high for _, high in bounds], [single / low for low, _ in bounds],
                      color="tab:blue", alpha=0.3, label="projected (bounds of the model)")
    axes.plot([16, 64], [0.8 * 16, 0.6 * 64], "k^", label="goals: 0.8 N at 16, 0.6 N at 64")
    axes.plot([2], [report["end_to_end"]["speedup"]], "o", color="tab:orange",
              label="measured: 2 workers, command line")
    simulated = sorted((int(n), seconds) for n, seconds in report.get("simulated_s", {}).items())
    if simulated:
        alongside = report.get("single_process_alongside_s", single)
        axes.plot([n for n, _ in simulated], [alongside / seconds for _, seconds in simulated], "s", color="tab:blue",
                  label="projected: schedule simulated")
    limit = single / serial_s(costs, report["task_overhead_s"])
    if limit <= FIGURE_TOP:
        axes.axhline(limit, color="tab:red", linewidth=1, label="limit of the serial client (Amdahl)")
    else:
        axes.plot([], [], color="tab:red", linewidth=1, label=f"limit of the serial client (Amdahl): {limit:.0f}x")
    axes.set_ylim(0.8, FIGURE_TOP)
    axes.set(xscale="log", yscale="log", xlabel="workers", ylabel="speed-up over one process",
             title=f"{report['scale']}x set, {report['profile']} profile, every per-feature CSV")
    axes.set_xticks([1, *FIGURE_WORKERS], [str(n) for n in (1, *FIGURE_WORKERS)])
    axes.set_yticks([1, 2, 4, 8, 16, 32, 64, 128], ["1", "2", "4", "8", "16", "32", "64", "128"])
    axes.legend(fontsize=8, loc="lower right")
    axes.grid(True, which="major", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def run_with_worker_peaks(python, args):
    """Run ``python -m polytopo.evaluator ARGS`` in a fresh process; each Dask worker it starts records its peak.

    Returns
    -------
    tuple
        The :class:`bench_evaluator.ProcessRun` (wall seconds, the command-line process's
        peak resident memory in MiB) and the workers' peak resident memory (MiB, by process
        id; empty when the run started no worker).
    """
    with tempfile.TemporaryDirectory(prefix="polytopo_peaks_") as peaks:
        environment = preload_environment(peaks)
        saved = {name: os.environ.get(name) for name in environment}
        os.environ.update(environment)
        try:
            run = run_measured(python, "module", EVALUATOR_MODULE, args)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return run, read_worker_peaks(peaks)


def _cli(python, files, out, workers, profile):
    """One command-line run in a fresh process; with workers, each worker's peak is recorded too.

    Returns the run and the workers' peak resident memory (MiB, by process id).
    """
    args = ["--gt", files.gt_path, "--pred", files.pred_path, "--out", out, "--profile", profile, "--no-plots",
            "--no-gpkg", "--quiet", "--workers", str(workers)]
    # the projection's T1 is one core: the one process on one thread
    return run_with_worker_peaks(python, args + (["--threads", "1"] if workers == 0 else []))


def _load():
    return os.getloadavg()[0]


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=4, help="size of the set, in copies of the 1x set (>= 4)")
    parser.add_argument("--profile", default="paper", choices=("paper", "reference-code"),
                        help="evaluation profile (default paper)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with polytopo installed")
    parser.add_argument("--cache", type=Path, help="cache folder of the built sets")
    parser.add_argument("--json", type=Path, help="also write the measurements to this JSON file")
    parser.add_argument("--figure", type=Path, help="also draw the measured and projected speed-ups into this PNG")
    parser.add_argument("--taper-study", action="store_true",
                        help="only print the simulated schedule of synthetic plans by taper (taper_study) and exit")
    args = parser.parse_args(argv)
    if args.scale < 4:
        parser.error(f"expected --scale >= 4 but got {args.scale}")
    return args


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    if args.taper_study:
        print("simulated schedule of synthetic plans (mean of 200 draws, s): workers, groups a thread, by taper")
        means = taper_study()
        tapers = sorted({taper for _, _, taper in means})
        print("  workers  groups/thread  " + "  ".join(f"taper {taper:.1f}" for taper in tapers))
        for n, per in sorted({(n, per) for n, per, _ in means}):
            print(f"  {n:>7}  {per:>13}  " + "  ".join(f"{means[n, per, taper]:9.3f}" for taper in tapers))
        return 0
    files = osm_benchmark_set.set_for_benchmark(args.scale, args.cache)
    if files is None:
        return 0
    c = files.counts
    report = {"scale": args.scale, "profile": args.profile, "counts": c, "load_average": {"start": _load()}}
    with tempfile.TemporaryDirectory(prefix="polytopo_scale_out_") as scratch:
        runs, worker_peaks = {}, {}
        for n in (0, 2):
            runs[n], worker_peaks[n] = _cli(args.python, files, Path(scratch) / f"w{n}", n, args.profile)
            report["load_average"][f"after --workers {n}"] = _load()
        failed = [n for n, r in runs.items() if r.returncode != 0]
        if failed:
            print(f"the run with --workers {failed[0]} failed:\n{runs[failed[0]].stderr_tail}")
            return 1
        one, two = (json.loads((Path(scratch) / f"w{n}" / "summary.json").read_text()) for n in (0, 2))
        differences = _walk(one, two)
        csv_same = all((Path(scratch) / "w0" / name).read_bytes() == (Path(scratch) / "w2" / name).read_bytes()
                       for name in ("predictions.csv", "references.csv", "missed_holes.csv",
                                    "hallucinated_holes.csv"))
    print(f"load average after the runs {report['load_average']['after --workers 0']:.1f} (after --workers 0), "
          f"{report['load_average']['after --workers 2']:.1f} (after --workers 2)")
    print(f"end to end (command line, fresh processes, --profile {args.profile}): 1 process {runs[0].wall_s:.2f} s, "
          f"2 workers {runs[2].wall_s:.2f} s: speed-up {runs[0].wall_s / runs[2].wall_s:.2f}x")
    workers = sorted(worker_peaks[2].values())
    largest = max([runs[2].peak_rss_mib, *workers])
    print(f"peak resident memory: 1 process {runs[0].peak_rss_mib:.0f} MiB; 2 workers: client "
          f"{runs[2].peak_rss_mib:.0f} MiB, workers {', '.join(f'{w:.0f}' for w in workers) or 'not recorded'} MiB; "
          f"largest process {largest:.0f} MiB = {largest / runs[0].peak_rss_mib:.2f} x the single process")
    print(f"summary numbers within 1e-9: {not differences}; per-feature CSVs identical: {csv_same}")
    report["end_to_end"] = {"1 process": runs[0].wall_s, "2 workers": runs[2].wall_s,
                            "speedup": runs[0].wall_s / runs[2].wall_s, "peak_mib_1": runs[0].peak_rss_mib,
                            "peak_mib_client_2": runs[2].peak_rss_mib, "peak_mib_workers_2": workers,
                            "identical": not differences and csv_same}

    costs = part_costs(files.gt_path, files.pred_path, args.profile, 4 * 2)
    overhead, startup = task_overhead_s()
    per_partition = per_partition_cpu_s(args.python, lambda address, out: [
        "--gt", files.gt_path, "--pred", files.pred_path, "--out", out, "--profile", args.profile, "--no-plots",
        "--no-gpkg", "--quiet", "--scheduler", address])
    report["load_average"]["after the part costs"] = _load()
    parts = costs["partitions"]
    print(f"\nparts of a 2-worker run, measured one after the other in one process "
          f"(load average {report['load_average']['after the part costs']:.1f} after):")
    for name, seconds in costs["serial"].items():
        print(f"  client  {name:<20} {seconds:8.3f} s")
    for k, seconds in enumerate(parts):
        sizes = (f"{costs['partition_mib'][k]:.1f} MiB out, {costs['result_mib'][k]:.1f} MiB back"
                 if costs["partition_mib"] else f"reading its records {costs['reads'][k]:.3f} s")
        print(f"  worker  partition {k + 1} of {len(parts):<8} {seconds:8.3f} s  ({sizes})")
    print(f"  workers {len(parts)} partitions        {sum(parts):8.3f} s in all (largest {max(parts):.3f} s, "
          f"mean {sum(parts) / len(parts):.3f} s)")
    if costs["bootstrap_resamples"]:
        print(f"  workers bootstrap chunk of r resamples {costs['bootstrap_fixed_s']:.3f} s + r x "
              f"{costs['bootstrap_row_s'] * 1e3:.2f} ms ({costs['bootstrap_resamples']} resamples; "
              f"{bootstrap_s(costs, 1):.3f} s in one process)")
    print(f"  scheduler cost per task          {overhead * 1e3:8.2f} ms (empty tasks: the bootstrap chunks)")
    for run in per_partition["runs"]:
        print(f"  command line on 2 workers x {run['threads']:>2} threads: {run['partitions']:>4} partitions, client "
              f"{run['client_cpu_s']:6.2f} CPU-s, scheduler {run['scheduler_cpu_s']:6.2f} CPU-s ({run['wall_s']:.1f} s)")
    print(f"  per partition: client {per_partition['client_s'] * 1e3:.2f} ms, scheduler "
          f"{per_partition['scheduler_s'] * 1e3:.2f} ms of CPU")
    print(f"  cluster start-up (2 workers)     {startup:8.3f} s (not projected: a running cluster, --scheduler)")
    for n in FIGURE_WORKERS if "index" in costs else ():
        print(f"  index on {n:>2} workers             {index_s(costs, n, overhead):8.3f} s (I(N): "
              + ", ".join(f"{side} {len(steps['counts'])} chunks" for side, steps in costs["index"][str(n)].items())
              + ")")
    single = single_process_s(costs)
    serial = serial_s(costs, overhead)
    print(f"  serial client time S + I(64) {serial:.2f} s against {single:.2f} s in one process (so no N up to 64 "
          f"gives more than {single / serial:.1f}x)")
    print("\nprojection on a running cluster: S + I(N) + B(N) + max(P, W/N, 4N max(c, s)) <= T(N) "
          "<= S + I(N) + B(N) + W/N + (1 - 1/N) P + 4N (c + s), every worker on its own core:")
    report["costs"], report["task_overhead_s"], report["startup_s"] = costs, overhead, startup
    report["per_partition"] = per_partition
    report["single_process_s"], report["projection_s"] = single, {}
    print(f"    1 process:    {single:8.2f} s")
    for n in (2, *PROJECTED_WORKERS):
        low, high = project(costs, overhead, n, per_partition)
        report["projection_s"][n] = [low, high]
        print(f"  {n:>3} workers: {low:8.2f} .. {high:6.2f} s   speed-up {single / high:5.2f}x .. {single / low:5.2f}x")
    print("\nthe schedule simulated (S + I(N) + B(N) + the list schedule of the 4N partitions as measured, one "
          "scheduler handing them out, one client taking the results in):")
    counts = (4 * 2, *(4 * n for n in PROJECTED_WORKERS))
    measured = interleaved_partitions(files.gt_path, files.pred_path, args.profile, counts)
    # the one process's partitions as measured alongside the wider plans (the machine's speed drifts over minutes)
    alongside = {**costs, "partitions": measured[counts[0]]}
    single_alongside = single_process_s(alongside)
    print(f"  (partitions of the plans of {', '.join(map(str, counts))} measured region by region, load average "
          f"{_load():.1f} after: {', '.join(f'{sum(measured[n]):.2f} s' for n in counts)} in all; one process "
          f"{single_alongside:.2f} s with the first)")
    report["interleaved_partitions"], report["single_process_alongside_s"] = measured, single_alongside
    report["simulated_s"] = {}
    for n in PROJECTED_WORKERS:
        wide = measured[4 * n]
        seconds = report["simulated_s"][n] = simulate(alongside, wide, overhead, n, per_partition)
        print(f"  {n:>3} workers: {seconds:8.2f} s   speed-up {single_alongside / seconds:5.2f}x, against this run's "
              f"one-process command line {runs[0].wall_s / seconds:5.2f}x   ({len(wide)} partitions: {sum(wide):.2f} s "
              f"in all, largest {max(wide):.3f} s, mean {sum(wide) / len(wide):.3f} s)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if args.figure:
        draw_speedups(args.figure, report)
        print(f"figure: {args.figure}")
    if differences or not csv_same:
        print("the 2-worker run differs from the single-process run:", *differences[:10], sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
