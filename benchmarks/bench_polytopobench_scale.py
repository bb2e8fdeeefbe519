"""PolyTopoBench-scale run of the evaluator: at least 300,000 references, 3 methods, ``compare`` on 2 workers.

It

1. builds (or finds under ``--work-dir``) the set of ``osm_benchmark_set.py`` repeated
   ``K = ceil(--min-references / references of the 1x set)`` times (``--scale`` sets K
   itself), once per method. The three methods are the generator's simulated predictions
   with every error of the simulation scaled by one factor (:data:`METHODS`,
   :func:`method_simulation`): ``err0.5`` half the errors, ``err1`` the generator's own
   (the predictions of the ``--scale K`` benchmark set), ``err2`` twice the errors. The
   factor multiplies the sizes of the geometric errors (per-vertex jitter, erosion or
   dilation, boundary roughness) and the rates of the topological and detection errors
   (misses, merges, lost, shifted and hallucinated holes, pinholes, duplicates, false
   positives), rates capped at 1; the family of each patch, the forced invalid rings and
   the score model are the generator's. The seed (0) is the same, so every method gets the
   same images and the same ground truth (checked byte for byte) and its own predictions;
2. runs ``python -m polytopo.evaluator compare --gt GT --pred err0.5=... --pred err1=...
   --pred err2=... --out DIR --workers 2`` (``--profile``, default ``paper`` with the
   default 500 bootstrap resamples; no plots, no GeoPackage) in a fresh process and
   measures its wall time (s, interpreter and cluster start-up included), the peak
   resident memory of the command-line process (``VmHWM``, the client) and of each worker
   (recorded by each worker when it closes, through the preload of ``peak_memory.py``),
   and checks that it exits 0 with ``table.csv`` holding the three methods and a
   ``summary.json`` for each;
3. with ``--single``, runs the plain evaluator on ``err1`` with ``--workers 0 --threads 1``: wall time
   and peak memory of one process evaluating one method;
4. unless ``--projection none``, measures in this process the parts of a 2-worker
   evaluation of each method, its workers reading their partitions of the files
   (``bench_evaluator_scale_out.part_costs``: the client's serial parts, the 8
   partitions, the bootstrap chunks' costs; the scheduler's cost per empty task and the
   cluster's start-up from ``task_overhead_s``; the client's and the scheduler's CPU per
   partition from ``per_partition_cpu_s``, measured with ``compare`` of one method on the
   4x set against 2 workers of 1 and of 32 threads) and projects the comparison to 2, 16 and 64
   workers with that benchmark's list-scheduling model (``project``, stated in its module
   docstring), summed over the methods (:func:`project_compare`): the methods are
   evaluated one after the other, the cluster starts once, so its start-up counts for the
   first method only. The model assumes every worker on a core of its own and the client
   on one more, and it leaves out what a comparison adds to the three evaluations (the
   paired bootstrap and writing the outputs); it counts the ground truth's loading once
   per method (``compare`` reads it once). ``--projection first`` measures the first
   method only and takes the others to cost the same;
5. prints one result block: the counts, the wall time, the client's and each worker's
   peak (MiB and MB), whether each stays within the goal of 1 GB (10^9 bytes), the
   single process and the projection. The load average (1 minute) is printed before and
   after each part: on a machine shared with other jobs the wall times move with it.

Exits 0 after a message when the shared data folder is absent; 1 when the methods'
ground truths differ or a run fails or lacks its table. A goal not met is reported, not an
error. Run ``python benchmarks/bench_polytopobench_scale.py --help``.
"""

import argparse
import csv
import dataclasses
import gc
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import osm_benchmark_set
from bench_evaluator_scale_out import (PROJECTED_WORKERS, bootstrap_s, index_s, part_costs, per_partition_cpu_s,
                                       project, run_with_worker_peaks, serial_s, single_process_s, task_overhead_s)

__all__ = ["GOAL_MB", "METHODS", "MIN_REFERENCES", "PER_PARTITION_SCALE", "SCALED_FIELDS", "main", "method_simulation",
           "project_compare", "scale_for"]

MIN_REFERENCES = 300_000
"""References (ground-truth instances) the set holds at least, PolyTopoBench's order of size."""

PER_PARTITION_SCALE = 4
"""Size (copies of the 1x set) of the set the client's and the scheduler's cost per partition is measured on."""

