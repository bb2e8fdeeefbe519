"""Speed benchmark of the evaluator on real OpenStreetMap buildings.

The benchmark builds (or reads from its cache) the set of ``osm_benchmark_set.py``
and then:

1. runs the evaluator's full ``paper`` suite, single-process, on the 1x, 4x and 16x
   sets, each in a fresh process, and prints wall time, instances per second
   (ground-truth plus predicted instances), peak resident memory and how the time
   grows with the size of the set;
2. with ``--reference-evaluator PATH`` (the public PolyTopoBench script
   ``evaluate_vector_polygons.py``, kept outside the project), runs the
   ``reference-code`` profile and the public evaluator with one worker on the 1x
   set, prints both times and the speed-up, and compares every metric the
   reference reports.

It exits with status 1 when a metric differs by more than ``--tolerance``, when the
speed-up is below ``--min-speedup``, when the time grows clearly faster than the
set or when the evaluator fails; with status 2 when the evaluator's command line
is missing; and with status 0, after a message, when the shared data folder is
absent.

Run ``python benchmarks/bench_evaluator.py --help``.
"""

import argparse
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import osm_benchmark_set

__all__ = [
    "EVALUATOR_MODULE",
    "ProcessRun",
    "compare_metrics",
    "evaluator_available",
    "main",
    "run_measured",
    "run_our_evaluator",
    "run_reference_evaluator",
]

EVALUATOR_MODULE = "polytopo.evaluator"


_PEAK_LAUNCHER = """
import atexit, os, runpy, sys
peak_file, kind, target, *rest = sys.argv[1:]
def _report_peak():
    try:
        with open("/proc/self/status") as status:
            kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(peak_file, "w") as handle:
        handle.write(str(kib))
atexit.register(_report_peak)
sys.argv = [target, *rest]
if kind == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    runpy.run_path(target, run_name="__main__")
"""
"""Runs a module or script and writes the process's peak resident memory (KiB) at exit.

The peak is the process's own high-water mark (``VmHWM``), which a new process
image starts afresh; ``ru_maxrss`` of a child would include the parent's memory at
the time of the fork.
"""


@dataclass(frozen=True)
class ProcessRun:
    """What one measured subprocess did.

    Parameters
    ----------
    returncode : int
    wall_s : float
        Wall time from start to exit, in seconds, interpreter start-up included.
    peak_rss_mib : float
        Peak resident set size of the process, in MiB (nan when it did not say).
    stdout_tail, stderr_tail : str
        The last 2,000 characters of the process's output.
    """

    returncode: int
    wall_s: float
    peak_rss_mib: float
    stdout_tail: str
    stderr_tail: str


def run_measured(python, kind, target, args, cwd=None):
    """Run a Python module or script in a fresh interpreter and measure it.

    Parameters
    ----------
    python : str
        The interpreter.
    kind : str
        ``"module"`` (like ``python -m target``) or ``"script"`` (like
        ``python target``).
    target : str
        Module name or script path.
    args : sequence of str
        The command's arguments.
    cwd : pathlib.Path, optional

    Returns
    -------
    ProcessRun
    """
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak_kib"
        argv = [python, "-c", _PEAK_LAUNCHER, str(peak_file), kind, str(target), *map(str, args)]
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, capture_output=True)
        wall_s = time.perf_counter() - start
        peak = int(peak_file.read_text()) / 1024.0 if peak_file.is_file() else math.nan
    return ProcessRun(
        returncode=done.returncode,
        wall_s=wall_s,
        peak_rss_mib=peak,
        stdout_tail=done.stdout.decode("utf-8", "replace")[-2000:],
        stderr_tail=done.stderr.decode("utf-8", "replace")[-2000:],
    )


def evaluator_available(python):
    """Whether ``python -m polytopo.evaluator --help`` works."""
    probe = subprocess.run(
        [python, "-m", EVALUATOR_MODULE, "--help"], capture_output=True, text=True
    )
    return probe.returncode == 0, (probe.stderr or probe.stdout)[-1500:]


