"""The ``run`` command: load, prepare, run with a progress bar, report."""

import os
import sys

from tqdm import tqdm

from ..evaluator.output_safety import check_file_output, probe_folder
from .model import load_model
from .pipeline import Prediction, RunParams, run_to_file
from .prompts import prompts_from_geometries, prompts_from_vector
from .raster import raster_crs_wkt
from .session import SessionParams
from .vector_input import read_aoi
from .writer import driver_for, safety_errors

__all__ = ["check_run_output", "run_command"]


def check_run_output(args):
    """Refuse ``--out`` before any work: an input, an existing file without ``--overwrite``,
    a read-only folder or a full disk."""
    driver_for(args.out)
    inputs = [args.raster, args.model, args.aoi, args.prompts, args.prompt_model]
    folder = os.path.dirname(os.path.abspath(args.out))
    with safety_errors(args.out):
        check_file_output(args.out, inputs=[name for name in inputs if name], overwrite=args.overwrite)
        probe_folder(folder)


def _prompts(args, crs_wkt, session_params, base):
    if args.prompts:
        return prompts_from_vector(args.prompts, crs_wkt)
    if args.prompt_model:
        detector = load_model(args.prompt_model, session_params)
        polygons = list(Prediction(detector, args.raster, RunParams(extent=base.extent, aoi=base.aoi)))
        print(f"prompt model {args.prompt_model}: {len(polygons)} boxes", file=sys.stderr)
        return prompts_from_geometries([p.geometry for p in polygons])
    return None


def run_command(args):
    """Execute ``python -m polytopo.models run`` for parsed ``args``; returns the exit status."""
    check_run_output(args)
    session_params = SessionParams(provider=args.provider, intra_op_threads=args.threads)
    model = load_model(args.model, session_params)
    print(f"model {args.model}: family {model.card.family}, provider {model.session.report.describe()}", file=sys.stderr)
    crs_wkt = raster_crs_wkt(args.raster)
    aoi = read_aoi(args.aoi, crs_wkt) if args.aoi else None
    params = RunParams(
        tile_size_px=args.tile,
        overlap_px=args.overlap,
        batch_size=args.batch,
        extent=args.extent,
        aoi=aoi,
        bands=args.bands,
    )
    if model.card.family == "promptable":
        params = RunParams(**{**params.__dict__, "prompts": _prompts(args, crs_wkt, session_params, params)})
    bar = tqdm(total=0, unit="tile", disable=args.quiet, file=sys.stderr, dynamic_ncols=True)

    def progress(done, total):
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        report = run_to_file(model, args.raster, args.out, params, progress=progress, overwrite=args.overwrite,
                             inputs=[name for name in (args.model, args.aoi, args.prompts, args.prompt_model) if name])
    finally:
        bar.close()
    grid, tiling = report.grid, report.tiling
    print(
        f"wrote {report.polygon_count} polygons to {args.out}; grid {grid.width_px}x{grid.height_px} px"
        f"{' (resampled)' if grid.resampled else ''}, tiles {report.tiles_run}/{report.tiles_total} of "
        f"{tiling.tile_size_px} px (overlap {tiling.overlap_px} px, batch {tiling.batch_size}), "
        f"{report.total_seconds:.1f} s ({report.session_seconds:.1f} s in session.run)",
        file=sys.stderr,
    )
    for message in report.messages:
        print(f"note: {message}", file=sys.stderr)
    return 0
