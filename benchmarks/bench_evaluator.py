"""Speed benchmark of the evaluator on real OpenStreetMap buildings.

The benchmark builds (or reads from its cache) the set of ``osm_benchmark_set.py``
and then:

1. runs the evaluator's full ``paper`` suite, single-process, on the 1x, 4x and 16x
   sets, each in a fresh process, and prints wall time, instances per second
   (ground-truth plus predicted instances), peak resident memory and how the time
   grows with the size of the set;
2. with ``--reference-evaluator PATH`` (the public PolyTopoBench script
   ``evaluate_vector_polygons.py``, kept outside the project), runs the whole command
   lines side by side on the 1x set: the public evaluator with one worker, and our
   ``python -m polytopo.evaluator ... --out DIR`` in the ``paper`` and
   ``reference-code`` profiles with every output written (summary, CSV tables,
   GeoPackage, plots), interleaved, ``--repeats`` times (order reversed every other
   round). It prints each run's wall and CPU time, the medians, the speed-ups (public
   over ours, wall and CPU), the share of our runs spent writing the outputs
   (``write_report``, timed inside the process) and the load average, and compares
   every metric the public evaluator reports with the ``reference-code`` profile's.

It exits with status 1 when a metric differs by more than ``--tolerance``, when a
median speed-up is below ``--min-speedup``, when writing takes more than
``--max-write-share`` of a run, when the time grows clearly faster than the set or
when the evaluator fails; with status 2 when the evaluator's command line is missing;
and with status 0, after a message, when the shared data folder is absent.

Run ``python benchmarks/bench_evaluator.py --help``.
"""

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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
    "side_by_side_summary",
]

EVALUATOR_MODULE = "polytopo.evaluator"


_LAUNCHER = """
import atexit, json, os, runpy, sys, time
report_file, kind, target, *rest = sys.argv[1:]
timings = {}
def _report():
    try:
        with open("/proc/self/status") as status:
            kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(report_file, "w") as handle:
        json.dump({"peak_kib": kib, **timings}, handle)
atexit.register(_report)
if kind == "module" and target == "polytopo.evaluator":
    import polytopo.evaluator.outputs.report as report
    inner = report.write_report
    def write_report(*args, **kwargs):
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            timings.update(write_cpu_s=time.process_time() - cpu, write_wall_s=time.perf_counter() - wall)
    report.write_report = write_report
sys.argv = [target, *rest]
if kind == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    runpy.run_path(target, run_name="__main__")
"""
"""Runs a module or script and writes, at exit, the process's peak resident memory (KiB)
and, for the evaluator's command line, the CPU and wall time of ``write_report``.

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
    cpu_s : float
        User plus system CPU time of the process and the children it waited for, in
        seconds, interpreter start-up included.
    write_cpu_s, write_wall_s : float
        CPU and wall seconds of the evaluator's ``write_report`` (every output file);
        nan for other commands.
    load_average : float
        The 1-minute load average when the process ended.
    """

    returncode: int
    wall_s: float
    peak_rss_mib: float
    stdout_tail: str
    stderr_tail: str
    cpu_s: float = math.nan
    write_cpu_s: float = math.nan
    write_wall_s: float = math.nan
    load_average: float = math.nan


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
        report_file = Path(scratch) / "report.json"
        argv = [python, "-c", _LAUNCHER, str(report_file), kind, str(target), *map(str, args)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, capture_output=True)
        wall_s = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        measured = json.loads(report_file.read_text()) if report_file.is_file() else {}
    return ProcessRun(
        returncode=done.returncode,
        wall_s=wall_s,
        peak_rss_mib=measured.get("peak_kib", math.nan) / 1024.0,
        stdout_tail=done.stdout.decode("utf-8", "replace")[-2000:],
        stderr_tail=done.stderr.decode("utf-8", "replace")[-2000:],
        cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        write_cpu_s=measured.get("write_cpu_s", math.nan),
        write_wall_s=measured.get("write_wall_s", math.nan),
        load_average=os.getloadavg()[0],
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
        More arguments for the evaluator (``--no-plots``, ``--no-gpkg``, ...); without
        them every output is written.

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
        "--quiet",
        *extra_args,
    ]
    run = run_measured(python, "module", EVALUATOR_MODULE, args)
    summary_path = Path(out_dir) / "summary.json"
    if run.returncode != 0 or not summary_path.is_file():
        return run, None
    return run, json.loads(summary_path.read_text(encoding="utf-8"))


