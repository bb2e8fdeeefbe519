"""What ``python -m polytopo.models run`` does: load, prepare, run with a progress bar, report.

The parser of every command, and the ``info`` and ``write-card`` commands, are in
:mod:`~polytopo.models.cli`, which imports this module only when ``run`` is called.

One raster runs in this process (:func:`~polytopo.models.pipeline.run_to_file`),
or in grid blocks on a Dask cluster with ``--workers``/``--scheduler``
(:func:`~polytopo.models.raster.block_run.run_blocks`); an image set runs one task
per image (:mod:`~polytopo.models.image_sets`).
"""

import os
import sys
from dataclasses import replace

from tqdm import tqdm

from ..core.cluster import open_client
from ..core.output_safety import check_file_output, probe_folder
from .raster.block_run import run_blocks
from .decoders.families import family_row
from .errors import ModelCardError, ModelsError
from .image_sets import check_categories, check_outputs, image_ids, list_images, run_image_set, write_predictions
from .model import load_model
from .worker_model import worker_model
from .pipeline import COLUMN_BLOCK_PX, PreparedRun, RunParams, decoding_summary, run_to_file
from .prompts import prompts_from_geometries, prompts_from_vector
from .raster.reading import raster_crs_wkt
from .session import SessionParams
from .vector_input import read_aoi
from .writer import driver_for, safety_errors

__all__ = ["check_run_output", "run_command"]


def check_run_output(args):
    """Refuse a bad ``--out`` before any work.

    Refused: an input, an existing file without ``--overwrite``, a read-only folder or a
    full disk.
    """
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
        polygons = list(PreparedRun(detector, args.raster, RunParams(extent=base.extent, aoi=base.aoi)))
        print(f"prompt model {args.prompt_model}: {len(polygons)} boxes", file=sys.stderr)
        return prompts_from_geometries([p.geometry for p in polygons])
    return None


def _threads(args):
    """Intra-op threads per session: ``--threads``, or the CPUs shared out among local workers."""
    if args.threads or not args.workers:
        return args.threads
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cpus // args.workers)


def _progress_bar(args, unit):
    """A tqdm bar on a terminal; in a log (stderr not a terminal) a plain line at every tenth of the work."""
    lines = not args.quiet and not sys.stderr.isatty()
    bar = tqdm(total=0, unit=unit, disable=args.quiet or lines, file=sys.stderr, dynamic_ncols=True)
    said = [-1]

    def progress(done, total):
        bar.total = total
        bar.n = done
        bar.refresh()
        tenth = 10 * done // total if total else 10
        if lines and tenth > said[0]:
            said[0] = tenth
            print(f"{unit}s {done}/{total} ({100 * done // total if total else 100} %)", file=sys.stderr, flush=True)

    return bar, progress


def _decoding(args):
    """The ``--threshold``/``--min-area-px``/``--min-hole-area-px`` overrides as RunParams fields."""
    return {"threshold": args.threshold, "min_area_px": args.min_area_px, "min_hole_area_px": args.min_hole_area_px}


