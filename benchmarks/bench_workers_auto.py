"""Where a local cluster pays: one process against ``--workers N`` by input size, for ``--workers auto``.

The evaluator's command lines start a local cluster of one worker per core by default
(``--workers auto``) once the inputs reach ``polytopo.core.cluster.AUTO_CLUSTER_MIN_BYTES``.
This script measures where that is true on this machine: from the 1x set of
``osm_benchmark_set.py`` it writes subsets of its first images (``--fractions`` of the
images, smallest first) and, with ``--scale``, the Kx set itself, and runs the command line
on each in fresh processes, alternating ``--workers 0`` and ``--workers N`` (default 2),
``--repeats`` times, with every default output (CSV tables, GeoPackage, plots: pass
``--no-plots`` through ``--extra`` to drop them). It prints per set the input size, the
median wall and CPU seconds of both, the speed-up (one process / N workers, medians) and
whether the threshold chose right: auto should run in one process where the speed-up is
below 1 and on the cluster where it is above. It checks that both summaries agree (every
number within 1e-9) and exits 1 when they do not or a run fails; 0 after a message when the
shared data folder is absent.

Run ``python benchmarks/bench_workers_auto.py --help``.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import osm_benchmark_set
from bench_evaluator import EVALUATOR_MODULE, run_measured
from bench_evaluator_scale_out import _walk

__all__ = ["main"]


def _subset(files, fraction, folder):
    """gt.json / pred.json of the first ``fraction`` of the images of ``files`` (a 1x set) in ``folder``."""
    gt = json.loads(Path(files.gt_path).read_text())
    pred = json.loads(Path(files.pred_path).read_text())
    keep = {image["id"] for image in gt["images"][:max(1, round(fraction * len(gt["images"])))]}
    gt = {**gt, "images": [i for i in gt["images"] if i["id"] in keep],
          "annotations": [a for a in gt["annotations"] if a["image_id"] in keep]}
    pred = [p for p in pred if p["image_id"] in keep]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gt.json").write_text(json.dumps(gt, separators=(",", ":")))
    (folder / "pred.json").write_text(json.dumps(pred, separators=(",", ":")))
    return folder / "gt.json", folder / "pred.json"


def _summary_differences(a, b):
    return _walk(*(json.loads(Path(path).read_text()) for path in (a, b)))


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 1.0],
                        help="shares of the 1x set's images to measure (default 0.125 0.25 0.5 1)")
    parser.add_argument("--scale", type=int, nargs="*", default=[4], help="whole Kx sets to measure too (default 4)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the cluster runs (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind, alternating (default 3)")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                        help="more evaluator options for both runs (after everything else)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with polytopo installed")
    parser.add_argument("--cache", type=Path, help="cache folder of the built sets")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line; returns the exit status."""
    from polytopo.core.cluster import AUTO_CLUSTER_MIN_BYTES

    args = _parse_args(argv)
    base = osm_benchmark_set.set_for_benchmark(1, args.cache)
    if base is None:
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="polytopo_workers_auto_") as scratch:
        scratch = Path(scratch)
        sets = [(f"{fraction:g} of 1x", *_subset(base, fraction, scratch / f"f{fraction:g}")) for fraction in
                sorted(args.fractions)]
        for scale in args.scale:
            files = osm_benchmark_set.set_for_benchmark(scale, args.cache)
            sets.append((f"{scale}x", files.gt_path, files.pred_path))
        for name, gt, pred in sets:
            size = sum(os.path.getsize(path) for path in (gt, pred))
            times = {0: [], args.workers: []}
            for repeat in range(args.repeats):
                for workers in times:
                    out = scratch / f"{name}-{workers}-{repeat}".replace(" ", "_")
                    arguments = ["--gt", gt, "--pred", pred, "--out", out, "--quiet", "--workers", str(workers),
                                 *args.extra]
                    run = run_measured(args.python, "module", EVALUATOR_MODULE, arguments)
                    if run.returncode != 0:
                        print(f"{name} with --workers {workers} failed:\n{run.stderr_tail}")
                        return 1
                    times[workers].append((run.wall_s, run.cpu_s))
                    print(f"  {name} ({size / 1e6:.1f} MB) --workers {workers}, repeat {repeat + 1}: "
                          f"{run.wall_s:.2f} s wall, {run.cpu_s:.2f} CPU-s, load average {os.getloadavg()[0]:.1f}",
                          flush=True)
                differences = _summary_differences(scratch / f"{name}-0-{repeat}".replace(" ", "_") / "summary.json",
                                                   out / "summary.json")
                if differences:
                    print(f"{name}: the summaries differ: {differences[:3]}")
                    return 1
            one, many = (statistics.median(w for w, _ in times[k]) for k in times)
            cpu_one, cpu_many = (statistics.median(c for _, c in times[k]) for k in times)
            rows.append((name, size, one, many, cpu_one, cpu_many))
    print(f"\nmedians of {args.repeats} alternating runs; auto starts a cluster from {AUTO_CLUSTER_MIN_BYTES / 1e6:g} MB "
          f"of input ({os.cpu_count()} cores here)")
    print("| set | input | one process, wall / CPU | "
          f"{args.workers} workers, wall / CPU | speed-up | auto chooses | right |")
    print("|---|---|---|---|---|---|---|")
    for name, size, one, many, cpu_one, cpu_many in rows:
        cluster = size >= AUTO_CLUSTER_MIN_BYTES
        right = (one / many >= 1.0) == cluster
        print(f"| {name} | {size / 1e6:.1f} MB | {one:.2f} / {cpu_one:.2f} s | {many:.2f} / {cpu_many:.2f} s | "
              f"{one / many:.2f}x | {'cluster' if cluster else 'one process'} | {'yes' if right else 'NO'} |")
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(f"({time.perf_counter() - started:.0f} s)")
    sys.exit(status)
