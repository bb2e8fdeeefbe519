"""The ``reference-code`` profile: the public PolyTopoBench evaluator's numbers.

It differs from the paper on purpose (see ``docs/evaluator.md``):

* every polygon is repaired on loading (``make_valid``, largest part kept, rings re-read
  from the repaired polygon); polygons that repair to nothing are dropped; holes smaller
  than A_min are removed afterwards and the polygon repaired again;
* AP: each prediction, in descending score order, takes the GT of highest IoU in its
  image; it is a TP only if that GT is still free (no fallback, no maxDets);
* Overall scope and Topo-EM use a per-image Hungarian assignment on ``1 - IoU`` accepted
  at IoU >= β; a pair is topology-exact when its exterior BIoU >= γ, the hole counts are
  equal and all holes match (Hungarian, BIoU >= γ);
* Exterior and hole scopes pool all rings of an image and match them by Hungarian
  assignment on ``1 - BIoU``, accepted at BIoU >= γ (γ = 0.5 by default);
* MTA in degrees; HD95, Corner-F1 (exteriors only) and hole-count MAE are reported too.

The output mirrors the reference evaluator's ``metrics`` JSON object.
"""

from dataclasses import dataclass

import numpy as np
import shapely

from ..metrics.average_precision import interpolated_ap
from ..geometry.boundary import band_iou, hd95, polis
from ..geometry.corners import corner_counts
from ..geometry.construct import polygons_of, ring_linearrings
from ..inputs.filters import apply_score_threshold, kept_holes
from ...core.heap import return_freed_heap
from ..inputs.instances import Instance
from ..metrics.matching import hungarian_match, iou_candidates, same_image_pairs, score_order
from ..run.outcome import Outcome
from .paper import image_codes
from ..geometry.mta import max_tangent_angle, region_precision
from ..tables.pair_rules import (closest_threshold, detection_ranking, exterior_matched, pair_hole_counts,
                         topology_exact_pairs, valid_flags)
from ..metrics.pairs import evaluate_pairs
from ..inputs.repair import largest_polygons
from ..geometry.rings import RingTable, ring_regions
from ..inputs.validity import validity_reasons
from ..metrics.stats import nanmean, prf_summary

__all__ = ["RoleMatches", "ReferenceMatch", "normalize_like_reference", "evaluate_reference_code",
           "match_reference_code", "summarize_reference_code", "image_grouped_order", "flat_metrics"]


def _from_polygons(instances, polygons):
    """The instances with their rings read back from ``polygons`` (one valid Polygon each)."""
    rings, ring_owner = shapely.get_rings(np.asarray(polygons, dtype=object), return_index=True)
    coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
    sizes = np.bincount(coord_ring, minlength=len(rings))
    ends = np.cumsum(sizes)
    arrays = [coords[end - size:end - 1] for size, end in zip(sizes.tolist(), ends.tolist())]
    first = np.searchsorted(ring_owner, np.arange(len(instances) + 1)).tolist()
    return [Instance(instance.image_id, instance.source_id, arrays[first[k]], tuple(arrays[first[k] + 1:first[k + 1]]),
                     instance.score, instance.category_id, instance.part) for k, instance in enumerate(instances)]


