"""Instance matching (``evaluator/metrics/matching.py``, ``detection.py``): Definition 3's greedy match by score."""

import numpy as np
import pytest

from polytopo.evaluator import evaluate
from polytopo.evaluator.metrics.detection import ImageMatches, detection_metrics, image_matches, ranked_detection
from polytopo.evaluator.metrics.matching import Candidates, greedy_match


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


def _random_images(rng, n_images):
    """Candidates of several images (pairs only within an image), scores with ties, image codes."""
    gt_image = rng.integers(0, n_images, int(rng.integers(5, 60)))
    pred_image = rng.integers(0, n_images, int(rng.integers(5, 80)))
    pairs = sorted({(int(g), int(p)) for g, p in zip(rng.integers(0, len(gt_image), 400),
                                                       rng.integers(0, len(pred_image), 400))
                    if gt_image[g] == pred_image[p]}, key=lambda pair: (pair[1], pair[0]))
    iou = rng.choice([0.3, 0.5, 0.55, 0.7, 0.75, 0.9, 0.96], size=len(pairs))
    cand = Candidates(np.array([g for g, _ in pairs], np.int64), np.array([p for _, p in pairs], np.int64), iou,
                      iou.copy(), len(gt_image))
    scores = rng.choice([0.2, 0.5, 0.5, 0.9], size=len(pred_image))
    return cand, scores, gt_image, pred_image


def _images_alone(cand, scores, gt_image, pred_image, images):
    """The candidates, scores and image codes of the predictions and references of ``images`` only."""
    gt_kept, pred_kept = np.flatnonzero(np.isin(gt_image, images)), np.flatnonzero(np.isin(pred_image, images))
    gt_new, pred_new = np.full(len(gt_image), -1), np.full(len(pred_image), -1)
    gt_new[gt_kept], pred_new[pred_kept] = np.arange(len(gt_kept)), np.arange(len(pred_kept))
    inside = pred_new[cand.pred_index] >= 0
    part = Candidates(gt_new[cand.gt_index[inside]], pred_new[cand.pred_index[inside]], cand.iou[inside],
                      cand.intersection[inside], len(gt_kept))
    return part, scores[pred_kept], pred_image[pred_kept], len(gt_kept), pred_kept


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("max_detections", [None, 2])
def test_the_matching_of_groups_of_images_ranks_as_the_whole_set(seed, max_detections):
    """What a cluster does: each group of whole images matched on its own, the whole set ranked on the client."""
    rng = np.random.default_rng(seed)
    cand, scores, gt_image, pred_image = _random_images(rng, 6)
    thresholds = (0.5, 0.55, 0.75, 0.95)
    whole, whole_ranked = detection_metrics(cand, scores, pred_image, len(gt_image), thresholds, max_detections)
    groups = np.array_split(rng.permutation(6), 3)
    pieces, positions = [], []
    for images in groups:
        part, part_scores, part_images, n_gt, where = _images_alone(cand, scores, gt_image, pred_image, images)
        pieces.append(image_matches(part, part_scores, part_images, n_gt, thresholds, max_detections))
        positions.append(where)
    merged = ImageMatches.placed(pieces, positions, len(scores))
    metrics, ranked = ranked_detection(merged, scores, len(gt_image), thresholds)
    assert metrics == whole
    for threshold in thresholds:
        assert np.array_equal(ranked[threshold][0], whole_ranked[threshold][0])
        assert np.array_equal(ranked[threshold][1], whole_ranked[threshold][1])
    assert not np.any(merged.matched[~merged.kept])
