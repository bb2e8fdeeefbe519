"""Thousands of generated scenes through every profile: nothing escapes, every metric in range.

Each *case* is one image with zero to three reference polygons with holes and the
predictions made from them (jittered, holes dropped or added, extra and missing
predictions, scores drawn from four values so that ties are common). About a quarter of
the polygons are invalid in one of the ways real data is: a self-intersecting exterior,
a hole outside its exterior or across it, overlapping holes, a repeated vertex, a
zero-area ring. Many cases go into one ``evaluate`` call, so the suite stays fast; a
failing batch is re-run case by case to name the case.

Per profile, ``MIXED_CASES`` cases are scored against their predictions and
``SELF_CASES`` valid cases against themselves (6,000 cases in all over the five
profiles; ``coco``, ``p3`` and ``p3-code`` run the ``paper`` profile's metrics inside,
so those see 3,200 mixed cases). ``POLYTOPO_GENERATED_CASES`` scales both counts (e.g.
10 for a longer local run); ``POLYTOPO_GENERATED_SEED`` changes the scenes.
"""

import math
import warnings
import os

import numpy as np
import pytest

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.tables.params import PROFILES

SCALE = float(os.environ.get("POLYTOPO_GENERATED_CASES", "1"))
SEED = int(os.environ.get("POLYTOPO_GENERATED_SEED", "2026"))
MIXED_CASES = int(800 * SCALE)
SELF_CASES = int(400 * SCALE)
SCORES = (0.3, 0.5, 0.5, 0.9)
CELL_PX = 40.0
# Rounding allowance of a ratio computed from GEOS areas (a band IoU of a ring with itself).
RATIO_SLACK = 1e-9


def _star(rng, center, radius, vertices):
    """A ring star-shaped around ``center`` (hence simple), counter-clockwise.

    Angles are evenly spaced with a jitter of 0.15 step, so no gap reaches 180°; radii
    lie in [0.7, 1] ``radius``.
    """
    angle = 2 * np.pi * (np.arange(vertices) + rng.uniform(-0.15, 0.15, vertices)) / vertices
    r = radius * rng.uniform(0.7, 1.0, vertices)
    return np.column_stack([np.cos(angle) * r, np.sin(angle) * r]) + center


def _valid_polygon(rng, center):
    """An exterior of radius 10–16 px; with 6 or more vertices up to 3 disjoint holes well inside it.

    With 6 vertices or more every edge stays beyond 0.7 cos(39°) > 0.54 of the radius from
    the centre, and the holes reach 0.45 of it.
    """
    radius = rng.uniform(10, 16)
    exterior = _star(rng, center, radius, int(rng.integers(3, 14)))
    if len(exterior) < 6:
        return exterior, []
    slots = rng.permutation(4)[:int(rng.integers(0, 4))]
    holes = []
    for slot in slots:
        offset = 0.33 * radius * np.array([math.cos(slot * np.pi / 2), math.sin(slot * np.pi / 2)])
        holes.append(_star(rng, center + offset, 0.12 * radius, int(rng.integers(4, 8)))[::-1].copy())
    return exterior, holes


def _broken(rng, exterior, holes, center):
    """The polygon made invalid in one of six ways."""
    kind = int(rng.integers(0, 6))
    exterior = exterior.copy()
    holes = [h.copy() for h in holes]
    if kind == 0 and len(exterior) >= 4:
        exterior[[0, 2]] = exterior[[2, 0]]  # self-intersecting exterior
    elif kind == 1:
        holes.append(_star(rng, center + [18.0, 0.0], 1.5, 5))  # hole outside the exterior
    elif kind == 2:
        holes.append(_star(rng, exterior[0], 2.0, 5))  # hole across the exterior
    elif kind == 3 and holes:
        holes.append(holes[0] + 0.5)  # overlapping holes
    elif kind == 4:
        exterior = np.insert(exterior, 1, exterior[1], axis=0)  # repeated vertex
    else:
        exterior = np.column_stack([np.linspace(0, 12, 4), np.zeros(4)]) + center  # zero area
    return exterior, holes


def _prediction(rng, exterior, holes):
    """A jittered copy with holes sometimes dropped, moved or added."""
    shift = rng.normal(0, 1.5, 2)
    kept = [h + shift + rng.normal(0, 0.5, 2) for h in holes if rng.random() > 0.2]
    if rng.random() < 0.15:
        kept.append(_star(rng, exterior.mean(axis=0) + shift, 1.5, 4)[::-1].copy())
    return exterior + shift, kept


def generate(rng, n_cases, invalid=True):
    """Ground truth and predictions of ``n_cases`` images (``invalid=False``: valid polygons only)."""
    gt, pred = [], []
    for image in range(n_cases):
        for slot in range(int(rng.integers(0, 4))):
            center = np.array([CELL_PX * slot + 20.0, 20.0])
            exterior, holes = _valid_polygon(rng, center)
            if invalid and rng.random() < 0.25:
                exterior, holes = _broken(rng, exterior, holes, center)
            gt.append(Instance(image, len(gt), exterior, tuple(holes), 1.0))
            if rng.random() < 0.8:
                p_exterior, p_holes = _prediction(rng, exterior, holes)
                pred.append(Instance(image, len(pred), p_exterior, tuple(p_holes), float(rng.choice(SCORES))))
        if rng.random() < 0.3:
            exterior, holes = _valid_polygon(rng, np.array([CELL_PX * 3 + 20.0, 20.0]))
            pred.append(Instance(image, len(pred), exterior, tuple(holes), float(rng.choice(SCORES))))
    images = tuple(range(n_cases))
    return InstanceSet(tuple(gt), images, {}, "generated"), InstanceSet(tuple(pred), images, {}, "generated")


