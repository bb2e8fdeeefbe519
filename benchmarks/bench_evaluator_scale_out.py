"""Scale-out benchmark of the evaluator on Dask: 1 vs 2 workers, the cost of each part, a projection.

On the ``--scale`` x version (default 4) of the set of ``osm_benchmark_set.py`` it

1. runs the evaluator's command line (``paper`` profile, default bootstrap, no plots,
   no GeoPackage) in fresh processes in one process (``--workers 0``) and on a local
   cluster of 2 workers (``--workers 2``), checks that every number of both
   ``summary.json`` agrees within 1e-9 and the per-feature CSVs are identical, and
   prints both wall times (interpreter start and cluster start-up included), the
   speed-up and the client's peak resident memory;
2. measures in this process, without a cluster, what a cluster run is made of: the
   client's serial parts (loading, partitioning, pickling the partitions out and the
   results back, merge, the dataset-wide summary, analyses, records), the work of each
   of the ``4 x 2`` partitions of a 2-worker run (filters and per-image work), one
   bootstrap chunk, and the scheduler's cost per task (empty tasks on a 2-worker cluster);
3. projects the evaluation time to 16 and 64 workers with the model

       T(N) = S + I * W / N + B(N) + k * P(N)

   where S is the serial client time, W the summed per-partition work, I the measured
   imbalance (largest partition over the mean), B(N) the bootstrap chunks
   (``ceil(chunks / N)`` chunk times), k the scheduler cost per task and P(N) = 4N + chunks
   the number of tasks. It assumes workers on their own cores and the client's network
   and memory bandwidth not limiting (the inputs are pickled once, serially, on the client).

The machine's load average is printed: ratios are only meaningful on an idle machine
with at least 3 cores (client + 2 workers). Exits 0 after a message when the shared data
folder is absent; 1 when the two runs disagree or one fails.

Run ``python benchmarks/bench_evaluator_scale_out.py --help``.
"""

import argparse
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

__all__ = ["main", "project", "part_costs"]

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


def part_costs(gt_path, pred_path, n_parts):
    """Seconds of every part of a cluster evaluation, measured in this process.

    Returns
    -------
    dict
        ``serial`` (name → seconds on the client), ``partitions`` (seconds of each
        partition's per-image work), ``bootstrap_chunk_s``, ``bootstrap_chunks``.
    """
    from polytopo.evaluator import load_inputs
    from polytopo.evaluator.analysis import (per_image_statistics, resample_metrics, resample_weights,
                                             simple_to_complex, wrong_topo)
    from polytopo.evaluator.distributed import Partition, _filtered, _match_task, merge_matches, partition_images
    from polytopo.evaluator.paper import summarize_paper
    from polytopo.evaluator.params import params_for
    from polytopo.evaluator.records import build_records

    params = params_for("paper")
    serial = {}
    (gt, pred, _), serial["load"] = _timed(load_inputs, gt_path, pred_path)
    parts, serial["partitioning"] = _timed(partition_images, gt, pred, n_parts)
    tasks = [(p.gt_set, p.pred_set, params) for p in parts]
    blobs, serial["pickle partitions"] = _timed(lambda: [pickle.dumps(t, protocol=5) for t in tasks])
    partitions, results = [], []
    for task in tasks:
        result, seconds = _timed(_match_task, task)
        partitions.append(seconds)
        results.append(result)
    results, serial["unpickle results"] = _timed(
        lambda: [pickle.loads(pickle.dumps(r, protocol=5)) for r in results])
    serial["unpickle results"] /= 2  # the measured round trip counts the worker's pickling too

    def merge():
        matches = [match for _, match in results]
        whole_gt, gt_at = _filtered(gt, parts, [k[0] for k, _ in results], matches, "gt")
        whole_pred, pred_at = _filtered(pred, parts, [k[1] for k, _ in results], matches, "pred")
        return merge_matches(whole_gt, whole_pred, [Partition(None, None, g, q) for g, q in zip(gt_at, pred_at)],
                             matches)

    merged, serial["merge"] = _timed(merge)
    outcome, serial["summary"] = _timed(summarize_paper, merged, params)
    _, serial["analyses"] = _timed(lambda: (simple_to_complex(outcome), wrong_topo(outcome)))
    _, serial["records"] = _timed(build_records, outcome)
    stats = per_image_statistics(outcome)
    chunks = list(resample_weights(len(outcome.image_ids), params.bootstrap_resamples, params.bootstrap_seed))
    _, chunk_s = _timed(resample_metrics, chunks[0], stats, outcome.ranking)
    return {"serial": serial, "partitions": partitions, "bootstrap_chunk_s": chunk_s,
            "bootstrap_chunks": len(chunks), "partition_bytes": sum(len(b) for b in blobs)}


def task_overhead_s(workers=2, tasks=200):
    """Seconds the scheduler adds per task (empty tasks mapped on a local cluster)."""
    from polytopo.evaluator.cluster import map_partitions, open_client

    with open_client(workers) as client:
        map_partitions(client, _noop, range(10))
        _, seconds = _timed(map_partitions, client, _noop, range(tasks))
    return seconds / tasks


