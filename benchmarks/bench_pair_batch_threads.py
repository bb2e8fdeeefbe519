"""Would threads over pair batches use a second core? The pair kernels on a thread pool against in turn.

The pair metrics (POLIS, MTA, HD95) run their kernels over consecutive batches of pairs
(``kernels.map_pair_batches``); the batches are independent, so a pool of threads could
run them side by side if the kernels released the GIL for most of their time. This
script evaluates the 1x set of ``osm_benchmark_set.py`` (``paper`` profile, no bootstrap,
one BLAS thread, in this process), alternating ``--repeats`` times between

* the evaluator as it is (the batches one after the other), and
* the same evaluation with ``map_pair_batches`` replaced, in the modules that call it, by
  a version that submits every batch to a pool of ``--threads`` threads and concatenates
  the results in batch order,

checks that both give the same summary metrics, and prints the median wall and CPU
seconds of each and the ratio. CPU time above wall time means the threads overlapped
(the kernels released the GIL for that part); a wall ratio near 1 with CPU equal to wall
means they ran one at a time. Both evaluations run with ``threads=1``: the evaluator's
own kernel threads (``polytopo.core.kernel_threads``, which since run the batches side
by side too) stay off, and only this script's pool differs.

Run ``python benchmarks/bench_pair_batch_threads.py [--threads 2] [--repeats 3]``.
"""

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import osm_benchmark_set  # noqa: E402

from polytopo.core.blas_threads import single_blas_thread  # noqa: E402
from polytopo.evaluator import evaluate, load_inputs  # noqa: E402
from polytopo.evaluator.geometry import boundary, kernels, mta  # noqa: E402

CALLERS = (boundary, mta)
"""Modules that call ``map_pair_batches`` for the pair metrics."""


def threaded_batches(pool):
    """A ``map_pair_batches`` that runs the batches on ``pool``; same results, in batch order."""

    def run(kernel, points, *per_pair, budget=None):
        points = np.asarray(points, dtype=np.int64)
        with kernels.reporting(None):
            futures = [pool.submit(lambda part=part: np.asarray(kernel(*(v[part] for v in per_pair)), dtype=float))
                       for part in kernels.pair_batches(points, budget)]
            results = [future.result() for future in futures]
        return np.concatenate(results) if results else np.zeros(0)

    return run


def timed(gt, pred, batches):
    """Wall and CPU seconds of one evaluation with ``batches`` as ``map_pair_batches``, and its metrics."""
    for module in CALLERS:
        module.map_pair_batches = batches
    wall, cpu = time.perf_counter(), time.process_time()
    # threads=1: the evaluator's own kernel threads off, so that only this script's pool differs
    metrics = evaluate(gt, pred, profile="paper", bootstrap_resamples=0, threads=1).summary["metrics"]
    return time.perf_counter() - wall, time.process_time() - cpu, metrics


def main(argv=None):
    """Run the comparison; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="threads of the pool (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (medians are reported)")
    parser.add_argument("--cache", type=Path, help="cache of built sets (default: that of osm_benchmark_set.py)")
    args = parser.parse_args(argv)
    vectors = osm_benchmark_set.find_vectors_dir()
    if vectors is None:
        print("shared data folder not found (set POLYTOPO_SHARED); nothing to measure")
        return 0
    files = osm_benchmark_set.load_or_build(vectors, args.cache, scale=1, seed=0)
    gt, pred, _ = load_inputs(files.gt_path, files.pred_path)
    serial = kernels.map_pair_batches
    runs = {"serial": [], "threads": []}
    with single_blas_thread(), ThreadPoolExecutor(args.threads) as pool:
        sides = {"serial": serial, "threads": threaded_batches(pool)}
        for round_index in range(args.repeats):
            order = ("serial", "threads") if round_index % 2 == 0 else ("threads", "serial")
            for side in order:
                runs[side].append(timed(gt, pred, sides[side]))
    for module in CALLERS:
        module.map_pair_batches = serial
    reference = runs["serial"][0][2]
    same = all(_same(run[2], reference) for side in runs.values() for run in side)
    for side, found in runs.items():
        walls, cpus = [run[0] for run in found], [run[1] for run in found]
        print(f"{side:8} wall {', '.join(f'{w:.2f}' for w in walls)} s (median {statistics.median(walls):.2f}); "
              f"CPU {', '.join(f'{c:.2f}' for c in cpus)} s (median {statistics.median(cpus):.2f})")
    ratio = statistics.median(r[0] for r in runs["serial"]) / statistics.median(r[0] for r in runs["threads"])
    print(f"serial / {args.threads} threads, wall: {ratio:.2f}x; metrics {'equal' if same else 'DIFFER'}")
    return 0 if same else 1


def _same(a, b):
    """Equal metric dicts, NaN equal to NaN."""
    return a.keys() == b.keys() and all(x == y or (x != x and y != y) for x, y in zip(a.values(), b.values()))


if __name__ == "__main__":
    sys.exit(main())
