"""Command line: ``python -m polytopo.evaluator --gt GT --pred PRED [options]``, and ``... compare``.

``--workers N`` / ``--scheduler ADDR`` run on a Dask cluster (:mod:`.distributed`); the
``compare`` subcommand scores several methods (:mod:`.compare_cli`).

Exit status 0 on success; 2 with a one-line reason on bad input or parameters; 1 with a
one-line reason on an unexpected failure (``--debug`` shows the traceback).
"""

import argparse
import math
import sys
from pathlib import Path

from .shared import add_cluster_options, resolved_workers, run_guarded, workers_read_inputs
from ..tables.params import IOU_MODES
from ..tables.profiles import PROFILE_NAMES, profiles_help

__all__ = ["add_cluster_options", "build_parser", "main", "run", "run_guarded"]

_PHASES = ("load", "validity", "repair", "instance IoU", "instance pairs", "ring bands", "pair metrics",
           "exterior rings", "hole rings", "partitions", "merge", "analyses", "bootstrap", "sweeps",
           "records", "write")


def _finite(text):
    """A finite float option value (NaN and infinity are refused: they would silently drop data)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number but got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number but got {text!r}; give a value such as 0.5")
    return value


def _floats(text):
    values = text.split(",")
    if any(not v.strip() for v in values):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated finite numbers but got {text!r}, which has an empty value; write e.g. 0.5,0.75")
    try:
        return tuple(_finite(v) for v in values)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated finite numbers but got {text!r}") from None


def _ints(text):
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers but got {text!r}") from None


def build_parser():
    """The argument parser (every option states its unit)."""
    parser = argparse.ArgumentParser(
        prog="python -m polytopo.evaluator",
        description="Score predicted polygons (with holes) against reference polygons with the PolyTopoBench "
                    "metrics (AP50, ring-aware BIoU/POLIS/MTA, Hole-F1, Topo-EM) and the P3 metrics. Inputs: "
                    "PolyTopoBench/HiSup COCO JSON (pixel coordinates) or any OGR vector layer (GeoPackage, "
                    "GeoJSON, Shapefile; map coordinates, scaled by --pixel-size). All thresholds are in pixels "
                    "of the evaluation raster.",
    )
    io = parser.add_argument_group("inputs and outputs")
    # dataset names stay strings: GDAL names such as /vsizip//abs/a.zip/a.shp must reach GDAL as written
    io.add_argument("--gt", required=True, help="reference (ground truth): COCO JSON or vector layer (any GDAL name)")
    io.add_argument("--pred", required=True, help="predictions: COCO result JSON or vector layer (any GDAL name)")
    io.add_argument("--out", type=Path, default=Path("polytopo-evaluation"),
                    help="output folder (default: ./polytopo-evaluation); written under a temporary name and "
                         "moved into place when complete")
    io.add_argument("--overwrite", action="store_true",
                    help="replace a previous PolyTopo output folder (only the files it wrote; a folder PolyTopo "
                         "did not write, or one holding an input, is never replaced)")
    io.add_argument("--gt-layer", help="layer name inside a multi-layer reference file")
    io.add_argument("--pred-layer", help="layer name inside a multi-layer prediction file")
    io.add_argument("--plots", action=argparse.BooleanOptionalAction, default=True,
                    help="draw the PNG plots (default; --no-plots skips them, and Matplotlib is then not imported)")
    io.add_argument("--no-gpkg", action="store_true", help="skip the GeoPackage of scored and error layers")
    io.add_argument("--quiet", action="store_true", help="no progress bar and no table on stdout")
    io.add_argument("--debug", action="store_true", help="show the full traceback on failure")
    data = parser.add_argument_group("how features are read")
    data.add_argument("--pixel-size", type=_finite,
                      help="map units per pixel of the evaluation raster (vector layers only; required for them)")
    data.add_argument("--allow-any-pixel-size", action="store_true",
                      help="accept a pixel size outside 1 mm .. 10 km on the ground (refused by default: usually "
                           "metres given for a CRS in degrees, or the reverse)")
    data.add_argument("--score-field", help="prediction attribute holding the confidence score (vector layers; "
                                            "default: a numeric field named 'score' when the layer has one)")
    data.add_argument("--default-score", type=_finite,
                      help="score given to predictions that have none (otherwise a missing score is an error)")
    data.add_argument("--image-field", help="attribute that groups features into images/tiles (vector layers)")
    data.add_argument("--patch-size", type=int,
                      help="group vector features into square patches of this many pixels instead")
    data.add_argument("--categories", type=_ints,
                      help="comma-separated category ids to keep (COCO category_id, or values of --category-field)")
    data.add_argument("--category-field", help="attribute holding each feature's class (vector layers)")
    data.add_argument("--drop-degenerate-rings", action="store_true",
                      help="skip COCO records whose exterior has fewer than 3 distinct points and drop such holes "
                           "(counted in summary.json), as the public PolyTopoBench evaluator does; default: error")
    rules = parser.add_argument_group("profile and thresholds")
    rules.add_argument("--profile", choices=PROFILE_NAMES, default=PROFILE_NAMES[0],
                       help="metric definitions; " + profiles_help("; "))
    rules.add_argument("--score-threshold", type=_finite, help="drop predictions scoring below this (default 0)")
    rules.add_argument("--min-area", type=_finite, dest="min_instance_area_px2",
                       help="minimum instance area in px²: GT with area >= A and predictions with area > A kept")
    rules.add_argument("--min-hole-area", type=_finite, dest="min_hole_area_px2",
                       help="A_min in px²: holes smaller than this are removed from both sides first (default 0)")
    rules.add_argument("--iou-threshold", type=_finite, help="β, instance IoU needed for a match (default 0.5)")
    rules.add_argument("--ring-threshold", type=_finite, dest="ring_match_threshold",
                       help="γ, ring BIoU needed for an exterior/hole match (paper 0.1, reference-code 0.5)")
    rules.add_argument("--boundary-radius", type=_finite, dest="boundary_radius_px",
                       help="r, BIoU boundary band radius in pixels (default 1)")
    rules.add_argument("--sample-spacing", type=_finite, dest="sample_spacing_px",
                       help="boundary sampling step in pixels for MTA and HD95 (default 2)")
    rules.add_argument("--ap-thresholds", type=_floats, dest="ap_iou_thresholds",
                       help="comma-separated IoU thresholds averaged into AP (default 0.50:0.05:0.95)")
    rules.add_argument("--max-detections", type=int, help="per-image prediction cap for AP (coco: 100)")
    rules.add_argument("--iou", choices=IOU_MODES, dest="iou_mode",
                       help="coco and p3-code: AP/AR on 1-px masks as pycocotools draws them (raster, the default) or "
                            "on the vector regions (vector)")
    rules.add_argument("--bootstrap", type=int, dest="bootstrap_resamples",
                       help="image-level bootstrap resamples for confidence intervals (default 500, 0 = off)")
    rules.add_argument("--seed", type=int, dest="bootstrap_seed", help="bootstrap random seed (default 0)")
    rules.add_argument("--sweeps", action="store_true",
                       help="also run the minimum-hole-area (0..64 px²) and ring-threshold (0.1..0.9) sweeps")
    add_cluster_options(parser)
    return parser


_PARAM_OPTIONS = ("score_threshold", "min_instance_area_px2", "min_hole_area_px2", "iou_threshold",
                  "ring_match_threshold", "boundary_radius_px", "sample_spacing_px", "ap_iou_thresholds",
                  "max_detections", "iou_mode", "bootstrap_resamples", "bootstrap_seed")


class _Progress:
    """Progress on stderr: a phase bar (tqdm) on a terminal, one plain line per phase in a log; silent when quiet."""

    def __init__(self, quiet):
        self.bar, self.phase = None, ""
        self.lines = not quiet and not sys.stderr.isatty()
        if not quiet and not self.lines:
            from tqdm import tqdm

            self.bar = tqdm(total=len(_PHASES), desc="evaluate", unit="phase", file=sys.stderr, leave=False)

    def __call__(self, phase):
        self.phase = phase
        if self.lines and phase in _PHASES:
            print(f"polytopo.evaluator: {phase}", file=sys.stderr, flush=True)
        if self.bar is not None:
            self.bar.set_postfix_str(phase)
            if phase in _PHASES:  # not the "partition k of n" steps of a cluster run
                self.bar.update(1)

    def within(self, done, total):
        """Progress inside the current phase: ``done`` of ``total`` points of a boundary search."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.phase}: {done:,}/{total:,} points")

    def close(self):
        if self.bar is not None:
            self.bar.close()