GOAL_MB = 1000.0
"""Peak resident memory allowed to the client and to each worker, MB (10^6 bytes): 1 GB."""

METHODS = (("err0.5", 0.5), ("err1", 1.0), ("err2", 2.0))
"""The compared methods: name and the factor on the simulation's errors (:func:`method_simulation`)."""

SCALED_FIELDS = ("miss_rate", "merge_rate", "seg_merge_rate", "direct_jitter_sigma_px", "hole_drop_rate",
                 "hole_shift_rate", "extra_hole_rate", "duplicate_rate", "false_positives_per_patch",
                 "seg_offset_sigma_px", "seg_roughness_sigma_px", "seg_small_hole_loss_rate", "seg_hole_loss_rate",
                 "seg_pinhole_rate")
"""Fields of ``osm_benchmark_set.SimulationParameters`` that a method's factor multiplies."""

_MIB_TO_MB = 2**20 / 1e6


def scale_for(min_references, references_per_copy):
    """Copies of the 1x set needed for at least ``min_references`` references.

    Examples
    --------
    >>> scale_for(300_000, 8_502)
    36
    >>> scale_for(8_502, 8_502)
    1
    """
    if references_per_copy <= 0:
        raise ValueError(f"Expected a 1x set with references but got {references_per_copy!r} per copy")
    return max(1, math.ceil(min_references / references_per_copy))


def method_simulation(factor):
    """Simulation parameters of a method whose errors are ``factor`` times the generator's.

    Every field of :data:`SCALED_FIELDS` is multiplied by ``factor`` (a rate is capped at
    1); the others keep the generator's defaults. ``factor`` 1 gives the defaults
    themselves, so that method's set is the ordinary benchmark set of that scale.

    Examples
    --------
    >>> method_simulation(2.0).direct_jitter_sigma_px
    (2.0, 4.0)
    >>> method_simulation(2.0).seg_small_hole_loss_rate
    1.0
    """
    if not factor >= 0:
        raise ValueError(f"Expected a factor >= 0 on the simulated errors but got {factor!r}")
    base = osm_benchmark_set.SimulationParameters()
    changes = {}
    for name in SCALED_FIELDS:
        value = getattr(base, name)
        scaled = tuple(v * factor for v in value) if isinstance(value, tuple) else value * factor
        changes[name] = min(1.0, scaled) if name.endswith("_rate") else scaled
    return dataclasses.replace(base, **changes)


def project_compare(costs_by_method, overhead_s, startup_s, workers, per_partition):
    """Lower and upper bound of the seconds of a comparison on ``workers`` workers.

    The sum over the methods of ``bench_evaluator_scale_out.project`` (seconds of one
    evaluation from its measured ``part_costs``); the cluster starts once, so ``startup_s``
    counts for the first method only. ``overhead_s`` is the scheduler's cost per empty task
    (s), ``per_partition`` the client's and the scheduler's CPU seconds per partition
    (``client_s``, ``scheduler_s``, as ``per_partition_cpu_s`` returns them). The ground
    truth is indexed with the first method only (``compare`` indexes it once): the others
    count their predictions' index.
    """
    bounds = [project(costs if k == 0 else _ground_truth_indexed(costs), overhead_s, workers, per_partition,
                      startup_s if k == 0 else 0.0)
              for k, costs in enumerate(costs_by_method)]
    return sum(low for low, _ in bounds), sum(high for _, high in bounds)


def _ground_truth_indexed(costs):
    """The costs of a method after the first: ``compare`` indexes the ground truth once, so only its predictions."""
    if "index" not in costs:
        return costs
    return {**costs, "index": {n: {"pred": sides["pred"]} for n, sides in costs["index"].items()}}


def _build(vectors_dir, cache_dir, scale, factor):
    """Build (or find in ``cache_dir``) the ``scale`` x set with the method of ``factor``; runs in a child process."""
    def log(message):
        if message.startswith("building") or message.startswith(f"  copy {scale}/"):
            print(message, flush=True)

    return osm_benchmark_set.load_or_build(vectors_dir, cache_dir=cache_dir, scale=scale,
                                           sim=method_simulation(factor), log=log)


