"""Analyses built on one evaluation: simple-to-complex breakdown, WrongTopo, bootstrap.

All of them read an :class:`~.outcome.Outcome`; none re-runs the matching. (The
minimum-hole-area and ring-threshold sweeps re-run whole evaluations and live in
:mod:`.api`.)
"""

import numpy as np

from .average_precision import interpolated_ap
from ..tables.metric_table import KEY_METRICS, metric
from .stats import f1_score, nanmean

__all__ = ["simple_to_complex", "wrong_topo", "bootstrap_intervals", "per_image_statistics",
           "resample_weights", "resample_metrics", "percentile_intervals", "WRONG_TOPO_THRESHOLDS",
           "BOOTSTRAP_METRICS", "RESAMPLE_CHUNK"]

WRONG_TOPO_THRESHOLDS = {
    "IoU": tuple(round(0.5 + 0.05 * i, 2) for i in range(10)),
    "E-BIoU": tuple(round(0.1 * i, 1) for i in range(1, 10)),
    "E-POLIS": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0),
}
BOOTSTRAP_METRICS = KEY_METRICS
"""Metrics with image-level bootstrap intervals (Appendix A.7)."""
_BUCKETS = ("0", "1", "2", ">=3")


def simple_to_complex(outcome):
    """Metrics of ground-truth instances grouped by their hole count H.

    Returns
    -------
    list of dict
        One row per bucket ``H`` with ``gt_instances``, ``matched``, ``O-BIoU``, ``O-POLIS``
        (px), ``E-BIoU`` (means over matched pairs of the bucket), ``Topo-EM`` (matched
        pairs that are topology-exact over all GT of the bucket) and ``Hole-R``.
    """
    gt_holes = np.diff(outcome.gt_table.hole_start)
    pairs = outcome.pairs
    pair_holes = gt_holes[pairs.gt_index]
    rows = []
    for bucket_index, name in enumerate(_BUCKETS):
        in_bucket = np.minimum(gt_holes, 3) == bucket_index
        pair_in = np.minimum(pair_holes, 3) == bucket_index
        n = int(in_bucket.sum())
        holes = int(gt_holes[in_bucket].sum())
        rows.append({
            "H": name, "gt_instances": n, "matched": int(pair_in.sum()),
            "O-BIoU": nanmean(pairs.o_biou[pair_in]), "O-POLIS": nanmean(pairs.o_polis[pair_in]),
            "E-BIoU": nanmean(pairs.e_biou[pair_in]),
            "Topo-EM": float(outcome.topo[pair_in].sum() / n) if n else float("nan"),
            "Hole-R": float(pairs.hole_tp[pair_in].sum() / holes) if holes else float("nan"),
        })
    return rows


def wrong_topo(outcome, thresholds=None):
    """WrongTopo(q, τ) on matched pairs whose reference has at least one hole (Eq. 6).

    Returns
    -------
    dict
        For each filter ``"IoU"`` (IoU >= τ), ``"E-BIoU"`` (>= τ) and ``"E-POLIS"``
        (<= τ px): a list of ``{"tau", "pairs", "WrongTopo"}`` (NaN when no pair passes).
    """
    thresholds = thresholds or WRONG_TOPO_THRESHOLDS
    pairs = outcome.pairs
    complex_pairs = np.diff(outcome.gt_table.hole_start)[pairs.gt_index] >= 1
    wrong = 1.0 - outcome.topo[complex_pairs].astype(float)
    values = {"IoU": pairs.iou[complex_pairs], "E-BIoU": pairs.e_biou[complex_pairs],
              "E-POLIS": pairs.e_polis[complex_pairs]}
    series = {}
    for name, taus in thresholds.items():
        rows = []
        for tau in taus:
            keep = values[name] >= tau if metric(name).higher_is_better else values[name] <= tau
            rows.append({"tau": float(tau), "pairs": int(keep.sum()),
                         "WrongTopo": float(wrong[keep].mean()) if keep.any() else float("nan")})
        series[name] = rows
    return series


def per_image_statistics(outcome):
    """Per-image sums behind the bootstrap metrics, as ``{name: (n_images,) array}`` by image code."""
    gt_image, pred_image = outcome.image_codes
    n = len(outcome.image_ids)
    pairs = outcome.pairs
    pair_image = gt_image[pairs.gt_index]
    count = lambda codes, weights=None: np.bincount(codes, weights=weights, minlength=n)  # noqa: E731
    holes_gt = count(gt_image[outcome.gt_table.hole_owner])
    holes_pred = count(pred_image[outcome.pred_table.hole_owner])
    return {
        "e_biou_sum": count(pair_image, np.nan_to_num(pairs.e_biou)),
        "e_biou_n": count(pair_image, (~np.isnan(pairs.e_biou)).astype(float)),
        "hole_tp": count(pair_image, pairs.hole_tp.astype(float)),
        "holes_gt": holes_gt, "holes_pred": holes_pred,
        "topo": count(pair_image, outcome.topo.astype(float)),
        "k": count(gt_image) + count(pred_image) - count(pair_image),
    }


