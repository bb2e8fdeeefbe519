"""Instance and ring matching.

* :func:`iou_candidates` finds every (ground truth, prediction) pair of the same image
  whose regions overlap, with one STRtree query and one vectorized intersection (in pieces
  on the threads of a :func:`~polytopo.core.kernel_threads.kernel_threads` block).
* :func:`greedy_match` is Definition 3: predictions in descending score order take the
  unmatched ground truth of highest IoU at or above the threshold.
* :func:`hungarian_match` is a one-to-one assignment maximizing total similarity, keeping
  the assigned pairs whose similarity passes a threshold (``>`` or ``>=``).
"""

from typing import NamedTuple

import numpy as np
import shapely

from ...core.kernel_threads import chunked
from ...core.scipy_imports import linear_sum_assignment

__all__ = ["Candidates", "iou_candidates", "greedy_match", "hungarian_match", "same_image_pairs", "score_order"]


def iou_candidates(gt_regions, pred_regions, gt_image, pred_image):
    """IoU of every overlapping same-image pair.

    Parameters
    ----------
    gt_regions, pred_regions : numpy.ndarray of shapely geometries
        Valid occupied regions in pixels.
    gt_image, pred_image : numpy.ndarray
        Image key of each region (integers; matching never crosses images).

    Returns
    -------
    Candidates
        Pairs with positive intersection, sorted by prediction then ground truth, with
        their IoU and intersection area (px²).
    """
    if len(gt_regions) == 0 or len(pred_regions) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Candidates(empty, empty, np.zeros(0), np.zeros(0), len(gt_regions))
    gt_index, pred_index = same_image_pairs(gt_regions, gt_image, pred_regions, pred_image)
    inter = shapely.area(chunked(shapely.intersection, pred_regions[pred_index], gt_regions[gt_index]))
    union = shapely.area(pred_regions[pred_index]) + shapely.area(gt_regions[gt_index]) - inter
    iou = np.clip(np.divide(inter, union, out=np.zeros_like(inter), where=(inter > 0) & (union > 0)), 0.0, 1.0)
    keep = iou > 0
    order = np.lexsort((gt_index[keep], pred_index[keep]))
    return Candidates(gt_index[keep][order], pred_index[keep][order], iou[keep][order], inter[keep][order],
                      len(gt_regions))


class Candidates(NamedTuple):
    """Overlapping (gt, pred) pairs sorted by prediction then ground truth."""

    gt_index: np.ndarray
    pred_index: np.ndarray
    iou: np.ndarray
    intersection: np.ndarray
    n_gt: int

    def lookup(self, gt_index, pred_index):
        """IoU and intersection area (px²) of the given pairs (each must be a candidate)."""
        key = self.pred_index * self.n_gt + self.gt_index
        position = np.searchsorted(key, np.asarray(pred_index) * self.n_gt + np.asarray(gt_index))
        return self.iou[position], self.intersection[position]


def same_image_pairs(geoms_a, image_a, geoms_b, image_b, predicate=None):
    """Index pairs ``(i, j)`` of geometries of the same image whose envelopes overlap.

    Every image gets its own STRtree: images share one pixel coordinate space, so a single
    tree would return the overlaps of every image with every other.

    Returns
    -------
    numpy.ndarray, numpy.ndarray
        ``i`` into ``geoms_a`` and ``j`` into ``geoms_b``, grouped by image.
    """
    geoms_a, geoms_b = np.asarray(geoms_a, dtype=object), np.asarray(geoms_b, dtype=object)
    order_a, order_b = np.argsort(image_a, kind="stable"), np.argsort(image_b, kind="stable")
    images = np.intersect1d(image_a, image_b)
    lo_a, hi_a = np.searchsorted(image_a[order_a], images), np.searchsorted(image_a[order_a], images, "right")
    lo_b, hi_b = np.searchsorted(image_b[order_b], images), np.searchsorted(image_b[order_b], images, "right")
    left, right = [], []
    for la, ha, lb, hb in zip(lo_a, hi_a, lo_b, hi_b):
        members_a, members_b = order_a[la:ha], order_b[lb:hb]
        j, i = shapely.STRtree(geoms_a[members_a]).query(geoms_b[members_b], predicate=predicate)
        left.append(members_a[i])
        right.append(members_b[j])
    if not left:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(left).astype(np.int64), np.concatenate(right).astype(np.int64)


