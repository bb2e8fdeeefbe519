"""Writing an evaluation to a folder: summary, per-feature tables, GeoPackage, plots.

The folder is assembled under a temporary name next to the target and moved into place
only when every file is complete, so a failed or interrupted run never leaves a folder
that looks finished. The rules of :mod:`.output_safety` apply: an existing target is
replaced only with ``overwrite=True``, only when it is empty or a previous PolyTopo
output (its marker file lists what PolyTopo wrote, and only that is removed), and never
when it holds one of the inputs.
"""

import contextlib
import math
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..tables.error_classes import RECORD_TABLES
from ...core.errors import EvaluatorError
from ...core.gc_pause import paused_gc
from ..tables.metric_table import HEADLINE, metric, suffixes
from .plots import plot_pngs, plotted_entries
from ..tables.profiles import profile_named
from ...core.output_safety import check_folder_output, partial_name, probe_folder, publish_folder, write_failure

__all__ = ["write_report", "check_report_folder", "format_table", "staged_folder"]



def _fmt(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def format_table(summary):
    """A readable text table of the headline metrics (and the profile's own, e.g. ``P3-*``), intervals and counts."""
    metrics, counts = summary["metrics"], summary["counts"]
    boot = summary.get("bootstrap", {})
    lines = [f"PolyTopo evaluation — profile {summary['profile']}",
             f"  images {counts['images']}   GT {counts['gt_instances']} ({counts['gt_holes']} holes)   "
             f"pred {counts['pred_instances']} ({counts['pred_holes']} holes, "
             f"{counts['invalid_predictions']} invalid)", ""]
    prefix = profile_named(summary["profile"]).metric_prefix
    shown = HEADLINE + (tuple(f"{prefix}-{suffix}" for suffix in suffixes(prefix)) if prefix else ())
    width = max(len(name) for name in shown) + 2
    for name in shown:
        interval = boot.get(name)
        ci = ("   [undefined]" if boot.get("undefined") else
              f"   [{_fmt(interval['low'])}, {_fmt(interval['high'])}]") if interval else ""
        lines.append(f"  {name:<{width}}{_fmt(metrics.get(name)):>8}{metric(name).suffix}{ci}")
    if boot.get("undefined"):
        lines.append(f"  (no bootstrap interval: {boot['undefined']})")
    elif boot:
        lines.append(f"  (95% image-level bootstrap intervals, {boot['resamples']} resamples)"
                     if boot.get("level") == 0.95 else
                     f"  ({boot['level']:.0%} bootstrap intervals, {boot['resamples']} resamples)")
    return "\n".join(lines)


def check_report_folder(out_dir, *, inputs=(), overwrite=False):
    """Check, before any work, that :func:`write_report` may write ``out_dir``.

    Applies :func:`.output_safety.check_folder_output` (never an input or a folder holding
    one; an existing folder only when empty or a previous PolyTopo output, and then only
    with ``overwrite``), creates the parent folder and probes it for writing (read-only
    folder, full disk). Stale temporaries of killed runs there are removed.

    Raises
    ------
    UnsafeOutputError, OutputExistsError, OutputWriteError
    """
    out_dir = Path(out_dir)
    check_folder_output(out_dir, inputs=inputs, overwrite=overwrite)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failure(exc, out_dir) from exc
    probe_folder(out_dir.parent)


@paused_gc()
def write_report(evaluation, out_dir, *, frame=None, overwrite=False, inputs=(), plots=True, geopackage=True,
                 plotter=None):
    """Write every output of ``evaluation`` into ``out_dir``.

    Files: ``summary.json``; ``predictions.csv``, ``references.csv``, ``missed_holes.csv``,
    ``hallucinated_holes.csv``; ``evaluation.gpkg`` with layers ``predictions``,
    ``references``, ``missed_holes``, ``hallucinated_holes``, ``unmatched_predictions``,
    ``missed_references`` (geometry in map units when ``frame`` is given, else pixels); PNG
    plots ``precision_recall.png``, ``simple_to_complex.png``, ``wrong_topo.png`` and, when
    sweeps ran, ``min_hole_area_sweep.png`` and ``ring_threshold_sweep.png``; and the
    marker :data:`~.output_safety.MARKER_NAME` that lists them.

    Each record list is turned into columns once (:class:`~.writers.RecordTable`) and
    its CSV table and GeoPackage layers are written from them. Matplotlib is imported
    only when ``plots`` is true. The cyclic garbage collector is held off meanwhile
    (:mod:`.gc_pause`).

    Records a cluster's workers encoded (:class:`.record_parts.RecordParts`) are written
    from their parts, which stay on those workers until then; once the tables' rows are
    fetched, a worker assembles the GeoPackage while another draws the plots: write them
    while that cluster's client is open.

    ``plotter``, a :class:`.plot_process.PlotProcess` of a one-process run, draws the plots
    while the tables and the GeoPackage are written here (here when it fails).

    The rules of :func:`check_report_folder` apply. Every file is finished in a temporary
    folder next to ``out_dir`` before it moves in (``summary.json`` last); replacing a
    previous output removes only the files it lists.

    Returns
    -------
    dict
        Output name → final path.

    Raises
    ------
    UnsafeOutputError, OutputExistsError, OutputWriteError
        See :func:`check_report_folder`; a full disk while writing is named as such.
    """
    from .record_parts import RecordParts
    from .records import FIELD_KINDS
    from .writers import RecordTable, error_layers, write_csv, write_geopackage, write_summary_json

    from ...core.cluster import client_of, split_workers
    from ...core.machine import usable_cores

    with staged_folder(out_dir, overwrite=overwrite, inputs=inputs) as staging, contextlib.ExitStack() as threads:
        files = {"summary": staging / "summary.json"}
        write_summary_json(evaluation.summary, files["summary"])
        records = evaluation.records
        cluster = client_of(records.kept) if isinstance(records, RecordParts) else None
        drawn_elsewhere = (cluster is None and plots and plotter is not None
                           and plotter.start(plotted_entries(evaluation.summary)))
        if isinstance(records, RecordParts):
            written = records.write_csvs({name: staging / f"{name}.csv" for name in RECORD_TABLES})
            files.update((f"{name}_csv", path) for name, path in written.items())
        else:
            tables = {name: RecordTable.from_records(records[name]) for name in RECORD_TABLES}
            for name, table in tables.items():
                files[f"{name}_csv"] = staging / f"{name}.csv"
                write_csv(table, files[f"{name}_csv"])
        # On a cluster the two long tasks start after the tables' rows are fetched (a worker runs one
        # task at a time: a fetch from a worker that draws would wait for the plots), on different
        # workers: one assembles the GeoPackage while another draws the plots.
        plot_workers, geopackage_workers = split_workers(cluster) if cluster is not None else (None, None)
        geopackage_written = None
        if geopackage:
            files["geopackage"] = staging / "evaluation.gpkg"
            if isinstance(records, RecordParts):
                geopackage_written = records.geopackage_started(files["geopackage"], FIELD_KINDS, frame,
                                                                workers=geopackage_workers)
            else:
                layers = error_layers(*tables.values())
                if plots and not drawn_elsewhere and usable_cores() > 1:
                    # GDAL and SQLite let go of the GIL: the GeoPackage is written on a thread of its own
                    # while this one draws the plots
                    writer = threads.enter_context(ThreadPoolExecutor(1, thread_name_prefix="polytopo-gpkg"))
                    geopackage_written = writer.submit(write_geopackage, files["geopackage"], layers, frame=frame,
                                                       field_kinds=FIELD_KINDS).result
                else:
                    write_geopackage(files["geopackage"], layers, frame=frame, field_kinds=FIELD_KINDS)
        if drawn_elsewhere:
            pngs = plotter.pngs() or plot_pngs(plotted_entries(evaluation.summary))
            files.update(_write_plots(pngs, staging))
        elif plots:
            files.update(_write_plots(_plots_started(evaluation.summary, cluster, plot_workers)(), staging))
        if geopackage_written is not None:
            geopackage_written()
    return {name: Path(out_dir) / path.name for name, path in files.items()}


@contextlib.contextmanager
def staged_folder(out_dir, *, overwrite=False, inputs=()):
    """Yield a temporary folder next to ``out_dir`` whose files move into ``out_dir`` when the block succeeds.

    The rules of :func:`check_report_folder` apply before the block runs; on success the
    files are published with :func:`.output_safety.publish_folder` (``summary.json``
    last; a previous output loses only the files its marker lists). On any failure the
    temporary folder is removed and ``out_dir`` is left as it was.
    """
    out_dir = Path(out_dir)
    check_report_folder(out_dir, inputs=inputs, overwrite=overwrite)
    staging = out_dir.parent / partial_name(out_dir.name)
    try:
        staging.mkdir()
        yield staging
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        publish_folder(staging, out_dir, order=("summary.json",))
    except OSError as exc:
        if isinstance(exc, EvaluatorError):
            raise
        raise write_failure(exc, out_dir) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _plots_started(summary, client, workers=None):
    """The plots of ``summary`` started on a worker of ``client`` (loosely one of ``workers``; None: drawn here).

    Returns a function that waits for them.
    """
    from ...core.cluster import started_on_worker

    plotted = plotted_entries(summary)
    if client is None:
        return lambda: plot_pngs(plotted)
    return started_on_worker(client, plot_pngs, plotted, name="the plots", workers=workers)


def _write_plots(pngs, folder):
    from .plots import write_png

    return {name: write_png(data, folder / file_name) for name, (file_name, data) in pngs.items()}
