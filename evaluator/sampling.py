"""Uniform sampling of ring boundaries, vectorized over every segment at once.

Each segment of a closed ring of length ``L`` px is split into
``max(1, round(L / spacing))`` equal steps (round half to even), so samples are at most
about ``spacing`` px apart and every original vertex is kept. The first sample of each
segment after the first is dropped so that shared vertices appear once; the closing vertex
is kept, so a sampled ring starts and ends on the same point.
"""

import numpy as np

__all__ = ["sample_closed_ring", "sample_rings"]


def sample_closed_ring(ring, spacing):
    """Sample one ring.

    Parameters
    ----------
    ring : numpy.ndarray
        ``(n, 2)`` ring in pixels, first vertex not repeated (a repeated one is tolerated).
    spacing : float
        Target distance between samples in pixels.

    Returns
    -------
    numpy.ndarray
        ``(m, 2)`` samples along the closed ring, first point repeated at the end.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
    >>> sample_closed_ring(square, 2.0).shape
    (9, 2)
    """
    closed = ring if len(ring) > 1 and np.array_equal(ring[0], ring[-1]) else np.vstack([ring, ring[:1]])
    start, stop = closed[:-1], closed[1:]
    lengths = np.linalg.norm(stop - start, axis=1)
    steps = np.maximum(1, np.rint(lengths / max(spacing, 1e-6)).astype(np.int64))
    # Samples k = 0 .. steps-1 of every segment (k = 0 is the segment start), then the
    # closing vertex: start + k * (stop - start) / steps, as numpy.linspace computes it.
    segment = np.repeat(np.arange(len(steps)), steps)
    k = np.arange(segment.size) - np.repeat(np.cumsum(steps) - steps, steps)
    delta = (stop - start) / steps[:, None]
    points = k[:, None].astype(np.float64) * delta[segment] + start[segment]
    return np.vstack([points, closed[-1:]])


def sample_rings(rings, spacing):
    """Concatenated samples of several rings as an ``(m, 2)`` array (empty when no ring)."""
    parts = [sample_closed_ring(ring, spacing) for ring in rings]
    return np.concatenate(parts) if parts else np.zeros((0, 2))
