"""Instance matching (``evaluator/metrics/matching.py``): Definition 3's greedy match by score, through :func:`evaluate`."""

import numpy as np
import pytest

from polytopo.evaluator import evaluate
from polytopo.evaluator.metrics.matching import greedy_match


def test_greedy_matching_goes_by_score(square, make_set):
    gt = make_set([(square(0, 0, 10), [])])
    pred = make_set([(square(0, 0, 10), []), (square(1, 0, 10), [])], scores=[0.4, 0.9])
    result = evaluate(gt, pred, bootstrap_resamples=0)
    records = result.records["predictions"]
    assert records[1]["matched_ref_id"] == 0 and records[0]["matched_ref_id"] is None
    assert result.summary["metrics"]["AP50"] == pytest.approx(1.0)


def _greedy_by_definition(order, gt_index, pred_index, iou, threshold, n_gt, n_pred):
    """Definition 3 written out: each prediction in turn takes its best-IoU free GT (ties: lower GT)."""
    matched, taken = [-1] * n_pred, set()
    for p in order:
        options = sorted((-iou[k], gt_index[k]) for k in range(len(iou))
                         if pred_index[k] == p and iou[k] >= threshold and gt_index[k] not in taken)
        if options:
            matched[p] = options[0][1]
            taken.add(options[0][1])
    return matched


@pytest.mark.parametrize("seed", range(6))
def test_greedy_matching_equals_the_definition_on_random_candidates(seed):
    """Random candidate sets with IoU ties, predictions without candidates and crowded GTs:
    the matching is the one Definition 3 gives, at every threshold."""
    rng = np.random.default_rng(seed)
    n_gt, n_pred = int(rng.integers(1, 40)), int(rng.integers(1, 60))
    pairs = {(int(g), int(p)) for g, p in zip(rng.integers(0, n_gt, 150), rng.integers(0, n_pred, 150))}
    gt_index = np.array([g for g, _ in sorted(pairs)], dtype=np.int64)
    pred_index = np.array([p for _, p in sorted(pairs)], dtype=np.int64)
    iou = rng.choice([0.3, 0.5, 0.55, 0.7, 0.9], size=len(pairs))  # repeated values: ties
    order = rng.permutation(n_pred)
    for threshold in (0.5, 0.6, 0.95):
        found = greedy_match(order, gt_index, pred_index, iou, threshold, n_gt, n_pred)
        assert found.tolist() == _greedy_by_definition(order, gt_index, pred_index, iou, threshold, n_gt, n_pred)
