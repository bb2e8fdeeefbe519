"""Peak memory of the evaluator against its steady state, on the 1x, 4x and 16x sets.

Each set of ``osm_benchmark_set.py`` (built or read from its cache) is evaluated by the
command line (``python -m polytopo.evaluator --profile paper --out DIR --no-plots``) in a
fresh process, which records its resident memory in three phases:

``prepare``
    start-up, reading both inputs, ring tables and boundary bands, validity, the
    instance IoU candidates and the matching, up to the call of the pair metrics
    (:func:`polytopo.evaluator.pairs.evaluate_pairs`);
``pair kernels``
    the pair metrics: BIoU, POLIS, MTA, HD95 and the hole matches;
``finish``
    everything after: corners, detection metrics, bootstrap and the outputs.

The **steady state** is the resident set size (``VmRSS``) when the pair metrics start:
the inputs are loaded and the pairs built, so it is what the evaluation must hold anyway.
The peak of each phase is the process's high-water mark (``VmHWM``), reset at the start of
the phase (``/proc/self/clear_refs``, Linux). The printed ratios are each phase's peak over
the steady state; the pair kernels are meant to stay within 1.5x of it at every size.

Linux only (``/proc``). Exits 0 after a message when the shared data folder is absent,
1 when a run fails or a kernel ratio exceeds ``--max-ratio``.

Run ``python benchmarks/bench_evaluator_memory.py --help``.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import osm_benchmark_set

__all__ = ["PHASES", "main", "measure_phases"]

#: Phases measured, in order (see the module docstring).
PHASES = ("prepare", "pair kernels", "finish")

_LAUNCHER = """
import atexit, json, runpy, sys
record_file, *argv = sys.argv[1:]
record = {}

def _kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

def _reset_peak():
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")

import polytopo.evaluator.paper as paper
original = paper.evaluate_pairs

def measured(*args, **kwargs):
    record.setdefault("steady_kib", _kib("VmRSS"))
    record.setdefault("prepare_kib", _kib("VmHWM"))
    _reset_peak()
    try:
        return original(*args, **kwargs)
    finally:
        record["pair kernels_kib"] = max(record.get("pair kernels_kib", 0), _kib("VmHWM"))
        _reset_peak()

paper.evaluate_pairs = measured

def _write():
    record["finish_kib"] = _kib("VmHWM")
    with open(record_file, "w") as handle:
        json.dump(record, handle)

atexit.register(_write)
sys.argv = ["polytopo.evaluator", *argv]
runpy.run_module("polytopo.evaluator", run_name="__main__", alter_sys=True)
"""


def measure_phases(python, files, out_dir):
    """Evaluate one set in a fresh process and return its memory record.

    Parameters
    ----------
    python : str
        Interpreter that has ``polytopo`` installed.
    files : osm_benchmark_set.BenchmarkSetFiles
    out_dir : pathlib.Path
        Output folder for ``--out``; it must not exist yet.

    Returns
    -------
    dict
        ``steady_mib`` and ``<phase>_mib`` for each of :data:`PHASES` (MiB), or
        ``error`` (the end of the process's error output) when the run failed.
    """
    with tempfile.TemporaryDirectory() as scratch:
        record_file = Path(scratch) / "record.json"
        argv = [python, "-c", _LAUNCHER, str(record_file), "--gt", str(files.gt_path), "--pred",
                str(files.pred_path), "--profile", "paper", "--out", str(out_dir), "--no-plots", "--quiet"]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0 or not record_file.is_file():
            return {"error": (done.stderr or done.stdout)[-2000:] or f"exit status {done.returncode}"}
        record = json.loads(record_file.read_text(encoding="utf-8"))
    if "steady_kib" not in record:
        return {"error": "the pair metrics were never called"}
    return {key[:-len("_kib")] + "_mib": value / 1024.0 for key, value in record.items()}


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16], help="Set sizes (default 1 4 16).")
    parser.add_argument("--python", default=sys.executable, help="Interpreter that runs the evaluator.")
    parser.add_argument("--cache", type=Path, default=None,
                        help=f"Cache of built sets (default: {osm_benchmark_set.default_cache_dir()}).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the simulated predictions.")
    parser.add_argument("--max-ratio", type=float, default=1.5,
                        help="Largest accepted peak of the pair kernels over the steady state (default 1.5).")
    parser.add_argument("--json-out", type=Path, default=None, help="Also write the figures as JSON here.")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    if not Path("/proc/self/clear_refs").exists():
        print("Skipping: this benchmark needs Linux /proc (VmHWM and clear_refs).")
        return 0
    vectors_dir = osm_benchmark_set.find_vectors_dir()
    if vectors_dir is None:
        print("Skipping: the shared data folder (data/vectors under $POLYTOPO_SHARED or <repo>/../shared) "
              "is absent, so the benchmark set cannot be built.")
        return 0
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("steady state = resident memory when the pair metrics start (inputs loaded, pairs built); "
          "peaks are per phase")
    header = f"  {'size':>5} {'pairs in':>9} {'steady MiB':>11}" + "".join(
        f" {phase + ' MiB':>17} {'ratio':>6}" for phase in PHASES)
    print(header)
    failures, report = [], {}
    with tempfile.TemporaryDirectory(prefix="polytopo_memory_") as scratch:
        for scale in sorted(set(args.scales)):
            files = osm_benchmark_set.load_or_build(vectors_dir, cache_dir=args.cache, scale=scale, seed=args.seed,
                                                    log=lambda message: None)
            record = measure_phases(args.python, files, Path(scratch) / f"x{scale}")
            report[f"{scale}x"] = record
            if "error" in record:
                failures.append(f"the evaluator failed on the {scale}x set:\n{record['error']}")
                continue
            instances = files.counts["gt_instances"] + files.counts["predictions"]
            steady = record["steady_mib"]
            row = f"  {scale:>4}x {instances:>9} {steady:11.0f}"
            for phase in PHASES:
                row += f" {record[phase + '_mib']:17.0f} {record[phase + '_mib'] / steady:6.2f}"
            print(row)
            ratio = record["pair kernels_mib"] / steady
            if ratio > args.max_ratio:
                failures.append(f"{scale}x: pair kernels peak at {ratio:.2f} x the steady state, "
                                f"more than {args.max_ratio}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