def normalize_like_reference(instance_set, min_hole_area_px2=0.0):
    """Repair every instance as the reference loader does, then filter small holes.

    Returns
    -------
    instances : list of Instance
        Repaired instances (rings read back from the repaired polygon).
    regions : numpy.ndarray
        Their repaired polygons.
    hole_filter : dict
        Counts before and after the hole filter, as the reference reports them.
    kept : numpy.ndarray
        Index in ``instance_set`` of each returned instance (the others repaired to nothing).

    Notes
    -----
    Every step runs on all instances at once (shapely's array functions); only the
    polygons that need ``make_valid`` are repaired one by one.
    """
    repaired = largest_polygons(polygons_of(instance_set.instances))
    kept_index = np.flatnonzero(~shapely.is_missing(repaired))
    regions = repaired[kept_index]
    instances = _from_polygons([instance_set.instances[i] for i in kept_index], regions)
    before = sum(instance.hole_count for instance in instances)
    counts = {"min_hole_area": float(min_hole_area_px2), "holes_before": before, "holes_after": before,
              "holes_removed": 0, "buildings_changed": 0}
    if min_hole_area_px2 > 0:
        kept_rings, changed = kept_holes(instances, min_hole_area_px2)
        if changed:
            rings = [ring for index in changed for ring in (instances[index].exterior, *kept_rings[index])]
            owner = np.repeat(np.arange(len(changed)), [1 + len(kept_rings[index]) for index in changed])
            region = largest_polygons(shapely.polygons(ring_linearrings(rings), indices=owner))
            lost = np.flatnonzero(shapely.is_missing(region))
            if lost.size:
                region[lost] = ring_regions([instances[changed[k]].exterior for k in lost])
            rebuilt = ~shapely.is_missing(region)
            changed_rebuilt = np.array(changed, dtype=np.int64)[rebuilt]
            for index, instance in zip(changed_rebuilt.tolist(),
                                       _from_polygons([instances[i] for i in changed_rebuilt], region[rebuilt])):
                instances[index] = instance
            regions = regions.copy()
            regions[changed_rebuilt] = region[rebuilt]
            keep = np.ones(len(instances), dtype=bool)
            keep[np.array(changed, dtype=np.int64)[~rebuilt]] = False
            instances = [instance for instance, k in zip(instances, keep) if k]
            regions, kept_index = regions[keep], kept_index[keep]
        after = sum(instance.hole_count for instance in instances)
        counts.update(holes_after=after, holes_removed=before - after, buildings_changed=len(changed))
    return instances, np.asarray(regions, dtype=object), counts, np.asarray(kept_index, dtype=np.int64)


def image_grouped_order(instances):
    """Instance indices grouped by image (in order of first appearance), then source order."""
    first_seen = {}
    for instance in instances:
        first_seen.setdefault(instance.image_id, len(first_seen))
    keys = np.array([first_seen[instance.image_id] for instance in instances], dtype=np.int64)
    return np.argsort(keys, kind="stable")


def _ap_by_threshold(order, cand, thresholds, n_gt, n_pred):
    """AP per threshold with the reference's argmax-GT rule (no fallback).

    Returns the AP values and, per threshold, the 0/1 outcome of the ranked predictions.
    """
    gt_index, pred_index, iou = cand.gt_index, cand.pred_index, cand.iou
    best_gt = np.full(n_pred, -1, dtype=np.int64)
    best_iou = np.zeros(n_pred)
    if iou.size:
        # Highest IoU per prediction; ties go to the earliest GT of the image.
        by_pred = np.lexsort((gt_index, -iou, pred_index))
        first = np.unique(pred_index[by_pred], return_index=True)[1]
        chosen = by_pred[first]
        best_gt[pred_index[chosen]] = gt_index[chosen]
        best_iou[pred_index[chosen]] = iou[chosen]
    values, outcomes = {}, {}
    for threshold in thresholds:
        # A GT is claimed by the first ranked prediction whose best GT it is; later ones are FPs.
        eligible = np.flatnonzero(best_iou[order] >= threshold)
        _, first_claim = np.unique(best_gt[order][eligible], return_index=True)
        tp = np.zeros(n_pred)
        tp[eligible[first_claim]] = 1.0
        values[f"AP@{threshold:.2f}"] = interpolated_ap(tp, 1.0 - tp, n_gt)
        outcomes[threshold] = tp
    return values, outcomes


@dataclass(frozen=True)
class RoleMatches:
    """The accepted ring matches of one role (exteriors or holes), pooled per image.

    Attributes
    ----------
    image : numpy.ndarray
        Image code of each accepted match, in the order of images then of the per-image
        Hungarian assignment.
    biou, polis, hd95, mta : numpy.ndarray
        Per accepted match: BIoU, POLIS (px), HD95 (px), MTA (degrees, NaN when undefined).
    gt_rings, pred_rings : int
        Rings of the role on each side.
    corner_counts : numpy.ndarray or None
        ``(len(corner_thresholds_px), 3)`` corner ``[tp, fp, fn]`` counts (exteriors only).
    """

    image: np.ndarray
    biou: np.ndarray
    polis: np.ndarray
    hd95: np.ndarray
    mta: np.ndarray
    gt_rings: int
    pred_rings: int
    corner_counts: object = None


