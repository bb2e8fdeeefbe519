"""Per-feature records of predictions and references, and the hole error records.

Every record is a plain dict whose ``"geometry"`` is a shapely geometry in pixels.

Prediction fields: ``image_id``, ``pred_id`` (source id), ``part``, ``score``,
``category_id``, ``matched_ref_id``, ``iou``, ``valid`` (Definition 15), ``invalid_reason``,
``pred_holes``, ``ref_holes``, ``hole_tp``, ``hole_fp``, ``hole_fn``, ``hole_f1``,
``topo_em`` (0/1), ``o_biou``, ``e_biou``, ``o_polis``, ``e_polis`` (px), ``o_mta``,
``e_mta`` (degrees) and ``error_class``, one of :data:`PREDICTION_CLASSES` checked in this
order: ``unmatched`` (no reference matched at β), ``invalid`` (Definition 15),
``exterior mismatch`` (exterior BIoU does not pass γ), ``misplaced hole`` (some reference
hole and some predicted hole are unmatched), ``missing hole`` (only reference holes are
unmatched), ``extra hole`` (only predicted holes are unmatched), ``ok``.

Reference fields: ``image_id``, ``ref_id``, ``part``, ``category_id``, ``matched_pred_id``,
``iou``, ``ref_holes``, ``pred_holes``, ``topo_em`` and ``error_class``: ``missed`` when no
prediction matched it, else its prediction's class.

Missing values are None (unmatched features have no IoU); ``hole_f1`` is None when neither
side has a hole.
"""

import numpy as np
import shapely

from .error_classes import PREDICTION_CLASSES, REFERENCE_CLASSES
from .metric_table import FEATURE_FIELDS
from .stats import f1_score

__all__ = ["FIELD_KINDS", "PREDICTION_CLASSES", "REFERENCE_CLASSES", "build_records"]


FIELD_KINDS = {
    **{field: row.field_kind for field, row in FEATURE_FIELDS.items()},
    **{name: "float" for name in ("score", "area_px2")},
    **{name: "int" for name in ("pred_holes", "ref_holes", "hole_tp", "hole_fp", "hole_fn", "part", "hole_index")},
    "valid": "bool", "invalid_reason": "str", "error_class": "str",
}
"""Type of each numeric record field, for writers when every value of a field is None (metric fields from
:data:`.metric_table.FEATURE_FIELDS`)."""


def _value(array, index):
    value = float(array[index])
    return None if np.isnan(value) else value


def _error_class(valid, exterior_ok, tp, fp, fn):
    if not valid:
        return "invalid"
    if not exterior_ok:
        return "exterior mismatch"
    if fn and fp:
        return "misplaced hole"
    if fn:
        return "missing hole"
    if fp:
        return "extra hole"
    return "ok"


def _hole_polygon(ring):
    return shapely.Polygon(ring)


def build_records(outcome):
    """Records of one evaluation.

    Parameters
    ----------
    outcome : Outcome

    Returns
    -------
    dict
        ``predictions``, ``references``, ``missed_holes`` and ``hallucinated_holes``: lists of
        records (hole records carry ``image_id``, the owner's ``pred_id``/``ref_id``,
        ``hole_index`` and ``area_px2``).
    """
    gt, pred, pairs = outcome.gt, outcome.pred, outcome.pairs
    pair_of_pred = {int(p): k for k, p in enumerate(pairs.pred_index)}
    pair_of_gt = {int(g): k for k, g in enumerate(pairs.gt_index)}
    pred_records, gt_records = [], []
    for index, instance in enumerate(pred):
        reason = outcome.pred_reasons[index]
        record = {
            "image_id": instance.image_id, "pred_id": instance.source_id, "part": instance.part,
            "score": instance.score, "category_id": instance.category_id,
            "matched_ref_id": None, "iou": None, "valid": reason == "", "invalid_reason": reason or None,
            "pred_holes": instance.hole_count, "ref_holes": None,
            "hole_tp": 0, "hole_fp": instance.hole_count, "hole_fn": None, "hole_f1": None, "topo_em": 0,
            "o_biou": None, "e_biou": None, "o_polis": None, "e_polis": None, "o_mta": None, "e_mta": None,
            "error_class": "unmatched", "geometry": instance.polygon(),
        }
        k = pair_of_pred.get(index)
        if k is not None:
            ref = gt[int(pairs.gt_index[k])]
            tp = int(pairs.hole_tp[k])
            fp, fn = instance.hole_count - tp, ref.hole_count - tp
            valid = reason == "" or not outcome.params.check_validity
            record.update(
                matched_ref_id=ref.source_id, iou=float(pairs.iou[k]), ref_holes=ref.hole_count,
                hole_tp=tp, hole_fp=fp, hole_fn=fn,
                hole_f1=f1_score(tp, fp, fn) if (tp + fp + fn) else None,
                topo_em=int(outcome.topo[k]),
                o_biou=_value(pairs.o_biou, k), e_biou=_value(pairs.e_biou, k),
                o_polis=_value(pairs.o_polis, k), e_polis=_value(pairs.e_polis, k),
                o_mta=_value(pairs.o_mta, k), e_mta=_value(pairs.e_mta, k),
                error_class=_error_class(valid, bool(outcome.exterior_matched[k]), tp, fp, fn),
            )
        pred_records.append(record)
    for index, instance in enumerate(gt):
        record = {
            "image_id": instance.image_id, "ref_id": instance.source_id, "part": instance.part,
            "category_id": instance.category_id, "matched_pred_id": None, "iou": None,
            "ref_holes": instance.hole_count, "pred_holes": None, "topo_em": 0, "error_class": "missed",
            "geometry": instance.polygon(),
        }
        k = pair_of_gt.get(index)
        if k is not None:
            p = int(pairs.pred_index[k])
            record.update(matched_pred_id=pred[p].source_id, iou=float(pairs.iou[k]),
                          pred_holes=pred[p].hole_count, topo_em=int(outcome.topo[k]),
                          error_class=pred_records[p]["error_class"])
        gt_records.append(record)
    return {
        "predictions": pred_records,
        "references": gt_records,
        "missed_holes": _hole_records(outcome.gt_table, gt, set(pairs.holes.gt_hole.tolist()), "ref_id"),
        "hallucinated_holes": _hole_records(outcome.pred_table, pred, set(pairs.holes.pred_hole.tolist()),
                                            "pred_id"),
    }


def _hole_records(table, instances, matched, id_field):
    records = []
    for hole, owner in enumerate(table.hole_owner):
        if hole in matched:
            continue
        instance = instances[int(owner)]
        polygon = _hole_polygon(table.holes[hole])
        records.append({
            "image_id": instance.image_id, id_field: instance.source_id, "part": instance.part,
            "hole_index": int(hole - table.hole_start[owner]), "area_px2": float(abs(polygon.area)),
            "geometry": polygon,
        })
    return records
