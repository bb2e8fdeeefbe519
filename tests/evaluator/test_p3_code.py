"""The ``p3-code`` profile: one hand-computed case per definition that differs from the ``p3`` profile."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.profiles.p3_code import hausdorff_chamfer_points


def _box(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def _sets(gt, pred, images=(0,)):
    """``gt``: ``(image, exterior, holes)``; ``pred``: ``(image, exterior, holes, score)``."""
    gt_set = InstanceSet(tuple(Instance(i, k, e, tuple(h)) for k, (i, e, h) in enumerate(gt)), tuple(images))
    pred_set = InstanceSet(tuple(Instance(i, k, e, tuple(h), s) for k, (i, e, h, s) in enumerate(pred)),
                           tuple(images))
    return gt_set, pred_set


def _metrics(gt, pred, images=(0,), profile="p3-code"):
    return evaluate(*_sets(gt, pred, images), profile=profile, bootstrap_resamples=0).summary["metrics"]


def test_iou_of_mask_unions_per_image_with_holes_cleared_and_empty_images_one():
    """Image 0: GT 10 x 10 with a 4 x 4 hole (84 px), prediction the same square without the hole
    (100 px): IoU 84/100. Image 1 has neither: IoU 1. Mean (0.84 + 1) / 2.

    NR counts exterior vertices only (4 and 4, the hole's 4 are not counted): NR = 1, so
    C-IoU = IoU. The ``p3`` profile would give image 0 the same IoU but count the hole's
    vertices in its complexity factor.
    """
    gt = [(0, _box(0, 0, 10, 10), [_box(3, 3, 7, 7)])]
    pred = [(0, _box(0, 0, 10, 10), [], 0.9)]
    m = _metrics(gt, pred, images=(0, 1))
    assert m["P3code-IoU"] == pytest.approx((84 / (100 + 1e-9) + 1.0) / 2, abs=1e-12)
    assert m["P3code-N-ratio"] == pytest.approx(1.0)
    assert m["P3code-C-IoU"] == pytest.approx(m["P3code-IoU"])


def test_n_ratio_is_the_complexity_factor_per_image():
    """Prediction with 8 exterior vertices (a square with midpoints) against 4: NR = 1 - 4/12."""
    square = _box(0, 0, 10, 10)
    dense = np.array([[0, 0], [5, 0], [10, 0], [10, 5], [10, 10], [5, 10], [0, 10], [0, 5]], dtype=float)
    m = _metrics([(0, square, [])], [(0, dense, [], 0.9)])
    assert m["P3code-N-ratio"] == pytest.approx(1 - 4 / (12 + 1e-9))
    assert m["P3code-C-IoU"] == pytest.approx(m["P3code-IoU"] * m["P3code-N-ratio"])


def test_ar_is_coco_ar_at_ten_detections():
    """Eleven buildings found exactly in one image: AR@10 = 10/11 (AR@100 would be 1); AP = 1."""
    gt = [(0, _box(12 * k, 0, 12 * k + 10, 10), []) for k in range(11)]
    pred = [(0, _box(12 * k, 0, 12 * k + 10, 10), [], 1.0 - 0.01 * k) for k in range(11)]
    m = _metrics(gt, pred)
    assert m["P3code-AR"] == pytest.approx(10 / 11)
    assert m["P3code-AP"] == pytest.approx(1.0)


def test_polis_divides_by_two_n_plus_one():
    """Square shifted 1 px: vertex distances 0, 1, 1, 0 each way: 2 / (2 * 5) + 2 / (2 * 5) = 0.4.

    The card's POLIS (``p3``) is the mean of the two directed means: 0.5.
    """
    gt = [(0, _box(0, 0, 10, 10), [])]
    pred = [(0, _box(1, 0, 11, 10), [], 0.9)]
    assert _metrics(gt, pred)["P3code-POLIS"] == pytest.approx(0.4)
    assert _metrics(gt, pred, profile="p3")["P3-POLIS"] == pytest.approx(0.5)


def test_pairs_come_from_bounding_box_iou_and_may_share_a_prediction():
    """An L-shaped GT and a thin diagonal-ish prediction spanning its box: polygon IoU far below 0.5,
    box IoU 1, so they are a pair. Two GTs with the same box both take the one prediction.
    """
    l_shape = np.array([[0, 0], [10, 0], [10, 2], [2, 2], [2, 10], [0, 10]], dtype=float)
    other_l = np.array([[10, 10], [0, 10], [0, 8], [8, 8], [8, 0], [10, 0]], dtype=float)
    frame = _box(0, 0, 10, 10)
    gt = [(0, l_shape, []), (0, other_l, [])]
    pred = [(0, frame, [], 0.9)]
    result = evaluate(*_sets(gt, pred), profile="p3-code", bootstrap_resamples=0)
    assert result.summary["p3_code"]["box_pairs"] == 2
    # Each L's 6 vertices lie on the frame but its inner corner, 2 px away: 2 / (2 * 7). Of the
    # frame's 4 vertices only the one facing the L's notch is off the L, 8 px from its nearest
    # point: 8 / (2 * 5). Both pairs give the same value, so the image mean is that value.
    expected = 2 / (2 * 7) + 8 / (2 * 5)
    assert result.summary["metrics"]["P3code-POLIS"] == pytest.approx(expected)
    assert result.summary["metrics"]["matched_pairs"] == 0  # no polygon-IoU pair at 0.5


def test_hausdorff_and_chamfer_are_point_to_point_after_densifying():
    """Square vs square shifted 1 px, each densified to 0.1 px steps (401 points, first one twice)."""
    a, b = _box(0, 0, 10, 10), _box(1, 0, 11, 10)

    def dense(ring):
        closed = np.vstack([ring, ring[:1]])
        points = [closed[k] + (closed[k + 1] - closed[k]) * t / 100 for k in range(4) for t in range(100)]
        return np.vstack(points + [closed[-1]])

    distances = cdist(dense(a), dense(b))
    expected_cd = (distances.min(axis=1).mean() + distances.min(axis=0).mean()) / 2
    hd, cd = hausdorff_chamfer_points(a, b)
    assert hd == pytest.approx(1.0) and cd == pytest.approx(expected_cd, abs=1e-12)
    assert _metrics([(0, a, [])], [(0, b, [], 0.9)])["P3code-CD"] == pytest.approx(expected_cd, abs=1e-12)


def test_mta_merges_the_image_predictions_and_averages_over_polygons():
    """Two overlapping predictions that together cover a 20 x 10 GT are merged into one rectangle
    equal to the GT: one polygon, MTA 0. An exact square on a second image is a second polygon.
    The card's MTA (``p3``) pairs each prediction with one GT, so the half-predictions count.
    """
    gt = [(0, _box(0, 0, 20, 10), []), (1, _box(0, 0, 10, 10), [])]
    pred = [(0, _box(0, 0, 12, 10), [], 0.9), (0, _box(8, 0, 20, 10), [], 0.8),
            (1, _box(0, 0, 10, 10), [], 0.9)]
    result = evaluate(*_sets(gt, pred, images=(0, 1)), profile="p3-code", bootstrap_resamples=0)
    assert result.summary["p3_code"]["mta_polygons"] == 2
    assert result.summary["metrics"]["P3code-MTA"] == pytest.approx(0.0, abs=1e-9)


def test_mta_projects_onto_every_ground_truth_contour_of_the_image():
    """A prediction just around a GT courtyard that is tilted by 5 degrees, drawn with the
    courtyard's tilt: its nearest GT contour is the hole, so MTA is 0 (projected onto the
    axis-aligned exterior it would be 5 degrees). The GT region of the precision filter is the
    union of the GT ring polygons, hole filled, so the prediction passes it (precision 1), as
    in the P3 code.
    """
    angle = np.radians(5)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    courtyard = _box(-10, -10, 10, 10) @ rotation.T + [30, 30]
    gt = [(0, _box(0, 0, 60, 60), [courtyard])]
    around = (courtyard - 30) * 1.05 + 30
    assert _metrics(gt, [(0, around, [], 0.9)])["P3code-MTA"] == pytest.approx(0.0, abs=1e-4)
    assert _metrics([(0, _box(0, 0, 60, 60), [])], [(0, around, [], 0.9)])["P3code-MTA"] == pytest.approx(5.0)