def _build_in_child(vectors_dir, cache_dir, scale, factor):
    """:func:`_build` in a fresh process, so that the build's memory is returned before the runs."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_build, vectors_dir, cache_dir, scale, factor).result()


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _load():
    return os.getloadavg()[0]


def _memory_total_mib():
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            return next(int(line.split()[1]) / 1024 for line in handle if line.startswith("MemTotal:"))
    except (OSError, StopIteration):
        return math.nan


def _mib(value):
    return f"{value:,.0f} MiB ({value * _MIB_TO_MB:,.0f} MB)"


def _within(value):
    return value * _MIB_TO_MB <= GOAL_MB


def _check_table(out_dir, names):
    """Problems with the comparison's outputs: ``table.csv`` must list ``names``, each with a ``summary.json``."""
    table = out_dir / "table.csv"
    if not table.is_file():
        return [f"{table} is missing"]
    with open(table, newline="", encoding="utf-8") as handle:
        listed = [row["method"] for row in csv.DictReader(handle)]
    problems = [] if listed == list(names) else [f"table.csv lists {listed}, expected {list(names)}"]
    return problems + [f"{out_dir / n / 'summary.json'} is missing" for n in names
                       if not (out_dir / n / "summary.json").is_file()]


def _table3(out_dir):
    """The Table 3 lines of the comparison's ``table.md``."""
    lines = (out_dir / "table.md").read_text(encoding="utf-8").splitlines()
    return lines[:lines.index("")] if "" in lines else lines


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", type=Path, required=True,
                        help="folder for the built sets (cached between runs) and the outputs of the runs")
    parser.add_argument("--min-references", type=int, default=MIN_REFERENCES,
                        help=f"references the set holds at least (default {MIN_REFERENCES:,})")
    parser.add_argument("--scale", type=int, help="copies of the 1x set (default: the fewest for --min-references)")
    parser.add_argument("--profile", default="paper", choices=("paper", "reference-code"),
                        help="evaluation profile (default paper)")
    parser.add_argument("--single", action="store_true",
                        help="also run the plain evaluator on err1 with --workers 0 (one process)")
    parser.add_argument("--projection", choices=("all", "first", "none"), default="all",
                        help="measure the part costs of every method (all), of the first only, or skip the projection")
    parser.add_argument("--python", default=sys.executable, help="interpreter with polytopo installed")
    parser.add_argument("--json", type=Path, help="also write the measurements to this JSON file")
    return parser.parse_args(argv)


def _build_sets(args, vectors_dir, report):
    cache = args.work_dir / "sets"
    one = _build_in_child(vectors_dir, cache, 1, 1.0)
    per_copy = one.counts["gt_instances"]
    scale = args.scale or scale_for(args.min_references, per_copy)
    print(f"1x set: {per_copy:,} references; {args.min_references:,} references need --scale "
          f"{scale_for(args.min_references, per_copy)}; building --scale {scale}", flush=True)
    sets = {}
    for name, factor in METHODS:
        started = time.perf_counter()
        sets[name] = _build_in_child(vectors_dir, cache, scale, factor)
        print(f"  {name} (errors x {factor}): {sets[name].folder} ({time.perf_counter() - started:.1f} s, "
              f"load average {_load():.1f})", flush=True)
    hashes = {name: _sha256(files.gt_path) for name, files in sets.items()}
    report.update(scale=scale, references_per_copy=per_copy,
                  counts={name: files.counts for name, files in sets.items()}, gt_sha256=hashes)
    return scale, sets, len(set(hashes.values())) == 1


def _print_counts(scale, sets):
    first = next(iter(sets.values())).counts
    print(f"\nset {scale}x: {first['images']:,} images, {first['gt_instances']:,} references with "
          f"{first['gt_holes']:,} holes ({first['gt_instances_with_holes']:,} references with a hole); "
          "the same ground truth for every method (gt.json identical)")
    for name, factor in METHODS:
        c = sets[name].counts
        print(f"  {name:<7} errors x {factor:<4} {c['predictions']:>9,} predictions, {c['predicted_holes']:>7,} "
              f"predicted holes, {c['invalid_predictions']:>6,} invalid ({c['forced_invalid_predictions']:,} forced)")


