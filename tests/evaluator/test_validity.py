"""Definition 15 validity reasons."""

import numpy as np
import pytest

from polytopo.evaluator.instances import Instance
from polytopo.evaluator.validity import validity_reasons


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
