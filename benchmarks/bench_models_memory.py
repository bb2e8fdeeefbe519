"""Peak memory of a run on a 2,048² and a 16,384² raster; goal: the larger costs < 1.5x the smaller.

Each size runs in a fresh process that reports its own peak RSS
(``ru_maxrss``). The 16,384² raster is a VRT that repeats the 2,048² GeoTIFF
8 x 8 times, so it needs no extra disk. A third run, 2,048 wide and 16,384
tall, shows that the height of the raster costs nothing (the engine's
buffers grow with the width only). GDAL's block cache is capped with
GDAL_CACHEMAX (it is GDAL's memory, not the engine's; see docs/models.md).

Usage::

    python benchmarks/bench_models_memory.py [--tile 512] [--cache-mb 16] [--threads 2]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

__all__ = ["main"]


def child(model_path, raster_path, out_path, tile, threads):
    from polytopo.models import RunParams, SessionParams, load_model, run_to_file

    model = load_model(model_path, SessionParams(provider="cpu", intra_op_threads=threads))
    start = time.perf_counter()
    report = run_to_file(model, raster_path, out_path, RunParams(tile_size_px=tile, batch_size=1))
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_rss_mb": peak_mb, "seconds": seconds, "polygons": report.polygon_count,
                      "tiles": report.tiles_run, "grid": [report.grid.width_px, report.grid.height_px]}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tile", type=int, default=512)
    parser.add_argument("--cache-mb", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child, args.tile, args.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_models_data import buildings_mask, threshold_model, write_geotiff, write_mosaic_vrt

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        model = threshold_model(os.path.join(folder, "threshold.onnx"), args.tile)
        small = write_geotiff(os.path.join(folder, "small.tif"), buildings_mask(2048).astype("uint8") * 255)
        large = write_mosaic_vrt(os.path.join(folder, "large.vrt"), small, 8)
        tall = write_mosaic_vrt(os.path.join(folder, "tall.vrt"), small, 1, rows=8)
        env = {**os.environ, "GDAL_CACHEMAX": str(args.cache_mb)}
        for name, raster in (("2048", small), ("16384", large), ("2048x16384", tall)):
            out = os.path.join(folder, f"{name}.gpkg")
            command = [sys.executable, os.path.abspath(__file__), "--tile", str(args.tile), "--threads", str(args.threads),
                       "--child", model, raster, out]
            result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
            results[name] = json.loads(result.stdout.strip().splitlines()[-1])
    ratio = results["16384"]["peak_rss_mb"] / results["2048"]["peak_rss_mb"]
    tall_ratio = results["2048x16384"]["peak_rss_mb"] / results["2048"]["peak_rss_mb"]
    print(json.dumps({"tile_px": args.tile, "gdal_cachemax_mb": args.cache_mb, **results, "rss_ratio": ratio,
                      "tall_rss_ratio": tall_ratio}, indent=2))
    print(f"peak RSS 2048x16384 (8x taller) / 2048^2 = {tall_ratio:.2f}")
    print(f"peak RSS 16384^2 / 2048^2 = {ratio:.2f} (goal < 1.5): {'PASS' if ratio < 1.5 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
