"""The paper profile (``evaluator/profiles/paper.py``) on hand-made polygons whose metrics are computed by hand below."""

import math

import numpy as np
import pytest

from polytopo.evaluator import evaluate


def _metrics(gt, pred, **overrides):
    return evaluate(gt, pred, bootstrap_resamples=0, **overrides)


def test_square_with_one_hole_against_itself(square, make_set):
    polygon = (square(0, 0, 20), [square(7, 7, 6)])
    result = _metrics(make_set([polygon]), make_set([polygon]))
    m = result.summary["metrics"]
    assert m["AP50"] == pytest.approx(1.0)
    assert (m["Hole-F1"], m["Topo-EM"], m["O-BIoU"], m["H-BIoU"]) == (1.0, 1.0, 1.0, 1.0)
    assert m["O-POLIS"] == 0.0 and m["H-POLIS"] == 0.0
    assert result.records["predictions"][0]["error_class"] == "ok"


def test_bow_tie_prediction_matches_but_fails_topology(square, make_set):
    """A bow-tie over a 20x20 square covers two triangles of 100 px²: IoU 200/400 = 0.5 = β."""
    gt = make_set([(square(0, 0, 20), [])])
    bowtie = np.array([[0, 0], [20, 20], [20, 0], [0, 20]], dtype=float)
    result = _metrics(gt, make_set([(bowtie, [])]))
    record = result.records["predictions"][0]
    assert record["iou"] == pytest.approx(0.5)
    assert record["valid"] is False and "exterior not simple" in record["invalid_reason"]
    assert record["error_class"] == "invalid" and record["topo_em"] == 0
    assert result.summary["metrics"]["AP50"] == pytest.approx(1.0)
    assert result.summary["metrics"]["Topo-EM"] == 0.0


def test_empty_prediction_set(square, make_set):
    gt = make_set([(square(0, 0, 20), [square(5, 5, 4)]), (square(40, 0, 10), [])])
    pred = make_set([])
    m = _metrics(gt, pred).summary["metrics"]
    assert m["AP50"] == 0.0 and m["AR"] == 0.0
    assert (m["Hole-TP"], m["Hole-FP"], m["Hole-FN"]) == (0, 0, 1) and m["Hole-F1"] == 0.0
    assert m["Topo-EM"] == 0.0
    assert math.isnan(m["E-BIoU"]) and math.isnan(m["H-BIoU"])


def test_missing_and_extra_holes_count_across_unmatched_instances(square, make_set):
    gt = make_set([(square(0, 0, 20), [square(5, 5, 4), square(12, 12, 4)]), (square(60, 0, 20), [square(65, 5, 5)])])
    pred = make_set([(square(0, 0, 20), [square(5, 5, 4)]), (square(100, 0, 10), [square(102, 2, 3)])])
    result = _metrics(gt, pred)
    m = result.summary["metrics"]
    # TP 1; FN: 1 missed in the matched pair + 1 of the unmatched GT; FP: 1 in the unmatched prediction.
    assert (m["Hole-TP"], m["Hole-FP"], m["Hole-FN"]) == (1, 1, 2)
    assert m["Hole-F1"] == pytest.approx(2 / (2 + 1 + 2))
    assert m["Topo-EM"] == pytest.approx(0 / 3)
    classes = [r["error_class"] for r in result.records["predictions"]]
    assert classes == ["missing hole", "unmatched"]
    assert [r["error_class"] for r in result.records["references"]] == ["missing hole", "missed"]
    assert len(result.records["missed_holes"]) == 2 and len(result.records["hallucinated_holes"]) == 1
