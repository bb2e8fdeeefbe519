"""Corner F1: vertices of simplified rings matched one-to-one within a distance.

Corners of a ring are the exterior vertices of its polygon after topology-preserving
Douglas–Peucker simplification with tolerance ``tolerance_px`` (the polygon is first
repaired with :func:`.repair.largest_polygon`; when simplification fails or leaves fewer than
3 vertices the original ring is used). Two corner sets are matched by the Hungarian
algorithm on Euclidean distance; a pair counts as a true positive when its distance is at
most the threshold (pixels).
"""

import functools

import numpy as np
import shapely

from ...core.kernel_threads import chunked, side_by_side
from ...core.scipy_imports import linear_sum_assignment
from .construct import ring_polygons
from ..inputs.repair import largest_polygons

__all__ = ["ring_corners", "assigned_distances", "match_corners", "corner_counts", "matched_corner_counts"]


def ring_corners(rings, tolerance_px=1.0):
    """Corner arrays ``(k, 2)`` of each ring, simplified with ``tolerance_px`` pixels."""
    if len(rings) == 0:
        return []
    polygons = largest_polygons(ring_polygons(rings))
    simplify = functools.partial(shapely.simplify, tolerance=tolerance_px, preserve_topology=True)
    simplified = largest_polygons(chunked(simplify, polygons))
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


_CHUNK_DISTANCES = 1 << 18
"""Most corner-to-corner distances held at once by :func:`assigned_distances` (float64)."""


def assigned_distances(gt_corners, pred_corners, matched_gt, matched_pred):
    """Distances (px) of the Hungarian corner assignment of every matched ring pair, concatenated.

    Parameters
    ----------
    gt_corners, pred_corners : list of numpy.ndarray
        ``(k, 2)`` corner arrays of each ring, pixels.
    matched_gt, matched_pred : array_like of int
        The ring pairs: ``gt_corners[matched_gt[i]]`` against ``pred_corners[matched_pred[i]]``.

    Returns
    -------
    numpy.ndarray
        ``min(k_gt, k_pred)`` distances per pair (none when a side has no corner), pair
        after pair.

    Notes
    -----
    The distance matrices of many pairs are computed in one numpy pass (at most
    ``2**18`` distances at a time); only the assignment itself runs pair by pair.
    """
    assignment = linear_sum_assignment()
    gt_sets = [gt_corners[g] for g in matched_gt]
    pred_sets = [pred_corners[p] for p in matched_pred]
    rows = np.array([len(c) for c in gt_sets], dtype=np.int64)
    cols = np.array([len(c) for c in pred_sets], dtype=np.int64)
    cells = rows * cols
    out = []
    lo = 0
    while lo < len(cells):
        hi = lo + max(1, int(np.searchsorted(np.cumsum(cells[lo:]), _CHUNK_DISTANCES, side="right")))
        keep = np.flatnonzero(cells[lo:hi] > 0) + lo
        if keep.size:
            gt_flat = np.concatenate([gt_sets[k] for k in keep])
            pred_flat = np.concatenate([pred_sets[k] for k in keep])
            n_rows, n_cols, n_cells = rows[keep], cols[keep], cells[keep]
            # Matrix row by matrix row: a ground-truth corner against its pair's predicted corners.
            row_width = np.repeat(n_cols, n_rows)
            gt_at = np.repeat(np.arange(len(gt_flat)), row_width)
            row_offset = np.repeat(np.cumsum(n_cols) - n_cols, n_rows) - (np.cumsum(row_width) - row_width)
            pred_at = np.arange(len(gt_at)) + np.repeat(row_offset, row_width)
            distances = np.linalg.norm(gt_flat[gt_at] - pred_flat[pred_at], axis=1)
            starts = np.cumsum(n_cells) - n_cells
            for start, n_row, n_col in zip(starts.tolist(), n_rows.tolist(), n_cols.tolist()):
                matrix = distances[start:start + n_row * n_col].reshape(n_row, n_col)
                r, c = assignment(matrix)
                out.append(matrix[r, c])
        lo = hi
    return np.concatenate(out) if out else np.zeros(0)


def _threshold_counts(distances, gt_total, pred_total, thresholds_px):
    """``[tp, fp, fn]`` per threshold from assigned distances and the corner totals of both sides."""
    thresholds = np.asarray(thresholds_px, dtype=float)
    tp = np.count_nonzero(distances[None, :] <= thresholds[:, None], axis=1).astype(np.int64)
    return np.stack([tp, pred_total - tp, gt_total - tp], axis=1)


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
    distances = assigned_distances([gt_corners], [pred_corners], [0], [0])
    return _threshold_counts(distances, len(gt_corners), len(pred_corners), thresholds_px)


def corner_counts(gt_rings, pred_rings, matched_gt, matched_pred, tolerance_px, thresholds_px):
    """Corner ``[tp, fp, fn]`` per threshold over matched ring pairs.

    Corners of unmatched ground-truth rings count as false negatives and those of
    unmatched predicted rings as false positives.

    Returns
    -------
    numpy.ndarray
        ``(len(thresholds_px), 3)`` integer counts.
    """
    gt_corners, pred_corners = side_by_side(lambda: ring_corners(gt_rings, tolerance_px),
                                            lambda: ring_corners(pred_rings, tolerance_px))
    return matched_corner_counts(gt_corners, pred_corners, matched_gt, matched_pred, thresholds_px)


def matched_corner_counts(gt_corners, pred_corners, matched_gt, matched_pred, thresholds_px):
    """Corner ``[tp, fp, fn]`` per threshold of corner arrays, over matched ring pairs.

    Parameters
    ----------
    gt_corners, pred_corners : list of numpy.ndarray
        ``(k, 2)`` corners of each ring (:func:`ring_corners`), pixels.
    matched_gt, matched_pred : array_like of int
        The matched ring pairs; corners of rings in no pair count as false negatives
        (ground truth) or false positives (predictions).
    thresholds_px : sequence of float

    Returns
    -------
    numpy.ndarray
        ``(len(thresholds_px), 3)`` integer counts.
    """
    distances = assigned_distances(gt_corners, pred_corners, matched_gt, matched_pred)
    return _threshold_counts(distances, _corner_total(gt_corners, matched_gt),
                             _corner_total(pred_corners, matched_pred), thresholds_px)


def _corner_total(corners, matched):
    """Corners of the matched rings (once per pair) plus those of the rings no pair uses."""
    unmatched = np.setdiff1d(np.arange(len(corners)), matched)
    return sum(len(corners[i]) for i in matched) + sum(len(corners[i]) for i in unmatched)
