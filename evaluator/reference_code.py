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

import numpy as np
import shapely

from .average_precision import interpolated_ap
from .boundary import hd95, pairwise_band_iou, polis
from .corners import match_corners, ring_corners
from .filters import apply_score_threshold, hole_area_px2
from .instances import Instance
from .matching import hungarian_match, iou_candidates
from .mta import max_tangent_angle
from .pairs import evaluate_pairs
from .repair import largest_polygon, largest_polygons
from .rings import RingTable

__all__ = ["normalize_like_reference", "evaluate_reference_code", "image_grouped_order"]


def _from_polygon(instance, polygon):
    exterior = shapely.get_coordinates(polygon.exterior)[:-1]
    holes = tuple(shapely.get_coordinates(ring)[:-1] for ring in polygon.interiors)
    return Instance(instance.image_id, instance.source_id, exterior, holes, instance.score,
                    instance.category_id, instance.part)


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
    dropped : int
        Instances whose polygon repaired to nothing.
    """
    raw = [instance.polygon() for instance in instance_set.instances]
    repaired = largest_polygons(raw)
    instances, regions = [], []
    for instance, polygon in zip(instance_set.instances, repaired):
        if polygon is not None:
            instances.append(_from_polygon(instance, polygon))
            regions.append(polygon)
    dropped = len(instance_set) - len(instances)
    before = sum(instance.hole_count for instance in instances)
    counts = {"min_hole_area": float(min_hole_area_px2), "holes_before": before, "holes_after": before,
              "holes_removed": 0, "buildings_changed": 0}
    if min_hole_area_px2 > 0:
        filtered, filtered_regions, changed = [], [], 0
        for instance, region in zip(instances, regions):
            kept = [hole for hole in instance.holes if hole_area_px2(hole) >= min_hole_area_px2]
            if len(kept) != instance.hole_count:
                changed += 1
                region = largest_polygon(shapely.Polygon(_closed(instance.exterior), [_closed(h) for h in kept]))
                if region is None:
                    region = largest_polygon(shapely.Polygon(_closed(instance.exterior)))
                if region is None:
                    continue
                instance = _from_polygon(instance, region)
            filtered.append(instance)
            filtered_regions.append(region)
        instances, regions = filtered, filtered_regions
        after = sum(instance.hole_count for instance in instances)
        counts.update(holes_after=after, holes_removed=before - after, buildings_changed=changed)
    return instances, np.array(regions, dtype=object), counts, dropped


def _closed(ring):
    return np.vstack([ring, ring[:1]])


def image_grouped_order(instances):
    """Instance indices grouped by image (in order of first appearance), then source order."""
    first_seen = {}
    for instance in instances:
        first_seen.setdefault(instance.image_id, len(first_seen))
    keys = np.array([first_seen[instance.image_id] for instance in instances], dtype=np.int64)
    return np.argsort(keys, kind="stable")


def _image_codes(gt, pred):
    codes = {}
    for instance in (*gt, *pred):
        codes.setdefault(instance.image_id, len(codes))
    return (np.array([codes[i.image_id] for i in gt], dtype=np.int64),
            np.array([codes[i.image_id] for i in pred], dtype=np.int64))


def _summary(tp, fp, fn):
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"tp": int(tp), "fp": int(fp), "fn": int(fn), "precision": float(precision),
            "recall": float(recall), "f1": float(f1)}


def _nanmean(values):
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def _ap_by_threshold(gt_image, pred_scores, cand, thresholds, n_gt, n_pred):
    """AP per threshold with the reference's argmax-GT rule (no fallback)."""
    gt_index, pred_index, iou = cand
    best_gt = np.full(n_pred, -1, dtype=np.int64)
    best_iou = np.zeros(n_pred)
    if iou.size:
        # Highest IoU per prediction; ties go to the earliest GT of the image.
        order = np.lexsort((gt_index, -iou, pred_index))
        first = np.unique(pred_index[order], return_index=True)[1]
        chosen = order[first]
        best_gt[pred_index[chosen]] = gt_index[chosen]
        best_iou[pred_index[chosen]] = iou[chosen]
    order = pred_scores
    values = {}
    for threshold in thresholds:
        eligible = order[best_iou[order] >= threshold]
        _, first_claim = np.unique(best_gt[eligible], return_index=True)
        tp = np.zeros(n_pred)
        position = np.full(n_pred, -1, dtype=np.int64)
        position[order] = np.arange(n_pred)
        tp[position[eligible[first_claim]]] = 1.0
        values[f"AP@{threshold:.2f}"] = interpolated_ap(tp, 1.0 - tp, n_gt)
    return values


