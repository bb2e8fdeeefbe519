"""The ``paper`` profile: PolyTopoBench's metrics as Appendix A.1 defines them.

Pipeline (all lengths in pixels):

1. filters: score threshold, minimum instance area (GT ``>=``, predictions ``>``), holes
   below A_min removed from both sides;
2. validity of each prediction by Definition 15 (invalid polygons are evaluated, and fail
   Topo-EM); regions for IoU are the occupied regions (exterior minus holes,
   :func:`.repair.occupied_region`);
3. instance matching by Definition 3 at β (greedy by score, each GT once); AP/AR over
   the AP thresholds;
4. for each matched pair: exterior rings paired directly and *matched* when E-BIoU > γ;
   holes matched one-to-one by Hungarian assignment on per-hole BIoU, accepted when
   BIoU > γ; Overall/Exterior scope BIoU, POLIS, MTA, HD95 per pair; Hole scope per
   accepted hole match;
5. Hole-F1 micro-averaged over the dataset (holes of unmatched instances count as FP/FN);
   Topo-EM over matched pairs plus unmatched GT and predictions (Definition 16).
"""

from dataclasses import dataclass, replace
from functools import partial
from itertools import chain

import numpy as np

from ..geometry.corners import corner_counts
from ..metrics.detection import detection_metrics, image_matches, ranked_detection
from ..inputs.instances import field_values
from ..inputs.filters import apply_min_instance_area, apply_score_threshold, canonical_rings, drop_small_holes
from ...core.heap import return_freed_heap
from ...core.kernel_threads import beside, side_by_side
from ..metrics.matching import greedy_match, iou_candidates, score_order
from ..inputs.ordering import canonical_order
from ..run.outcome import Outcome
from ..tables.pair_rules import (closest_threshold, detection_ranking, exterior_matched, invalid_count, pair_hole_counts,
                         topology_exact_pairs, valid_flags)
from ..metrics.pairs import evaluate_pairs
from ..inputs.repair import occupied_region
from ..geometry.geos_validity import geos_is_valid
from ..geometry.rings import RingTable
from ..metrics.stats import f1_score, nanmean
from ..inputs.validity import validity_reasons

__all__ = ["PaperMatch", "evaluate_paper", "match_paper", "summarize_paper", "prepare", "select_instances",
           "prepare_rings", "image_codes", "image_detection", "topology_exact", "pair_outcome"]


def image_codes(gt, pred, image_ids):
    """Integer code per instance image, codes following ``image_ids`` then first appearance."""
    gt_images, pred_images = field_values(gt, "image_id"), field_values(pred, "image_id")
    ids = list(dict.fromkeys(chain(image_ids, gt_images, pred_images)))
    codes = dict(zip(ids, range(len(ids))))
    return (np.fromiter(map(codes.__getitem__, gt_images), np.int64, len(gt_images)),
            np.fromiter(map(codes.__getitem__, pred_images), np.int64, len(pred_images)), ids)


def prepare(gt_set, pred_set, params, rings_in_canonical_order=True):
    """Apply the profile-independent filters and put both sets in canonical order.

    Rings get one vertex order (:func:`.filters.canonical_rings`), then images, instances
    and holes one order (:func:`.ordering.canonical_order`), so no result depends on the
    order of the input. ``rings_in_canonical_order=False`` keeps each ring's vertex order
    as given (the ``p3-code`` profile's :attr:`.profiles.Profile.canonical_rings`: the P3
    code's Chamfer distance depends on it, it counts the first vertex twice).
    Returns the filtered sets and hole counts.
    """
    return prepare_rings(*select_instances(gt_set, pred_set, params), params, rings_in_canonical_order)


def select_instances(gt_set, pred_set, params):
    """The filters of :func:`prepare` that drop instances: score threshold, minimum instance area.

    The instances kept are the same objects, in the same order.
    """
    pred_set = apply_score_threshold(pred_set, params.score_threshold)
    gt_set = apply_min_instance_area(gt_set, params.min_instance_area_px2, inclusive=True)
    pred_set = apply_min_instance_area(pred_set, params.min_instance_area_px2, inclusive=False)
    return gt_set, pred_set


def prepare_rings(gt_set, pred_set, params, rings_in_canonical_order=True):
    """The filters of :func:`prepare` that change rings (one instance out per instance in): A_min, vertex order."""
    gt_set, gt_holes = drop_small_holes(gt_set, params.min_hole_area_px2)
    pred_set, pred_holes = drop_small_holes(pred_set, params.min_hole_area_px2)
    rings = canonical_rings if rings_in_canonical_order else (lambda instance_set: instance_set)
    return (canonical_order(rings(gt_set), by_score=False),
            canonical_order(rings(pred_set), by_score=True), {"gt": gt_holes, "pred": pred_holes})