def _run_compare(args, sets, report):
    gt_path = next(iter(sets.values())).gt_path
    out = args.work_dir / "runs" / "compare-w2"
    command = ["compare", "--gt", gt_path]
    for name, files in sets.items():
        command += ["--pred", f"{name}={files.pred_path}"]
    command += ["--out", out, "--overwrite", "--profile", args.profile, "--no-plots", "--no-gpkg", "--quiet",
                "--workers", "2"]
    print(f"\nload average {_load():.1f} before compare --workers 2", flush=True)
    run, peaks = run_with_worker_peaks(args.python, command)
    report["load_average"]["after compare"] = run.load_average
    problems = ([f"exit status {run.returncode}: {run.stderr_tail}"] if run.returncode != 0
                else _check_table(out, list(sets)))
    workers = sorted(peaks.values())
    report["compare"] = {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "returncode": run.returncode,
                         "client_peak_mib": run.peak_rss_mib, "worker_peaks_mib": workers, "problems": problems}
    print(f"compare, {len(sets)} methods, --workers 2: {run.wall_s:.1f} s wall, exit status {run.returncode}; "
          f"client peak {_mib(run.peak_rss_mib)}; workers {', '.join(_mib(w) for w in workers) or 'not recorded'}; "
          f"load average {run.load_average:.1f} after")
    if problems:
        print("the comparison is incomplete:", *problems, sep="\n  ")
    else:
        print("table.csv lists the 3 methods, each with its summary.json; Table 3:", *_table3(out), sep="\n  ")
    return run, workers, problems


def _run_single(args, files, report):
    out = args.work_dir / "runs" / "single-w0"
    command = ["--gt", files.gt_path, "--pred", files.pred_path, "--out", out, "--overwrite", "--profile",
               args.profile, "--no-plots", "--no-gpkg", "--quiet", "--workers", "0", "--threads", "1"]
    print(f"\nload average {_load():.1f} before the single process (err1, --workers 0)", flush=True)
    run, _ = run_with_worker_peaks(args.python, command)
    report["single"] = {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "returncode": run.returncode,
                        "peak_mib": run.peak_rss_mib}
    print(f"one process, err1, --workers 0: {run.wall_s:.1f} s wall, exit status {run.returncode}, peak "
          f"{_mib(run.peak_rss_mib)}; load average {run.load_average:.1f} after")
    if run.returncode != 0:
        print(run.stderr_tail)
    return run


def _projection(args, sets, report):
    names = list(sets) if args.projection == "all" else list(sets)[:1]
    measured = {}
    for name in names:
        started = time.perf_counter()
        # compare's workers read each method's partitions of the files, as an evaluation's do
        measured[name] = part_costs(sets[name].gt_path, sets[name].pred_path, args.profile, 4 * 2)
        gc.collect()
        costs = measured[name]
        print(f"  parts of {name} (measured one after the other in this process in {time.perf_counter() - started:.0f}"
              f" s, load average {_load():.1f} after): serial client S {sum(costs['serial'].values()):.2f} s ("
              + ", ".join(f"{k} {v:.2f}" for k, v in costs["serial"].items())
              + f"; the index on 2 workers {index_s(costs, 2):.2f}); 8 partitions {sum(costs['partitions']):.2f} s "
              f"(largest {max(costs['partitions']):.2f} s, "
              f"reading its records {max(costs['reads']):.2f} s); bootstrap {bootstrap_s(costs, 1):.3f} s in one "
              "process", flush=True)
    overhead, startup = task_overhead_s()
    # what one more partition costs the client and the scheduler, measured with compare on the 4x set of one method
    small = _build_in_child(osm_benchmark_set.find_vectors_dir(), args.work_dir / "sets", PER_PARTITION_SCALE, 1.0)
    per_partition = per_partition_cpu_s(args.python, lambda address, out: [
        "compare", "--gt", small.gt_path, "--pred", f"err1={small.pred_path}", "--out", out, "--profile", args.profile,
        "--no-plots", "--no-gpkg", "--quiet", "--scheduler", address])
    print(f"  per partition (compare of one method, {PER_PARTITION_SCALE}x set, 2 workers of 1 and of "
          f"{max(PROJECTED_WORKERS) // 2} threads): client {per_partition['client_s'] * 1e3:.2f} ms, scheduler "
          f"{per_partition['scheduler_s'] * 1e3:.2f} ms of CPU", flush=True)
    by_method = [measured.get(name, measured[names[0]]) for name in sets]
    single = sum(single_process_s(costs) for costs in by_method)
    serial = sum(serial_s(costs if k == 0 else _ground_truth_indexed(costs), overhead)
                 for k, costs in enumerate(by_method))
    assumed = "" if args.projection == "all" else f" (the others taken to cost as much as {names[0]})"
    print(f"  scheduler cost per task {overhead * 1e3:.2f} ms; cluster start-up {startup:.2f} s; "
          f"methods measured: {', '.join(names)}{assumed}")
    projection = {1: [single, single]}
    for n in (2, *PROJECTED_WORKERS):
        projection[n] = list(project_compare(by_method, overhead, startup, n, per_partition))
    report["projection"] = {"methods_measured": names, "task_overhead_s": overhead, "startup_s": startup,
                            "per_partition": per_partition,
                            "serial_s": serial, "seconds": projection,
                            "costs": measured}
    return projection, single, serial