def run(args):
    """Run one evaluation from parsed arguments; returns the written file paths."""
    from ..run.api import evaluate, load_inputs
    from ...core.cluster import client_starting
    from ..geometry.kernels import reporting
    from ...core.machine import usable_cores
    from ..outputs.plot_process import plot_process
    from ..outputs.record_parts import parts_request
    from ..outputs.report import check_report_folder, format_table, write_report

    check_report_folder(args.out, inputs=(args.gt, args.pred), overwrite=args.overwrite)
    progress = _Progress(args.quiet)
    try:
        workers = resolved_workers(args, (args.gt, args.pred))
        # one process on several cores: a child process gets Matplotlib ready meanwhile and draws the plots
        drawing_child = args.plots and workers == 0 and args.scheduler is None and (args.threads or usable_cores()) > 1
        overrides = {name: getattr(args, name) for name in _PARAM_OPTIONS if getattr(args, name) is not None}
        with plot_process(drawing_child) as plotter, client_starting(workers, args.scheduler) as started_client:
            progress("load")
            frame = None
            evaluation = _read_on_workers(args, workers, started_client, progress, overrides)
            if evaluation is None:
                gt, pred, frame = load_inputs(
                    args.gt, args.pred, categories=args.categories, default_score=args.default_score,
                    score_field=args.score_field, image_field=args.image_field, patch_size_px=args.patch_size,
                    pixel_size=args.pixel_size, gt_layer=args.gt_layer, pred_layer=args.pred_layer,
                    category_field=args.category_field, drop_degenerate=args.drop_degenerate_rings,
                    check_pixel_size=not args.allow_any_pixel_size)
                client = started_client()
                # on a cluster the workers also encode the per-feature outputs of their partitions
                parts = parts_request(frame, not args.no_gpkg) if client is not None else None
                with reporting(progress.within):
                    evaluation = evaluate(gt, pred, profile=args.profile, progress=progress, sweeps=args.sweeps,
                                          client=client, record_parts=parts, threads=args.threads, **overrides)
            progress("write")
            files = write_report(evaluation, args.out, frame=frame, overwrite=args.overwrite,
                                 inputs=(args.gt, args.pred), plots=args.plots, geopackage=not args.no_gpkg,
                                 plotter=plotter)
    finally:
        progress.close()
    if not args.quiet:
        print(format_table(evaluation.summary))
        kinds = ["summary.json", "per-feature CSV"] + ["evaluation.gpkg"] * (not args.no_gpkg) + ["plots"] * args.plots
        print(f"\nwrote {len(files)} files to {args.out}/ ({', '.join(kinds)})")
    return files


_VECTOR_OPTIONS = ("score_field", "image_field", "patch_size", "pixel_size", "gt_layer", "pred_layer", "category_field")
"""Options that only vector-layer inputs read."""


def _read_on_workers(args, workers, started_client, progress, overrides):
    """The evaluation of a cluster run whose workers read the COCO JSON inputs, or None (read them here).

    :func:`.api.evaluate_files`, when a cluster runs a ``paper`` evaluation without sweeps
    and no vector-layer option is given.
    """
    from ..outputs.record_parts import parts_request
    from ..run.api import evaluate_files
    from ..tables.params import params_for

    if not workers_read_inputs(args, workers, _VECTOR_OPTIONS, params_for(args.profile, **overrides), args.sweeps):
        return None
    client = started_client()
    return evaluate_files(args.gt, args.pred, profile=args.profile, client=client,
                          record_parts=parts_request(None, not args.no_gpkg, client), progress=progress,
                          categories=args.categories, default_score=args.default_score,
                          drop_degenerate=args.drop_degenerate_rings, **overrides)


def main(argv=None):
    """Entry point; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        from .compare import main as compare_main

        return compare_main(argv[1:])
    args = build_parser().parse_args(argv)
    return run_guarded(run, args)
