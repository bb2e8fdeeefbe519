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

from ..geometry.construct import ring_polygons
from ..tables.error_classes import (
    MATCHED_OK,
    MISSED_REFERENCE,
    PAIR_FAILURES,
    PREDICTION_CLASSES,
    REFERENCE_CLASSES,
    UNMATCHED_PREDICTION,
)
from ..tables.metric_table import FEATURE_FIELDS
from ..tables.pair_rules import pair_hole_counts, valid_flags
from ..metrics.stats import f1_scores

__all__ = ["FIELD_KINDS", "PREDICTION_CLASSES", "REFERENCE_CLASSES", "build_records", "pair_error_classes"]


FIELD_KINDS = {
    **{field: row.field_kind for field, row in FEATURE_FIELDS.items()},
    **{name: "float" for name in ("score", "area_px2")},
    **{name: "int" for name in ("pred_holes", "ref_holes", "hole_tp", "hole_fp", "hole_fn", "part", "hole_index")},
    "valid": "bool", "invalid_reason": "str", "error_class": "str",
}
"""Type of each numeric record field, for writers when every value of a field is None (metric fields from
:data:`.metric_table.FEATURE_FIELDS`)."""


_PREDICTION_FIELDS = ("image_id", "pred_id", "part", "score", "category_id", "matched_ref_id", "iou", "valid",
                      "invalid_reason", "pred_holes", "ref_holes", "hole_tp", "hole_fp", "hole_fn", "hole_f1",
                      "topo_em", "o_biou", "e_biou", "o_polis", "e_polis", "o_mta", "e_mta", "error_class",
                      "geometry")
_REFERENCE_FIELDS = ("image_id", "ref_id", "part", "category_id", "matched_pred_id", "iou", "ref_holes",
                     "pred_holes", "topo_em", "error_class", "geometry")


def pair_error_classes(valid, exterior_ok, hole_fp, hole_fn):
    """The :data:`PREDICTION_CLASSES` name of each matched pair, the first that applies.

    Parameters
    ----------
    valid, exterior_ok : numpy.ndarray of bool
        Per pair: the prediction counts as valid, its exterior matched at γ.
    hole_fp, hole_fn : numpy.ndarray of int
        Per pair: unmatched predicted and reference holes.

    Returns
    -------
    numpy.ndarray of str
        ``invalid``, ``exterior mismatch``, ``misplaced hole``, ``missing hole``,
        ``extra hole`` or ``ok``.

    Examples
    --------
    >>> pair_error_classes(np.array([True, False]), np.array([True, True]), np.array([1, 0]),
    ...               np.array([1, 0])).tolist()
    ['misplaced hole', 'invalid']
    """
    fp, fn = np.asarray(hole_fp) > 0, np.asarray(hole_fn) > 0
    conditions = [~np.asarray(valid, dtype=bool), ~np.asarray(exterior_ok, dtype=bool), fn & fp, fn, fp]
    return np.select(conditions, list(PAIR_FAILURES), MATCHED_OK).astype(object)


def _column(default, size, index, values):
    """A list of ``size`` entries: ``default`` (one value, or a list of ``size``) except at ``index``, ``values``."""
    column = np.empty(size, dtype=object)
    column[:] = default
    column[index] = values
    return column.tolist()


def _values(array):
    """Python floats of ``array``, None where NaN."""
    array = np.asarray(array, dtype=float)
    values = np.empty(len(array), dtype=object)
    values[:] = array.tolist()
    values[np.isnan(array)] = None
    return values


