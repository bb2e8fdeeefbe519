"""The ``coco`` profile: the ``paper`` profile with pycocotools' detection metrics.

Everything except AP and AR is the ``paper`` profile (:mod:`.paper`). AP and AR follow
``pycocotools.cocoeval.COCOeval`` with ``iouType='segm'``:

* per image and category, predictions sorted by descending score and capped at
  ``max_detections`` (maxDets, 100 by default); pycocotools keeps equal scores in input
  order, here in the canonical order of :mod:`.ordering` (pycocotools given the input in
  that order agrees);
* per area range (all, small, medium, large: :data:`AREA_RANGES_PX2`, both ends
  inclusive, px² of the occupied region) ground truth outside the range is *ignored*;
* greedy matching at each IoU threshold ``t`` (``min(t, 1 - 1e-10)``): each prediction
  takes the unmatched ground truth of highest IoU ``>= t``, regular ground truth before
  ignored ground truth, and among equal IoUs the *last* one in (canonical) order
  (pycocotools keeps the last of equal candidates); predictions matched to ignored
  ground truth, and unmatched predictions outside the area range, are ignored;
* accumulation per category over all images: predictions of every image (images in
  sorted image-id order, each truncated to its first maxDet) sorted by descending score
  with a stable sort; precision ``tp / (tp + fp)`` (pycocotools adds eps: 1 becomes 1 − 2e-16) with its monotone envelope,
  read at the 101 recall levels ``0, 0.01, ..., 1`` (0 beyond the last recall reached);
  recall is the final ``tp / n_gt``;
* AP, AP@t, AP_small/medium/large, AR@1/10/100 and AR_small/medium/large are means over
  IoU thresholds and over the categories that have non-ignored ground truth.

Categories: with one ground-truth category (or none given) every prediction is scored as
that class, whatever its ``category_id``; with several, matching is per category, AP/AR
are averaged over the ground-truth categories, and predictions of other categories are
left out of AP/AR (pycocotools drops them). The ``paper`` metrics stay class-agnostic.

Crowd regions are not handled: the loaders skip ``iscrowd = 1`` annotations, so no ground
truth is a crowd. IoU and areas (``iou_mode``): ``"raster"`` (the default) measures them on
1-px masks drawn as pycocotools draws polygons, holes cleared (:mod:`.raster_iou`);
``"vector"`` on the vector occupied regions. Ground-truth areas are the masks' pixel
counts or the regions' areas (pycocotools reads the annotation's ``area`` field); for
pixel-aligned polygons the two modes coincide. Predictions on images absent from
the ground truth count as false positives (pycocotools refuses such results). A metric
that pycocotools reports as -1 (no ground truth in its range) is NaN here. The IoU
thresholds are the profile's ``ap_iou_thresholds``: its 0.9 is the double nearest 0.9,
pycocotools' is 0.8999999999999999, and no mask IoU (areas below 1e14 px²) lies between.
"""

import math
from functools import partial

import numpy as np
import shapely

from ..inputs.ordering import image_rank
from .paper import evaluate_paper, image_codes
from ..geometry.raster_iou import instance_masks, raster_candidates
from ..inputs.repair import occupied_region

__all__ = ["AREA_RANGES_PX2", "RECALL_LEVELS", "evaluate_coco", "coco_detection", "coco_metrics", "coco_match"]

AREA_RANGES_PX2 = {
    "all": (0.0, 1e10),
    "small": (0.0, 32.0 ** 2),
    "medium": (32.0 ** 2, 96.0 ** 2),
    "large": (96.0 ** 2, 1e10),
}
RECALL_LEVELS = np.linspace(0.0, 1.0, 101)
_SMALL_CAPS = (1, 10)


def evaluate_coco(gt_set, pred_set, params, progress=None):
    """Run the ``coco`` profile.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels, already filtered by :func:`.paper.prepare`.
    params : EvaluationParams
        ``max_detections`` is maxDets (None: no cap); ``ap_iou_thresholds`` the IoU
        thresholds; ``iou_mode`` raster (mask) or vector IoU for AP/AR.
    progress : callable, optional
        Called with a phase name as each phase starts.

    Returns
    -------
    Outcome
        The ``paper`` outcome whose detection metrics are pycocotools' (see the module
        docstring for the keys).
    """
    return evaluate_paper(gt_set, pred_set, params, progress,
                          detection=coco_detection(gt_set, pred_set, params, progress))


