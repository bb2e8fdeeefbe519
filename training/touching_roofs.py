"""Touching buildings on the rendered rasters, and how many touching pairs show no edge between them.

``python -m polytopo.training.touching_roofs`` renders the evaluation square of each
rendered city and each city's courtyard squares side by side (:mod:`.heldout`, as the
hole-aware models are scored on them) into a temporary folder and prints, per raster, the
buildings, those that touch another (within :data:`TOUCH_M` metres), the touching pairs and
those of them whose roofs look alike: mean colours (of the roof pixels at least
:data:`INSET_PX` pixels inside the footprint) within :data:`ALIKE_LEVELS` grey levels in
every band. A model cannot see a border between roofs that look alike; between the other
touching pairs the image shows one.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import shapely
from osgeo import gdal
from scipy import ndimage

from ..models.errors import ModelsError
from . import data
from .heldout import rendered_city_squares, rendered_heldout
from .rendered import CITIES
from .shared_data import find_shared_data
from .targets import rasterize

__all__ = ["ALIKE_LEVELS", "INSET_PX", "TOUCH_M", "alike_pairs", "main", "roof_colours", "touching_pairs"]

TOUCH_M = 0.2
"""Two footprints closer than this, metres, touch."""
INSET_PX = 2
"""Roof pixels nearer the footprint's edge than this are left out of its mean colour (blur, shadows)."""
ALIKE_LEVELS = 8.0
"""Two roofs whose mean colours differ by less than this in every band (0-255) look alike."""


def touching_pairs(polygons, touch=TOUCH_M):
    """Index pairs ``(i, j)``, ``i < j``, of the polygons closer than ``touch`` (their units), in order."""
    polygons = np.asarray(polygons, object)
    tree = shapely.STRtree(polygons)
    left, right = tree.query(polygons, predicate="dwithin", distance=touch)
    keep = left < right
    return sorted(zip(left[keep].tolist(), right[keep].tolist()))


def roof_colours(image, polygons_px, inset_px=INSET_PX):
    """Mean colour of each footprint's roof pixels at least ``inset_px`` inside it.

    Parameters
    ----------
    image : numpy.ndarray
        ``(bands, rows, cols)``.
    polygons_px : sequence of shapely.Polygon
        Footprints in the image's pixels (x = column, y = row).

    Returns
    -------
    numpy.ndarray
        ``(len(polygons_px), bands)``; NaN for a footprint with no pixel that far inside.
    """
    colours = np.full((len(polygons_px), image.shape[0]), np.nan)
    for index, polygon in enumerate(polygons_px):
        c0, r0, c1, r1 = shapely.bounds(polygon)
        c0, r0 = max(0, int(np.floor(c0))), max(0, int(np.floor(r0)))
        c1, r1 = min(image.shape[2], int(np.ceil(c1))), min(image.shape[1], int(np.ceil(r1)))
        if c1 <= c0 or r1 <= r0:
            continue
        inside = rasterize([shapely.transform(polygon, lambda xy, dx=c0, dy=r0: xy - (dx, dy))], (r1 - r0, c1 - c0))
        inside = ndimage.binary_erosion(inside, iterations=inset_px, border_value=0)
        if inside.any():
            colours[index] = image[:, r0:r1, c0:c1][:, inside].mean(axis=1)
    return colours


def alike_pairs(pairs, colours, levels=ALIKE_LEVELS):
    """The pairs of ``pairs`` whose two colours differ by less than ``levels`` in every band (NaN: not alike)."""
    # a NaN difference compares False: a roof without a colour looks like no other
    return [(i, j) for i, j in pairs if (np.abs(colours[i] - colours[j]) < levels).all()]


def _row(raster):
    image = gdal.Open(str(raster.raster)).ReadAsArray().astype(float)
    pairs = touching_pairs(raster.reference)
    alike = alike_pairs(pairs, roof_colours(image, data.map_to_pixels(raster.reference, raster.geotransform)))
    buildings = len(raster.reference)
    touching = len({k for pair in pairs for k in pair})
    return (f"| {raster.key} | {buildings} | {touching} ({touching / buildings:.0%}) | {len(pairs)} | "
            f"{len(alike)} ({len(alike) / max(1, len(pairs)):.0%}) |")


def main(argv=None):
    """Print the table; returns 0 (1 after an error, said on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m polytopo.training.touching_roofs", description=__doc__.split("\n")[0])
    parser.add_argument("--resolution", type=float, default=30.0, help="pixel of the rendering, cm (default 30)")
    args = parser.parse_args(argv)
    if args.resolution <= 0:
        parser.error(f"--resolution must be positive centimetres but got {args.resolution}")
    try:
        shared = find_shared_data()
        print(f"| raster | buildings | touching another | touching pairs | of them alike (< {ALIKE_LEVELS:g} levels) |")
        print("|---|---|---|---|---|")
        with tempfile.TemporaryDirectory(prefix="polytopo-touching-") as work:
            for city in CITIES:
                for raster in (rendered_heldout(shared, Path(work), args.resolution, city)
                               + rendered_city_squares(shared, Path(work), args.resolution, city)):
                    print(_row(raster))
    except ModelsError as exc:  # the shared data folder absent or unreadable
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
