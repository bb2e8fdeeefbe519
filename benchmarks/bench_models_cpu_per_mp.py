"""CPU time per megapixel of two (or more) ONNX models, side by side in one process.

For each model, alternately and ``--repeats`` times (default 3):

* **bare**: ``session.run`` alone on ``--tiles`` tiles of the card's ``tile_size``
  (batches of ``--batch``), the input a fixed synthetic RGB scene standardized
  with the model's card;
* **run**: the whole engine (:class:`polytopo.models.PreparedRun`: reading,
  resampling, tiling with the card's overlap, inference, blending, decoding,
  polygonization) over a raster: the 0.3 m Schönbrunn orthophoto of the shared
  data folder (1667 x 1667 px) when it is there, else a synthetic 2,048² scene
  at 0.5 m.

Reported (JSON): process CPU seconds and wall seconds per megapixel of *model-grid*
pixels, the median over the repeats, and each model's ratio to the first model
(the baseline). Goal of issue 31: the new default at most 2x the old one.

Usage::

    python benchmarks/bench_models_cpu_per_mp.py OLD.onnx NEW.onnx [--threads 2] [--tiles 32]
        [--batch 4] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_models_data import buildings_mask, write_geotiff  # noqa: E402

__all__ = ["main"]


def _scene(size_px, seed=0):
    rng = np.random.default_rng(seed)
    mask = buildings_mask(size_px, seed)
    ground = rng.normal(0.4, 0.05, (3, size_px, size_px))
    roofs = np.array([0.75, 0.45, 0.35])[:, None, None]
    return np.clip(np.where(mask[None], roofs, ground) * 255.0, 0, 255).astype(np.uint8)


def _bare(model, session, tiles, batch, scene):
    card = model.card
    size = card.tile_size_px
    low, high = card.input_range if card.input_range is not None else (0.0, 255.0)
    mean = np.asarray(card.standardization_mean, np.float32)[:, None, None]
    std = np.asarray(card.standardization_std, np.float32)[:, None, None]
    x = ((scene[:, :size, :size].astype(np.float32) - low) / (high - low) - mean) / std
    x = np.repeat(x[None], batch, axis=0)
    name = session.get_inputs()[0].name
    session.run(None, {name: x})  # warm-up
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(tiles // batch):
        session.run(None, {name: x})
    megapixels = (tiles // batch) * batch * size * size / 1e6
    return (time.process_time() - cpu) / megapixels, (time.perf_counter() - wall) / megapixels


def _run(model, raster):
    from polytopo.models.pipeline import PreparedRun, RunParams

    cpu, wall = time.process_time(), time.perf_counter()
    prepared = PreparedRun(model, raster, RunParams(batch_size=4))
    count = sum(1 for _ in prepared)
    megapixels = prepared.grid.width_px * prepared.grid.height_px / 1e6
    return time.process_time() - cpu, time.perf_counter() - wall, megapixels, count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="ONNX files; the first is the baseline")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tiles", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    from polytopo.models import SessionParams, load_model
    from polytopo.models.session import import_onnxruntime
    from polytopo.training.shared_data import find_shared_data, shared_data_available

    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    scene = _scene(512)
    with tempfile.TemporaryDirectory() as folder:
        if shared_data_available():
            raster = find_shared_data().root / "imagery" / "vienna_schoenbrunn" / "44_2_op_2023_30cm.tif"
            raster_name = "Schönbrunn orthophoto 0.3 m, 1667 x 1667 px"
        else:
            raster = os.path.join(folder, "scene.tif")
            write_geotiff(raster, _scene(2048, seed=1))
            raster_name = "synthetic 2,048² at 0.5 m"
        models = {path: load_model(path, SessionParams(provider="cpu", intra_op_threads=args.threads))
                  for path in args.models}
        sessions = {path: ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]) for path in args.models}
        results = {path: {"bare_cpu_s_per_mp": [], "bare_wall_s_per_mp": [], "run_cpu_s_per_mp": [],
                          "run_wall_s_per_mp": [], "polygons": None} for path in args.models}
        for repeat in range(args.repeats):
            order = args.models if repeat % 2 == 0 else list(reversed(args.models))
            for path in order:
                cpu, wall = _bare(models[path], sessions[path], args.tiles, args.batch, scene)
                results[path]["bare_cpu_s_per_mp"].append(round(cpu, 3))
                results[path]["bare_wall_s_per_mp"].append(round(wall, 3))
                run_cpu, run_wall, megapixels, count = _run(models[path], raster)
                results[path]["run_cpu_s_per_mp"].append(round(run_cpu / megapixels, 3))
                results[path]["run_wall_s_per_mp"].append(round(run_wall / megapixels, 3))
                results[path]["polygons"] = count
    base = args.models[0]
    summary = {"threads": args.threads, "raster": raster_name, "tiles": args.tiles, "batch": args.batch,
               "repeats": args.repeats, "models": {}}
    for path in args.models:
        entry = {key: values for key, values in results[path].items()}
        for key in ("bare_cpu_s_per_mp", "bare_wall_s_per_mp", "run_cpu_s_per_mp", "run_wall_s_per_mp"):
            entry[f"median_{key}"] = statistics.median(results[path][key])
            entry[f"ratio_{key}"] = round(statistics.median(results[path][key])
                                          / statistics.median(results[base][key]), 2)
        entry["size_bytes"] = os.path.getsize(path)
        summary["models"][path] = entry
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