@dataclass(frozen=True)
class ReferenceMatch:
    """The per-image work of the ``reference-code`` profile, before any dataset-wide aggregation.

    Every field is a function of each image's instances alone (repairs, IoU, the
    per-image Hungarian assignments, ring pooling), so the match of a set of images is
    the concatenation of the matches of its parts (see :mod:`.distributed`).

    Attributes
    ----------
    gt, pred : list of Instance
        Repaired instances; ``gt`` in input order, ``pred`` grouped by image
        (:func:`image_grouped_order`).
    gt_source, pred_source : numpy.ndarray
        Index of each in the input sets (``pred_source`` before the score threshold).
    gt_reasons, pred_reasons : list of str
        Definition 15 reasons of the input polygons, before the repair.
    gt_regions, pred_regions : numpy.ndarray
        The repaired polygons.
    image_ids : list
        Image id of each image code.
    gt_image, pred_image : numpy.ndarray
        Image code of each instance.
    cand : Candidates
    gt_table, pred_table : RingTable
    pairs : PairMetrics
        The per-image Hungarian pairs at β, sorted by ground-truth index.
    exterior, hole : RoleMatches
    input_counts : tuple of int
        Ground-truth annotations and predictions above the score threshold, as given.
    hole_filter : tuple of dict
        The ground truth's and the predictions' hole-filter counts.
    """

    gt: list
    pred: list
    gt_source: np.ndarray
    pred_source: np.ndarray
    gt_reasons: list
    pred_reasons: list
    gt_regions: np.ndarray
    pred_regions: np.ndarray
    image_ids: list
    gt_image: np.ndarray
    pred_image: np.ndarray
    cand: object
    gt_table: object
    pred_table: object
    pairs: object
    exterior: RoleMatches
    hole: RoleMatches
    input_counts: tuple
    hole_filter: tuple


def evaluate_reference_code(gt_set, pred_set, params, progress=None):
    """Evaluate like the public PolyTopoBench evaluator.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels (not yet filtered).
    params : EvaluationParams
        Parameters of the ``reference-code`` profile.
    progress : callable, optional
        Called with a short phase name as each phase starts.

    Returns
    -------
    Outcome
        ``details["reference_metrics"]`` is the reference's ``metrics`` object;
        ``details["ground_truth"]`` / ``["predictions"]`` its loader counts.
    """
    return summarize_reference_code(match_reference_code(gt_set, pred_set, params, progress), params, progress)


def match_reference_code(gt_set, pred_set, params, progress=None):
    """The per-image phases of the ``reference-code`` profile: repair, IoU, Hungarian pairs, ring pools.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels (not yet filtered).
    params : EvaluationParams
    progress : callable, optional
        Called with a short phase name as each phase starts.

    Returns
    -------
    ReferenceMatch
    """
    step = progress or (lambda name: None)
    step("repair")
    above = np.array([i for i, p in enumerate(pred_set.instances) if p.score >= params.score_threshold],
                     dtype=np.int64)
    pred_set = apply_score_threshold(pred_set, params.score_threshold)
    raw_gt_reasons = validity_reasons(gt_set.instances)
    raw_pred_reasons = validity_reasons(pred_set.instances)
    gt, gt_regions, gt_holes, gt_kept = normalize_like_reference(gt_set, params.min_hole_area_px2)
    pred, pred_regions, pred_holes, pred_kept = normalize_like_reference(pred_set, params.min_hole_area_px2)
    grouped = image_grouped_order(pred)
    pred = [pred[i] for i in grouped]
    pred_regions, pred_kept = pred_regions[grouped], pred_kept[grouped]
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))

    step("instance IoU")
    cand = iou_candidates(gt_regions, pred_regions, gt_image, pred_image)
    step("instance pairs")
    pairs_gt, pairs_pred, pairs_iou = _hungarian_per_image(cand, gt_image, pred_image, params.iou_threshold)
    _, pairs_inter = cand.lookup(pairs_gt, pairs_pred)
    step("ring bands")
    gt_table = RingTable(gt, params.boundary_radius_px)
    pred_table = RingTable(pred, params.boundary_radius_px)
    for table in (gt_table, pred_table):  # the pooled ring matches below use every one of them
        table.make("exterior_bands", "hole_bands", "exterior_regions", "hole_regions")
    step("pair metrics")
    pairs = evaluate_pairs(gt_table, pred_table, gt_regions, pred_regions, pairs_gt, pairs_pred, pairs_iou,
                           pairs_inter, params)
    step("exterior rings")
    exterior = _match_role(
        gt_table.exterior_bands, pred_table.exterior_bands, [s[0] for s in gt_table.exterior_sets],
        [s[0] for s in pred_table.exterior_sets], gt_table.exterior_regions, pred_table.exterior_regions,
        gt_image, pred_image, params, corners=True,
        known=(pairs_gt, pairs_pred, {"biou": pairs.e_biou, "polis": pairs.e_polis, "hd95": pairs.e_hd95,
                                      "mta": pairs.e_mta}))
    step("hole rings")
    hole = _match_role(
        gt_table.hole_bands, pred_table.hole_bands, gt_table.holes, pred_table.holes,
        gt_table.hole_regions, pred_table.hole_regions,
        gt_image[gt_table.hole_owner], pred_image[pred_table.hole_owner], params, corners=False)
    for table in (gt_table, pred_table):
        table.drop_geometry(keep=("polygons",))
    return_freed_heap()
    return ReferenceMatch(gt, pred, gt_kept, above[pred_kept], [raw_gt_reasons[i] for i in gt_kept],
                          [raw_pred_reasons[i] for i in pred_kept], gt_regions, pred_regions, ids, gt_image,
                          pred_image, cand, gt_table, pred_table, pairs, exterior, hole,
                          (len(gt_set), len(pred_set)), (gt_holes, pred_holes))


