"""Detection metrics of the ``paper`` profile: AP over IoU thresholds and AR.

Matching follows Definition 3 at each threshold: predictions in descending score order
(equal scores in the canonical order of :mod:`.ordering`) take the unmatched ground truth
of highest IoU in their image at or above the threshold. AP is 101-point interpolated
(:mod:`.average_precision`); AR is the recall with every prediction kept, averaged over the
thresholds. ``max_detections`` keeps only the highest-scoring predictions of each image.

The matching never crosses images, so it splits in two: :func:`image_matches` (what each
prediction is: kept, matched at each threshold), which any set of whole images gives
as the whole set would, and :func:`ranked_detection`, which ranks every prediction of the
set by score and counts. A cluster's workers compute the first for their images.
"""

from dataclasses import dataclass

import numpy as np

from .average_precision import interpolated_ap
from .matching import greedy_match, score_order

__all__ = ["ImageMatches", "capped_order", "detection_metrics", "image_matches", "ranked_detection"]


@dataclass(frozen=True)
class ImageMatches:
    """What each prediction of a set is in the AP/AR matching (:func:`image_matches`).

    Attributes
    ----------
    kept : numpy.ndarray
        ``(n_pred,)`` bool: among the ``max_detections`` highest-scoring of its image.
    matched : numpy.ndarray
        ``(n_pred, n_thresholds)`` bool: matched to a ground truth at each threshold.
    """

    kept: np.ndarray
    matched: np.ndarray

    @classmethod
    def placed(cls, pieces, positions, n_pred):
        """The matches of a whole set from those of its parts (``positions``: each part's predictions in it)."""
        kept = np.zeros(n_pred, dtype=bool)
        matched = np.zeros((n_pred, pieces[0].matched.shape[1] if pieces else 0), dtype=bool)
        for piece, where in zip(pieces, positions, strict=True):
            kept[where] = piece.kept
            matched[where] = piece.matched
        return cls(kept, matched)


def capped_order(scores, image, max_detections):
    """Score order of predictions, keeping at most ``max_detections`` per image."""
    order = score_order(scores)
    if max_detections is None:
        return order
    rank = np.zeros(len(order), dtype=np.int64)
    seen = {}
    for position, index in enumerate(order):
        seen[image[index]] = seen.get(image[index], 0) + 1
        rank[position] = seen[image[index]]
    return order[rank <= max_detections]


def detection_metrics(cand, scores, pred_image, n_gt, thresholds, max_detections=None):
    """AP and AR over ``thresholds``: :func:`ranked_detection` of :func:`image_matches`.

    Returns
    -------
    metrics : dict
        ``AP@0.50`` ... per threshold, ``AP`` (mean), ``AP50``, ``AP75``, ``AR``.
    tp_by_threshold : dict
        ``{threshold: (order, tp)}``: the ranked predictions and their 0/1 outcome.
    """
    matches = image_matches(cand, scores, pred_image, n_gt, thresholds, max_detections)
    return ranked_detection(matches, scores, n_gt, thresholds)


def image_matches(cand, scores, pred_image, n_gt, thresholds, max_detections=None):
    """The greedy matching of every prediction at each of ``thresholds`` (an :class:`ImageMatches`).

    ``cand``: the overlapping same-image pairs (:func:`.matching.iou_candidates`);
    ``scores`` and ``pred_image`` (image code) per prediction; ``n_gt`` ground truths.
    """
    n_pred = len(scores)
    order = capped_order(scores, pred_image, max_detections)
    kept = np.zeros(n_pred, dtype=bool)
    kept[order] = True
    matched = np.zeros((n_pred, len(thresholds)), dtype=bool)
    for j, threshold in enumerate(thresholds):
        matched[:, j] = greedy_match(order, cand.gt_index, cand.pred_index, cand.iou, threshold, n_gt, n_pred) >= 0
    matched[~kept] = False
    return ImageMatches(kept, matched)


def ranked_detection(matches, scores, n_gt, thresholds):
    """AP and AR over ``thresholds`` from the :class:`ImageMatches` of every prediction of the set.

    Returns what :func:`detection_metrics` returns.
    """
    order = score_order(scores)
    order = order[matches.kept[order]]
    metrics, ranked, recalls = {}, {}, []
    for j, threshold in enumerate(thresholds):
        tp = matches.matched[order, j].astype(np.float64)
        metrics[f"AP@{threshold:.2f}"] = interpolated_ap(tp, 1.0 - tp, n_gt)
        recalls.append(tp.sum() / n_gt if n_gt else np.nan)
        ranked[threshold] = (order, tp)
    values = [metrics[f"AP@{t:.2f}"] for t in thresholds]
    metrics["AP"] = float(np.mean(values))
    for name, t in (("AP50", 0.5), ("AP75", 0.75)):
        if f"AP@{t:.2f}" in metrics:
            metrics[name] = metrics[f"AP@{t:.2f}"]
    metrics["AR"] = float(np.mean(recalls)) if n_gt else float("nan")
    return metrics, ranked