def run_command(args):
    """Execute ``python -m polytopo.models run`` for parsed ``args``; returns the exit status."""
    session_params = SessionParams(provider=args.provider, intra_op_threads=_threads(args))
    if args.images:
        return _run_images(args, session_params)
    if args.gt_images:
        raise ModelsError("Expected --gt-images only with --images but got it with --raster; drop it.")
    check_run_output(args)
    model = worker_model(args.model, session_params)  # the block run's plan reuses it
    crs_wkt = raster_crs_wkt(args.raster)
    aoi = read_aoi(args.aoi, crs_wkt) if args.aoi else None
    params = RunParams(
        tile_size_px=args.tile,
        overlap_px=args.overlap,
        batch_size=args.batch,
        extent=args.extent,
        aoi=aoi,
        bands=args.bands,
        max_pixels=args.max_pixels,
        **_decoding(args),
    )
    print(f"model {args.model}: family {model.card.family}, provider {model.session.report.describe()}; "
          f"{decoding_summary(params.card_for(model.card))}", file=sys.stderr)
    if family_row(model.card.family).needs_prompts:
        params = replace(params, prompts=_prompts(args, crs_wkt, session_params, params))
    elif args.prompts or args.prompt_model:
        option = "--prompts" if args.prompts else "--prompt-model"
        raise ModelsError(f"Expected {option} only with a model that takes prompts but {args.model} is a "
                          f"{model.card.family!r} model, which would ignore it; drop {option} (or choose a "
                          "promptable model)")
    in_blocks = bool(args.workers or args.scheduler or args.block_px)
    bar, progress = _progress_bar(args, "block" if in_blocks else "tile")
    try:
        if in_blocks:
            with open_client(args.workers, args.scheduler) as client:
                report = run_blocks(args.model, args.raster, args.out, client, params, session_params,
                                    args.block_px or COLUMN_BLOCK_PX, progress=progress, overwrite=args.overwrite)
        else:
            report = run_to_file(model, args.raster, args.out, params, progress=progress, overwrite=args.overwrite,
                                 inputs=[name for name in (args.model, args.aoi, args.prompts, args.prompt_model) if name])
    finally:
        bar.close()
    grid, tiling = report.grid, report.tiling
    rerun = f" (+{report.tiles_rerun} run again in the blending margins)" if report.tiles_rerun else ""
    print(
        f"wrote {report.polygon_count} polygons to {args.out}; grid {grid.width_px}x{grid.height_px} px"
        f"{' (resampled)' if grid.resampled else ''}, tiles {report.tiles_run}/{report.tiles_total}{rerun} of "
        f"{tiling.tile_size_px} px (overlap {tiling.overlap_px} px, batch {tiling.batch_size}), "
        f"{report.total_seconds:.1f} s ({report.session_seconds:.1f} s in session.run)",
        file=sys.stderr,
    )
    for message in report.messages:
        print(f"note: {message}", file=sys.stderr)
    return 0


def _run_images(args, session_params):
    """``run --images``: every image, one task each; exit status 1 when an image failed."""
    for option in ("extent", "aoi", "prompts", "prompt_model", "block_px"):
        if getattr(args, option):
            raise ModelsError(f"Expected no --{option.replace('_', '-')} with --images (it applies to one raster) "
                              "but got one; drop it.")
    paths = list_images(args.images)
    ids = image_ids(paths, args.gt_images)
    inputs = [*paths, args.model, *([args.gt_images] if args.gt_images else [])]
    check_outputs(args.out, args.overwrite, inputs)
    model = worker_model(args.model, session_params)  # a model that cannot load fails here, not once per image
    if family_row(model.card.family).needs_prompts:
        raise ModelCardError(f"Expected a model that needs no prompts for --images but got a {model.card.family!r} "
                             "model, which does; run it on each raster with --prompts.")
    if args.gt_images:
        check_categories(args.gt_images, model.card.class_names)
    params = RunParams(tile_size_px=args.tile, overlap_px=args.overlap, batch_size=args.batch, bands=args.bands,
                       **_decoding(args))
    print(f"model {args.model}: family {model.card.family}, provider {model.session.report.describe()}; "
          f"{decoding_summary(params.card_for(model.card))}; {len(paths)} images", file=sys.stderr)
    bar, progress = _progress_bar(args, "image")
    try:
        with open_client(args.workers, args.scheduler) as client:
            results = run_image_set(args.model, paths, ids, client, params, session_params, progress=progress)
    finally:
        bar.close()
    written, failures = write_predictions(results, args.out, args.gt_images, overwrite=args.overwrite, protect=inputs)
    polygons = sum(len(r.polygons) for r in results)
    seconds = sum(r.seconds for r in results)
    print(f"wrote {polygons} polygons of {len(results) - len(failures)} images to {written} "
          f"({seconds:.1f} s on the workers)", file=sys.stderr)
    if not failures:
        return 0
    print(f"error: {len(failures)} of {len(results)} images failed; {args.out} was not written, the others' "
          f"polygons are in {written}:", file=sys.stderr)
    for failure in failures:
        print(f"  {os.path.basename(failure.image_path)}: {failure.error}", file=sys.stderr)
    return 1