def summarize_reference_code(match, params, progress=None):
    """The dataset-wide phase of the ``reference-code`` profile: AP, Topo-EM, pooled means.

    Parameters
    ----------
    match : ReferenceMatch
        The per-image work (of the whole set, or merged from its parts).
    params : EvaluationParams
    progress : callable, optional
        Called with a short phase name as each phase starts.

    Returns
    -------
    Outcome
    """
    (progress or (lambda name: None))("summary")
    gt, pred, cand, pairs = match.gt, match.pred, match.cand, match.pairs
    gt_table, pred_table, gt_image, pred_image = match.gt_table, match.pred_table, match.gt_image, match.pred_image
    n_gt, n_pred = len(gt), len(pred)
    scores = np.array([p.score for p in pred], dtype=float)
    order = score_order(scores)
    ap, tp_at = _ap_by_threshold(order, cand, params.ap_iou_thresholds, n_gt, n_pred)
    ap_values = list(ap.values())
    ap["AP"] = float(np.mean(ap_values)) if ap_values else float("nan")
    for name, key in (("AP50", "AP@0.50"), ("AP75", "AP@0.75")):
        if key in ap:
            ap[name] = ap[key]

    pairs_gt, pairs_pred = pairs.gt_index, pairs.pred_index
    gt_h, pred_h = pair_hole_counts(pairs, gt_table, pred_table)
    ext_matched = exterior_matched(pairs.e_biou, params.ring_match_threshold, inclusive=True)
    # The reference does not check validity: every pair counts as valid here.
    topo = topology_exact_pairs(ext_matched, valid_flags(match.pred_reasons, check_validity=False)[pairs_pred],
                                gt_h, pred_h, pairs.hole_tp)
    topo_count = n_gt + n_pred - len(pairs_gt)
    exterior = _role_summary(match.exterior, params)
    hole = _role_summary(match.hole, params)
    hole["count_mae"] = float(np.mean(np.abs(gt_h - pred_h))) if len(gt_h) else float("nan")
    hole["count_mae_aggregation"] = "matched_building_pairs_only"

    reference = {
        "poly_ap": ap,
        "meta": {"gt_building_total": n_gt, "pred_building_total": n_pred,
                 "matched_building_pairs": int(len(pairs_gt))},
        "overall": {
            "aggregation": "matched_building_pairs_only",
            "boundary_iou": nanmean(pairs.o_biou),
            "polis": nanmean(pairs.o_polis),
            "hd95": nanmean(pairs.o_hd95),
            "mta": nanmean(pairs.o_mta),
            "topology_exact_match_rate": float(topo.sum() / topo_count) if topo_count else float("nan"),
        },
        "exterior": exterior,
        "hole": hole,
    }
    closest = closest_threshold(tp_at, params.iou_threshold)
    ranking = detection_ranking(closest, scores, order, tp_at[closest], pred_image, gt_image, len(match.image_ids))
    (gt_annotations, predictions), (gt_holes, pred_holes) = match.input_counts, match.hole_filter
    details = {
        "reference_metrics": reference,
        "ground_truth": {"num_annotations": gt_annotations, "num_kept": n_gt, "hole_area_filter": gt_holes},
        "predictions": {"num_predictions": predictions, "num_kept_predictions": n_pred,
                        "hole_area_filter": pred_holes},
    }
    return Outcome(params, gt, pred, match.gt_regions, match.pred_regions, gt_table, pred_table, pairs, ext_matched,
                   topo.astype(bool), match.pred_reasons, match.gt_reasons, (gt_image, pred_image),
                   match.image_ids, flat_metrics(reference), ranking, details)