def _metrics_for(weights, stats, ranking, ranked):
    """The bootstrap metrics of one resample; ``ranked`` is the predictions' stable order by descending score.

    A prediction drawn k times appears k times in a row at its place in ``ranked``: the order
    a stable sort of the drawn copies by descending score gives.
    """
    total_gt = float(np.dot(weights, ranking.gt_per_image))
    repeat = weights[ranking.image].astype(np.int64)
    tp = ranking.tp[np.repeat(ranked, repeat[ranked])]
    w = lambda key: float(np.dot(weights, stats[key]))  # noqa: E731
    hole_tp = w("hole_tp")
    return {
        "AP50": interpolated_ap(tp, 1.0 - tp, total_gt) if total_gt else float("nan"),
        "E-BIoU": w("e_biou_sum") / w("e_biou_n") if w("e_biou_n") else float("nan"),
        "Hole-F1": f1_score(hole_tp, w("holes_pred") - hole_tp, w("holes_gt") - hole_tp),
        "Topo-EM": w("topo") / w("k") if w("k") else float("nan"),
    }


def bootstrap_intervals(outcome, resamples=500, seed=0, level=0.95):
    """Image-level bootstrap confidence intervals of AP50, E-BIoU, Hole-F1 and Topo-EM.

    Images are resampled with replacement (repeated images count repeatedly) and the four
    metrics recomputed from per-image statistics, as Appendix A.7 describes. The AP50 of a
    resample uses each prediction's TP/FP outcome of the full evaluation (matching never
    crosses images).

    Returns
    -------
    dict
        ``{"resamples", "seed", "level", "undefined", metric: {"low", "high", "std"}}``.
        With fewer than two images every resample is the evaluation itself, so no
        interval exists: the bounds are NaN and ``undefined`` says why (None otherwise).
    """
    n_images = len(outcome.image_ids)
    if n_images < 2:
        return percentile_intervals([], resamples, seed, level, n_images)
    stats = per_image_statistics(outcome)
    chunks = [resample_metrics(weights, stats, outcome.ranking)
              for weights in resample_weights(n_images, resamples, seed)]
    return percentile_intervals(chunks, resamples, seed, level, n_images)


RESAMPLE_CHUNK = 64
"""Most bootstrap resamples in one chunk of :func:`resample_weights` (one cluster task each)."""


def resample_weights(n_images, resamples, seed, chunk=RESAMPLE_CHUNK):
    """Bootstrap weights: how often each image is drawn, ``chunk`` resamples at a time.

    Yields
    ------
    numpy.ndarray
        ``(k, n_images)`` counts, ``k <= chunk``, in the smallest unsigned integer type
        that holds the chunk's largest (uint8 unless an image is drawn 256 times or more):
        500 resamples of 12,672 images take 6.3 MB instead of 51 MB as floats, made and
        sent to the workers. :func:`resample_metrics` reads them as floats. The rows of all
        chunks are the resamples of one ``numpy.random.default_rng(seed)`` stream, in order,
        whatever ``chunk`` is.
    """
    rng = np.random.default_rng(seed)
    total = resamples if n_images else 0
    for first in range(0, total, chunk):
        counts = np.array([np.bincount(rng.integers(0, n_images, n_images), minlength=n_images)
                           for _ in range(min(chunk, total - first))])
        yield counts.astype(np.min_scalar_type(int(counts.max())))


def resample_metrics(weights, stats, ranking):
    """The bootstrap metrics of each row of ``weights`` (counts, read as floats), as ``{name: [value, ...]}``."""
    samples = {name: [] for name in BOOTSTRAP_METRICS}
    ranked = np.argsort(-ranking.scores, kind="stable")
    for row in np.asarray(weights, dtype=float):
        for name, value in _metrics_for(row, stats, ranking, ranked).items():
            samples[name].append(value)
    return samples


def percentile_intervals(chunks, resamples, seed, level, n_images):
    """Percentile intervals of the samples of :func:`resample_metrics` chunks, in order.

    ``n_images`` below 2 gives NaN bounds and the reason under ``undefined``: every
    resample of one image is the evaluation itself.
    """
    tail = (1.0 - level) / 2.0 * 100.0
    result = {"resamples": int(resamples), "seed": int(seed), "level": float(level), "undefined": None}
    if n_images < 2:
        nan = float("nan")
        result["undefined"] = f"{n_images} image(s): an image-level bootstrap needs at least two images"
        return {**result, **{name: {"low": nan, "high": nan, "std": nan} for name in BOOTSTRAP_METRICS}}
    for name in BOOTSTRAP_METRICS:
        values = np.asarray([v for chunk in chunks for v in chunk[name]], dtype=float)
        values = values[~np.isnan(values)]
        if values.size:
            low, high = np.percentile(values, [tail, 100.0 - tail])
            result[name] = {"low": float(low), "high": float(high), "std": float(values.std(ddof=1))
                            if values.size > 1 else 0.0}
        else:
            result[name] = {"low": float("nan"), "high": float("nan"), "std": float("nan")}
    return result