def _unit(value):
    return -RATIO_SLACK <= value <= 1 + RATIO_SLACK


def _metric_in_range(name, value):
    """The range each metric of the summary lives in; NaN (undefined) is always allowed."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    if name.endswith("MTA"):
        return 0 <= value <= 90 + 1e-9
    if name.endswith(("POLIS", "HD95", "-HD", "-CD", "MAE", "N-ratio")):
        return value >= 0 and math.isfinite(value)
    if name in ("Hole-TP", "Hole-FP", "Hole-FN", "invalid_pred", "matched_pairs", "unmatched_gt", "unmatched_pred"):
        return isinstance(value, int) and value >= 0
    return _unit(value)


RECORD_RANGES = {"iou": _unit, "o_biou": _unit, "e_biou": _unit, "hole_f1": _unit,
                 "o_polis": lambda v: v >= 0, "e_polis": lambda v: v >= 0,
                 "o_mta": lambda v: 0 <= v <= 90 + 1e-9, "e_mta": lambda v: 0 <= v <= 90 + 1e-9,
                 "topo_em": lambda v: v in (0, 1)}


def _evaluate_quietly(gt, pred, profile):
    """``evaluate`` with the warning about invalid references (generated on purpose here) let through;
    the count it announces is checked by :func:`_check_ranges` instead."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\d+ reference polygon\(s\) are invalid", category=UserWarning)
        return evaluate(gt, pred, profile=profile, bootstrap_resamples=0)


def _evaluate_or_name_the_case(gt, pred, profile):
    """``evaluate`` on the whole batch; on an exception, the first case that raises it alone."""
    try:
        return _evaluate_quietly(gt, pred, profile)
    except Exception as exc:
        for image in gt.image_ids:
            one_gt = InstanceSet(tuple(i for i in gt.instances if i.image_id == image), (image,), {}, "case")
            one_pred = InstanceSet(tuple(i for i in pred.instances if i.image_id == image), (image,), {}, "case")
            try:
                _evaluate_quietly(one_gt, one_pred, profile)
            except Exception as alone:
                pytest.fail(f"{profile}, seed {SEED}: case {image} raises {type(alone).__name__}: {alone}\n"
                            f"gt={[(i.exterior.tolist(), [h.tolist() for h in i.holes]) for i in one_gt.instances]}\n"
                            f"pred={[(i.exterior.tolist(), i.score) for i in one_pred.instances]}")
        raise AssertionError(f"{profile}, seed {SEED}: the batch raises but no case alone does") from exc


def _check_ranges(result, profile):
    bad = {k: v for k, v in result.summary["metrics"].items() if not _metric_in_range(k, v)}
    assert bad == {}, f"{profile}: metrics out of range: {bad}"
    for kind in ("predictions", "references"):
        for record in result.records[kind]:
            wrong = {k: record[k] for k, check in RECORD_RANGES.items()
                     if record.get(k) is not None and not (isinstance(record[k], float) and math.isnan(record[k]))
                     and not check(record[k])}
            assert wrong == {}, f"{profile}: {kind} record {record.get('pred_id', record.get('ref_id'))}: {wrong}"


@pytest.mark.parametrize("profile", PROFILES)
def test_generated_cases_never_raise_and_stay_in_range(profile):
    rng = np.random.default_rng([SEED, PROFILES.index(profile)])
    gt, pred = generate(rng, MIXED_CASES)
    result = _evaluate_or_name_the_case(gt, pred, profile)
    _check_ranges(result, profile)
    counts = result.summary["counts"]
    # every input is counted; reference-code drops a polygon whose repair leaves no area, as its model does
    assert (counts["pred_input_instances"], counts["gt_input_instances"]) == (len(pred), len(gt))
    assert len(result.records["predictions"]) == counts["pred_instances"]
    assert len(result.records["references"]) == counts["gt_instances"]
    assert counts["gt_invalid"] == sum(not instance.polygon().is_valid for instance in gt.instances)


@pytest.mark.parametrize("profile", PROFILES)
def test_valid_generated_cases_against_themselves_score_perfectly(profile):
    rng = np.random.default_rng([SEED, 100 + PROFILES.index(profile)])
    gt, _ = generate(rng, SELF_CASES, invalid=False)
    result = _evaluate_or_name_the_case(gt, gt, profile)
    _check_ranges(result, profile)
    m = result.summary["metrics"]
    assert m["AP50"] == pytest.approx(1.0, abs=1e-12) and m["AP"] == pytest.approx(1.0, abs=1e-12)
    assert m["Hole-F1"] == 1.0 and m["Topo-EM"] == 1.0 and m["E-F1"] == 1.0
    assert m["O-BIoU"] == pytest.approx(1.0, abs=RATIO_SLACK)
    assert m["O-POLIS"] == 0.0 and m["O-HD95"] == 0.0
    for record in result.records["predictions"]:
        assert record["matched_ref_id"] == record["pred_id"], record
        assert record["iou"] == pytest.approx(1.0, abs=RATIO_SLACK) and record["topo_em"] == 1, record
        assert record["error_class"] == "ok", record
    if profile == "p3":
        assert m["P3-IoU"] == pytest.approx(1.0, abs=RATIO_SLACK) and m["P3-HD"] == pytest.approx(0.0, abs=1e-9)