def _result_block(scale, sets, compare, workers, single, projection, report):
    c = next(iter(sets.values())).counts
    print("\n" + "=" * 24 + " PolyTopoBench-scale run: result " + "=" * 24)
    print(f"machine: {os.cpu_count()} CPUs, {_memory_total_mib() / 1024:.1f} GiB memory; load average "
          + ", ".join(f"{k} {v:.1f}" for k, v in report["load_average"].items()))
    print(f"set: --scale {scale}, {c['images']:,} images, {c['gt_instances']:,} references "
          f"({'>=' if c['gt_instances'] >= MIN_REFERENCES else 'FEWER THAN'} {MIN_REFERENCES:,}), "
          f"{c['gt_holes']:,} reference holes")
    print("predictions: " + "; ".join(f"{n} {s.counts['predictions']:,} ({s.counts['predicted_holes']:,} holes)"
                                      for n, s in sets.items()))
    print(f"compare --workers 2 ({report['profile']}, 3 methods): {compare.wall_s:.1f} s wall, "
          f"{'complete' if not report['compare']['problems'] else 'INCOMPLETE'}")
    client_ok = _within(compare.peak_rss_mib)
    print(f"client peak: {_mib(compare.peak_rss_mib)} -> goal <= 1 GB {'met' if client_ok else 'NOT met'}")
    for k, w in enumerate(workers, 1):
        print(f"worker {k} peak: {_mib(w)} -> goal <= 1 GB {'met' if _within(w) else 'NOT met'}")
    if not workers:
        print("worker peaks: not recorded")
    if single is not None:
        print(f"one process (err1 only, --workers 0): {single.wall_s:.1f} s wall, peak {_mib(single.peak_rss_mib)}")
    if projection is not None:
        seconds, one, serial = projection
        print("projection of the comparison (sum over the methods of T(N) of bench_evaluator_scale_out, "
              "each worker on its own core, the client on one more; paired bootstrap and writing left out):")
        print(f"  1 process {one:8.1f} s; serial client time S + I(64) {serial:.1f} s (no N up to 64 gives more than "
              f"{one / serial:.1f}x)")
        for n in (2, *PROJECTED_WORKERS):
            low, high = seconds[n]
            print(f"  {n:>2} workers {low:8.1f} .. {high:6.1f} s   speed-up {one / high:5.2f}x .. {one / low:5.2f}x")
    report["goals"] = {"client_within_1gb": client_ok, "workers_within_1gb": [_within(w) for w in workers]}


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    vectors_dir = osm_benchmark_set.find_vectors_dir()
    if vectors_dir is None:
        print("Skipping: the shared data folder (data/vectors) is absent, so the benchmark set cannot be built.")
        return 0
    args.work_dir.mkdir(parents=True, exist_ok=True)
    report = {"profile": args.profile, "load_average": {"start": _load()}}
    print(f"machine: {os.cpu_count()} CPUs, {_memory_total_mib() / 1024:.1f} GiB memory, load average "
          f"{report['load_average']['start']:.1f} at start", flush=True)
    scale, sets, same_gt = _build_sets(args, vectors_dir, report)
    report["load_average"]["after the build"] = _load()
    if not same_gt:
        print("the methods' ground truths differ:", report["gt_sha256"])
        return 1
    _print_counts(scale, sets)
    compare, workers, problems = _run_compare(args, sets, report)
    single = _run_single(args, sets["err1"], report) if args.single else None
    if single is not None:
        report["load_average"]["after the single process"] = single.load_average
    projection = None
    if args.projection != "none":
        print(f"\nparts of each evaluation for the projection (load average {_load():.1f} before):", flush=True)
        projection = _projection(args, sets, report)
        report["load_average"]["after the part costs"] = _load()
    _result_block(scale, sets, compare, workers, single, projection, report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 1 if problems or (single is not None and single.returncode != 0) else 0


if __name__ == "__main__":
    sys.exit(main())