@dataclass(frozen=True)
class PaperMatch:
    """The per-image work of the ``paper`` profile, before any dataset-wide aggregation.

    Everything here is a function of each image's instances alone, so the match of a
    set of images is the concatenation of the matches of its parts (see
    :mod:`.distributed`).

    Attributes
    ----------
    gt, pred : list of Instance
    image_ids : list
        Image id of each image code.
    gt_image, pred_image : numpy.ndarray
        Image code of each instance.
    gt_table, pred_table : RingTable
    gt_reasons, pred_reasons : list of str
        Definition 15 failure reasons ("" when valid).
    gt_regions, pred_regions : numpy.ndarray
        Valid occupied regions in pixels.
    cand : Candidates or None
        Every overlapping same-image pair; None where :attr:`detected` stands for them
        (a cluster's workers kept them).
    pairs : PairMetrics
        Pairs of the Definition 3 matching at β, sorted by prediction index.
    corner_counts : numpy.ndarray
        ``(len(corner_thresholds_px), 3)`` exterior corner ``[tp, fp, fn]`` counts.
    detected : ImageMatches or None
        The AP/AR matching of each prediction (:func:`image_detection`) where a cluster's
        workers computed it; None for :func:`summarize_paper` to match ``cand``.
    """

    gt: list
    pred: list
    image_ids: list
    gt_image: np.ndarray
    pred_image: np.ndarray
    gt_table: object
    pred_table: object
    gt_reasons: list
    pred_reasons: list
    gt_regions: np.ndarray
    pred_regions: np.ndarray
    cand: object
    pairs: object
    corner_counts: np.ndarray
    detected: object = None


def _reasons_and_regions(instances, polygons):
    """Validity reasons and occupied regions of one side's polygons, their GEOS validity checked once."""
    valid = geos_is_valid(polygons) if len(polygons) else np.zeros(0, dtype=bool)
    return validity_reasons(instances, polygons, valid), occupied_region(polygons, valid)


def match_paper(gt_set, pred_set, params, progress=None):
    """The per-image phases of the ``paper`` profile: ring bands, validity, IoU, matching, pair metrics and corners.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels, already filtered by :func:`prepare`.
    params : EvaluationParams
    progress : callable, optional
        Called with a phase name as each phase starts.

    Returns
    -------
    PaperMatch
    """
    step = progress or (lambda name: None)
    gt, pred = list(gt_set.instances), list(pred_set.instances)
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    step("ring bands")
    gt_table = RingTable(gt, params.boundary_radius_px)
    pred_table = RingTable(pred, params.boundary_radius_px)
    step("validity")
    (gt_reasons, gt_regions), (pred_reasons, pred_regions) = side_by_side(
        lambda: _reasons_and_regions(gt, gt_table.polygons), lambda: _reasons_and_regions(pred, pred_table.polygons))
    scores = np.array([i.score for i in pred], dtype=float)

    step("instance IoU")
    cand = iou_candidates(gt_regions, pred_regions, gt_image, pred_image)
    matched = greedy_match(score_order(scores), cand.gt_index, cand.pred_index, cand.iou, params.iou_threshold,
                           len(gt), len(pred))
    pairs_pred = np.flatnonzero(matched >= 0)
    pairs_gt = matched[pairs_pred]
    iou, inter = cand.lookup(pairs_gt, pairs_pred)

    step("pair metrics")
    # the corners need only the exterior rings (taken here, before the pair metrics' threads use the tables):
    # they fill what the pair metrics leave of the cores
    with beside(partial(corner_counts, [s[0] for s in gt_table.exterior_sets],
                        [s[0] for s in pred_table.exterior_sets], pairs_gt, pairs_pred, params.corner_simplify_px,
                        params.corner_thresholds_px)) as corners:
        pairs = evaluate_pairs(gt_table, pred_table, gt_regions, pred_regions, pairs_gt, pairs_pred, iou, inter,
                               params)
    for table in (gt_table, pred_table):
        table.drop_geometry(keep=("polygons",))
    return_freed_heap()
    return PaperMatch(gt, pred, ids, gt_image, pred_image, gt_table, pred_table, gt_reasons, pred_reasons,
                      gt_regions, pred_regions, cand, pairs, corners.result())


def evaluate_paper(gt_set, pred_set, params, progress=None, detection=detection_metrics):
    """Run the ``paper`` profile (also the base of ``coco``).

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels, already filtered by :func:`prepare`.
    params : EvaluationParams
    progress : callable, optional
        Called with a phase name as each phase starts.
    detection : callable
        Computes the AP/AR metrics (``coco`` passes its own).

    Returns
    -------
    Outcome
    """
    return summarize_paper(match_paper(gt_set, pred_set, params, progress), params, detection)


def topology_exact(pairs, gt_table, pred_table, pred_reasons, params):
    """Exterior match at γ and topology exactness (Definition 16) of each matched pair.

    A pair is topology-exact when the prediction is valid (or validity is not checked), its
    exterior matches (E-BIoU against γ), both sides have the same hole count and every
    hole is matched.

    Returns
    -------
    ext_matched, topo : numpy.ndarray of bool
        One value per pair of ``pairs``.
    """
    ext_matched = exterior_matched(pairs.e_biou, params.ring_match_threshold, params.ring_match_inclusive)
    valid = valid_flags(pred_reasons, params.check_validity)[pairs.pred_index]
    return ext_matched, topology_exact_pairs(ext_matched, valid, *pair_hole_counts(pairs, gt_table, pred_table),
                                             pairs.hole_tp)


