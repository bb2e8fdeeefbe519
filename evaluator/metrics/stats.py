"""Small aggregation helpers shared by the profiles."""

import numpy as np

__all__ = ["nanmean", "f1_score", "f1_scores", "prf_summary"]


def nanmean(values):
    """Mean of the non-NaN values; NaN when there are none.

    Examples
    --------
    >>> nanmean([1.0, float("nan"), 3.0])
    2.0
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def f1_score(tp, fp, fn):
    """``2TP / (2TP + FP + FN)``; NaN when all three are 0."""
    return float(f1_scores(tp, fp, fn))


def f1_scores(tp, fp, fn):
    """:func:`f1_score` of each element of integer count arrays.

    Examples
    --------
    >>> f1_scores(np.array([1, 0]), np.array([1, 0]), np.array([0, 0])).tolist()
    [0.6666666666666666, nan]
    """
    denominator = 2 * np.asarray(tp) + np.asarray(fp) + np.asarray(fn)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator != 0, 2 * np.asarray(tp) / denominator, np.nan)


def prf_summary(tp, fp, fn):
    """Counts with precision, recall and F1, 0 where a denominator is 0 (reference-code style).

    With nothing to count (``tp = fp = fn = 0``) all three are NaN: undefined, not a score
    of 0 (the public evaluator's 0.0 there would read as total failure).

    Examples
    --------
    >>> prf_summary(0, 0, 3)["f1"], prf_summary(0, 0, 0)["f1"]
    (0.0, nan)
    """
    if tp + fp + fn == 0:
        nan = float("nan")
        return {"tp": 0, "fp": 0, "fn": 0, "precision": nan, "recall": nan, "f1": nan}
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"tp": int(tp), "fp": int(fp), "fn": int(fn), "precision": float(precision),
            "recall": float(recall), "f1": float(f1)}
