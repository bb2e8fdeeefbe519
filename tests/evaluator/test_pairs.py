"""Hole matching and hole-scope metrics of matched pairs (``evaluator/metrics/pairs.py``), through :func:`evaluate`."""

import pytest

from polytopo.evaluator import evaluate


def test_two_holes_listed_in_swapped_order_still_match(square, make_set):
    left, right = square(3, 5, 4), square(12, 5, 4)
    gt = make_set([(square(0, 0, 20), [left, right])])
    pred = make_set([(square(0, 0, 20), [right, left])])
    m = evaluate(gt, pred, bootstrap_resamples=0).summary["metrics"]
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
    paper = evaluate(gt, pred, bootstrap_resamples=0)
    m = paper.summary["metrics"]
    assert m["H-BIoU"] == pytest.approx(20 / 76)
    assert m["H-POLIS"] == pytest.approx(1.5)
    assert paper.records["predictions"][0]["iou"] == pytest.approx(346 / 382)
    assert m["Hole-F1"] == 1.0 and m["Topo-EM"] == 1.0
    strict = evaluate(gt, pred, bootstrap_resamples=0, profile="reference-code").summary["metrics"]
    assert (strict["Hole-TP"], strict["Hole-FP"], strict["Hole-FN"]) == (0, 1, 1)
    assert strict["Hole-F1"] == 0.0 and strict["Topo-EM"] == 0.0