def run_our_evaluator(python, files, profile, out_dir, extra_args=()):
    """Run our evaluator's command line on a set and read its summary.

    Parameters
    ----------
    python : str
        Interpreter to run ``-m polytopo.evaluator`` with.
    files : osm_benchmark_set.BenchmarkSetFiles
    profile : str
        ``paper`` or ``reference-code``.
    out_dir : pathlib.Path
        Output folder given to ``--out``; it must not exist yet.
    extra_args : sequence of str
        More arguments for the evaluator.

    Returns
    -------
    run : ProcessRun
    summary : dict or None
        ``summary.json``, or None when the run failed.
    """
    args = [
        "--gt",
        files.gt_path,
        "--pred",
        files.pred_path,
        "--profile",
        profile,
        "--out",
        out_dir,
        "--no-plots",
        "--quiet",
        *extra_args,
    ]
    run = run_measured(python, "module", EVALUATOR_MODULE, args)
    summary_path = Path(out_dir) / "summary.json"
    if run.returncode != 0 or not summary_path.is_file():
        return run, None
    return run, json.loads(summary_path.read_text(encoding="utf-8"))


def _file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def run_reference_evaluator(python, script, files, rerun=False):
    """Run the public evaluator with one worker, or reuse its cached result.

    The result is cached next to the set, keyed by the script's content and the
    interpreter, so that the slow reference run is done once per set, script and
    interpreter (its Corner-F1 depends on the GEOS version the interpreter loads).

    Parameters
    ----------
    python : str
    script : pathlib.Path
        The public ``evaluate_vector_polygons.py``; its helper module must lie next
        to it.
    files : osm_benchmark_set.BenchmarkSetFiles
    rerun : bool
        Run it again even when a cached result exists.

    Returns
    -------
    dict
        ``wall_s``, ``peak_rss_mib``, ``load_average_1min`` (at its end),
        ``measured_at``, ``python``, ``cached`` and ``output`` (the reference's JSON
        output), or ``error`` when it failed.
    """
    key = hashlib.sha256(f"{_file_digest(script)} {python}".encode("utf-8")).hexdigest()[:12]
    cache_path = files.folder / f"reference_{key}.json"
    if cache_path.is_file() and not rerun:
        cached = json.loads(cache_path.read_text(encoding="utf-8"))
        cached["cached"] = True
        return cached
    output_path = files.folder / f"reference_output_{key}.json"
    args = [
        "--gt",
        files.gt_path,
        "--pred",
        files.pred_path,
        "--num-workers",
        "1",
        "--quiet",
        "--output",
        output_path,
    ]
    run = run_measured(python, "script", script, args, cwd=Path(script).parent)
    if run.returncode != 0 or not output_path.is_file():
        return {"error": run.stderr_tail or run.stdout_tail, "returncode": run.returncode}
    result = {
        "wall_s": run.wall_s,
        "peak_rss_mib": run.peak_rss_mib,
        "load_average_1min": os.getloadavg()[0],
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": python,
        "output": json.loads(output_path.read_text(encoding="utf-8")),
    }
    cache_path.write_text(json.dumps(result), encoding="utf-8")
    result["cached"] = False
    return result