def run_reference_evaluator(python, script, files, output_path, workers=1):
    """Run the public evaluator with ``workers`` worker processes on a set and read its output.

    Parameters
    ----------
    python : str
    script : pathlib.Path
        The public ``evaluate_vector_polygons.py``; its helper module must lie next
        to it.
    files : osm_benchmark_set.BenchmarkSetFiles
    output_path : pathlib.Path
        Its ``--output`` JSON file.
    workers : int
        Its ``--num-workers``.

    Returns
    -------
    run : ProcessRun
    output : dict or None
        The public evaluator's JSON output, or None when the run failed.
    """
    args = [
        "--gt",
        files.gt_path,
        "--pred",
        files.pred_path,
        "--num-workers",
        str(workers),
        "--quiet",
        "--output",
        output_path,
    ]
    run = run_measured(python, "script", script, args, cwd=Path(script).parent)
    if run.returncode != 0 or not Path(output_path).is_file():
        return run, None
    return run, json.loads(Path(output_path).read_text(encoding="utf-8"))


def side_by_side_summary(runs):
    """Medians of interleaved runs, the speed-ups over the public evaluator and the write shares.

    Parameters
    ----------
    runs : dict
        ``{"public": [ProcessRun, ...], profile: [ProcessRun, ...], ...}``, the runs of
        each command in the order made.

    Returns
    -------
    dict
        Per command: ``wall_s`` and ``cpu_s`` (medians), ``peak_rss_mib`` (largest),
        ``load_average`` (``[lowest, highest]``), ``runs``; for our profiles also
        ``write_cpu_s`` and ``write_wall_s`` (medians), ``write_share_cpu`` and
        ``write_share_wall`` (medians of each run's write time over its whole time) and
        ``speedup_wall`` and ``speedup_cpu`` (the public evaluator's median over this
        profile's median).

    Examples
    --------
    >>> one = ProcessRun(0, 2.0, 100.0, "", "", cpu_s=1.0, write_cpu_s=0.1, write_wall_s=0.2, load_average=1.0)
    >>> public = ProcessRun(0, 100.0, 100.0, "", "", cpu_s=90.0, load_average=2.0)
    >>> table = side_by_side_summary({"public": [public], "paper": [one]})
    >>> table["paper"]["speedup_cpu"], table["paper"]["write_share_wall"]
    (90.0, 0.1)
    """
    table = {}
    for name, made in runs.items():
        row = {
            "runs": len(made),
            "wall_s": statistics.median(run.wall_s for run in made),
            "cpu_s": statistics.median(run.cpu_s for run in made),
            "peak_rss_mib": max(run.peak_rss_mib for run in made),
            "load_average": [min(run.load_average for run in made), max(run.load_average for run in made)],
        }
        if name != "public":
            row.update(
                write_cpu_s=statistics.median(run.write_cpu_s for run in made),
                write_wall_s=statistics.median(run.write_wall_s for run in made),
                write_share_cpu=statistics.median(run.write_cpu_s / run.cpu_s for run in made),
                write_share_wall=statistics.median(run.write_wall_s / run.wall_s for run in made),
            )
        table[name] = row
    public = table.get("public")
    for name, row in table.items():
        if name != "public" and public is not None:
            row["speedup_wall"] = public["wall_s"] / row["wall_s"]
            row["speedup_cpu"] = public["cpu_s"] / row["cpu_s"]
    return table


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
        run, summary = run_our_evaluator(args.python, files, "paper", out_dir, ["--no-plots", *args.evaluator_arg])
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


_SIDE_BY_SIDE = ("public", "paper", "reference-code")


