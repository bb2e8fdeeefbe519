"""The ``p3`` profile against values computed by hand on squares (all lengths in pixels).

For a 10 px square and its copy shifted by ``s`` px along x (``s < 5``): IoU is
``(10 - s) / (10 + s)``; each directed boundary distance runs ``s`` along one side, ``s - x``
over the first ``s`` px of the top and bottom sides and ``min(s, y, 10 - y)`` along the far
side, integrating to ``20 s`` over the 40 px perimeter, so CD = ``s / 2`` and HD = ``s``; the
four vertices are at distance ``s, 0, 0, s``, so POLIS = ``s / 2``.
"""

import json

import numpy as np
import pytest
import shapely

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.geometry.mta import max_tangent_angle, region_precision
from polytopo.evaluator.profiles.p3 import evaluate_p3, hausdorff_chamfer, tile_iou
from polytopo.evaluator.tables.params import params_for


def _square(x, y, side=10.0):
    return np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]], dtype=float)


def _sets(gt, pred, images):
    """``gt``: (image, exterior, holes); ``pred``: (image, exterior, holes, score)."""
    gt_set = InstanceSet(tuple(Instance(i, k, e, tuple(h)) for k, (i, e, h) in enumerate(gt)), tuple(images))
    pred_set = InstanceSet(tuple(Instance(i, k, e, tuple(h), s) for k, (i, e, h, s) in enumerate(pred)),
                           tuple(images))
    return gt_set, pred_set


# Tile "a": a square and its 1 px shifted copy with one extra collinear vertex (5 vs 4 vertices).
# Tile "b": ground truth only. Tile "c": a prediction only. Tile "d": empty.
# Tile "e": an exact copy (score 0.9) and a 2.5 px shifted copy (IoU 0.6, score 0.8).
SHIFTED_WITH_EXTRA_VERTEX = np.array([[1, 0], [6, 0], [11, 0], [11, 10], [1, 10]], dtype=float)
GT = [("a", _square(0, 0), []), ("b", _square(0, 0), []),
      ("e", _square(0, 0), []), ("e", _square(20, 0), [])]
PRED = [("a", SHIFTED_WITH_EXTRA_VERTEX, [], 0.9), ("c", _square(50, 50), [], 0.7),
        ("e", _square(0, 0), [], 0.9), ("e", _square(22.5, 0), [], 0.8)]
IMAGES = ("a", "b", "c", "d", "e")

# Per tile, by hand (NaN: not defined for the tile).
NAN = float("nan")
EXPECTED_TILES = {
    "IoU": {"a": 9 / 11, "b": 0.0, "c": 0.0, "d": 1.0, "e": 175 / 225},
    "C-IoU": {"a": 9 / 11 * (1 - 1 / 9), "b": 0.0, "c": 0.0, "d": 1.0, "e": 175 / 225},
    # Tile e at IoU 0.75: TP then FP, precision 1 up to recall 0.5 -> 51 of 101 levels.
    "AP": {"a": 1.0, "b": 0.0, "c": NAN, "d": NAN, "e": (1.0 + 51 / 101) / 2},
    "AR": {"a": 1.0, "b": 0.0, "c": NAN, "d": NAN, "e": (1.0 + 0.5) / 2},
    # Tile a: predicted vertices at 0, 0, 1, 1, 0 px and GT vertices at 1, 0, 0, 1 px.
    "POLIS": {"a": (2 / 5 + 2 / 4) / 2, "b": NAN, "c": NAN, "d": NAN, "e": (0.0 + 1.25) / 2},
    "HD": {"a": 1.0, "b": NAN, "c": NAN, "d": NAN, "e": (0.0 + 2.5) / 2},
    "CD": {"a": 0.5, "b": NAN, "c": NAN, "d": NAN, "e": (0.0 + 1.25) / 2},
    "N-ratio": {"a": 1 / 4, "b": NAN, "c": NAN, "d": NAN, "e": 0.0},
}


def _close(actual, expected):
    return (np.isnan(actual) and np.isnan(expected)) or actual == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.fixture(scope="module")
def outcome():
    gt_set, pred_set = _sets(GT, PRED, IMAGES)
    return evaluate_p3(gt_set, pred_set, params_for("p3"))


