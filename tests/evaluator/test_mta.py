"""Maximum tangent angle (``evaluator/geometry/mta.py``): the precision filter, on its own and in the paper profile."""

import numpy as np
from ring_literals import box

from polytopo.evaluator import evaluate
from polytopo.evaluator.geometry.mta import max_tangent_angle


def test_mta_precision_filter_is_strict_in_the_paper_profile():
    """A pair with precision exactly 0.5 is left out (> 0.5), unless the filter is inclusive."""
    square = box(0, 0, 10, 10)
    strict = max_tangent_angle([[square]], [[square]], np.array([0.5]), precision_inclusive=False)
    inclusive = max_tangent_angle([[square]], [[square]], np.array([0.5]), precision_inclusive=True)
    assert np.isnan(strict[0]) and inclusive[0] == 0.0


def test_paper_profile_leaves_out_a_pair_at_precision_one_half(make_set):
    """Prediction 20 x 10 over a 10 x 10 GT: IoU 0.5 (a match), precision 0.5: paper MTA NaN."""
    gt = make_set([(box(0, 0, 10, 10), [])])
    pred = make_set([(box(0, 0, 20, 10), [])])
    m = evaluate(gt, pred, bootstrap_resamples=0).summary["metrics"]
    assert m["matched_pairs"] == 1 and np.isnan(m["E-MTA"])
