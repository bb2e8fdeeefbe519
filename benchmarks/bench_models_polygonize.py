"""Polygonizer throughput versus GDAL Polygonize alone on the same masks.

Ours: :func:`polytopo.models.polygons.polygonize.polygonize_mask` (mask to valid shapely polygons
with holes) and the strip-wise :class:`~polytopo.models.polygons.strip_polygonizer.StripPolygonizer`
(64-row strips, whole polygons across strips). GDAL: ``gdal.Polygonize``
(4-connected) into an in-memory OGR layer, without any conversion to
shapely, which favours GDAL; and GDAL followed by the conversion of its
features to shapely polygons, which is what the engine would need. Each
timing is the best of ``--repeat`` runs; the noise mask is half the size.
The time ours spends putting its polygons in GEOS normal form (so that
simplification does not depend on where a map is cut into blocks) is timed
alone on the same polygons and reported as a share of ours.

Usage::

    python benchmarks/bench_models_polygonize.py [--size 4096] [--repeat 3]
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import shapely
from osgeo import gdal, ogr

__all__ = ["main"]


def gdal_polygonize(mask, to_shapely=False):
    dataset = gdal.GetDriverByName("MEM").Create("", mask.shape[1], mask.shape[0], 1, gdal.GDT_Byte)
    band = dataset.GetRasterBand(1)
    band.WriteArray(mask.astype(np.uint8))
    source = ogr.GetDriverByName("Memory").CreateDataSource("")
    layer = source.CreateLayer("p")
    layer.CreateField(ogr.FieldDefn("v", ogr.OFTInteger))
    gdal.Polygonize(band, band, layer, 0)
    if to_shapely:
        return len([shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb())) for f in layer])
    return layer.GetFeatureCount()


def gdal_polygonize_to_shapely(mask):
    return gdal_polygonize(mask, to_shapely=True)


def ours(mask):
    from polytopo.models.polygons.polygonize import polygonize_mask

    return len(polygonize_mask(mask))


def ours_strips(mask, rows=64):
    from polytopo.models.polygons.strip_polygonizer import StripPolygonizer
    from polytopo.models.polygons.strip_polygonizer import NO_CLASS

    strips = StripPolygonizer(mask.shape[1], [0])
    scores = np.ones((rows, mask.shape[1]), np.float32)
    count = 0
    for top in range(0, mask.shape[0], rows):
        part = np.where(mask[top:top + rows], 0, NO_CLASS).astype(np.int16)
        final = top + rows >= mask.shape[0]
        count += sum(len(b.geometries) for b in strips.push(part, scores[: len(part)], final=final))
    return count


def normal_form(mask):
    """Time of the GEOS normal form alone (``shapely.normalize``), on the polygons ours returns, as part of ours."""
    from polytopo.models.polygons.polygonize import polygonize_mask

    geometries = polygonize_mask(mask).geometries
    start = time.perf_counter()
    shapely.normalize(geometries)
    return time.perf_counter() - start


def best_of(function, mask, repeat):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(mask)
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_models_data import buildings_mask

    masks = {
        "buildings": buildings_mask(args.size),
        "noise_50pct": np.random.default_rng(0).random((args.size // 2, args.size // 2)) < 0.5,
    }
    results = {}
    for name, mask in masks.items():
        g_time, g_count = best_of(gdal_polygonize, mask, args.repeat)
        c_time, _count = best_of(gdal_polygonize_to_shapely, mask, args.repeat)
        o_time, o_count = best_of(ours, mask, args.repeat)
        s_time, s_count = best_of(ours_strips, mask, args.repeat)
        n_time = min(normal_form(mask) for _ in range(args.repeat))
        assert g_count == o_count == s_count, (g_count, o_count, s_count)
        results[name] = {
            "polygons": o_count,
            "gdal_seconds": round(g_time, 3),
            "gdal_to_shapely_seconds": round(c_time, 3),
            "ours_seconds": round(o_time, 3),
            "ours_strips_seconds": round(s_time, 3),
            "normal_form_seconds": round(n_time, 3),
            "normal_form_share_of_ours": round(n_time / o_time, 3),
            "ours_mpx_per_s": round(mask.size / o_time / 1e6, 1),
            "gdal_mpx_per_s": round(mask.size / g_time / 1e6, 1),
            "gdal_time_over_ours": round(g_time / o_time, 2),
            "gdal_to_shapely_time_over_ours": round(c_time / o_time, 2),
        }
    print(json.dumps({"size_px": args.size, "noise_size_px": args.size // 2, **results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