def project(costs, overhead_s, workers):
    """Projected evaluation seconds on ``workers`` workers (model of the module docstring)."""
    serial = sum(costs["serial"].values())
    work = sum(costs["partitions"])
    mean = work / max(1, len(costs["partitions"]))
    imbalance = max(costs["partitions"]) / mean if mean else 1.0
    chunks = costs["bootstrap_chunks"]
    bootstrap = math.ceil(chunks / workers) * costs["bootstrap_chunk_s"]
    return serial + imbalance * work / workers + bootstrap + overhead_s * (4 * workers + chunks)


def _cli(python, files, out, workers):
    args = ["--gt", files.gt_path, "--pred", files.pred_path, "--out", out, "--no-plots", "--no-gpkg", "--quiet",
            "--workers", str(workers)]
    return run_measured(python, "module", EVALUATOR_MODULE, args)


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=4, help="size of the set, in copies of the 1x set (>= 4)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with polytopo installed")
    parser.add_argument("--cache", type=Path, help="cache folder of the built sets")
    parser.add_argument("--json", type=Path, help="also write the measurements to this JSON file")
    args = parser.parse_args(argv)
    if args.scale < 4:
        parser.error(f"expected --scale >= 4 but got {args.scale}")
    return args


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    vectors_dir = osm_benchmark_set.find_vectors_dir()
    if vectors_dir is None:
        print("Skipping: the shared data folder (data/vectors) is absent, so the benchmark set cannot be built.")
        return 0
    files = osm_benchmark_set.load_or_build(vectors_dir, cache_dir=args.cache, scale=args.scale,
                                            log=lambda message: None)
    c = files.counts
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    print(f"set {args.scale}x: {c['images']} images, {c['gt_instances']} GT and {c['predictions']} predicted "
          "instances")
    report = {"scale": args.scale, "counts": c}
    with tempfile.TemporaryDirectory(prefix="polytopo_scale_out_") as scratch:
        runs = {n: _cli(args.python, files, Path(scratch) / f"w{n}", n) for n in (0, 2)}
        failed = [n for n, r in runs.items() if r.returncode != 0]
        if failed:
            print(f"the run with --workers {failed[0]} failed:\n{runs[failed[0]].stderr_tail}")
            return 1
        one, two = (json.loads((Path(scratch) / f"w{n}" / "summary.json").read_text()) for n in (0, 2))
        differences = _walk(one, two)
        csv_same = all((Path(scratch) / "w0" / name).read_bytes() == (Path(scratch) / "w2" / name).read_bytes()
                       for name in ("predictions.csv", "references.csv", "missed_holes.csv",
                                    "hallucinated_holes.csv"))
    print(f"load average after the runs {os.getloadavg()[0]:.1f}")
    print(f"end to end (command line, fresh processes): 1 process {runs[0].wall_s:.2f} s "
          f"(peak {runs[0].peak_rss_mib:.0f} MiB), 2 workers {runs[2].wall_s:.2f} s (client peak "
          f"{runs[2].peak_rss_mib:.0f} MiB): speed-up {runs[0].wall_s / runs[2].wall_s:.2f}x")
    print(f"summary numbers within 1e-9: {not differences}; per-feature CSVs identical: {csv_same}")
    report["end_to_end"] = {"1 process": runs[0].wall_s, "2 workers": runs[2].wall_s,
                            "speedup": runs[0].wall_s / runs[2].wall_s, "peak_mib_1": runs[0].peak_rss_mib,
                            "peak_mib_client_2": runs[2].peak_rss_mib, "identical": not differences and csv_same}

    costs = part_costs(files.gt_path, files.pred_path, 4 * 2)
    overhead = task_overhead_s()
    parts = costs["partitions"]
    print("\nparts of a 2-worker run, measured in one process:")
    for name, seconds in costs["serial"].items():
        print(f"  client  {name:<20} {seconds:8.3f} s")
    print(f"  workers {len(parts)} partitions        {sum(parts):8.3f} s in all (largest {max(parts):.3f} s, "
          f"mean {sum(parts) / len(parts):.3f} s); {costs['partition_bytes'] / 2**20:.1f} MiB pickled out")
    print(f"  workers bootstrap chunk          {costs['bootstrap_chunk_s']:8.3f} s x {costs['bootstrap_chunks']}")
    print(f"  scheduler cost per task          {overhead * 1e3:8.2f} ms")
    serial = sum(costs["serial"].values())
    print(f"  serial client share of a 1-process evaluation: "
          f"{serial / (serial + sum(parts) + costs['bootstrap_chunk_s'] * costs['bootstrap_chunks']):.0%}")
    print("\nprojection T(N) = S + I*W/N + ceil(chunks/N)*b + k*(4N + chunks):")
    report["costs"], report["task_overhead_s"], report["projection_s"] = costs, overhead, {}
    for n in (1, 2, *PROJECTED_WORKERS):
        seconds = project(costs, overhead, n)
        report["projection_s"][n] = seconds
        print(f"  {n:>3} workers: {seconds:8.2f} s   speed-up {project(costs, overhead, 1) / seconds:5.2f}x")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if differences or not csv_same:
        print("the 2-worker run differs from the single-process run:", *differences[:10], sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