def score_order(scores):
    """Prediction indices by descending score; equal scores keep their input order.

    Every profile but ``reference-code`` puts the input in a canonical order first
    (:mod:`.ordering`), so ties are broken by geometry, never by file order.
    """
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def greedy_match(order, gt_index, pred_index, iou, threshold, n_gt, n_pred):
    """Greedy score-ordered matching (Definition 3, with fallback to the next-best GT).

    Parameters
    ----------
    order : numpy.ndarray
        Prediction indices in the order they pick (descending score).
    gt_index, pred_index, iou : numpy.ndarray
        Candidate pairs from :func:`iou_candidates` (``candidates[:3]``).
    threshold : float
        Minimum IoU of a match.
    n_gt, n_pred : int
        Numbers of ground-truth and predicted instances.

    Returns
    -------
    numpy.ndarray
        For each prediction, the matched ground-truth index or -1 (an internal sentinel;
        callers turn it into NaN/None for output).
    """
    matched_gt = np.full(n_pred, -1, dtype=np.int64)
    ok = iou >= threshold
    gt_index, pred_index, iou = gt_index[ok], pred_index[ok], iou[ok]
    # Candidates of each prediction by descending IoU (ties: lower GT index first).
    by_pred = np.lexsort((gt_index, -iou, pred_index))
    gt_sorted, pred_sorted = gt_index[by_pred], pred_index[by_pred]
    starts = np.searchsorted(pred_sorted, np.arange(n_pred), side="left")
    stops = np.searchsorted(pred_sorted, np.arange(n_pred), side="right")
    order = np.asarray(order, dtype=np.int64)
    # A prediction none of whose candidate GTs is a candidate of another prediction takes
    # its best one whatever the order: those are set at once. Only predictions that share
    # a GT with another take their turn, in order (predictions without a candidate match
    # nothing and change nothing), over plain Python lists.
    has = stops > starts
    shared = np.zeros(n_pred, dtype=bool)
    shared[pred_index[np.bincount(gt_index, minlength=n_gt)[gt_index] > 1]] = True
    alone = has & ~shared
    matched_gt[alone] = gt_sorted[starts[alone]]
    gt_list, start_list, stop_list = gt_sorted.tolist(), starts.tolist(), stops.tolist()
    taken = bytearray(n_gt)
    for p in order[shared[order]].tolist():
        for k in range(start_list[p], stop_list[p]):
            g = gt_list[k]
            if not taken[g]:
                taken[g] = 1
                matched_gt[p] = g
                break
    return matched_gt


def hungarian_match(similarity, threshold, inclusive):
    """One-to-one assignment maximizing the summed similarity.

    Parameters
    ----------
    similarity : numpy.ndarray
        ``(n_gt, n_pred)`` similarities in [0, 1].
    threshold : float
        Acceptance threshold of an assigned pair.
    inclusive : bool
        Accept at ``>= threshold`` (True) or ``> threshold`` (False).

    Returns
    -------
    list of (int, int, float)
        Accepted ``(gt, pred, similarity)`` triples.

    Examples
    --------
    >>> hungarian_match(np.array([[0.9, 0.2], [0.8, 0.1]]), 0.5, True)
    [(0, 0, 0.9)]
    """
    if similarity.size == 0:
        return []
    rows, cols = linear_sum_assignment()(1.0 - similarity)
    values = similarity[rows, cols]
    accept = values >= threshold if inclusive else values > threshold
    return [(int(r), int(c), float(v)) for r, c, v in zip(rows[accept], cols[accept], values[accept])]
