"""Peak memory of the evaluator against its steady state, on the 1x, 4x and 16x sets.

Each set of ``osm_benchmark_set.py`` (built or read from its cache) is evaluated by the
command line (``python -m polytopo.evaluator --profile paper --out DIR --no-plots``) in a
fresh process, which records its resident memory in three phases:

``prepare``
    start-up, reading both inputs, ring tables and boundary bands, validity, the
    instance IoU candidates and the matching, up to the call of the pair metrics
    (:func:`polytopo.evaluator.metrics.pairs.evaluate_pairs`);
``pair kernels``
    the pair metrics: BIoU, POLIS, MTA, HD95 and the hole matches;
``finish``
    everything after: corners, detection metrics, bootstrap and the outputs.

The **steady state** is the resident set size (``VmRSS``) when the pair metrics start:
the inputs are loaded and the pairs built, so it is what the evaluation must hold anyway.
The peak of each progress phase of the command line (load, ring bands, ..., pair
metrics, ..., write) is the process's high-water mark (``VmHWM``), reset when the phase
starts (``/proc/self/clear_refs``, Linux); a phase of the table above takes the largest of
its progress phases. The printed ratios are each phase's peak over
the steady state; the pair kernels are meant to stay within 1.5x of it at every size.

Two phases load shared libraries on first use, which adds a fixed amount of resident
memory that does not grow with the data: the pair kernels import SciPy's KD-tree and
assignment solver, the GeoPackage writer imports GDAL/OGR. The script measures both in
a fresh process (:func:`library_load_mib`) and prints the ratios also without them, so
that on the small sets the data's share of each peak can be read.

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
record = {"phases": []}

def _kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

def _close_phase(name):
    record["phases"].append([name, _kib("VmHWM")])
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")

import polytopo.evaluator.cli.evaluate as cli
import polytopo.evaluator.profiles.paper as paper
current = ["start-up"]
step = cli._Progress.__call__

def measured_step(self, phase):
    _close_phase(current[0])
    current[0] = phase
    return step(self, phase)

pair_metrics = paper.evaluate_pairs

def measured_pairs(*args, **kwargs):
    record.setdefault("steady_kib", _kib("VmRSS"))
    return pair_metrics(*args, **kwargs)

cli._Progress.__call__ = measured_step
paper.evaluate_pairs = measured_pairs

def _write():
    _close_phase(current[0])
    with open(record_file, "w") as handle:
        json.dump(record, handle)

atexit.register(_write)
sys.argv = ["polytopo.evaluator", *argv]
runpy.run_module("polytopo.evaluator", run_name="__main__", alter_sys=True)
"""
#: The progress phase of the pair metrics (the pair kernels).
_KERNEL_PHASE = "pair metrics"


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
        ``steady_mib`` and ``<phase>_mib`` for each of :data:`PHASES` (MiB),
        ``largest_finish_phase`` (the progress phase with the largest peak after the pair
        metrics) and ``phases_mib`` (the peak of every progress phase of the command
        line); or ``error`` (the end of the process's error output) when the run failed.
    """
    with tempfile.TemporaryDirectory() as scratch:
        record_file = Path(scratch) / "record.json"
        argv = [python, "-c", _LAUNCHER, str(record_file), "--gt", str(files.gt_path), "--pred",
                str(files.pred_path), "--profile", "paper", "--out", str(out_dir), "--no-plots", "--quiet"]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0 or not record_file.is_file():
            return {"error": (done.stderr or done.stdout)[-2000:] or f"exit status {done.returncode}"}
        record = json.loads(record_file.read_text(encoding="utf-8"))
    names = [name for name, _ in record["phases"]]
    if "steady_kib" not in record or _KERNEL_PHASE not in names:
        return {"error": "the pair metrics were never called"}
    at = names.index(_KERNEL_PHASE)
    peaks = [kib / 1024.0 for _, kib in record["phases"]]
    after = max(range(at + 1, len(peaks)), key=peaks.__getitem__, default=None)
    return {"steady_mib": record["steady_kib"] / 1024.0, "prepare_mib": max(peaks[:at], default=0.0),
            "pair kernels_mib": peaks[at], "finish_mib": peaks[after] if after is not None else 0.0,
            "largest_finish_phase": names[after] if after is not None else None,
            "phases_mib": dict(zip(names, peaks))}


_LIBRARY_PROBE = """
import json, sys
def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024.0
import polytopo.evaluator.run.api, polytopo.evaluator.cli.evaluate
base = rss()
import scipy.optimize, scipy.spatial
scipy_mib = rss() - base
from osgeo import gdal, ogr, osr
print(json.dumps({"pair kernels": scipy_mib, "finish": rss() - base - scipy_mib}))
"""


def library_load_mib(python):
    """Resident memory (MiB) that loading the pair kernels' and the writer's libraries adds.

    Measured in a fresh process that has imported the evaluator's command line (numpy,
    shapely): ``{"pair kernels": SciPy's spatial and optimize, "finish": GDAL/OGR}``.
    """
    done = subprocess.run([python, "-c", _LIBRARY_PROBE], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


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
    libraries = library_load_mib(args.python)
    print("libraries loaded on first use: " + ", ".join(
        f"{phase} +{mib:.0f} MiB" for phase, mib in libraries.items()) + "; 'w/o' ratios leave them out")
    header = f"  {'size':>5} {'instances':>9} {'steady MiB':>11}" + "".join(
        f" {phase + ' MiB':>17} {'ratio':>6}" + (f" {'w/o':>5}" if phase in libraries else "") for phase in PHASES)
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
                if phase in libraries:
                    row += f" {(record[phase + '_mib'] - libraries[phase]) / steady:5.2f}"
            record["libraries_mib"] = libraries
            print(row + f"   (finish peak in: {record['largest_finish_phase']})")
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
