"""Batches of pairs in the pairwise kernels: bounded, complete, and the same results at any size."""

import dataclasses
import json
import math

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st

from polytopo.evaluator import evaluate
from polytopo.evaluator.geometry import kernels
from polytopo.evaluator.geometry.boundary import hd95, polis
from polytopo.evaluator.inputs.io_coco import load_coco_ground_truth, load_coco_predictions
from polytopo.evaluator.geometry.kernels import (flatten_rings, map_pair_batches, pair_batches, reporting, sample_counts,
                                        sample_flat_rings, vertex_counts)
from polytopo.evaluator.geometry.mta import max_tangent_angle

#: One pair per batch, a few pairs per batch (of vertices, then of samples), all pairs in one batch.
BUDGETS = (1, 40, 400, math.inf)


@st.composite
def rings(draw):
    """A star-shaped ring of 3-12 vertices around a random centre, radius 2-30 px."""
    n = draw(st.integers(3, 12))
    centre = np.array([draw(st.floats(0, 60)), draw(st.floats(0, 60))])
    radius = np.array(draw(st.lists(st.floats(2, 30), min_size=n, max_size=n)))
    angle = np.sort(np.array(draw(st.lists(st.floats(0, 2 * np.pi, exclude_max=True), min_size=n, max_size=n,
                                           unique=True))))
    return centre + np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


ring_sets = st.lists(rings(), min_size=0, max_size=3)
pair_lists = st.lists(st.tuples(ring_sets, ring_sets), min_size=1, max_size=8)


def _bits(values):
    return np.asarray(values, dtype=float).tobytes()


def _record(record):
    """A record with every value comparable exactly: floats by their bits, geometry as WKB."""
    return {key: shapely.to_wkb(value) if isinstance(value, shapely.Geometry)
            else _bits(value) if isinstance(value, float) else value for key, value in record.items()}


@given(st.lists(st.integers(0, 50), max_size=30), st.integers(1, 80))
def test_batches_cover_every_pair_in_order_within_the_budget(points, budget):
    points = np.array(points, dtype=np.int64)
    batches = pair_batches(points, budget)
    assert [i for part in batches for i in range(part.start, part.stop)] == list(range(len(points)))
    for part in batches:
        assert points[part].sum() <= budget or part.stop - part.start == 1
    # Greedy: no batch could have taken the next pair as well.
    for part, following in zip(batches, batches[1:]):
        assert points[part.start:following.start + 1].sum() > budget


def test_unbounded_budget_is_one_batch_and_default_is_the_module_budget(monkeypatch):
    points = np.array([5, 5, 5])
    assert pair_batches(points, math.inf) == [slice(0, 3)]
    monkeypatch.setattr(kernels, "PAIR_BATCH_POINTS", 10)
    assert pair_batches(points) == [slice(0, 2), slice(2, 3)]


@given(st.lists(ring_sets, max_size=6), st.sampled_from([0.5, 2.0, 7.0]))
def test_counts_are_those_of_the_flattened_samples(sets, spacing):
    coords, vertex_ring, ring_owner = flatten_rings(sets)
    _, point_ring = sample_flat_rings(coords, vertex_ring, spacing)
    owner = ring_owner[point_ring]
    assert sample_counts(sets, spacing).tolist() == np.bincount(owner, minlength=len(sets)).tolist()
    assert vertex_counts(sets).tolist() == np.bincount(ring_owner[vertex_ring], minlength=len(sets)).tolist()


@given(pair_lists, st.booleans())
def test_polis_is_the_same_bit_for_bit_at_every_batch_size(pairs, vertex_sets):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    results = {_bits(polis(a, b, vertex_sets, batch_points=budget)) for budget in BUDGETS}
    assert len(results) == 1


@given(pair_lists)
def test_hd95_is_the_same_bit_for_bit_at_every_batch_size(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    results = {_bits(hd95(a, b, 2.0, batch_points=budget)) for budget in BUDGETS}
    assert len(results) == 1


@given(pair_lists, st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8))
def test_mta_is_the_same_bit_for_bit_at_every_batch_size(pairs, precision):
    pred, gt = [p[0] for p in pairs], [p[1] for p in pairs]
    precision = np.array(precision[:len(pairs)])
    results = {_bits(max_tangent_angle(pred, gt, precision, batch_points=budget)) for budget in BUDGETS}
    assert len(results) == 1


def test_known_values_survive_batching():
    square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    a, b = [[square]] * 3, [[square + [1.0, 0.0]]] * 3
    assert polis(a, b, batch_points=1).tolist() == [0.5, 0.5, 0.5]
    assert max_tangent_angle(a, a, np.ones(3), batch_points=1).tolist() == [0.0, 0.0, 0.0]
    assert hd95(a, a, 2.0, batch_points=1).tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(hd95(a, [[]] * 3, 2.0, batch_points=1)).all()


def test_progress_counts_points_of_finished_batches():
    seen = []
    with reporting(lambda done, total: seen.append((done, total))):
        values = map_pair_batches(lambda x: x * 2.0, np.array([3, 3, 5]), np.arange(3.0), budget=6)
    assert values.tolist() == [0.0, 2.0, 4.0]
    assert seen == [(6, 11), (11, 11)]


def test_no_pairs_gives_no_values():
    assert map_pair_batches(lambda x: x, np.zeros(0, dtype=np.int64), []).shape == (0,)
    assert polis([], []).shape == (0,)


@pytest.mark.parametrize("profile", ["paper", "reference-code"])
def test_fixture_results_are_identical_with_one_pair_per_batch(fixtures_dir, monkeypatch, profile):
    folder = fixtures_dir / "ptb_small"
    gt, pred = load_coco_ground_truth(folder / "gt.json"), load_coco_predictions(folder / "pred.json")
    monkeypatch.setattr(kernels, "PAIR_BATCH_POINTS", math.inf)
    whole = evaluate(gt, pred, profile=profile)
    monkeypatch.setattr(kernels, "PAIR_BATCH_POINTS", 1)
    single = evaluate(gt, pred, profile=profile)
    for field in dataclasses.fields(whole.outcome.pairs):
        left, right = getattr(whole.outcome.pairs, field.name), getattr(single.outcome.pairs, field.name)
        if field.name == "holes":
            for hole_field in dataclasses.fields(left):
                assert _bits(getattr(left, hole_field.name)) == _bits(getattr(right, hole_field.name))
        else:
            assert _bits(left) == _bits(right), field.name
    assert json.dumps(whole.summary["metrics"]) == json.dumps(single.summary["metrics"])
    assert {name: [_record(r) for r in records] for name, records in whole.records.items()} == {
        name: [_record(r) for r in records] for name, records in single.records.items()}
    # The fixture really exercises the kernels: pairs, hole matches (paper) and measured MTA and HD95.
    assert len(whole.outcome.pairs.gt_index) > 10
    assert profile != "paper" or len(whole.outcome.pairs.holes.pair) > 0
    assert np.isfinite(whole.outcome.pairs.e_mta).any() and np.isfinite(whole.outcome.pairs.o_hd95).all()
