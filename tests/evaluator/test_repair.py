"""The paper's region rule for invalid polygons (``evaluator/inputs/repair.py``'s :func:`occupied_region`)."""

import numpy as np
import pytest
import shapely
from ring_literals import box

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.inputs.repair import occupied_region


def _iou(gt_polygon, pred_polygon, profile="paper"):
    gt = InstanceSet((Instance(0, 0, *gt_polygon),), (0,))
    pred = InstanceSet((Instance(0, 0, *pred_polygon),), (0,))
    return evaluate(gt, pred, profile=profile, bootstrap_resamples=0).outcome.pairs.iou.tolist()


def test_a_hole_outside_the_exterior_subtracts_nothing():
    """Ω = exterior minus holes: a hole outside a 10 x 10 square leaves it whole (IoU 1, not 100/104)."""
    square = box(0, 0, 10, 10)
    assert _iou((square, ()), (square, (box(20, 0, 22, 2),))) == [pytest.approx(1.0)]


def test_crossing_holes_are_subtracted_once():
    """Holes 2..10 and 6..14 cross, sharing 16 px²; Ω = 400 - (64 + 64 - 16) = 288 px².

    Alternating fill (GEOS ``make_valid``) counts the shared square as occupied again:
    304 px², IoU 288/304 = 0.947 against the same region drawn with one L-shaped hole.
    """
    square = box(0, 0, 20, 20)
    crossing = (box(2, 2, 10, 10), box(6, 6, 14, 14))
    assert occupied_region([shapely.Polygon(square, crossing)])[0].area == pytest.approx(288.0)
    l_hole = np.array([[2, 2], [10, 2], [10, 6], [14, 6], [14, 14], [6, 14], [6, 10], [2, 10]], dtype=float)
    assert _iou((square, (l_hole,)), (square, crossing)) == [pytest.approx(1.0)]


def test_a_nested_hole_is_subtracted_once():
    square = box(0, 0, 20, 20)
    region = occupied_region([shapely.Polygon(square, [box(2, 2, 18, 18), box(6, 6, 10, 10)])])[0]
    assert region.area == pytest.approx(400.0 - 256.0)


def test_a_self_crossing_exterior_still_covers_both_lobes():
    bowtie = np.array([[0, 0], [4, 4], [4, 0], [0, 4]], dtype=float)
    assert occupied_region([shapely.Polygon(bowtie)])[0].area == pytest.approx(8.0)
