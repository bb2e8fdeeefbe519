"""The paper profile on hand-made polygons whose metrics are computed by hand below."""

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


def test_two_holes_listed_in_swapped_order_still_match(square, make_set):
    left, right = square(3, 5, 4), square(12, 5, 4)
    gt = make_set([(square(0, 0, 20), [left, right])])
    pred = make_set([(square(0, 0, 20), [right, left])])
    m = _metrics(gt, pred).summary["metrics"]
    assert (m["Hole-TP"], m["Hole-FP"], m["Hole-FN"]) == (1 + 1, 0, 0)
    assert m["Hole-F1"] == 1.0 and m["Topo-EM"] == 1.0


def test_hole_shifted_by_three_pixels(square, make_set):
    """6x6 hole moved 3 px right: bands (r = 1) are 8x8 minus 4x4 squares = 48 px² each.

    Their intersection is 40 - (12 + 12 - 4) = 20 px², union 76 px²: per-hole BIoU 20/76,
    above the paper's γ = 0.1 but below the reference code's 0.5. Instance IoU: regions of
    364 px², intersection 400 - 54 = 346, union 400 - 18 = 382. Hole POLIS: two vertices of
    each hole lie 3 px from the other ring and two on it, so 1.5 px.
    """
    gt = make_set([(square(0, 0, 20), [square(7, 7, 6)])])
    pred = make_set([(square(0, 0, 20), [square(10, 7, 6)])])
    paper = _metrics(gt, pred)
    m = paper.summary["metrics"]
    assert m["H-BIoU"] == pytest.approx(20 / 76)
    assert m["H-POLIS"] == pytest.approx(1.5)
    assert paper.records["predictions"][0]["iou"] == pytest.approx(346 / 382)
    assert m["Hole-F1"] == 1.0 and m["Topo-EM"] == 1.0
    strict = _metrics(gt, pred, profile="reference-code").summary["metrics"]
    assert (strict["Hole-TP"], strict["Hole-FP"], strict["Hole-FN"]) == (0, 1, 1)
    assert strict["Hole-F1"] == 0.0 and strict["Topo-EM"] == 0.0


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


def test_hole_touching_the_exterior_at_a_point_is_valid(square, make_set):
    touching = np.array([[0, 10], [5, 5], [5, 15]], dtype=float)
    polygon = (square(0, 0, 20), [touching])
    result = _metrics(make_set([polygon]), make_set([polygon]))
    assert result.records["predictions"][0]["valid"] is True
    assert result.summary["metrics"]["Topo-EM"] == 1.0 and result.summary["metrics"]["Hole-F1"] == 1.0


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


def test_greedy_matching_goes_by_score(square, make_set):
    gt = make_set([(square(0, 0, 10), [])])
    pred = make_set([(square(0, 0, 10), []), (square(1, 0, 10), [])], scores=[0.4, 0.9])
    result = _metrics(gt, pred)
    records = result.records["predictions"]
    assert records[1]["matched_ref_id"] == 0 and records[0]["matched_ref_id"] is None
    assert result.summary["metrics"]["AP50"] == pytest.approx(1.0)


def test_one_image_has_no_bootstrap_interval(square, make_set):
    """Resampling one image always gives the evaluation itself: the interval is undefined, not [x, x]."""
    from polytopo.evaluator.report import format_table

    polygons = [(square(0, 0, 20), []), (square(40, 0, 20), [])]
    one = evaluate(make_set(polygons), make_set(polygons[:1]), bootstrap_resamples=20).summary
    assert one["bootstrap"]["undefined"] == "1 image(s): an image-level bootstrap needs at least two images"
    assert all(math.isnan(one["bootstrap"][name]["low"]) for name in ("AP50", "Hole-F1", "Topo-EM"))
    assert "   [undefined]" in format_table(one) and "no bootstrap interval: 1 image(s)" in format_table(one)
    two = evaluate(make_set(polygons, image_ids=[0, 1]), make_set(polygons[:1], image_ids=[0]),
                   bootstrap_resamples=20).summary
    assert two["bootstrap"]["undefined"] is None
    assert two["bootstrap"]["AP50"]["low"] <= two["bootstrap"]["AP50"]["high"]