def flat_metrics(reference):
    """The reference's nested metrics under the paper's Table 3 names."""
    ap, overall, exterior, hole = (reference[k] for k in ("poly_ap", "overall", "exterior", "hole"))
    flat = {key: value for key, value in ap.items()}
    flat.update({
        "O-BIoU": overall["boundary_iou"], "E-BIoU": exterior["boundary_iou"], "H-BIoU": hole["boundary_iou"],
        "O-POLIS": overall["polis"], "E-POLIS": exterior["polis"], "H-POLIS": hole["polis"],
        "O-MTA": overall["mta"], "E-MTA": exterior["mta"], "H-MTA": hole["mta"],
        "Hole-F1": hole["f1"], "Hole-P": hole["precision"], "Hole-R": hole["recall"],
        "Hole-TP": hole["tp"], "Hole-FP": hole["fp"], "Hole-FN": hole["fn"],
        "Topo-EM": overall["topology_exact_match_rate"],
        "E-F1": exterior["f1"], "E-P": exterior["precision"], "E-R": exterior["recall"],
        "O-HD95": overall["hd95"], "E-HD95": exterior["hd95"], "H-HD95": hole["hd95"],
        "HoleCount-MAE": hole["count_mae"],
        "matched_pairs": reference["meta"]["matched_building_pairs"],
    })
    for key, value in exterior.get("corner_f1", {}).items():
        flat[f"Corner-F1@{key}"] = value["f1"]
    return flat


def _hungarian_per_image(cand, gt_image, pred_image, threshold):
    """Per-image Hungarian assignment on ``1 - IoU`` (dense per image, zeros where disjoint)."""
    gt_index, pred_index, iou = cand.gt_index, cand.pred_index, cand.iou
    out_gt, out_pred, out_iou = [], [], []
    images = np.union1d(gt_image, pred_image)
    gt_of = {image: np.flatnonzero(gt_image == image) for image in images}
    pred_of = {image: np.flatnonzero(pred_image == image) for image in images}
    image_of_pair = gt_image[gt_index]
    order = np.argsort(image_of_pair, kind="stable")
    bounds = np.searchsorted(image_of_pair[order], images), np.searchsorted(image_of_pair[order], images, "right")
    for image, lo, hi in zip(images, *bounds):
        g, p = gt_of[image], pred_of[image]
        if len(g) == 0 or len(p) == 0:
            continue
        matrix = np.zeros((len(g), len(p)))
        sel = order[lo:hi]
        matrix[np.searchsorted(g, gt_index[sel]), np.searchsorted(p, pred_index[sel])] = iou[sel]
        for r, c, value in hungarian_match(matrix, threshold, inclusive=True):
            out_gt.append(g[r])
            out_pred.append(p[c])
            out_iou.append(value)
    order = np.argsort(out_gt, kind="stable")
    return (np.array(out_gt, dtype=np.int64)[order], np.array(out_pred, dtype=np.int64)[order],
            np.array(out_iou, dtype=float)[order])