def _rows(fields, columns):
    return [dict(zip(fields, row)) for row in zip(*columns)]


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

    Notes
    -----
    Built column by column from the pair arrays and the ring tables (whose polygons are
    the records' geometries), then zipped into one dict per feature.
    """
    gt, pred, pairs = outcome.gt, outcome.pred, outcome.pairs
    n_gt, n_pred = len(gt), len(pred)
    gi, pi = np.asarray(pairs.gt_index, dtype=np.int64), np.asarray(pairs.pred_index, dtype=np.int64)
    gt_holes = np.diff(outcome.gt_table.hole_start)
    pred_holes = np.diff(outcome.pred_table.hole_start)
    pair_gt_holes, pair_pred_holes = pair_hole_counts(pairs, outcome.gt_table, outcome.pred_table)
    tp = np.asarray(pairs.hole_tp, dtype=np.int64)
    fp, fn = pair_pred_holes - tp, pair_gt_holes - tp
    f1 = _values(f1_scores(tp, fp, fn))
    reasons = outcome.pred_reasons
    valid = valid_flags(reasons)
    pair_valid = valid_flags(reasons, outcome.params.check_validity)[pi]
    classes = pair_error_classes(pair_valid, np.asarray(outcome.exterior_matched, dtype=bool), fp, fn)
    pred_class = _column(UNMATCHED_PREDICTION, n_pred, pi, classes)
    topo = np.asarray(outcome.topo).astype(np.int64).tolist()
    iou = np.asarray(pairs.iou, dtype=float).tolist()
    gt_ids = [instance.source_id for instance in gt]
    pred_ids = [instance.source_id for instance in pred]
    pred_columns = [
        [i.image_id for i in pred], pred_ids, [i.part for i in pred], [i.score for i in pred],
        [i.category_id for i in pred],
        _column(None, n_pred, pi, [gt_ids[g] for g in gi.tolist()]), _column(None, n_pred, pi, iou),
        valid.tolist(), [reason or None for reason in reasons], pred_holes.tolist(),
        _column(None, n_pred, pi, pair_gt_holes.tolist()), _column(0, n_pred, pi, tp.tolist()),
        _column(pred_holes.tolist(), n_pred, pi, fp.tolist()),
        _column(None, n_pred, pi, fn.tolist()), _column(None, n_pred, pi, f1), _column(0, n_pred, pi, topo),
        *(_column(None, n_pred, pi, _values(getattr(pairs, name)))
          for name in ("o_biou", "e_biou", "o_polis", "e_polis", "o_mta", "e_mta")),
        pred_class, list(outcome.pred_table.polygons),
    ]
    gt_columns = [
        [i.image_id for i in gt], gt_ids, [i.part for i in gt], [i.category_id for i in gt],
        _column(None, n_gt, gi, [pred_ids[p] for p in pi.tolist()]), _column(None, n_gt, gi, iou),
        gt_holes.tolist(), _column(None, n_gt, gi, pair_pred_holes.tolist()), _column(0, n_gt, gi, topo),
        _column(MISSED_REFERENCE, n_gt, gi, classes), list(outcome.gt_table.polygons),
    ]
    return {
        "predictions": _rows(_PREDICTION_FIELDS, pred_columns),
        "references": _rows(_REFERENCE_FIELDS, gt_columns),
        "missed_holes": _hole_records(outcome.gt_table, gt, pairs.holes.gt_hole, "ref_id"),
        "hallucinated_holes": _hole_records(outcome.pred_table, pred, pairs.holes.pred_hole, "pred_id"),
    }


def _hole_records(table, instances, matched, id_field):
    unmatched = np.setdiff1d(np.arange(len(table.holes)), np.asarray(matched, dtype=np.int64))
    owner = table.hole_owner[unmatched]
    polygons = ring_polygons([table.holes[h] for h in unmatched.tolist()])
    owners = [instances[o] for o in owner.tolist()]
    columns = [[i.image_id for i in owners], [i.source_id for i in owners], [i.part for i in owners],
               (unmatched - table.hole_start[owner]).tolist(), np.abs(shapely.area(polygons)).tolist(),
               list(polygons)]
    return _rows(("image_id", id_field, "part", "hole_index", "area_px2", "geometry"), columns)