def evaluate_reference_code(gt_set, pred_set, params, progress=None):
    """Evaluate like the public PolyTopoBench evaluator.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels.
    params : EvaluationParams
        Parameters of the ``reference-code`` profile.
    progress : callable, optional
        Called with a short phase name as each phase starts.

    Returns
    -------
    dict
        ``metrics`` (the reference's metrics object), ``ground_truth`` and ``predictions``
        (loader counts), and the internal ``state`` used for per-feature records.
    """
    step = progress or (lambda name: None)
    step("repair")
    pred_set = apply_score_threshold(pred_set, params.score_threshold)
    gt, gt_regions, gt_holes, gt_dropped = normalize_like_reference(gt_set, params.min_hole_area_px2)
    pred, pred_regions, pred_holes, pred_dropped = normalize_like_reference(pred_set, params.min_hole_area_px2)
    grouped = image_grouped_order(pred)
    pred = [pred[i] for i in grouped]
    pred_regions = pred_regions[grouped] if len(pred) else pred_regions
    gt_image, pred_image = _image_codes(gt, pred)
    n_gt, n_pred = len(gt), len(pred)

    step("instance IoU")
    cand = iou_candidates(gt_regions, pred_regions, gt_image, pred_image)
    score_order = np.argsort(-np.array([p.score for p in pred]), kind="stable")
    ap = _ap_by_threshold(gt_image, score_order, cand, params.ap_iou_thresholds, n_gt, n_pred)
    ap_values = list(ap.values())
    ap["AP"] = float(np.mean(ap_values)) if ap_values else float("nan")
    for name, key in (("AP50", "AP@0.50"), ("AP75", "AP@0.75")):
        if key in ap:
            ap[name] = ap[key]

    step("instance pairs")
    matches = _hungarian_per_image(cand, gt_image, pred_image, params.iou_threshold, inclusive=True)
    pairs_gt, pairs_pred, pairs_iou = matches
    step("ring bands")
    gt_table = RingTable(gt, params.boundary_radius_px)
    pred_table = RingTable(pred, params.boundary_radius_px)
    step("pair metrics")
    pairs = evaluate_pairs(gt_table, pred_table, gt_regions, pred_regions, pairs_gt, pairs_pred, pairs_iou, params)
    gt_h = np.diff(gt_table.hole_start)[pairs_gt]
    pred_h = np.diff(pred_table.hole_start)[pairs_pred]
    topo = (pairs.e_biou >= params.ring_match_threshold) & (gt_h == pred_h) & (pairs.hole_tp == gt_h)
    unmatched = (n_gt - len(pairs_gt)) + (n_pred - len(pairs_pred))
    topo_count = len(pairs_gt) + unmatched

    step("exterior rings")
    exterior = _role_metrics(
        gt_table.exterior_bands, pred_table.exterior_bands, [s[0] for s in gt_table.exterior_sets],
        [s[0] for s in pred_table.exterior_sets], gt_table.exterior_regions, pred_table.exterior_regions,
        gt_image, pred_image, params, corners=True)
    step("hole rings")
    hole = _role_metrics(
        gt_table.hole_bands, pred_table.hole_bands, gt_table.holes, pred_table.holes,
        gt_table.hole_regions, pred_table.hole_regions,
        gt_image[gt_table.hole_owner], pred_image[pred_table.hole_owner], params, corners=False)
    hole["count_mae"] = float(np.mean(np.abs(gt_h - pred_h))) if len(gt_h) else float("nan")
    hole["count_mae_aggregation"] = "matched_building_pairs_only"

    metrics = {
        "poly_ap": ap,
        "meta": {"gt_building_total": n_gt, "pred_building_total": n_pred,
                 "matched_building_pairs": int(len(pairs_gt))},
        "overall": {
            "aggregation": "matched_building_pairs_only",
            "boundary_iou": _nanmean(pairs.o_biou),
            "polis": _nanmean(pairs.o_polis),
            "hd95": _nanmean(pairs.o_hd95),
            "mta": _nanmean(pairs.o_mta),
            "topology_exact_match_rate": float(topo.sum() / topo_count) if topo_count else float("nan"),
        },
        "exterior": exterior,
        "hole": hole,
    }
    state = {"gt": gt, "pred": pred, "gt_regions": gt_regions, "pred_regions": pred_regions,
             "gt_table": gt_table, "pred_table": pred_table, "pairs": pairs, "topo": topo,
             "dropped": {"gt": gt_dropped, "pred": pred_dropped}}
    return {
        "metrics": metrics,
        "ground_truth": {"num_annotations": len(gt_set), "kept": n_gt, "hole_area_filter": gt_holes},
        "predictions": {"num_predictions": len(pred_set), "kept": n_pred, "hole_area_filter": pred_holes},
        "state": state,
    }