def summarize_paper(match, params, detection=detection_metrics):
    """The dataset-wide phase of the ``paper`` profile: AP/AR, Topo-EM and the metric means.

    Parameters
    ----------
    match : PaperMatch
        The per-image work (of the whole set, or merged from its parts).
    params : EvaluationParams
    detection : callable
        Computes the AP/AR metrics (``coco`` passes its own).

    Returns
    -------
    Outcome
    """
    gt, pred, pairs = match.gt, match.pred, match.pairs
    gt_table, pred_table, pred_reasons = match.gt_table, match.pred_table, match.pred_reasons
    pred_image = match.pred_image
    scores = _scores(pred)
    if match.detected is not None:
        det, ranked = ranked_detection(match.detected, scores, len(gt), params.ap_iou_thresholds)
    else:
        det, ranked = detection(match.cand, scores, pred_image, len(gt), params.ap_iou_thresholds,
                                params.max_detections)
    pairs_gt, pairs_pred = pairs.gt_index, pairs.pred_index

    per_pair = pair_outcome(match, params)
    ext_matched, topo = per_pair.exterior_matched, per_pair.topo
    gt_h, pred_h = pair_hole_counts(pairs, gt_table, pred_table)

    hole_tp = int(pairs.hole_tp.sum())
    hole_fp = len(pred_table.hole_owner) - hole_tp
    hole_fn = len(gt_table.hole_owner) - hole_tp
    k = len(pairs_gt) + (len(gt) - len(pairs_gt)) + (len(pred) - len(pairs_pred))
    ext_tp = int(ext_matched.sum())
    corner = {f"Corner-F1@{t:g}": f1_score(*(int(v) for v in match.corner_counts[j]))
              for j, t in enumerate(params.corner_thresholds_px)}

    metrics = {
        **det,
        "O-BIoU": nanmean(pairs.o_biou), "E-BIoU": nanmean(pairs.e_biou), "H-BIoU": nanmean(pairs.holes.biou),
        "O-POLIS": nanmean(pairs.o_polis), "E-POLIS": nanmean(pairs.e_polis), "H-POLIS": nanmean(pairs.holes.polis),
        "O-MTA": nanmean(pairs.o_mta), "E-MTA": nanmean(pairs.e_mta), "H-MTA": nanmean(pairs.holes.mta),
        "Hole-F1": f1_score(hole_tp, hole_fp, hole_fn),
        "Hole-P": hole_tp / (hole_tp + hole_fp) if hole_tp + hole_fp else float("nan"),
        "Hole-R": hole_tp / (hole_tp + hole_fn) if hole_tp + hole_fn else float("nan"),
        "Hole-TP": hole_tp, "Hole-FP": hole_fp, "Hole-FN": hole_fn,
        "Topo-EM": float(topo.sum() / k) if k else float("nan"),
        "E-F1": f1_score(ext_tp, len(pred) - ext_tp, len(gt) - ext_tp),
        "O-HD95": nanmean(pairs.o_hd95), "E-HD95": nanmean(pairs.e_hd95), "H-HD95": nanmean(pairs.holes.hd95),
        **corner,
        "HoleCount-MAE": float(np.mean(np.abs(gt_h - pred_h))) if len(gt_h) else float("nan"),
        "matched_pairs": int(len(pairs_gt)),
        "unmatched_gt": int(len(gt) - len(pairs_gt)),
        "unmatched_pred": int(len(pred) - len(pairs_pred)),
        "invalid_pred": invalid_count(pred_reasons),
    }
    order, tp = ranked[closest_threshold(ranked, params.iou_threshold)]
    ranking = detection_ranking(params.iou_threshold, scores, order, tp, pred_image, match.gt_image,
                                len(match.image_ids))
    return replace(per_pair, metrics=metrics, ranking=ranking)


def image_detection(match, params):
    """The AP/AR matching of ``match``'s predictions (:func:`.detection.image_matches`).

    It never crosses images: a cluster's workers compute it for their images and the
    client ranks the whole set's predictions (:func:`.detection.ranked_detection`).
    """
    return image_matches(match.cand, _scores(match.pred), match.pred_image, len(match.gt), params.ap_iou_thresholds,
                         params.max_detections)


def _scores(pred):
    """The predictions' scores as a float array."""
    return np.array(field_values(pred, "score"), dtype=float)


def pair_outcome(match, params):
    """The :class:`.outcome.Outcome` of ``match`` without its dataset-wide part (no metrics, no ranking).

    Everything per pair (exterior match at γ, topology exactness) and per instance that
    the records read (:func:`.records.build_records`): a partition's records on a worker
    (:mod:`.record_parts`) are built from it.
    """
    ext_matched, topo = topology_exact(match.pairs, match.gt_table, match.pred_table, match.pred_reasons, params)
    return Outcome(params, match.gt, match.pred, match.gt_regions, match.pred_regions, match.gt_table,
                   match.pred_table, match.pairs, ext_matched, topo, match.pred_reasons, match.gt_reasons,
                   (match.gt_image, match.pred_image), match.image_ids, {}, None)
