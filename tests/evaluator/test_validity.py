"""Definition 15 validity reasons, their boundary cases, and what they mean for Topo-EM."""

import numpy as np
import pytest
from ring_literals import box

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.instances import Instance
from polytopo.evaluator.inputs.validity import validity_reasons


def _instance(exterior, holes=()):
    return Instance(0, 0, np.asarray(exterior, float), tuple(np.asarray(h, float) for h in holes))


SQUARE = [[0, 0], [20, 0], [20, 20], [0, 20]]

CASES = [
    ("valid with hole", SQUARE, [[[5, 5], [10, 5], [10, 10], [5, 10]]], ""),
    ("bow-tie exterior", [[0, 0], [20, 20], [20, 0], [0, 20]], [], "exterior not simple"),
    ("bow-tie hole", SQUARE, [[[5, 5], [10, 10], [10, 5], [5, 10]]], "hole not simple"),
    ("hole across the exterior", SQUARE, [[[15, 5], [25, 5], [25, 10], [15, 10]]], "hole not inside exterior"),
    ("hole outside", SQUARE, [[[30, 5], [35, 5], [35, 10], [30, 10]]], "hole not inside exterior"),
    ("overlapping holes", SQUARE, [[[2, 2], [10, 2], [10, 10], [2, 10]], [[6, 6], [14, 6], [14, 14], [6, 14]]],
     "holes overlap or cross"),
    ("nested holes", SQUARE, [[[2, 2], [18, 2], [18, 18], [2, 18]], [[6, 6], [10, 6], [10, 10], [6, 10]]],
     "holes overlap or cross"),
    ("zero-area exterior", [[0, 0], [10, 0], [20, 0]], [], "exterior not simple; empty"),
    ("holes touching at a point", SQUARE, [[[2, 2], [8, 2], [8, 8], [2, 8]], [[8, 8], [14, 8], [14, 14], [8, 14]]], ""),
]


@pytest.mark.parametrize("name, exterior, holes, expected", CASES, ids=[c[0] for c in CASES])
def test_reasons(name, exterior, holes, expected):
    assert validity_reasons([_instance(exterior, holes)]) == [expected]


def test_several_reasons_are_all_reported():
    bowtie = [[0, 0], [20, 20], [20, 0], [0, 20]]
    outside = [[30, 5], [35, 5], [35, 10], [30, 10]]
    reasons = validity_reasons([_instance(bowtie, [outside])])[0].split("; ")
    assert reasons == ["exterior not simple", "hole not inside exterior"]


@pytest.mark.parametrize("holes, expected", [
    ([box(0, 2, 3, 5)], "hole along exterior boundary"),
    ([np.array([[0, 5], [5, 3], [10, 5], [5, 7]], dtype=float)], "holes split the interior"),
    ([np.array([[0, 5], [3, 3], [5, 5], [3, 7]], dtype=float), np.array([[5, 5], [8, 3], [10, 5], [8, 7]], float)],
     "holes split the interior"),
    ([np.array([[0, 5], [3, 3], [5, 5], [3, 7]], dtype=float)], ""),
])
def test_definition_15_boundary_cases(holes, expected):
    """A hole sharing an edge with the exterior, and holes cutting the interior in two, are invalid.

    A hole touching the exterior at one point (last case) stays valid.
    """
    assert validity_reasons([Instance(0, 0, box(0, 0, 10, 10), tuple(holes))]) == [expected]


def test_hole_touching_the_exterior_at_a_point_is_valid(square, make_set):
    touching = np.array([[0, 10], [5, 5], [5, 15]], dtype=float)
    polygon = (square(0, 0, 20), [touching])
    result = evaluate(make_set([polygon]), make_set([polygon]), bootstrap_resamples=0)
    assert result.records["predictions"][0]["valid"] is True
    assert result.summary["metrics"]["Topo-EM"] == 1.0 and result.summary["metrics"]["Hole-F1"] == 1.0


def test_a_hole_along_the_boundary_fails_topo_em(make_set):
    square = box(0, 0, 10, 10)
    notched = (square, [box(0, 2, 3, 5)])
    with pytest.warns(UserWarning, match="1 reference polygon"):
        m = evaluate(make_set([notched]), make_set([notched]), bootstrap_resamples=0).summary["metrics"]
    assert m["Topo-EM"] == 0.0 and m["invalid_pred"] == 1
