"""Writing an evaluation to a folder: summary, per-feature tables, GeoPackage, plots.

The folder is assembled under a temporary name next to the target and renamed into
place only when every file is complete, so a failed or interrupted run never leaves a
folder that looks finished. An existing target is replaced only with ``overwrite=True``
and never when it contains one of the inputs.
"""

import contextlib
import math
import os
import shutil
import tempfile
from pathlib import Path

from .errors import InputFormatError

__all__ = ["write_report", "format_table", "staged_folder", "HEADLINE"]

HEADLINE = ("AP50", "AP", "O-BIoU", "E-BIoU", "H-BIoU", "O-POLIS", "E-POLIS", "H-POLIS",
            "O-MTA", "E-MTA", "H-MTA", "Hole-F1", "Topo-EM")


def _fmt(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def format_table(summary):
    """A readable text table of the headline metrics, their bootstrap intervals and counts."""
    metrics, counts = summary["metrics"], summary["counts"]
    boot = summary.get("bootstrap", {})
    lines = [f"PolyTopo evaluation — profile {summary['profile']}",
             f"  images {counts['images']}   GT {counts['gt_instances']} ({counts['gt_holes']} holes)   "
             f"pred {counts['pred_instances']} ({counts['pred_holes']} holes, "
             f"{counts['invalid_predictions']} invalid)", ""]
    width = max(len(name) for name in HEADLINE) + 2
    for name in HEADLINE:
        interval = boot.get(name)
        ci = f"   [{_fmt(interval['low'])}, {_fmt(interval['high'])}]" if interval else ""
        unit = " px" if "POLIS" in name else (" °" if "MTA" in name else "")
        lines.append(f"  {name:<{width}}{_fmt(metrics.get(name)):>8}{unit}{ci}")
    if boot:
        lines.append(f"  (95% image-level bootstrap intervals, {boot['resamples']} resamples)"
                     if boot.get("level") == 0.95 else
                     f"  ({boot['level']:.0%} bootstrap intervals, {boot['resamples']} resamples)")
    return "\n".join(lines)


def _inside(path, folder):
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


def write_report(evaluation, out_dir, *, frame=None, overwrite=False, inputs=(), plots=True, geopackage=True):
    """Write every output of ``evaluation`` into ``out_dir``.

    Files: ``summary.json``; ``predictions.csv``, ``references.csv``, ``missed_holes.csv``,
    ``hallucinated_holes.csv``; ``evaluation.gpkg`` with layers ``predictions``,
    ``references``, ``missed_holes``, ``hallucinated_holes``, ``unmatched_predictions``,
    ``missed_references`` (geometry in map units when ``frame`` is given, else pixels); PNG
    plots ``precision_recall.png``, ``simple_to_complex.png``, ``wrong_topo.png`` and, when
    sweeps ran, ``min_hole_area_sweep.png`` and ``ring_threshold_sweep.png``.

    Returns
    -------
    dict
        Output name → final path.
    """
    from .records import FIELD_KINDS
    from .writers import error_layers, write_csv, write_geopackage, write_summary_json

    with staged_folder(out_dir, overwrite=overwrite, inputs=inputs) as staging:
        records = evaluation.records
        files = {"summary": staging / "summary.json"}
        write_summary_json(evaluation.summary, files["summary"])
        for name in ("predictions", "references", "missed_holes", "hallucinated_holes"):
            files[f"{name}_csv"] = staging / f"{name}.csv"
            write_csv(records[name], files[f"{name}_csv"])
        if geopackage:
            files["geopackage"] = staging / "evaluation.gpkg"
            layers = error_layers(records["predictions"], records["references"], records["missed_holes"],
                                  records["hallucinated_holes"])
            write_geopackage(files["geopackage"], layers, frame=frame, field_kinds=FIELD_KINDS)
        if plots:
            files.update(_plots(evaluation.summary, staging))
    return {name: Path(out_dir) / path.name for name, path in files.items()}


@contextlib.contextmanager
def staged_folder(out_dir, *, overwrite=False, inputs=()):
    """Yield a temporary folder next to ``out_dir`` that becomes ``out_dir`` when the block succeeds.

    On any failure (or interruption) the temporary folder is removed and an existing
    ``out_dir`` is left as it was. An existing ``out_dir`` is replaced only with
    ``overwrite=True`` and never when it contains one of ``inputs``.
    """
    out_dir = Path(out_dir)
    if out_dir.exists():
        if not overwrite:
            raise FileExistsError(f"{out_dir} exists; choose another --out folder or pass --overwrite")
        held = [str(p) for p in inputs if p and _inside(p, out_dir)]
        if held:
            raise InputFormatError(f"Refusing to overwrite {out_dir}: it contains the input {held[0]}")
        if not out_dir.is_dir():
            raise FileExistsError(f"{out_dir} exists and is not a folder; choose another --out path")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    try:
        yield staging
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _plots(summary, folder):
    from .plots import plot_precision_recall, plot_simple_to_complex, plot_sweep, plot_wrong_topo

    files = {}
    curve = summary["pr_curve"]
    files["precision_recall"] = folder / "precision_recall.png"
    plot_precision_recall({f"IoU {curve['iou_threshold']:g}": (curve["precision"], curve["recall"])},
                          files["precision_recall"])
    files["simple_to_complex"] = folder / "simple_to_complex.png"
    plot_simple_to_complex(summary["simple_to_complex"], files["simple_to_complex"])
    files["wrong_topo"] = folder / "wrong_topo.png"
    plot_wrong_topo(summary["wrong_topo"], files["wrong_topo"])
    for key, x_key, title in (("min_hole_area_sweep", "min_hole_area_px2", "Minimum hole area A_min (px²)"),
                              ("ring_threshold_sweep", "ring_match_threshold", "Ring match threshold γ")):
        if key in summary:
            files[key] = folder / f"{key}.png"
            plot_sweep(summary[key], x_key, ["AP50", "Hole-F1", "H-BIoU", "Topo-EM"], files[key], title)
    return files