def compare_metrics(ours, reference, path=""):
    """Compare two metric trees leaf by leaf.

    ``null`` (NaN) matches only ``null``; numbers match within any tolerance the
    caller applies to the differences returned; other leaves must be equal.

    Parameters
    ----------
    ours, reference : dict, list or scalar
    path : str
        Prefix of the leaf paths.

    Returns
    -------
    list of tuple
        ``(path, ours, reference, difference)`` for every leaf of ``reference``,
        with ``difference`` a float (``inf`` for a missing leaf, a type or null
        mismatch or unequal non-numbers), plus one entry per leaf only in ``ours``.
    """
    if isinstance(reference, dict):
        if not isinstance(ours, dict):
            return [(path, ours, reference, math.inf)]
        rows = []
        for key in reference:
            sub = f"{path}/{key}"
            if key not in ours:
                rows.append((sub, "<missing>", reference[key], math.inf))
            else:
                rows.extend(compare_metrics(ours[key], reference[key], sub))
        rows.extend(
            (f"{path}/{key}", ours[key], "<absent>", math.inf)
            for key in ours
            if key not in reference
        )
        return rows
    if isinstance(reference, list):
        if not isinstance(ours, list) or len(ours) != len(reference):
            return [(path, ours, reference, math.inf)]
        rows = []
        for index, (left, right) in enumerate(zip(ours, reference)):
            rows.extend(compare_metrics(left, right, f"{path}[{index}]"))
        return rows
    if reference is None or ours is None:
        return [(path, ours, reference, 0.0 if ours is None and reference is None else math.inf)]
    numbers = (int, float)
    if isinstance(reference, numbers) and isinstance(ours, numbers) and not isinstance(ours, bool):
        return [(path, ours, reference, abs(float(ours) - float(reference)))]
    return [(path, ours, reference, 0.0 if ours == reference else math.inf)]


def _in_process_seconds(summary):
    """The evaluator's own total time from ``summary["timings"]``, when it reports one."""
    timings = summary.get("timings") if isinstance(summary, dict) else None
    if isinstance(timings, dict):
        for key in ("total_s", "total", "wall_s", "evaluate_s"):
            if isinstance(timings.get(key), (int, float)):
                return float(timings[key])
    if isinstance(timings, (int, float)):
        return float(timings)
    return None


def _instances(files):
    return files.counts["gt_instances"] + files.counts["predictions"]


def _print_counts(files, scale):
    c = files.counts
    print(
        f"  {scale:>3}x: {c['images']} images, {c['gt_instances']} GT instances, "
        f"{c['gt_holes']} GT holes, {c['predictions']} predictions, "
        f"{c['predicted_holes']} predicted holes, {c['invalid_predictions']} invalid predictions"
    )


def _scaling_part(args, sets, report):
    print("\n== paper suite, single process ==")
    print(f"  {'size':>5} {'wall s':>9} {'own s':>9} {'inst/s':>10} {'peak MiB':>9} {'load':>6}")
    times = {}
    for scale, files in sets.items():
        out_dir = Path(tempfile.mkdtemp(prefix=f"paper_x{scale}_", dir=args.work_dir)) / "out"
        run, summary = run_our_evaluator(args.python, files, "paper", out_dir, args.evaluator_arg)
        if summary is None:
            print(f"  {scale}x: the evaluator failed (exit {run.returncode}):\n{run.stderr_tail}")
            report["failures"].append(f"paper suite failed on the {scale}x set")
            return
        own = _in_process_seconds(summary)
        times[scale] = own if own is not None else run.wall_s
        rate = _instances(files) / run.wall_s
        own_text = f"{own:9.2f}" if own is not None else f"{'-':>9}"
        load = os.getloadavg()[0]
        print(
            f"  {scale:>4}x {run.wall_s:9.2f} {own_text} {rate:10.0f} {run.peak_rss_mib:9.0f} {load:6.1f}"
        )
        report["paper"][f"{scale}x"] = {
            "wall_s": run.wall_s,
            "own_s": own,
            "instances_per_s": rate,
            "peak_rss_mib": run.peak_rss_mib,
            "instances": _instances(files),
            "load_average_1min": load,
        }
    basis = (
        "own time"
        if all(v.get("own_s") is not None for v in report["paper"].values())
        else "wall time"
    )
    if 1 in times:
        for scale in sorted(times):
            if scale == 1:
                continue
            ratio = times[scale] / times[1]
            growth = ratio / scale
            print(f"  t({scale}x)/t(1x) = {ratio:.2f} ({basis}; {growth:.2f} of linear)")
            report["paper"][f"ratio_{scale}x"] = ratio
            if growth > args.max_growth:
                report["failures"].append(
                    f"time grows faster than the set: t({scale}x)/t(1x) = {ratio:.2f}, "
                    f"more than {args.max_growth} x {scale}"
                )


