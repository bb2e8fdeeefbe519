"""Average precision from ranked true/false positives (101-point interpolation).

Arrays follow one convention: ``tp`` and ``fp`` are ``(N,)`` 0/1 arrays over predictions
in descending score order; ``total_gt`` counts the ground-truth instances that can be
recalled. Precision at recall level ``t`` is the largest precision reached at any recall
``>= t`` (0 when recall never reaches ``t``), averaged over ``t = 0, 0.01, ..., 1``.
"""

import numpy as np

__all__ = ["interpolated_ap", "precision_recall"]


def precision_recall(tp, fp, total_gt):
    """Cumulative ``(precision, recall)`` arrays; recall is NaN when ``total_gt`` is 0."""
    tp_cum = np.cumsum(np.asarray(tp, dtype=np.float64))
    fp_cum = np.cumsum(np.asarray(fp, dtype=np.float64))
    precision = tp_cum / np.maximum(tp_cum + fp_cum, 1e-12)
    recall = tp_cum / total_gt if total_gt else np.full_like(tp_cum, np.nan)
    return precision, recall


def interpolated_ap(tp, fp, total_gt):
    """101-point interpolated AP; NaN without ground truth.

    Examples
    --------
    >>> round(interpolated_ap([1, 0, 1], [0, 1, 0], 2), 6)  # 51 levels at precision 1, 50 at 2/3
    0.834983
    """
    if total_gt == 0:
        return float("nan")
    precision, recall = precision_recall(tp, fp, total_gt)
    if precision.size == 0:
        return 0.0
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    levels = np.linspace(0.0, 1.0, 101)
    position = np.searchsorted(recall, levels, side="left")
    values = np.where(position < len(recall), envelope[np.minimum(position, len(recall) - 1)], 0.0)
    return float(np.mean(values))
