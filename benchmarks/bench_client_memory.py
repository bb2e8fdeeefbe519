"""Where a cluster client's memory goes: its peak resident memory in every phase of one evaluation.

On the ``--scale`` x set of ``osm_benchmark_set.py`` (default 16) it starts a local cluster
of ``--workers`` processes (default 2), loads both inputs, evaluates them on the cluster
with the workers making the per-feature outputs (as the command line does), and writes
every output but the plots (``--no-gpkg`` leaves out the GeoPackage). At each progress
phase it resets the process's high-water mark (``/proc/self/clear_refs``) and prints, per
phase, the peak (``VmHWM``) and the resident memory at its end (``VmRSS``), in MiB: the
phases that hold the most are where a client stays above a memory goal.

Linux only (``/proc``). Exits 0 after a message when the shared data folder is absent.

Run ``python benchmarks/bench_client_memory.py --help``.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import osm_benchmark_set

__all__ = ["main"]


def _memory_mib():
    """``(VmRSS, VmHWM)`` of this process, MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return tuple(int(fields[key].split()[0]) // 1024 for key in ("VmRSS", "VmHWM"))


class PhaseMemory:
    """A progress callback that prints the peak and the end memory of the phase that just ended."""

    def __init__(self):
        self.name, self.started, self.rows = None, time.perf_counter(), []

    def __call__(self, name):
        rss, peak = _memory_mib()
        if self.name is not None:
            self.rows.append((self.name, peak, rss))
            print(f"  {self.name:>28}: peak {peak:,} MiB, end {rss:,} MiB, {time.perf_counter() - self.started:.1f} s",
                  flush=True)
        Path("/proc/self/clear_refs").write_text("5")
        self.name, self.started = name, time.perf_counter()


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=16, help="size of the set, in copies of the 1x set (default 16)")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes (default 2)")
    parser.add_argument("--no-gpkg", action="store_true", help="do not write the GeoPackage")
    parser.add_argument("--cache", type=Path, help="cache folder of the built sets")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line; returns the exit status."""
    from polytopo.core.cluster import open_client
    from polytopo.evaluator import evaluate, load_inputs
    from polytopo.evaluator.outputs.record_parts import parts_request
    from polytopo.evaluator.outputs.report import write_report

    args = _parse_args(argv)
    files = osm_benchmark_set.set_for_benchmark(args.scale, args.cache)
    if files is None:
        return 0
    phases = PhaseMemory()
    with open_client(workers=args.workers) as client, tempfile.TemporaryDirectory() as scratch:
        phases("load")
        gt, pred, frame = load_inputs(files.gt_path, files.pred_path)
        phases("start")
        evaluation = evaluate(gt, pred, profile="paper", progress=phases, client=client,
                              record_parts=parts_request(frame, not args.no_gpkg))
        phases("write")
        write_report(evaluation, Path(scratch) / "out", frame=frame, plots=False, geopackage=not args.no_gpkg)
        phases("end")
    name, peak, _ = max(phases.rows, key=lambda row: row[1])
    print(f"\n{args.scale}x set on {args.workers} workers: client peak {peak:,} MiB, in phase {name!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