def _hungarian_per_image(cand, gt_image, pred_image, threshold, inclusive):
    """Per-image Hungarian assignment on ``1 - IoU`` (dense per image, zeros where disjoint)."""
    gt_index, pred_index, iou = cand
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
        for r, c, value in hungarian_match(matrix, threshold, inclusive):
            out_gt.append(g[r])
            out_pred.append(p[c])
            out_iou.append(value)
    order = np.argsort(out_gt, kind="stable")
    return (np.array(out_gt, dtype=np.int64)[order], np.array(out_pred, dtype=np.int64)[order],
            np.array(out_iou, dtype=float)[order])


def _role_metrics(gt_bands, pred_bands, gt_rings, pred_rings, gt_regions, pred_regions,
                  gt_image, pred_image, params, corners):
    """Rings of one role pooled per image and matched by Hungarian on ``1 - BIoU``."""
    threshold = params.ring_match_threshold
    matched_gt, matched_pred, matched_biou = [], [], []
    gt_rings_idx = np.arange(len(gt_rings))
    pred_rings_idx = np.arange(len(pred_rings))
    for image in np.union1d(gt_image, pred_image):
        g = gt_rings_idx[gt_image == image]
        p = pred_rings_idx[pred_image == image]
        if len(g) == 0 or len(p) == 0:
            continue
        similarity = pairwise_band_iou(gt_bands[g], pred_bands[p])
        for r, c, value in hungarian_match(similarity, threshold, inclusive=True):
            matched_gt.append(g[r])
            matched_pred.append(p[c])
            matched_biou.append(value)
    mg = np.array(matched_gt, dtype=np.int64)
    mp = np.array(matched_pred, dtype=np.int64)
    g_sets = [[gt_rings[i]] for i in mg]
    p_sets = [[pred_rings[i]] for i in mp]
    mta = max_tangent_angle(p_sets, g_sets, pred_regions[mp], gt_regions[mg], spacing_px=params.sample_spacing_px,
                            min_precision=params.mta_min_precision, max_stretch=params.mta_max_stretch)
    result = {
        **_summary(len(mg), len(pred_rings) - len(mg), len(gt_rings) - len(mg)),
        "aggregation": "direct_ring_matching_by_image",
        "boundary_iou": _nanmean(matched_biou),
        "polis": _nanmean(polis(g_sets, p_sets)),
        "hd95": _nanmean(hd95(g_sets, p_sets, params.sample_spacing_px)),
        "mta": _nanmean(mta),
    }
    if corners:
        result["corner_f1"] = _corner_f1(gt_rings, pred_rings, mg, mp, params)
    return result


def _corner_f1(gt_rings, pred_rings, mg, mp, params):
    thresholds = params.corner_thresholds_px
    gt_corners = ring_corners(gt_rings, params.corner_simplify_px)
    pred_corners = ring_corners(pred_rings, params.corner_simplify_px)
    counts = np.zeros((len(thresholds), 3), dtype=np.int64)
    for g, p in zip(mg, mp):
        counts += match_corners(gt_corners[g], pred_corners[p], thresholds)
    unmatched_gt = np.setdiff1d(np.arange(len(gt_rings)), mg)
    unmatched_pred = np.setdiff1d(np.arange(len(pred_rings)), mp)
    counts[:, 2] += sum(len(gt_corners[i]) for i in unmatched_gt)
    counts[:, 1] += sum(len(pred_corners[i]) for i in unmatched_pred)
    return {_threshold_key(t): _summary(*counts[k]) for k, t in enumerate(thresholds)}


def _threshold_key(value):
    return str(int(value)) if float(value).is_integer() else str(value)