def test_per_tile_values_match_hand_computation(outcome):
    """Every per-tile value equals the hand-computed one (NaN where undefined)."""
    rows = {row["image_id"]: row for row in outcome.details["p3"]["per_tile"]}
    for name, expected in EXPECTED_TILES.items():
        for tile, value in expected.items():
            assert _close(rows[tile][name], value), (name, tile, rows[tile][name], value)


def test_metrics_average_tiles_not_pairs(outcome):
    """P3 metrics are means of the defined per-tile values (HD 1.125, not the pair mean 7/6)."""
    for name, expected in EXPECTED_TILES.items():
        values = [v for v in expected.values() if not np.isnan(v)]
        assert _close(outcome.metrics[f"P3-{name}"], sum(values) / len(values)), name
    assert outcome.metrics["P3-HD"] == pytest.approx(1.125)
    details = outcome.details["p3"]
    assert details["tiles"] == 5
    assert details["tiles_averaged"]["AP"] == 3 and details["tiles_averaged"]["HD"] == 2
    assert [(r["gt"], r["pred"], r["pairs"]) for r in details["per_tile"]] == [
        (1, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 0), (2, 2, 2)]


def test_mta_is_the_paper_mta_averaged_per_tile(outcome):
    """P3-MTA averages :func:`max_tangent_angle` of each pair per tile, then over tiles."""
    def mta(pred, gt):
        precision = region_precision([shapely.Polygon(pred)], [shapely.Polygon(gt)])
        return float(max_tangent_angle([[pred]], [[gt]], precision)[0])

    tile_a = mta(SHIFTED_WITH_EXTRA_VERTEX, _square(0, 0))
    tile_e = (mta(_square(0, 0), _square(0, 0)) + mta(_square(22.5, 0), _square(20, 0))) / 2
    assert mta(_square(0, 0), _square(0, 0)) == 0.0
    assert outcome.metrics["P3-MTA"] == pytest.approx((tile_a + tile_e) / 2)


def test_paper_metrics_stay_available(outcome):
    """The base ``paper`` metrics are kept next to the P3 ones."""
    assert outcome.metrics["matched_pairs"] == 3
    assert {"AP50", "Hole-F1", "Topo-EM", "O-BIoU"} <= set(outcome.metrics)
    assert "P3-DoF" not in outcome.metrics


def test_holes_count_in_every_boundary_metric():
    """A courtyard shifted by 1 px: IoU 290/310, HD 1, CD 20 / 120, POLIS 2/8."""
    hole = _square(5, 5)
    gt_set, pred_set = _sets([(1, _square(0, 0, 20), [hole])], [(1, _square(0, 0, 20), [hole + [1, 0]], 0.5)], (1,))
    row = evaluate_p3(gt_set, pred_set, params_for("p3")).details["p3"]["per_tile"][0]
    expected = {"IoU": 29 / 31, "C-IoU": 29 / 31, "HD": 1.0, "CD": 1 / 6, "POLIS": 0.25, "N-ratio": 0.0,
                "AP": 1.0, "AR": 1.0}
    for name, value in expected.items():
        assert _close(row[name], value), (name, row[name], value)


def test_hausdorff_chamfer_of_shifted_squares_and_empty_sets():
    """HD = s and CD = s / 2 for a square shifted by s; NaN when a set is empty."""
    hd, cd = hausdorff_chamfer([[_square(0, 0)], [_square(0, 0)], []], [[_square(2.5, 0)], [_square(0, 0)], []])
    assert hd[:2] == pytest.approx([2.5, 0.0]) and cd[:2] == pytest.approx([1.25, 0.0])
    assert np.isnan(hd[2]) and np.isnan(cd[2])


def test_tile_iou_of_empty_tiles():
    """A tile with neither side scores 1, one with only ground truth 0."""
    gt = np.array([shapely.box(0, 0, 4, 4)], dtype=object)
    none = np.array([], dtype=object)
    codes = np.array([], dtype=np.int64)
    assert tile_iou(gt, none, np.array([1]), codes, 2).tolist() == [1.0, 0.0]


def test_profile_runs_through_the_api_and_serializes():
    """``evaluate(profile="p3")`` reports the P3 metrics and a JSON-ready per-tile table."""
    gt_set, pred_set = _sets(GT, PRED, IMAGES)
    summary = evaluate(gt_set, pred_set, profile="p3", bootstrap_resamples=0).summary
    assert summary["metrics"]["P3-HD"] == pytest.approx(1.125)
    assert json.loads(json.dumps(summary["p3"]))["tiles"] == 5
