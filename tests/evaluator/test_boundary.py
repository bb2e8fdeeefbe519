"""Boundary metrics between ring sets (``evaluator/geometry/boundary.py``): POLIS vertex sets."""

import numpy as np
import pytest
from ring_literals import box

from polytopo.evaluator.geometry.boundary import polis


def test_polis_counts_a_repeated_vertex_once():
    """Square shifted 1 px with its vertex (10, 0) given twice: vertex set of 4, as the 5-vertex ring.

    Shifted square vertices: (1, 0), (11, 0), (11, 10), (1, 10); distances to the square's
    boundary 0, 1, 1, 0 (mean 0.5), and back 0.5 too: POLIS 0.5. Counting (11, 0) twice
    would give (0 + 1 + 1 + 1 + 0) / 5 = 0.6 one way.
    """
    square = box(0, 0, 10, 10)
    doubled = np.array([[1, 0], [11, 0], [11, 0], [11, 10], [1, 10]], dtype=float)
    assert polis([[square]], [[doubled]], vertex_sets=True)[0] == pytest.approx(0.5)
    assert polis([[square]], [[doubled]])[0] == pytest.approx(0.55)
