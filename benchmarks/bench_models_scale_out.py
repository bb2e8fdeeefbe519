"""Vectorizer scale-out: a 16,384² raster in grid blocks on a Dask LocalCluster of 1 and of 2 workers.

The raster is a 4,096² GeoTIFF of synthetic buildings (a fifth with a
courtyard) repeated 4 x 4 times by a VRT; the model is the small CNN of
``bench_models_data.conv_model`` (3x3 convolutions, so inference does real
work). Three runs, in this order, in one invocation:

- ``single``: the single-process path (``run_to_file``, onnxruntime's default threads);
- ``blocks_in_process``: the same blocks as the cluster runs, one after the
  other in this process (``run_blocks`` without a client): what the blocks
  cost besides the cluster (their extra tiles in the blending margins);
- ``workers=1`` and ``workers=2``: ``run_blocks`` on a LocalCluster of that
  many worker processes, each session with ``cpus // workers`` intra-op
  threads (what ``python -m polytopo.models run --workers N`` chooses). The
  cluster is started before the timing and closed after it; its start-up is
  reported separately. ``--repeats`` pairs, in alternating order (1, 2, then
  2, 1, ...), so that a change of the machine's load hits both sides.

Printed (JSON): wall seconds of each run, t(blocks_in_process) / t(single), the ratio t(workers=1) / t(workers=2)
of each pair and their median, t(single) / median t(workers=2), the tiles run again in the blending margins, the
peak resident memory of each worker process (``VmHWM``, asked of the
workers after the run) and of this process, and whether the 2-worker output
equals the single-process output (same polygons in GEOS normal form, same
class names; largest score difference).

Usage::

    python benchmarks/bench_models_scale_out.py [--size 16384] [--block-px 4096] [--channels 8] [--layers 2] [--repeats 2]
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from peak_memory import peak_rss_mib

__all__ = ["main"]

_TILE_PX = 4096


def _layer(path):
    """Sorted (normalized WKB, class name, score) of every feature of a GeoPackage."""
    import shapely
    from osgeo import ogr

    dataset = ogr.Open(str(path))
    rows = [(shapely.normalize(shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb()))).wkb, f.GetField("class_name"),
             f.GetField("score")) for f in dataset.GetLayer(0)]
    return sorted(rows)


def _compare(got, expected):
    same = len(got) == len(expected) and all(a[:2] == b[:2] for a, b in zip(got, expected))
    score = max((abs(a[2] - b[2]) for a, b in zip(got, expected)), default=0.0) if same else None
    return {"polygons": len(got), "expected_polygons": len(expected), "same_polygons": same, "max_score_difference": score}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16384, help="raster edge, px (a multiple of 4096)")
    parser.add_argument("--block-px", type=int, default=4096)
    parser.add_argument("--tile", type=int, default=512)
    parser.add_argument("--channels", type=int, default=8, help="channels of the hidden convolutions")
    parser.add_argument("--layers", type=int, default=2, help="number of 3x3 convolutions")
    parser.add_argument("--repeats", type=int, default=2, help="pairs of runs on 1 and 2 workers, in alternating order")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_models_data import GSD_M, buildings_mask, conv_model, write_geotiff, write_mosaic_vrt

    from polytopo.core.cluster import open_client
    from polytopo.models import RunParams, SessionParams, load_model, run_to_file
    from polytopo.models.raster.block_run import run_blocks

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    results = {"raster_px": args.size, "block_px": args.block_px, "tile_px": args.tile, "cpus": cpus,
               "model": f"{args.layers} conv 3x3, {args.channels} channels"}
    with tempfile.TemporaryDirectory() as folder:
        mask = buildings_mask(min(args.size, _TILE_PX)).astype(np.uint8) * 255
        tile = write_geotiff(os.path.join(folder, "tile.tif"), np.stack([mask] * 3))
        raster = write_mosaic_vrt(os.path.join(folder, "mosaic.vrt"), tile, max(1, args.size // _TILE_PX), bands=3)
        model_path = conv_model(os.path.join(folder, "cnn.onnx"), args.tile, args.channels, args.layers)
        params = RunParams(resolution_cm_per_px=GSD_M * 100)  # the raster's own GSD: no resampling

        start = time.perf_counter()
        report = run_to_file(load_model(model_path, SessionParams(provider="cpu")), raster, os.path.join(folder, "single.gpkg"), params)
        results["single"] = {"seconds": round(time.perf_counter() - start, 2), "tiles_run": report.tiles_run,
                             "peak_rss_mb": round(peak_rss_mib())}
        start = time.perf_counter()
        report = run_blocks(model_path, raster, os.path.join(folder, "in_process.gpkg"), None, params,
                            SessionParams(provider="cpu"), args.block_px)
        results["blocks_in_process"] = {"seconds": round(time.perf_counter() - start, 2), "tiles_rerun": report.tiles_rerun}
        runs = {1: [], 2: []}
        for repeat in range(args.repeats):
            for workers in ((1, 2) if repeat % 2 == 0 else (2, 1)):  # alternate, so a change of load hits both
                session = SessionParams(provider="cpu", intra_op_threads=max(1, cpus // workers))
                start = time.perf_counter()
                with open_client(workers) as client:
                    started = time.perf_counter()
                    out = os.path.join(folder, f"workers{workers}.gpkg")
                    if os.path.exists(out):
                        os.unlink(out)
                    report = run_blocks(model_path, raster, out, client, params, session, args.block_px)
                    seconds = time.perf_counter() - started
                    peaks = client.run(peak_rss_mib)
                runs[workers].append({
                    "seconds": round(seconds, 2), "cluster_start_seconds": round(started - start, 2),
                    "tiles_run": report.tiles_run, "tiles_rerun": report.tiles_rerun,
                    "worker_peak_rss_mb": sorted(round(v) for v in peaks.values()), "client_peak_rss_mb": round(peak_rss_mib())})
        for workers, done in runs.items():
            results[f"workers={workers}"] = done
        results["equality_workers2_vs_single"] = _compare(_layer(os.path.join(folder, "workers2.gpkg")),
                                                          _layer(os.path.join(folder, "single.gpkg")))
    ratios = [a["seconds"] / b["seconds"] for a, b in zip(runs[1], runs[2])]
    results["ratio_workers1_over_workers2"] = [round(r, 3) for r in ratios]
    results["ratio_workers1_over_workers2_median"] = round(float(np.median(ratios)), 3)
    two = float(np.median([r["seconds"] for r in runs[2]]))
    results["ratio_single_over_workers2_median"] = round(results["single"]["seconds"] / two, 3)
    results["ratio_blocks_in_process_over_single"] = round(results["blocks_in_process"]["seconds"] / results["single"]["seconds"], 3)
    results["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(results, indent=2))
    return 0 if results["equality_workers2_vs_single"]["same_polygons"] else 1


if __name__ == "__main__":
    sys.exit(main())
