"""Instance matching (``evaluator/matching.py``): Definition 3's greedy match by score, through :func:`evaluate`."""

import pytest

from polytopo.evaluator import evaluate


def test_greedy_matching_goes_by_score(square, make_set):
    gt = make_set([(square(0, 0, 10), [])])
    pred = make_set([(square(0, 0, 10), []), (square(1, 0, 10), [])], scores=[0.4, 0.9])
    result = evaluate(gt, pred, bootstrap_resamples=0)
    records = result.records["predictions"]
    assert records[1]["matched_ref_id"] == 0 and records[0]["matched_ref_id"] is None
    assert result.summary["metrics"]["AP50"] == pytest.approx(1.0)