def coco_detection(gt_set, pred_set, params, progress=None):
    """:func:`coco_metrics` bound to these sets, the ``detection`` of :func:`.paper.summarize_paper`.

    With ``params.iou_mode`` "raster" the IoU candidates and areas come from 1-px masks
    (pycocotools' rasterization, holes cleared); "vector" keeps the polygons' own.
    """
    gt, pred = gt_set.instances, pred_set.instances
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    gt_class, pred_class = _class_codes(gt, pred)
    options = dict(gt_class=gt_class, pred_class=pred_class, image_rank=image_rank(ids))
    if params.iou_mode == "vector":
        return partial(coco_metrics, gt_area=shapely.area(occupied_region([i.polygon() for i in gt])),
                       pred_area=shapely.area(occupied_region([i.polygon() for i in pred])), **options)
    if progress:
        progress("masks")
    # Predictions are drawn in the size of their ground-truth image, as pycocotools draws them.
    gt_masks, pred_masks = instance_masks(gt, gt_set.image_sizes), instance_masks(pred, gt_set.image_sizes)
    raster = raster_candidates(gt_masks, pred_masks, gt_image, pred_image)
    areas = dict(gt_area=np.array([m.size for m in gt_masks], dtype=np.float64),
                 pred_area=np.array([m.size for m in pred_masks], dtype=np.float64))

    def detection(cand, *args):
        return coco_metrics(raster, *args, **areas, **options)

    return detection


def _class_codes(gt, pred):
    """Category code per instance; one class unless the ground truth has several categories.

    Predictions of a category absent from the ground truth get -1 (not evaluated).
    """
    codes = {}
    for instance in gt:
        codes.setdefault(instance.category_id, len(codes))
    if len(codes) <= 1:
        return np.zeros(len(gt), dtype=np.int64), np.zeros(len(pred), dtype=np.int64)
    return (np.array([codes[i.category_id] for i in gt], dtype=np.int64),
            np.array([codes.get(i.category_id, -1) for i in pred], dtype=np.int64))


def _rank_in_group(scores, groups):
    """0-based position of each prediction in its group, by descending score (stable)."""
    order = np.lexsort((-np.asarray(scores, dtype=np.float64), groups))
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    first = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - first
    return rank


def coco_match(order, gt_index, pred_index, iou, gt_ignore, threshold, n_gt, n_pred):
    """Pycocotools' per-image greedy matching at one IoU threshold.

    Parameters
    ----------
    order : numpy.ndarray
        Prediction indices in picking order (descending score within each image).
    gt_index, pred_index, iou : numpy.ndarray
        Candidate pairs of the same image and category.
    gt_ignore : numpy.ndarray of bool
        Ground truth outside the area range.
    threshold : float
        IoU threshold; pairs need ``iou >= min(threshold, 1 - 1e-10)``.
    n_gt, n_pred : int
        Numbers of ground-truth and predicted instances.

    Returns
    -------
    numpy.ndarray
        Matched ground-truth index per prediction, -1 when unmatched (internal sentinel).

    Examples
    --------
    Two ground truths with the same IoU: pycocotools gives the prediction the later one.

    >>> gt, pred, iou = np.array([0, 1]), np.array([0, 0]), np.array([0.6, 0.6])
    >>> coco_match(np.array([0]), gt, pred, iou, np.array([False, False]), 0.5, 2, 1).tolist()
    [1]
    """
    ok = iou >= min(threshold, 1.0 - 1e-10)
    g, p, v = gt_index[ok], pred_index[ok], iou[ok]
    # Preference of each prediction: regular before ignored GT, higher IoU, later GT.
    pick = np.lexsort((-g, -v, gt_ignore[g], p))
    g, p = g[pick], p[pick]
    starts = np.searchsorted(p, np.arange(n_pred), side="left")
    stops = np.searchsorted(p, np.arange(n_pred), side="right")
    matched = np.full(n_pred, -1, dtype=np.int64)
    taken = np.zeros(n_gt, dtype=bool)
    for d in order:
        for gt in g[starts[d]:stops[d]]:
            if not taken[gt]:
                taken[gt] = True
                matched[d] = gt
                break
    return matched


def _precision_at_levels(tp, fp, n_gt):
    """Pycocotools' interpolated precision at :data:`RECALL_LEVELS` for ranked 0/1 arrays."""
    if len(tp) == 0:
        return np.zeros(len(RECALL_LEVELS))
    tp_sum, fp_sum = np.cumsum(tp, dtype=np.float64), np.cumsum(fp, dtype=np.float64)
    recall = tp_sum / n_gt
    # pycocotools adds np.spacing(1) to the denominator, which turns a perfect 1 into 0.9999999999999998;
    # the plain ratio is exact, and 0 (as there) before the first counted prediction
    counted = fp_sum + tp_sum
    precision = np.divide(tp_sum, counted, out=np.zeros_like(tp_sum), where=counted > 0)
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    position = np.searchsorted(recall, RECALL_LEVELS, side="left")
    return np.where(position < len(recall), envelope[np.minimum(position, len(recall) - 1)], 0.0)


