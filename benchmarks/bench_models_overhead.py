"""Pipeline overhead on CPU: a whole run over a 4,096² raster versus the bare ``session.run`` calls.

The model is a small CNN (three 3x3 convolutions with 16 channels, see
``bench_models_data.conv_model``) so inference does real work, or any
semantic ONNX model given with ``--model`` (e.g. a bundled U-Net; the raster
then has as many identical bands as the model has input channels). "Bare" runs
exactly the batches the pipeline runs (same tiles, same input tensors,
prepared beforehand) and sums the time spent in ``session.run`` alone. The
run includes reading through GDAL, scaling, blending, polygonizing,
simplifying and writing the GeoPackage, with the prefetch thread the engine
chooses (``--prefetch`` overrides; the JSON says which was used). Both sides run in the same process,
alternately, ``--repeats`` times (default 3); the ratio of every repeat and
their median are reported. Goal: run / bare <= 1.10. On a loaded machine the
two sides of a repeat may see different loads, so the ratio of the run to the
``session.run`` time measured inside the same run is reported too.

Usage::

    python benchmarks/bench_models_overhead.py [--size 4096] [--tile 512] [--batch 1] [--threads 2]
        [--channels 16] [--layers 3] [--repeats 3] [--prefetch N] [--model PATH]
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

__all__ = ["bare_session_seconds", "main", "prepared_batches"]


def prepared_batches(model, raster, params):
    """The input tensors of the batches the pipeline runs on ``raster`` (read and scaled as it does), and the tile count."""
    from polytopo.models import PreparedRun
    from polytopo.models.raster.normalize import to_model_input
    from polytopo.models.raster.tiling import Tile

    prepared = PreparedRun(model, raster, params)
    tile = prepared.tiling.tile_size_px
    tiles = [Tile(0, int(c), int(r), tile, i, j) for i, r in enumerate(prepared.tile_rows) for j, c in enumerate(prepared.tile_cols)]
    batches = []
    size = prepared.tiling.batch_size
    for start in range(0, len(tiles), size):
        data = [prepared.reader.read(t.col0, t.row0, tile, tile)[0] for t in tiles[start:start + size]]
        batches.append(to_model_input(data, prepared._scaling, model.io.input_dtype, model.io.layout))
    return batches, len(tiles)


def bare_session_seconds(model, raster, params):
    """Time only session.run on the batches the pipeline would run (inputs prepared outside the timing)."""
    batches, tiles = prepared_batches(model, raster, params)
    names = [name for _role, name in model.io.outputs]
    seconds = 0.0
    for batch in batches:
        start = time.perf_counter()
        model.session.run(names, {model.io.input_name: batch})
        seconds += time.perf_counter() - start
    return seconds, tiles


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--tile", type=int, default=512)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--channels", type=int, default=16, help="channels of the hidden convolutions")
    parser.add_argument("--layers", type=int, default=3, help="number of 3x3 convolutions")
    parser.add_argument("--repeats", type=int, default=3, help="bare/run pairs; the median ratio is the result")
    parser.add_argument("--prefetch", type=int, default=None,
                        help="RunParams.prefetch_batches of the run (0: no background thread; default: the engine's choice)")
    parser.add_argument("--model", help="semantic ONNX model to use instead of the generated CNN (its card sets the tile)")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_models_data import GSD_M, buildings_mask, conv_model, write_geotiff

    from polytopo.models import RunParams, SessionParams, load_model, run_to_file

    with tempfile.TemporaryDirectory() as folder:
        mask = buildings_mask(args.size).astype(np.uint8) * 255
        session_params = SessionParams(provider="cpu", intra_op_threads=args.threads)
        if args.model:
            model = load_model(args.model, session_params)
            description = os.path.basename(args.model)
        else:
            model = load_model(conv_model(os.path.join(folder, "cnn.onnx"), args.tile, args.channels, args.layers), session_params)
            description = f"{args.layers} conv 3x3, {args.channels} channels"
        raster = write_geotiff(os.path.join(folder, "image.tif"), np.stack([mask] * model.io.channels))
        params = RunParams(batch_size=args.batch, resolution_cm_per_px=GSD_M * 100, prefetch_batches=args.prefetch)  # the raster's own GSD: no resampling
        bare_session_seconds(model, raster, params)  # warm-up: first runs allocate onnxruntime's arena
        repeats = []
        for repeat in range(args.repeats):
            bare, tiles = bare_session_seconds(model, raster, params)
            start = time.perf_counter()
            report = run_to_file(model, raster, os.path.join(folder, f"out{repeat}.gpkg"), params)
            total = time.perf_counter() - start
            repeats.append({"run_seconds": round(total, 3), "session_run_inside_run_seconds": round(report.session_seconds, 3),
                            "bare_session_run_seconds": round(bare, 3), "ratio": round(total / bare, 3),
                            "ratio_to_own_session_run": round(total / report.session_seconds, 3)})
    ratio = float(np.median([r["ratio"] for r in repeats]))
    own = float(np.median([r["ratio_to_own_session_run"] for r in repeats]))
    print(json.dumps({
        "raster_px": args.size, "model": description, "tile_px": report.tiling.tile_size_px, "overlap_px": report.tiling.overlap_px,
        "batch": args.batch, "prefetch_batches": report.prefetch_batches, "threads": args.threads, "provider": report.provider.describe(), "tiles": tiles,
        "tiles_run": report.tiles_run, "polygons": report.polygon_count, "repeats": repeats, "median_ratio": round(ratio, 3),
        "median_ratio_to_own_session_run": round(own, 3),
    }, indent=2))
    print(f"{description}: run / bare session.run = {ratio:.3f} (median of {len(repeats)}; goal <= 1.10): {'PASS' if ratio <= 1.10 else 'FAIL'}; "
          f"run / its own session.run = {own:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
