"""Corner F1: vertices of simplified rings matched one-to-one within a distance.

Corners of a ring are the exterior vertices of its polygon after topology-preserving
Douglas–Peucker simplification with tolerance ``tolerance_px`` (the polygon is first
repaired with :func:`.repair.largest_polygon`; when simplification fails or leaves fewer than
3 vertices the original ring is used). Two corner sets are matched by the Hungarian
algorithm on Euclidean distance; a pair counts as a true positive when its distance is at
most the threshold (pixels).
"""

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment

from .construct import ring_polygons
from .repair import largest_polygons

__all__ = ["ring_corners", "match_corners", "corner_counts"]


def ring_corners(rings, tolerance_px=1.0):
    """Corner arrays ``(k, 2)`` of each ring, simplified with ``tolerance_px`` pixels."""
    if len(rings) == 0:
        return []
    polygons = largest_polygons(ring_polygons(rings))
    simplified = largest_polygons(shapely.simplify(polygons, tolerance_px, preserve_topology=True))
    usable = ~shapely.is_missing(simplified)
    chosen = np.where(usable, simplified, polygons)
    present = ~shapely.is_missing(chosen)
    coords, owner = shapely.get_coordinates(shapely.get_exterior_ring(chosen[present]), return_index=True)
    counts = np.bincount(owner, minlength=int(present.sum()))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    corners = list(rings)
    for position, index in enumerate(np.flatnonzero(present)):
        if counts[position] - 1 >= 3:
            corners[index] = coords[starts[position]:starts[position] + counts[position] - 1]
    return corners


def match_corners(gt_corners, pred_corners, thresholds_px):
    """True positives, false positives and false negatives per threshold.

    Returns
    -------
    numpy.ndarray
        ``(len(thresholds_px), 3)`` integer counts ``[tp, fp, fn]``.

    Examples
    --------
    >>> a = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]])
    >>> match_corners(a, a + [3.0, 0.0], [2.0, 5.0]).tolist()
    [[0, 3, 3], [3, 0, 0]]
    """
    counts = np.zeros((len(thresholds_px), 3), dtype=np.int64)
    if len(gt_corners) == 0 or len(pred_corners) == 0:
        counts[:, 1] = len(pred_corners)
        counts[:, 2] = len(gt_corners)
        return counts
    distances = np.linalg.norm(gt_corners[:, None, :] - pred_corners[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(distances)
    matched = distances[rows, cols]
    for index, threshold in enumerate(thresholds_px):
        tp = int(np.count_nonzero(matched <= threshold))
        counts[index] = (tp, len(pred_corners) - tp, len(gt_corners) - tp)
    return counts


def corner_counts(gt_rings, pred_rings, matched_gt, matched_pred, tolerance_px, thresholds_px):
    """Corner ``[tp, fp, fn]`` per threshold over matched ring pairs.

    Corners of unmatched ground-truth rings count as false negatives and those of
    unmatched predicted rings as false positives.

    Returns
    -------
    numpy.ndarray
        ``(len(thresholds_px), 3)`` integer counts.
    """
    gt_corners = ring_corners(gt_rings, tolerance_px)
    pred_corners = ring_corners(pred_rings, tolerance_px)
    counts = np.zeros((len(thresholds_px), 3), dtype=np.int64)
    for g, p in zip(matched_gt, matched_pred):
        counts += match_corners(gt_corners[g], pred_corners[p], thresholds_px)
    counts[:, 2] += sum(len(gt_corners[i]) for i in np.setdiff1d(np.arange(len(gt_rings)), matched_gt))
    counts[:, 1] += sum(len(pred_corners[i]) for i in np.setdiff1d(np.arange(len(pred_rings)), matched_pred))
    return counts
