"""Stitching the objects of the per-tile decoders (instances, rings, prompted masks) across tiles.

Which tile owns an object, and duplicate suppression among the objects of overlapping
tiles; dense outputs are blended instead (:mod:`~polytopo.models.raster.tiling`).

An object seen by several overlapping tiles is kept from the tile whose
*core* contains its centre (the cores are the cells of the tile grid cut
half-way between neighbouring tile centres, so they partition the grid), and
the survivors of neighbouring tiles are then compared by polygon IoU:
of two candidates overlapping by more than the IoU threshold only the higher
score is kept (greedy NMS in score order). Candidates are held back until no
later tile can overlap them, then released.
"""

import numpy as np
import shapely

__all__ = ["ObjectStitcher", "core_owner", "suppress_duplicates", "with_batch_axis"]


def core_owner(values_px, origins_px, tile_size_px):
    """Index of the tile whose core contains each coordinate along one axis.

    Examples
    --------
    >>> core_owner(np.array([5.0, 40.0, 95.0]), np.array([0, 30, 60]), 40).tolist()
    [0, 1, 2]
    """
    centres = np.asarray(origins_px, float) + tile_size_px / 2.0
    bounds = (centres[:-1] + centres[1:]) / 2.0
    return np.searchsorted(bounds, values_px, side="right")


def with_batch_axis(array, batch, rank):
    """Add the batch axis to an output of a batch-1 graph that omits it."""
    array = np.asarray(array)
    if array.ndim == rank - 1 and batch == 1:
        return array[None]
    return array


def suppress_duplicates(geometries, scores, classes, iou_threshold):
    """Greedy NMS on polygons: indices kept, highest score first.

    Parameters
    ----------
    geometries : numpy.ndarray of shapely.Polygon
    scores : numpy.ndarray of float
    classes : numpy.ndarray of int
        Only polygons of the same class suppress each other.
    iou_threshold : float
        A polygon whose IoU with a kept one exceeds this is dropped.

    Returns
    -------
    numpy.ndarray of int

    Examples
    --------
    >>> boxes = np.array([shapely.box(0, 0, 10, 10), shapely.box(1, 0, 11, 10), shapely.box(20, 0, 30, 10)])
    >>> suppress_duplicates(boxes, np.array([0.5, 0.9, 0.7]), np.zeros(3, int), 0.5).tolist()
    [1, 2]
    """
    count = len(geometries)
    if count == 0:
        return np.empty(0, np.int64)
    tree = shapely.STRtree(geometries)
    left, right = tree.query(geometries, predicate="intersects")
    pair = (left < right) & (classes[left] == classes[right])
    left, right = left[pair], right[pair]
    inter = shapely.area(shapely.intersection(geometries[left], geometries[right]))
    areas = shapely.area(geometries)
    iou = inter / np.maximum(areas[left] + areas[right] - inter, 1e-12)
    strong = iou > iou_threshold
    neighbours = [[] for _ in range(count)]
    for a, b in zip(left[strong], right[strong]):
        neighbours[a].append(b)
        neighbours[b].append(a)
    suppressed = np.zeros(count, bool)
    kept = []
    for index in np.argsort(-np.asarray(scores), kind="stable"):
        if suppressed[index]:
            continue
        kept.append(index)
        suppressed[neighbours[index]] = True
    return np.asarray(kept, np.int64)


class ObjectStitcher:
    """Holds per-tile candidates until no later tile can duplicate them.

    Parameters
    ----------
    iou_threshold : float
        See :func:`suppress_duplicates`.
    """

    def __init__(self, iou_threshold):
        self.iou_threshold = iou_threshold
        self._pending = []
        self._tile_row = 0

    def release_before(self, tile):
        """Release what no tile from ``tile``'s tile row on can duplicate (once per tile row)."""
        if tile.tile_row == self._tile_row:
            return []
        self._tile_row = tile.tile_row
        return self.release(tile.row0)

    def add(self, records):
        """Add candidates (PolygonRecord in grid pixel coordinates)."""
        self._pending.extend(records)

    def release(self, below_row_px):
        """Suppress duplicates among the held candidates and return those that end above ``below_row_px``.

        Every later candidate must come from tiles starting at or below
        ``below_row_px``, so a candidate whose bottom is above it is final.
        """
        if not self._pending:
            return []
        geometries = np.array([r.geometry for r in self._pending], object)
        kept = suppress_duplicates(
            geometries,
            np.array([r.score for r in self._pending]),
            np.array([r.class_id for r in self._pending]),
            self.iou_threshold,
        )
        survivors = [self._pending[i] for i in sorted(kept)]
        bottoms = shapely.bounds(np.array([r.geometry for r in survivors], object))[:, 3]
        final = [r for r, bottom in zip(survivors, bottoms) if bottom <= below_row_px]
        self._pending = [r for r, bottom in zip(survivors, bottoms) if bottom > below_row_px]
        return final
