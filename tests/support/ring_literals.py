"""Ring literals shared by the evaluator tests (pixels, y down)."""

import numpy as np

__all__ = ["box"]


def box(x0, y0, x1, y1):
    """The axis-aligned rectangle ring from corner ``(x0, y0)`` to corner ``(x1, y1)``, as an ``(4, 2)`` float array."""
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)
