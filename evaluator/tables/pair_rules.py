"""The rules every profile applies to its matched pairs, written once.

Profiles differ in how they match (:mod:`.paper`, :mod:`.reference_code`), not in what a
match means: a prediction is valid when Definition 15 finds no reason against it (or
validity is not checked), an exterior matches when its BIoU passes γ, and a pair is
topology-exact (Definition 16) when it is valid, its exterior matches, both sides have
the same hole count and every hole is matched. :mod:`.records` reads the same flags.
"""

import numpy as np

from ..run.outcome import DetectionRanking

__all__ = ["valid_flags", "invalid_count", "pair_hole_counts", "exterior_matched", "topology_exact_pairs",
           "closest_threshold", "detection_ranking"]


def valid_flags(reasons, check_validity=True):
    """Whether each polygon counts as valid: no Definition 15 reason, or validity not checked.

    Parameters
    ----------
    reasons : sequence of str
        Definition 15 failure reason of each polygon ("" when valid).
    check_validity : bool
        False counts every polygon as valid.

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> valid_flags(["", "self-intersection"]).tolist(), valid_flags(["self-intersection"], False).tolist()
    ([True, False], [True])
    """
    flags = np.array([reason == "" for reason in reasons], dtype=bool)
    if not check_validity:
        flags[:] = True
    return flags


def invalid_count(reasons):
    """How many polygons Definition 15 finds a reason against."""
    return int(sum(1 for reason in reasons if reason))


def pair_hole_counts(pairs, gt_table, pred_table):
    """Hole counts ``(ground truth, prediction)`` of each matched pair, as two integer arrays."""
    return (np.diff(gt_table.hole_start)[pairs.gt_index], np.diff(pred_table.hole_start)[pairs.pred_index])


def exterior_matched(e_biou, threshold, inclusive):
    """Whether each pair's exterior BIoU passes γ = ``threshold`` (``>=`` when ``inclusive``, else ``>``).

    Examples
    --------
    >>> exterior_matched(np.array([0.5, 0.6]), 0.5, inclusive=False).tolist()
    [False, True]
    """
    return e_biou >= threshold if inclusive else e_biou > threshold


def topology_exact_pairs(ext_matched, valid, gt_holes, pred_holes, hole_tp):
    """Topology exactness (Definition 16) of each pair.

    Parameters
    ----------
    ext_matched, valid : numpy.ndarray of bool
        Per pair: exterior matched at γ, prediction valid.
    gt_holes, pred_holes, hole_tp : numpy.ndarray of int
        Per pair: hole counts of both sides and matched holes.

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> yes = np.array([True, True])
    >>> topology_exact_pairs(yes, yes, np.array([1, 1]), np.array([1, 2]), np.array([1, 1])).tolist()
    [True, False]
    """
    return valid & ext_matched & (gt_holes == pred_holes) & (hole_tp == gt_holes)


def closest_threshold(thresholds, iou_threshold):
    """The one of ``thresholds`` nearest to ``iou_threshold`` (the first of two equally near)."""
    return min(thresholds, key=lambda t: abs(t - iou_threshold))


def detection_ranking(iou_threshold, scores, order, tp, pred_image, gt_image, image_count):
    """The detection outcome handed on for PR curves and the bootstrap.

    Parameters
    ----------
    iou_threshold : float
        The threshold the ranking is reported at.
    scores : numpy.ndarray
        Score of each prediction.
    order : numpy.ndarray of int
        The predictions in ranked order.
    tp : numpy.ndarray
        0/1 outcome of each ranked prediction.
    pred_image, gt_image : numpy.ndarray of int
        Image code of each prediction and ground-truth instance.
    image_count : int
        Number of image codes.

    Returns
    -------
    DetectionRanking
    """
    return DetectionRanking(iou_threshold, scores[order], tp, pred_image[order],
                            np.bincount(gt_image, minlength=image_count))