def _side_by_side_part(args, files, report):
    print(
        f"\n== whole command lines side by side: 1x set, the public evaluator with {args.reference_workers} "
        f"worker(s) and ours with its defaults, every output written, "
        f"{args.repeats} interleaved rounds =="
    )
    names = _SIDE_BY_SIDE if not args.skip_ours else _SIDE_BY_SIDE[:1]
    script = None
    if args.reference_evaluator is None:
        print(
            "  no --reference-evaluator (the public evaluate_vector_polygons.py) given: our profiles "
            "only, for the write shares; no speed-ups"
        )
        names = names[1:]
        if not names:
            return
    else:
        script = Path(args.reference_evaluator).resolve()
        if not script.is_file():
            report["failures"].append(f"no reference evaluator at {script}")
            print(f"  Expected the public evaluator at {script} but there is no such file.")
            return
    runs = {name: [] for name in names}
    public_output = summaries = None
    print(f"  {'round':>5} {'command':<15} {'wall s':>8} {'CPU s':>8} {'write s':>8} {'peak MiB':>9} {'load':>5}")
    for repeat in range(args.repeats):
        summaries = {}
        for name in names if repeat % 2 == 0 else names[::-1]:
            work = Path(tempfile.mkdtemp(prefix=f"{name}_{repeat}_", dir=args.work_dir))
            if name == "public":
                run, public_output = run_reference_evaluator(
                    args.reference_python, script, files, work / "metrics.json", args.reference_workers
                )
                ok = public_output is not None
            else:
                run, summaries[name] = run_our_evaluator(
                    args.python, files, name, work / "out", args.evaluator_arg
                )
                ok = summaries[name] is not None
            if not ok:
                print(f"  {name} failed (exit {run.returncode}):\n{run.stderr_tail or run.stdout_tail}")
                report["failures"].append(f"{name} failed")
                return
            runs[name].append(run)
            write = f"{run.write_cpu_s:8.2f}" if name != "public" else f"{'-':>8}"
            print(
                f"  {repeat + 1:>5} {name:<15} {run.wall_s:8.2f} {run.cpu_s:8.2f} {write} "
                f"{run.peak_rss_mib:9.0f} {run.load_average:5.1f}"
            )
    table = side_by_side_summary(runs)
    report["side_by_side"] = table
    print(
        f"\n  medians of {args.repeats} rounds: {'command':<15} {'wall s':>8} {'CPU s':>8} {'x wall':>7} "
        f"{'x CPU':>7} {'write % CPU':>11} {'write % wall':>12}"
    )
    for name, row in table.items():
        extra = ""
        if name != "public":
            speedups = (f"{row['speedup_wall']:7.1f} {row['speedup_cpu']:7.1f}" if "speedup_wall" in row
                        else f"{'-':>7} {'-':>7}")
            extra = f" {speedups} {100 * row['write_share_cpu']:11.1f} {100 * row['write_share_wall']:12.1f}"
        print(f"  {'':<19}{name:<15} {row['wall_s']:8.2f} {row['cpu_s']:8.2f}{extra}")
    low = min(row["load_average"][0] for row in table.values())
    high = max(row["load_average"][1] for row in table.values())
    print(f"  load average (1 min) at the end of the runs: {low:.1f} .. {high:.1f} on {os.cpu_count()} CPUs")
    for name, row in table.items():
        if name == "public":
            continue
        for basis in ("wall", "cpu") if "speedup_wall" in row else ():
            if row[f"speedup_{basis}"] < args.min_speedup:
                report["failures"].append(
                    f"{name}: median {basis} speed-up {row[f'speedup_{basis}']:.1f}x is below "
                    f"the required {args.min_speedup}x"
                )
        for basis in ("cpu", "wall"):
            if row[f"write_share_{basis}"] > args.max_write_share:
                report["failures"].append(
                    f"{name}: writing the outputs takes {100 * row[f'write_share_{basis}']:.1f} % of the "
                    f"{basis} time, more than {100 * args.max_write_share:.0f} %"
                )
    if "reference-code" in summaries and public_output is not None:
        _compare_with_public(args, summaries["reference-code"], public_output, report)


def _compare_with_public(args, summary, public_output, report):
    """Compare the reference-code profile's ``reference_metrics`` with the public evaluator's metrics."""
    if "reference_metrics" not in summary:
        print(
            "  Expected summary.json to hold 'reference_metrics' but it has only "
            f"{sorted(summary)}; the reference-code profile must write it."
        )
        report["failures"].append("summary.json has no reference_metrics")
        return
    rows = compare_metrics(summary["reference_metrics"], public_output["metrics"])
    worst = sorted(rows, key=lambda row: row[3], reverse=True)
    max_diff = worst[0][3] if worst else 0.0
    bad = [row for row in worst if row[3] > args.tolerance]
    print(
        f"  reference-code against the public evaluator: {len(rows)} metrics compared, "
        f"max abs difference {max_diff:.3g}, above {args.tolerance:g}: {len(bad)}"
    )
    for leaf, left, right, diff in bad[:25]:
        print(f"    {leaf}: ours {left!r}, reference {right!r} (difference {diff:.3g})")
    report["reference_code_metrics"] = {
        "metrics_compared": len(rows), "max_abs_difference": max_diff, "mismatches": len(bad)
    }
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
        "--reference-workers",
        type=int,
        default=1,
        help="The public evaluator's --num-workers (default 1; our evaluator runs with its own defaults).",
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
        default=50.0,
        help="Smallest accepted median speed-up (wall and CPU) over the public evaluator.",
    )
    parser.add_argument(
        "--max-write-share",
        type=float,
        default=0.15,
        help="Largest accepted median share of a run spent writing the outputs (wall and CPU).",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="Interleaved rounds of the side-by-side comparison (medians are reported).",
    )
    parser.add_argument(
        "--max-growth", type=float, default=1.5, help="Largest accepted t(Kx) / (K t(1x))."
    )
    parser.add_argument(
        "--skip-scaling", action="store_true", help="Skip the 1x/4x/16x paper runs."
    )
    parser.add_argument(
        "--skip-ours",
        action="store_true",
        help="Only build the sets and time the public evaluator (side by side with nothing).",
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
    _side_by_side_part(args, sets[1], report)
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
