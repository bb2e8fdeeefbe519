"""The paper's region rule for invalid polygons, Definition 15's boundary cases, POLIS vertex sets, MTA's filter."""

import numpy as np
import pytest
import shapely

from polytopo.evaluator import evaluate
from polytopo.evaluator.boundary import polis
from polytopo.evaluator.instances import Instance
from polytopo.evaluator.mta import max_tangent_angle
from polytopo.evaluator.repair import occupied_region
from polytopo.evaluator.validity import validity_reasons


def _box(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def _iou(gt_polygon, pred_polygon, profile="paper"):
    from polytopo.evaluator.instances import InstanceSet

    gt = InstanceSet((Instance(0, 0, *gt_polygon),), (0,))
    pred = InstanceSet((Instance(0, 0, *pred_polygon),), (0,))
    return evaluate(gt, pred, profile=profile, bootstrap_resamples=0).outcome.pairs.iou.tolist()


def test_a_hole_outside_the_exterior_subtracts_nothing():
    """Ω = exterior minus holes: a hole outside a 10 x 10 square leaves it whole (IoU 1, not 100/104)."""
    square = _box(0, 0, 10, 10)
    assert _iou((square, ()), (square, (_box(20, 0, 22, 2),))) == [pytest.approx(1.0)]


def test_crossing_holes_are_subtracted_once():
    """Holes 2..10 and 6..14 cross, sharing 16 px²; Ω = 400 - (64 + 64 - 16) = 288 px².

    Alternating fill (GEOS ``make_valid``) counts the shared square as occupied again:
    304 px², IoU 288/304 = 0.947 against the same region drawn with one L-shaped hole.
    """
    square = _box(0, 0, 20, 20)
    crossing = (_box(2, 2, 10, 10), _box(6, 6, 14, 14))
    assert occupied_region([shapely.Polygon(square, crossing)])[0].area == pytest.approx(288.0)
    l_hole = np.array([[2, 2], [10, 2], [10, 6], [14, 6], [14, 14], [6, 14], [6, 10], [2, 10]], dtype=float)
    assert _iou((square, (l_hole,)), (square, crossing)) == [pytest.approx(1.0)]


def test_a_nested_hole_is_subtracted_once():
    square = _box(0, 0, 20, 20)
    region = occupied_region([shapely.Polygon(square, [_box(2, 2, 18, 18), _box(6, 6, 10, 10)])])[0]
    assert region.area == pytest.approx(400.0 - 256.0)


def test_a_self_crossing_exterior_still_covers_both_lobes():
    bowtie = np.array([[0, 0], [4, 4], [4, 0], [0, 4]], dtype=float)
    assert occupied_region([shapely.Polygon(bowtie)])[0].area == pytest.approx(8.0)


@pytest.mark.parametrize("holes, expected", [
    ([_box(0, 2, 3, 5)], "hole along exterior boundary"),
    ([np.array([[0, 5], [5, 3], [10, 5], [5, 7]], dtype=float)], "holes split the interior"),
    ([np.array([[0, 5], [3, 3], [5, 5], [3, 7]], dtype=float), np.array([[5, 5], [8, 3], [10, 5], [8, 7]], float)],
     "holes split the interior"),
    ([np.array([[0, 5], [3, 3], [5, 5], [3, 7]], dtype=float)], ""),
])
def test_definition_15_boundary_cases(holes, expected):
    """A hole sharing an edge with the exterior, and holes cutting the interior in two, are invalid.

    A hole touching the exterior at one point (last case) stays valid.
    """
    assert validity_reasons([Instance(0, 0, _box(0, 0, 10, 10), tuple(holes))]) == [expected]


def test_a_hole_along_the_boundary_fails_topo_em(make_set):
    square = _box(0, 0, 10, 10)
    notched = (square, [_box(0, 2, 3, 5)])
    with pytest.warns(UserWarning, match="1 reference polygon"):
        m = evaluate(make_set([notched]), make_set([notched]), bootstrap_resamples=0).summary["metrics"]
    assert m["Topo-EM"] == 0.0 and m["invalid_pred"] == 1


def test_polis_counts_a_repeated_vertex_once():
    """Square shifted 1 px with its vertex (10, 0) given twice: vertex set of 4, as the 5-vertex ring.

    Shifted square vertices: (1, 0), (11, 0), (11, 10), (1, 10); distances to the square's
    boundary 0, 1, 1, 0 (mean 0.5), and back 0.5 too: POLIS 0.5. Counting (11, 0) twice
    would give (0 + 1 + 1 + 1 + 0) / 5 = 0.6 one way.
    """
    square = _box(0, 0, 10, 10)
    doubled = np.array([[1, 0], [11, 0], [11, 0], [11, 10], [1, 10]], dtype=float)
    assert polis([[square]], [[doubled]], vertex_sets=True)[0] == pytest.approx(0.5)
    assert polis([[square]], [[doubled]])[0] == pytest.approx(0.55)


def test_mta_precision_filter_is_strict_in_the_paper_profile():
    """A pair with precision exactly 0.5 is left out (> 0.5), unless the filter is inclusive."""
    square = _box(0, 0, 10, 10)
    strict = max_tangent_angle([[square]], [[square]], np.array([0.5]), precision_inclusive=False)
    inclusive = max_tangent_angle([[square]], [[square]], np.array([0.5]), precision_inclusive=True)
    assert np.isnan(strict[0]) and inclusive[0] == 0.0


def test_paper_profile_leaves_out_a_pair_at_precision_one_half(make_set):
    """Prediction 20 x 10 over a 10 x 10 GT: IoU 0.5 (a match), precision 0.5: paper MTA NaN."""
    gt = make_set([(_box(0, 0, 10, 10), [])])
    pred = make_set([(_box(0, 0, 20, 10), [])])
    m = evaluate(gt, pred, bootstrap_resamples=0).summary["metrics"]
    assert m["matched_pairs"] == 1 and np.isnan(m["E-MTA"])
