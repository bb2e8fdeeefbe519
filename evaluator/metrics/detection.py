"""Detection metrics of the ``paper`` profile: AP over IoU thresholds and AR.

Matching follows Definition 3 at each threshold: predictions in descending score order
(equal scores in the canonical order of :mod:`.ordering`) take the unmatched ground truth
of highest IoU in their image at or above the threshold. AP is 101-point interpolated
(:mod:`.average_precision`); AR is the recall with every prediction kept, averaged over the
thresholds. ``max_detections`` keeps only the highest-scoring predictions of each image.
"""

import numpy as np

from .average_precision import interpolated_ap
from .matching import greedy_match, score_order

__all__ = ["detection_metrics", "capped_order"]


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
    """AP and AR over ``thresholds``.

    Returns
    -------
    metrics : dict
        ``AP@0.50`` ... per threshold, ``AP`` (mean), ``AP50``, ``AP75``, ``AR``.
    tp_by_threshold : dict
        ``{threshold: (order, tp)}``: the ranked predictions and their 0/1 outcome.
    """
    gt_index, pred_index, iou = cand.gt_index, cand.pred_index, cand.iou
    n_pred = len(scores)
    order = capped_order(scores, pred_image, max_detections)
    metrics, ranked, recalls = {}, {}, []
    for threshold in thresholds:
        matched = greedy_match(order, gt_index, pred_index, iou, threshold, n_gt, n_pred)
        tp = (matched[order] >= 0).astype(np.float64)
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
