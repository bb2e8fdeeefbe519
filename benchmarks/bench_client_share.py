"""Client share of a cluster evaluation with every output: the client's CPU against one process's.

On the ``--scale`` x set of ``osm_benchmark_set.py`` (default 16), with ``dask scheduler``
and ``--workers`` ``dask worker`` processes started on 127.0.0.1 (one thread each, with the
worker settings of docs/scale-out.md), it measures in fresh processes, alternating, each
``--repeats`` times:

* ``one process``: ``python -m polytopo.evaluator --workers 0 --threads 1`` (one core) with every output but the
  plots (CSV tables and the GeoPackage);
* ``client, records built here``: a script that runs the evaluation on the cluster and
  writes the same outputs from records built on the client (``evaluate(client=...)``
  without ``record_parts``: how the command line ran before the workers encoded them);
* ``command line``: ``python -m polytopo.evaluator --scheduler ADDRESS``, whose workers read
  their own partitions of the files and build and encode the per-feature outputs of them
  (and, as they see the output folder, write the rows and the GeoPackage there).

The CPU seconds (user + system) of each process are those of the process alone: the
scheduler and the workers are not its children. It prints each run, the medians, the
client's share of the one-process CPU for both clients, and checks that the three
outputs agree (summary within 1e-9, CSV tables byte-identical, every GeoPackage layer's
rows identical); exits 1 when they do not or a run fails, 0 after a message when the
shared data folder is absent.

Run ``python benchmarks/bench_client_share.py --help``.
"""

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import osm_benchmark_set
from bench_evaluator import EVALUATOR_MODULE, run_measured
from bench_evaluator_scale_out import _walk

__all__ = ["main"]

CSV_FILES = ("predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv")

WORKER_CONFIG = """distributed:
  nanny:
    pre-spawn-environ:
      MALLOC_TRIM_THRESHOLD_: null
      NUMPY_MADVISE_HUGEPAGE: "0"
  worker:
    profile:
      enabled: false
  admin:
    tick:
      interval: 1s
"""
"""The worker settings docs/scale-out.md gives for ``dask worker`` (those of local clusters)."""

CLIENT_SCRIPT = """
import sys
from polytopo.core.cluster import open_client
from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.outputs.report import write_report

gt_path, pred_path, out, address = sys.argv[1:5]
with open_client(scheduler=address) as client:
    gt, pred, frame = load_inputs(gt_path, pred_path)
    evaluation = evaluate(gt, pred, client=client)
write_report(evaluation, out, frame=frame, plots=False)
"""
"""The command line's work before the workers encoded the outputs: records built and written here."""


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_cluster(python, workers, config_dir, threads=1):
    """``dask scheduler`` and ``workers`` ``dask worker`` processes of ``threads`` threads each.

    Returns the scheduler's address and the processes, the scheduler first.
    """
    env = {**os.environ, "DASK_CONFIG": str(config_dir)}
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(python).with_name("dask"))  # the command that comes with distributed
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for k in range(workers):
        processes.append(subprocess.Popen(
            [dask, "worker", address, "--nthreads", str(threads), "--no-dashboard", "--name", f"w{k}"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    import distributed

    with distributed.Client(address, timeout=60) as probe:
        probe.wait_for_workers(workers, timeout=120)
    return address, processes


def _stop(processes):
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _layers(path):
    """Every layer table's rows in fid order, and the contents rows without their change time."""
    with sqlite3.connect(str(path)) as connection:
        names = [row[0] for row in connection.execute("SELECT table_name FROM gpkg_contents ORDER BY table_name")]
        rows = {name: connection.execute(f'SELECT * FROM "{name}" ORDER BY fid').fetchall() for name in names}  # nosec B608
        contents = connection.execute("SELECT table_name, data_type, min_x, min_y, max_x, max_y, srs_id "
                                      "FROM gpkg_contents ORDER BY table_name").fetchall()
    return rows, contents


def _differences(base, other):
    """What differs between two output folders (empty when they agree)."""
    found = _walk(json.loads((base / "summary.json").read_text()), json.loads((other / "summary.json").read_text()))
    found += [name for name in CSV_FILES if (base / name).read_bytes() != (other / name).read_bytes()]
    if _layers(base / "evaluation.gpkg") != _layers(other / "evaluation.gpkg"):
        found.append("evaluation.gpkg")
    return found


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=16, help="size of the set, in copies of the 1x set (default 16)")
    parser.add_argument("--workers", type=int, default=2, help="dask worker processes (default 2)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each kind, alternating (default 2)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with polytopo installed")
    parser.add_argument("--cache", type=Path, help="cache folder of the built sets")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line; returns the exit status."""
    args = _parse_args(argv)
    files = osm_benchmark_set.set_for_benchmark(args.scale, args.cache)
    if files is None:
        return 0
    cpu = {"one process": [], "client, records built here": [], "command line": []}
    with tempfile.TemporaryDirectory(prefix="polytopo_client_share_") as scratch:
        scratch = Path(scratch)
        (scratch / "dask").mkdir()
        (scratch / "dask" / "workers.yaml").write_text(WORKER_CONFIG)
        (scratch / "client.py").write_text(CLIENT_SCRIPT)
        address, processes = _start_cluster(args.python, args.workers, scratch / "dask")
        try:
            inputs = ["--gt", str(files.gt_path), "--pred", str(files.pred_path), "--no-plots", "--quiet"]
            for repeat in range(args.repeats):
                runs = {
                    # one thread: the share's denominator stays the one-core work it always was
                    "one process": ("module", EVALUATOR_MODULE, [*inputs, "--workers", "0", "--threads", "1"]),
                    "client, records built here": ("script", scratch / "client.py",
                                                   [files.gt_path, files.pred_path, None, address]),
                    "command line": ("module", EVALUATOR_MODULE, [*inputs, "--scheduler", address]),
                }
                for number, (name, (kind, target, arguments)) in enumerate(runs.items()):
                    out = scratch / f"r{repeat}-{number}"
                    if kind == "module":
                        arguments = [*arguments, "--out", str(out)]
                    else:
                        arguments = [str(out) if value is None else str(value) for value in arguments]
                    started = time.perf_counter()
                    run = run_measured(args.python, kind, target, arguments)
                    if run.returncode != 0:
                        print(f"{name} failed:\n{run.stderr_tail}")
                        return 1
                    cpu[name].append(run.cpu_s)
                    print(f"  repeat {repeat + 1} {name}: {run.cpu_s:.2f} CPU-s, {time.perf_counter() - started:.1f} s "
                          f"wall, load average {os.getloadavg()[0]:.1f}", flush=True)
                base = scratch / f"r{repeat}-0"
                for number in (1, 2):
                    found = _differences(base, scratch / f"r{repeat}-{number}")
                    if found:
                        print(f"the outputs differ from one process's: {found[:5]}")
                        return 1
        finally:
            _stop(processes)
    one = statistics.median(cpu["one process"])
    print(f"\nmedians of {args.repeats} (CPU seconds of the process alone; outputs identical to one process):")
    for name, values in cpu.items():
        share = "" if name == "one process" else f"  = {100 * statistics.median(values) / one:.1f} % of one process"
        print(f"  {name:<28}{statistics.median(values):8.2f} CPU-s{share}")
    before, after = (statistics.median(cpu[name]) for name in ("client, records built here", "command line"))
    print(f"client CPU, command line against records built here: {after / before:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
