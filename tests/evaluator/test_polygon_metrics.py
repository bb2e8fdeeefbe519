"""The per-polygon metric functions equal the evaluator's per-feature records of the same pairs."""

import math
import random

import pytest
import shapely

from polytopo.evaluator import (
    InvalidParameterError,
    boundary_iou,
    evaluate,
    hole_f1,
    load_coco_ground_truth,
    load_coco_predictions,
    mta,
    polis,
    topo_em,
)


@pytest.fixture(scope="module")
def matched_pairs(fixtures_dir):
    """Twenty random matched (prediction record, reference geometry) pairs of the ptb_small fixtures."""
    folder = fixtures_dir / "ptb_small"
    gt_set, pred_set = load_coco_ground_truth(folder / "gt.json"), load_coco_predictions(folder / "pred.json")
    records = evaluate(gt_set, pred_set, profile="paper").records
    refs = {(r["image_id"], r["ref_id"], r["part"]): r["geometry"] for r in records["references"]}
    matched = [r for r in records["predictions"] if r["matched_ref_id"] is not None]
    holed = [r for r in matched if r["pred_holes"] or r["ref_holes"]]
    sample = random.Random(9).sample(matched, 12) + random.Random(9).sample(holed, 8)
    # a matched prediction's reference is the only reference record with its id in that image
    return [(r, next(g for (image, ref_id, _), g in refs.items()
                     if image == r["image_id"] and ref_id == r["matched_ref_id"])) for r in sample]


def _same(value, expected):
    if expected is None:
        return math.isnan(value)
    return value == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_functions_equal_the_evaluator_records(matched_pairs):
    assert sum(1 for r, _ in matched_pairs if r["pred_holes"] and r["ref_holes"]) >= 3
    for record, ref in matched_pairs:
        pred = record["geometry"]
        assert _same(boundary_iou(pred, ref), record["o_biou"])
        assert _same(boundary_iou(pred, ref, scope="exterior"), record["e_biou"])
        assert _same(polis(pred, ref), record["o_polis"])
        assert _same(polis(pred, ref, scope="exterior"), record["e_polis"])
        assert _same(mta(pred, ref), record["o_mta"])
        assert _same(mta(pred, ref, scope="exterior"), record["e_mta"])
        assert _same(hole_f1(pred, ref), record["hole_f1"])
        assert topo_em(pred, ref) == record["topo_em"]


def test_wider_band_is_a_parameter():
    ref = shapely.Polygon([(0, 0), (40, 0), (40, 40), (0, 40)], [[(10, 10), (20, 10), (20, 20), (10, 20)]])
    pred = shapely.affinity.translate(ref, 2, 0)
    assert boundary_iou(pred, ref, radius_px=1) < boundary_iou(pred, ref, radius_px=4) < 1.0


@pytest.mark.parametrize("bad", [shapely.MultiPolygon(), shapely.Point(0, 0), "POLYGON ((0 0, 1 0, 1 1, 0 0))"])
def test_non_polygons_are_refused_with_a_clear_message(bad):
    ref = shapely.box(0, 0, 10, 10)
    with pytest.raises(InvalidParameterError, match="Expected pred to be a non-empty shapely Polygon"):
        topo_em(bad, ref)


def test_unknown_scope_is_refused():
    with pytest.raises(InvalidParameterError, match="Expected scope to be 'overall' or 'exterior'"):
        polis(shapely.box(0, 0, 10, 10), shapely.box(0, 0, 10, 10), scope="holes")
