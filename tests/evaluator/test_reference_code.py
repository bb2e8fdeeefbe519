"""The reference-code profile reproduces the public PolyTopoBench evaluator's outputs.

The expected files in tests/fixtures/ptb_small are outputs of the public evaluator (see the
README there); every metric they report must match to 1e-6.
"""

import json
import math

import pytest

from polytopo.evaluator import evaluate, load_coco_ground_truth, load_coco_predictions

SETTINGS = [
    ("ref_A_default.json", {}),
    ("ref_B_ring_threshold_0.1.json", {"ring_match_threshold": 0.1}),
    ("ref_C_min_hole_area_16.json", {"min_hole_area_px2": 16.0}),
]


def _differences(ours, reference, path=""):
    """Every leaf of ``reference`` that ``ours`` misses or differs from by more than 1e-6."""
    found = []
    if isinstance(reference, dict):
        for key, value in reference.items():
            if key not in ours:
                found.append(f"{path}/{key}: missing")
            else:
                found += _differences(ours[key], value, f"{path}/{key}")
        return found
    if reference is None:
        if not (ours is None or (isinstance(ours, float) and math.isnan(ours))):
            found.append(f"{path}: expected null/NaN but got {ours}")
    elif isinstance(reference, (int, float)) and not isinstance(reference, bool):
        if ours is None or abs(float(ours) - reference) > 1e-6:
            found.append(f"{path}: expected {reference} but got {ours}")
    elif ours != reference:
        found.append(f"{path}: expected {reference!r} but got {ours!r}")
    return found


@pytest.fixture(scope="module")
def ptb_small(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    return folder, load_coco_ground_truth(folder / "gt.json"), load_coco_predictions(folder / "pred.json")


@pytest.mark.parametrize("name, overrides", SETTINGS, ids=[s[0] for s in SETTINGS])
def test_reproduces_reference_outputs(ptb_small, name, overrides):
    folder, gt, pred = ptb_small
    expected = json.loads((folder / name).read_text())
    result = evaluate(gt, pred, profile="reference-code", **overrides)
    ours = result.summary["reference_metrics"]
    assert _differences(ours, expected["metrics"]) == []
    for side, key in (("ground_truth", "ground_truth"), ("predictions", "predictions")):
        assert result.summary[side]["hole_area_filter"] == expected[key]["hole_area_filter"]
    # The comparison really covers the metrics: corner F1, per-threshold AP and hole counts.
    assert len(expected["metrics"]["poly_ap"]) == 13
    assert expected["metrics"]["exterior"]["corner_f1"]["2"]["tp"] == ours["exterior"]["corner_f1"]["2"]["tp"]


def test_headline_names_follow_table_3(ptb_small):
    _, gt, pred = ptb_small
    metrics = evaluate(gt, pred, profile="reference-code").summary["metrics"]
    for name in ("AP50", "AP", "O-BIoU", "E-BIoU", "H-BIoU", "O-POLIS", "E-POLIS", "H-POLIS",
                 "O-MTA", "E-MTA", "H-MTA", "Hole-F1", "Topo-EM"):
        assert name in metrics
    assert metrics["Topo-EM"] == pytest.approx(0.275, abs=1e-9)
    assert metrics["Hole-F1"] == pytest.approx(0.030303030303030304, abs=1e-12)