def _reference_part(args, files, report):
    print("\n== reference-code profile against the public evaluator (1x set, 1 worker) ==")
    if args.reference_evaluator is None:
        print(
            "  skipped: give --reference-evaluator PATH to the public evaluate_vector_polygons.py"
        )
        return
    script = Path(args.reference_evaluator).resolve()
    if not script.is_file():
        report["failures"].append(f"no reference evaluator at {script}")
        print(f"  Expected the public evaluator at {script} but there is no such file.")
        return
    reference = run_reference_evaluator(args.reference_python, script, files, args.rerun_reference)
    if "error" in reference:
        print(
            f"  the reference evaluator failed (exit {reference['returncode']}):\n{reference['error']}"
        )
        report["failures"].append("reference evaluator failed")
        return
    origin = (
        f"cached, measured {reference['measured_at']}" if reference["cached"] else "measured now"
    )
    load = reference.get("load_average_1min")
    origin += f", load average {load:.1f}" if load is not None else ", load not recorded"
    print(
        f"  public evaluator: {reference['wall_s']:.2f} s, peak {reference['peak_rss_mib']:.0f} MiB ({origin})"
    )
    report["reference"] = {k: v for k, v in reference.items() if k != "output"}
    if args.skip_ours:
        return
    out_dir = Path(tempfile.mkdtemp(prefix="reference_code_", dir=args.work_dir)) / "out"
    run, summary = run_our_evaluator(
        args.python, files, "reference-code", out_dir, args.evaluator_arg
    )
    if summary is None:
        print(f"  the evaluator failed (exit {run.returncode}):\n{run.stderr_tail}")
        report["failures"].append("reference-code profile failed")
        return
    own = _in_process_seconds(summary)
    speedup = reference["wall_s"] / run.wall_s
    own_text = f", {own:.2f} s in-process" if own is not None else ""
    print(
        f"  reference-code:   {run.wall_s:.2f} s{own_text}, peak {run.peak_rss_mib:.0f} MiB, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"  speed-up: {speedup:.1f}x (wall time against wall time)")
    report["reference_code"] = {
        "wall_s": run.wall_s,
        "own_s": own,
        "peak_rss_mib": run.peak_rss_mib,
        "speedup": speedup,
    }
    if speedup < args.min_speedup:
        report["failures"].append(
            f"speed-up {speedup:.1f}x is below the required {args.min_speedup}x"
        )
    if "reference_metrics" not in summary:
        print(
            "  Expected summary.json to hold 'reference_metrics' but it has only "
            f"{sorted(summary)}; the reference-code profile must write it."
        )
        report["failures"].append("summary.json has no reference_metrics")
        return
    rows = compare_metrics(summary["reference_metrics"], reference["output"]["metrics"])
    worst = sorted(rows, key=lambda row: row[3], reverse=True)
    max_diff = worst[0][3] if worst else 0.0
    bad = [row for row in worst if row[3] > args.tolerance]
    print(
        f"  metrics compared: {len(rows)}, max abs difference {max_diff:.3g}, "
        f"above {args.tolerance:g}: {len(bad)}"
    )
    for leaf, left, right, diff in bad[:25]:
        print(f"    {leaf}: ours {left!r}, reference {right!r} (difference {diff:.3g})")
    report["reference_code"].update(
        {"metrics_compared": len(rows), "max_abs_difference": max_diff, "mismatches": len(bad)}
    )
    if bad:
        report["failures"].append(
            f"{len(bad)} metrics differ from the reference by more than {args.tolerance:g}"
        )


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reference-evaluator",
        type=Path,
        default=None,
        help="The public PolyTopoBench evaluate_vector_polygons.py (kept outside the project).",
    )
    parser.add_argument(
        "--reference-python",
        default=sys.executable,
        help="Interpreter for the public evaluator (default: this one).",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="Interpreter for our evaluator (default: this one).",
    )
    parser.add_argument(
        "--scales",
        type=int,
        nargs="+",
        default=[1, 4, 16],
        help="Sizes of the paper-suite runs, as multiples of the 1x set.",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the benchmark set.")
    parser.add_argument(
        "--target-gt-instances",
        type=int,
        default=osm_benchmark_set.PatchParameters.target_gt_instances,
        help="Ground-truth instances of the 1x set, at least.",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help=f"Cache of built sets (default: {osm_benchmark_set.default_cache_dir()}).",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="Keep the evaluator's outputs here (default: a temporary folder, removed at the end).",
    )
    parser.add_argument(
        "--evaluator-arg",
        action="append",
        default=[],
        help="Extra argument for our evaluator; repeat for several.",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=1e-6,
        help="Largest allowed absolute difference of a metric.",
    )
    parser.add_argument(
        "--min-speedup",
        type=float,
        default=10.0,
        help="Smallest accepted speed-up over the public evaluator.",
    )
    parser.add_argument(
        "--max-growth", type=float, default=1.5, help="Largest accepted t(Kx) / (K t(1x))."
    )
    parser.add_argument(
        "--rerun-reference",
        action="store_true",
        help="Run the public evaluator again instead of using its cached result.",
    )
    parser.add_argument(
        "--skip-scaling", action="store_true", help="Skip the 1x/4x/16x paper runs."
    )
    parser.add_argument(
        "--skip-ours",
        action="store_true",
        help="Only build the sets and time the public evaluator.",
    )
    parser.add_argument("--json-out", type=Path, default=None, help="Also write the results here.")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    vectors_dir = osm_benchmark_set.find_vectors_dir()
    if vectors_dir is None:
        print(
            "Skipping: the shared data folder (data/vectors under $POLYTOPO_SHARED or "
            "<repo>/../shared) is absent, so the benchmark set cannot be built."
        )
        return 0
    if args.work_dir is None:
        with tempfile.TemporaryDirectory(prefix="polytopo_bench_") as scratch:
            args.work_dir = Path(scratch)
            return _run(args, vectors_dir)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    return _run(args, vectors_dir)


def _run(args, vectors_dir):
    """Build or load the sets, run the parts and print the verdict; returns the exit status."""
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} (timings are only comparable on an idle machine)"
    )
    scales = sorted(set(args.scales) | {1})
    if args.skip_scaling:
        scales = [1]
    print("benchmark sets:")
    sets = {}
    for scale in scales:
        sets[scale] = osm_benchmark_set.load_or_build(
            vectors_dir,
            cache_dir=args.cache,
            scale=scale,
            seed=args.seed,
            patch_params=osm_benchmark_set.PatchParameters(
                target_gt_instances=args.target_gt_instances
            ),
            log=lambda message: None,
        )
        _print_counts(sets[scale], scale)
    report = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "counts": {f"{s}x": f.counts for s, f in sets.items()},
        "paper": {},
        "failures": [],
    }
    ours_missing = False
    if not args.skip_ours:
        available, why = evaluator_available(args.python)
        if not available:
            print(
                f"\nExpected `{args.python} -m {EVALUATOR_MODULE} --help` to work but it failed:\n"
                f"{why}\nInstall the project (pip install -e .), or pass --skip-ours to time "
                "only the public evaluator."
            )
            ours_missing = args.skip_ours = True
    if not args.skip_ours and not args.skip_scaling:
        _scaling_part(args, {s: sets[s] for s in scales}, report)
    _reference_part(args, sets[1], report)
    if ours_missing:
        report["failures"].append(f"{EVALUATOR_MODULE} is not available")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    if report["failures"]:
        print("\nFAILED:\n  " + "\n  ".join(report["failures"]))
        return 2 if ours_missing else 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