def _match_role(gt_bands, pred_bands, gt_rings, pred_rings, gt_regions, pred_regions,
                gt_image, pred_image, params, corners, known=None):
    """Rings of one role pooled per image and matched by Hungarian on ``1 - BIoU``.

    ``known`` optionally gives metrics already computed for some ring pairs, as
    ``(gt ring index, pred ring index, {"biou", "polis", "hd95", "mta"} arrays)``; those
    pairs are not computed again (the values are identical by construction).

    Returns
    -------
    RoleMatches
    """
    threshold = params.ring_match_threshold
    known_gt, known_pred, known_values = known if known is not None else (np.zeros(0, np.int64),) * 2 + ({},)
    lookup = {(int(g), int(p)): k for k, (g, p) in enumerate(zip(known_gt, known_pred))}
    similarity = _pooled_similarity(gt_bands, pred_bands, gt_image, pred_image, lookup, known_values.get("biou"))
    matched_gt, matched_pred, matched_biou = [], [], []
    for g, p, matrix in similarity.values():
        for row, col, value in hungarian_match(matrix, threshold, inclusive=True):
            matched_gt.append(g[row])
            matched_pred.append(p[col])
            matched_biou.append(value)
    mg = np.array(matched_gt, dtype=np.int64)
    mp = np.array(matched_pred, dtype=np.int64)
    reuse = np.array([lookup.get((int(g), int(p)), -1) for g, p in zip(mg, mp)], dtype=np.int64)
    todo = np.flatnonzero(reuse < 0)
    values = {}
    g_sets = [[gt_rings[i]] for i in mg[todo]]
    p_sets = [[pred_rings[i]] for i in mp[todo]]
    fresh = {
        "polis": polis(g_sets, p_sets, params.polis_vertex_sets),
        "hd95": hd95(g_sets, p_sets, params.sample_spacing_px),
        "mta": max_tangent_angle(p_sets, g_sets, region_precision(pred_regions[mp[todo]], gt_regions[mg[todo]]),
                                 spacing_px=params.sample_spacing_px, min_precision=params.mta_min_precision,
                                 max_stretch=params.mta_max_stretch,
                                 precision_inclusive=params.mta_precision_inclusive),
    }
    for name, computed in fresh.items():
        merged = np.full(len(mg), np.nan)
        merged[todo] = computed
        if len(todo) < len(mg):
            merged[reuse >= 0] = known_values[name][reuse[reuse >= 0]]
        values[name] = merged
    counts = None
    if corners:
        counts = corner_counts(gt_rings, pred_rings, mg, mp, params.corner_simplify_px, params.corner_thresholds_px)
    return RoleMatches(np.asarray(gt_image, dtype=np.int64)[mg], np.array(matched_biou, dtype=float),
                       values["polis"], values["hd95"], values["mta"], len(gt_rings), len(pred_rings), counts)


def _role_summary(role, params):
    """The reference's metrics object of one role from its ring matches."""
    matched = len(role.biou)
    result = {
        **prf_summary(matched, role.pred_rings - matched, role.gt_rings - matched),
        "aggregation": "direct_ring_matching_by_image",
        "boundary_iou": nanmean(role.biou),
        "polis": nanmean(role.polis),
        "hd95": nanmean(role.hd95),
        "mta": nanmean(role.mta),
    }
    if role.corner_counts is not None:
        result["corner_f1"] = {_threshold_key(t): prf_summary(*role.corner_counts[k])
                               for k, t in enumerate(params.corner_thresholds_px)}
    return result


def _pooled_similarity(gt_bands, pred_bands, gt_image, pred_image, lookup, known_biou):
    """Per image, the dense BIoU matrix of all its GT rings against all its predicted rings.

    Only bands of the same image whose envelopes overlap are computed (others are exactly
    0); pairs in ``lookup`` take their known BIoU.
    """
    matrices = {}
    if len(gt_bands) == 0 or len(pred_bands) == 0:
        return matrices
    left, right = same_image_pairs(gt_bands, gt_image, pred_bands, pred_image)
    values = np.zeros(len(left))
    known = np.array([lookup.get((int(g), int(p)), -1) for g, p in zip(left, right)], dtype=np.int64)
    if known_biou is not None and (known >= 0).any():
        values[known >= 0] = known_biou[known[known >= 0]]
    todo = np.flatnonzero(known < 0)
    values[todo] = band_iou(gt_bands[left[todo]], pred_bands[right[todo]])
    pair_image = gt_image[left]
    order = np.argsort(pair_image, kind="stable")
    images = np.intersect1d(gt_image, pred_image)
    lo, hi = np.searchsorted(pair_image[order], images), np.searchsorted(pair_image[order], images, "right")
    for image, start, stop in zip(images, lo, hi):
        g = np.flatnonzero(gt_image == image)
        p = np.flatnonzero(pred_image == image)
        matrix = np.zeros((len(g), len(p)))
        sel = order[start:stop]
        matrix[np.searchsorted(g, left[sel]), np.searchsorted(p, right[sel])] = values[sel]
        matrices[image] = (g, p, matrix)
    return matrices


def _threshold_key(value):
    return str(int(value)) if float(value).is_integer() else str(value)
