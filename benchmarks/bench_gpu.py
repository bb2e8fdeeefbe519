"""Tiles per second of the bare ``session.run`` against the whole pipeline, on CUDA and on the CPU.

One command measures four rows on the same synthetic RGB scene (roofs from
``bench_models_data.buildings_mask`` on a noisy ground), with a zoo model (default
``unet_buildings_rgb``) and its float16 variant:

==========  =========  ==============================================================
provider    precision  what
==========  =========  ==============================================================
CUDA        fp32       the zoo model on ``CUDAExecutionProvider``
CUDA        fp16       its float16 variant (weights and activations in float16,
                       input and output kept float32: ``keep_io_types``)
CPU         fp32       the zoo model on ``CPUExecutionProvider``
CPU         fp16       the float16 variant on the CPU
==========  =========  ==============================================================

For each row:

* **bare**: ``session.run`` alone on exactly the input tensors the pipeline feeds
  (the same tiles, read and scaled beforehand). On CUDA the inputs are copied to the
  GPU once and the outputs stay there (IO binding), so this is the rate of the
  accelerator kept busy without a pause.
* **pipeline**: the whole run (``run_to_file``: reading through GDAL, scaling, the
  prefetch thread the engine chooses, ``session.run``, blending, polygonizing and
  writing the GeoPackage) on the same raster.
* **pipeline / bare**: how busy the pipeline keeps the accelerator compared with the
  bare loop. The goal on CUDA is at least 90 %.
* **polygons**: the pipeline's polygon count; for fp16, whether its polygons equal the
  fp32 run's of the same provider (same WKB, or the symmetric difference as a share
  of the fp32 area).

Each rate is the median of ``--repeats`` timed runs after one warm-up, the bare loop and
the pipeline alternating so that both see the same load. Rows whose
provider this onnxruntime cannot start print "not available" with the reason (the
CPU build of onnxruntime has no CUDA: run ``scripts/setup`` on a machine where
``nvidia-smi`` lists a GPU to get ``onnxruntime-gpu``). The table goes to stdout,
``--json-out`` also writes it as JSON. Exit status 1 when a measured CUDA row keeps
the GPU less than 90 % as busy as its bare loop, 0 otherwise; whether the fp16
polygons equal the fp32 ones is printed, not judged (float16 rounds probabilities
near the threshold, so a few boundary pixels may move).

Usage::

    python benchmarks/bench_gpu.py [--model PATH] [--size 4096] [--batch 8] [--repeats 3] [--json-out FILE]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_models_data import GSD_M, buildings_mask, write_geotiff  # noqa: E402
from bench_models_overhead import prepared_batches  # noqa: E402

__all__ = ["BUSY_GOAL", "ROWS", "compare_polygons", "fp16_variant", "format_table", "main", "measure",
           "synthetic_scene"]

#: Rows of the table: (provider choice of SessionParams, precision).
ROWS = (("cuda", "fp32"), ("cuda", "fp16"), ("cpu", "fp32"), ("cpu", "fp16"))
#: Least share of the bare loop's rate the pipeline must reach on CUDA.
BUSY_GOAL = 0.90
_DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "zoo" / "unet_buildings_rgb.onnx"


def synthetic_scene(path, size_px, channels, seed=0):
    """Write a ``size_px``² 8-bit scene at ``GSD_M`` m: light roofs on a darker ground, with noise.

    Returns the path. Every band has the same roofs; a single band is the mean colour.
    """
    rng = np.random.default_rng(seed)
    roofs = buildings_mask(size_px, seed)
    ground, roof = np.array([96.0, 104.0, 80.0]), np.array([172.0, 160.0, 150.0])
    if channels != 3:
        ground, roof = np.full(channels, ground.mean()), np.full(channels, roof.mean())
    image = np.where(roofs[None], roof[:, None, None], ground[:, None, None])
    image = image + rng.normal(0.0, 10.0, image.shape)
    return write_geotiff(path, np.clip(image, 0, 255).astype(np.uint8))


def fp16_variant(source, target):
    """Write the float16 variant of the ONNX model ``source`` to ``target`` and return ``target``.

    Weights and activations become float16; the graph's inputs and outputs stay float32
    (``keep_io_types``), so the model card (kept with the metadata) still holds.
    """
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = convert_float_to_float16(onnx.load(os.fspath(source)), keep_io_types=True)
    onnx.save(model, os.fspath(target))
    return os.fspath(target)


def _polygons(gpkg):
    """Polygons of the first layer of a GeoPackage, as shapely geometries in file order."""
    import shapely
    from osgeo import ogr

    source = ogr.Open(os.fspath(gpkg))
    layer = source.GetLayer(0)
    return [shapely.from_wkb(bytes(feature.GetGeometryRef().ExportToWkb())) for feature in layer]


def compare_polygons(reference_gpkg, other_gpkg):
    """Whether two runs wrote the same polygons.

    Returns
    -------
    dict
        ``equal`` (same polygons, same order, same WKB), ``count_reference``,
        ``count_other`` and ``difference_share``: area of the symmetric difference of the
        two unions over the reference union's area (0 when equal), in map units².
    """
    import shapely

    reference, other = _polygons(reference_gpkg), _polygons(other_gpkg)
    equal = len(reference) == len(other) and all(shapely.to_wkb(a) == shapely.to_wkb(b)
                                                  for a, b in zip(reference, other))
    share = 0.0
    if not equal:
        union_a, union_b = shapely.union_all(reference), shapely.union_all(other)
        share = float(shapely.area(shapely.symmetric_difference(union_a, union_b)) / max(union_a.area, 1e-12))
    return {"equal": equal, "count_reference": len(reference), "count_other": len(other),
            "difference_share": share}


def _bare_seconds(model, batches, provider):
    """Seconds of one pass of ``session.run`` over ``batches`` (on CUDA with IO binding)."""
    names = [name for _role, name in model.io.outputs]
    session = model.session.onnx_session
    if provider != "cuda":
        start = time.perf_counter()
        for batch in batches:
            session.run(names, {model.io.input_name: batch})
        return time.perf_counter() - start
    from polytopo.models.session import import_onnxruntime

    ort = import_onnxruntime()
    on_device = [ort.OrtValue.ortvalue_from_numpy(batch, "cuda", 0) for batch in batches]
    binding = session.io_binding()
    for name in names:
        binding.bind_output(name, "cuda")
    start = time.perf_counter()
    for value in on_device:
        binding.bind_ortvalue_input(model.io.input_name, value)
        session.run_with_iobinding(binding)
    binding.synchronize_outputs()
    return time.perf_counter() - start


def _measure_row(model_path, provider, raster, params, repeats, out_dir, label):
    """Rates of one row, or ``{"available": False, "reason": ...}``."""
    from polytopo.models import SessionParams, load_model, run_to_file
    from polytopo.models.errors import ModelsError

    try:
        model = load_model(model_path, SessionParams(provider=provider))
    except ModelsError as exc:
        return {"available": False, "reason": str(exc).split(";")[0]}
    batches, tiles = prepared_batches(model, raster, params)
    bare, pipeline = [], []
    # Repeat 0 warms both sides up (allocations, kernel choices); then they alternate.
    for repeat in range(repeats + 1):
        seconds = _bare_seconds(model, batches, provider)
        gpkg = Path(out_dir) / f"{label}_{repeat}.gpkg"
        start = time.perf_counter()
        report = run_to_file(model, raster, os.fspath(gpkg), params)
        if repeat:
            pipeline.append(report.tiles_run / (time.perf_counter() - start))
            bare.append(tiles / seconds)
    bare_rate, pipeline_rate = statistics.median(bare), statistics.median(pipeline)
    return {"available": True, "provider_used": model.session.report.describe(), "tiles": tiles,
            "tiles_run": report.tiles_run, "prefetch_batches": report.prefetch_batches,
            "bare_tiles_per_s": bare_rate, "pipeline_tiles_per_s": pipeline_rate,
            "busy_share": pipeline_rate / bare_rate, "polygons": report.polygon_count, "gpkg": os.fspath(gpkg)}


def measure(model_path, size_px, batch, repeats, work_dir):
    """Measure every row of :data:`ROWS`; returns a list of row dicts (see :func:`format_table`)."""
    from polytopo.models import RunParams, SessionParams, load_model

    channels = load_model(model_path, SessionParams(provider="cpu")).io.channels
    raster = synthetic_scene(Path(work_dir) / "scene.tif", size_px, channels)
    params = RunParams(batch_size=batch, resolution_cm_per_px=GSD_M * 100)  # the raster's own GSD: no resampling
    half = fp16_variant(model_path, Path(work_dir) / "model_fp16.onnx")
    rows, fp32_output = [], {}
    for provider, precision in ROWS:
        path = model_path if precision == "fp32" else half
        row = {"provider": provider, "precision": precision,
               **_measure_row(path, provider, raster, params, repeats, work_dir, f"{provider}_{precision}")}
        if row["available"] and precision == "fp32":
            fp32_output[provider] = row["gpkg"]
        if row["available"] and precision == "fp16" and provider in fp32_output:
            row["fp16_check"] = compare_polygons(fp32_output[provider], row["gpkg"])
        rows.append(row)
    return rows


def format_table(rows):
    """The printed table: one line per row, "not available" with the reason where a provider cannot start."""
    lines = [f"{'provider':<9}{'precision':<10}{'bare tiles/s':>13}{'pipeline tiles/s':>18}{'pipeline/bare':>15}"
             f"{'polygons':>10}  fp16 polygons vs fp32"]
    for row in rows:
        head = f"{row['provider'].upper():<9}{row['precision']:<10}"
        if not row["available"]:
            lines.append(f"{head}not available: {row['reason']}")
            continue
        check = row.get("fp16_check")
        if check is None:
            verdict = "-"
        elif check["equal"]:
            verdict = "equal"
        else:
            verdict = (f"differ ({check['count_other']} vs {check['count_reference']} polygons, "
                       f"{100 * check['difference_share']:.3f} % of the area)")
        lines.append(f"{head}{row['bare_tiles_per_s']:>13.2f}{row['pipeline_tiles_per_s']:>18.2f}"
                     f"{100 * row['busy_share']:>14.1f}%{row['polygons']:>10}  {verdict}")
    return "\n".join(lines)


def _verdicts(rows):
    """Lines saying whether the goal holds and whether fp16 changes polygons; the failures among them."""
    lines, failures = [], []
    cuda = [row for row in rows if row["provider"] == "cuda" and row["available"]]
    if not cuda:
        lines.append("GPU: not measured (CUDA is not available to this onnxruntime)")
    for row in cuda:
        ok = row["busy_share"] >= BUSY_GOAL
        lines.append(f"GPU {row['precision']}: the pipeline keeps the GPU {100 * row['busy_share']:.1f} % as busy as "
                     f"the bare loop (goal >= {100 * BUSY_GOAL:.0f} %): {'PASS' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"CUDA {row['precision']} busy share below the goal")
    for row in rows:
        check = row.get("fp16_check")
        if check is not None:
            lines.append(f"{row['provider'].upper()} fp16 polygons: "
                         + ("equal to fp32" if check["equal"] else
                            f"differ from fp32 ({100 * check['difference_share']:.3f} % of the fp32 area)"))
    return lines, failures


def main(argv=None):
    """Command line; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.fspath(_DEFAULT_MODEL), help="semantic ONNX model with a card")
    parser.add_argument("--size", type=int, default=4096, help="side of the synthetic scene, px")
    parser.add_argument("--batch", type=int, default=8, help="tiles per session.run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per rate (median), after one warm-up")
    parser.add_argument("--json-out", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    print(f"model {os.path.basename(args.model)}, scene {args.size}² px at {GSD_M} m, batch {args.batch}, "
          f"{args.repeats} repeats; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="polytopo_gpu_") as work_dir:
        rows = measure(args.model, args.size, args.batch, args.repeats, work_dir)
    for row in rows:
        row.pop("gpkg", None)
    print(format_table(rows))
    lines, failures = _verdicts(rows)
    print("\n".join(lines))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