def coco_metrics(cand, scores, pred_image, n_gt, thresholds, max_detections, *, gt_area, pred_area,
                 gt_class, pred_class, image_rank):
    """Pycocotools' segm AP/AR, with the signature of :func:`.detection.detection_metrics`.

    Parameters
    ----------
    cand : Candidates
        Every overlapping same-image pair (:func:`.matching.iou_candidates`).
    scores, pred_image : numpy.ndarray
        Score and image code of each prediction.
    n_gt : int
        Number of ground-truth instances.
    thresholds : sequence of float
        IoU thresholds (``AP@t`` keys).
    max_detections : int or None
        maxDets: per image and category cap (None: no cap).
    gt_area, pred_area : numpy.ndarray
        Occupied-region areas in px², for the area ranges.
    gt_class, pred_class : numpy.ndarray
        Category codes (predictions with -1 are not evaluated).
    image_rank : numpy.ndarray
        Sorted-image-id position of each image code.

    Returns
    -------
    metrics : dict
        ``AP@0.50`` ..., ``AP``, ``AP50``, ``AP75``, ``AP_small``, ``AP_medium``,
        ``AP_large``, ``AR@1``, ``AR@10``, ``AR@<maxDets>`` (``AR@all`` without a cap),
        ``AR`` (= the largest cap), ``AR_small``, ``AR_medium``, ``AR_large``.
    ranked : dict
        ``{threshold: (order, tp)}``: the evaluated, non-ignored predictions of area
        range "all" in pycocotools' global order and their 0/1 outcome.

    Notes
    -----
    Cost: one Python-level greedy pass per (area range, threshold) over the capped
    predictions, i.e. ``4 * len(thresholds)`` passes.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_pred = len(scores)
    gt_class, pred_class = np.asarray(gt_class), np.asarray(pred_class)
    same = gt_class[cand.gt_index] == pred_class[cand.pred_index]
    pairs = (cand.gt_index[same], cand.pred_index[same], cand.iou[same])
    largest = math.inf if max_detections is None else int(max_detections)
    caps = sorted(c for c in {*_SMALL_CAPS, largest} if c <= largest)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    # One group per (image, category): the unit pycocotools sorts and caps.
    rank = _rank_in_group(scores, pred_image * (int(gt_class.max(initial=-1)) + 2) + pred_class + 1)
    evaluated = (pred_class >= 0) & (rank < largest)
    picking = np.argsort(-scores, kind="stable")
    picking = picking[evaluated[picking]]
    # Global order: descending score; ties by sorted image id, then position in the image.
    global_order = np.lexsort((rank, image_rank[pred_image], -scores))
    classes = np.unique(gt_class)
    members = [global_order[(pred_class[global_order] == c) & evaluated[global_order]] for c in classes]

    ap = {name: np.full((len(classes), len(thresholds), len(RECALL_LEVELS)), np.nan) for name in AREA_RANGES_PX2}
    recall = {(name, cap): np.full((len(classes), len(thresholds)), np.nan)
              for name in AREA_RANGES_PX2 for cap in caps}
    ranked = {}
    for name, (low, high) in AREA_RANGES_PX2.items():
        gt_ignore = (gt_area < low) | (gt_area > high)
        pred_outside = (pred_area < low) | (pred_area > high)
        for t, threshold in enumerate(thresholds):
            matched = coco_match(picking, *pairs, gt_ignore, threshold, n_gt, n_pred)
            hit = matched >= 0
            ignored = pred_outside | ~evaluated
            ignored[hit] = gt_ignore[matched[hit]]
            tp, fp = hit & ~ignored, ~hit & ~ignored
            if name == "all":
                order = global_order[~ignored[global_order]]
                ranked[threshold] = (order, tp[order].astype(np.float64))
            for k, (c, mine) in enumerate(zip(classes, members)):
                n_regular = int(np.count_nonzero((gt_class == c) & ~gt_ignore))
                if n_regular == 0:
                    continue
                ap[name][k, t] = _precision_at_levels(tp[mine], fp[mine], n_regular)
                for cap in caps:
                    kept = mine[rank[mine] < cap]
                    recall[name, cap][k, t] = np.count_nonzero(tp[kept]) / n_regular
    return _summary(ap, recall, thresholds, caps), ranked


def _mean(values):
    values = values[~np.isnan(values)]
    return float(np.mean(values)) if values.size else float("nan")


def _summary(ap, recall, thresholds, caps):
    metrics = {f"AP@{t:.2f}": _mean(ap["all"][:, k]) for k, t in enumerate(thresholds)}
    metrics["AP"] = _mean(ap["all"])
    for name, t in (("AP50", 0.5), ("AP75", 0.75)):
        if f"AP@{t:.2f}" in metrics:
            metrics[name] = metrics[f"AP@{t:.2f}"]
    for name in ("small", "medium", "large"):
        metrics[f"AP_{name}"] = _mean(ap[name])
    for cap in caps:
        metrics["AR@all" if cap == math.inf else f"AR@{cap}"] = _mean(recall["all", cap])
    metrics["AR"] = _mean(recall["all", caps[-1]])
    for name in ("small", "medium", "large"):
        metrics[f"AR_{name}"] = _mean(recall[name, caps[-1]])
    return metrics
