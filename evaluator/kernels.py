"""Grouped geometry kernels in numpy: nearest segment or point within a group, grouped quantiles.

A *group* is one pair of ring sets being compared; ``owner`` arrays give the group of each
point or segment and must be non-decreasing (groups contiguous). Work is done in chunks of
at most ``CHUNK`` point–target combinations, so memory stays bounded for large polygons.

Point-to-segment distances are those to the closest point ``a + t (b - a)`` with ``t``
clamped to [0, 1]; they agree with GEOS (shapely's ``distance``, ``line_locate_point``) to
rounding, about 1e-13 px for pixel-sized coordinates.
"""

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["CHUNK", "grouped_reduce", "flatten_rings", "ring_segments", "sample_flat_rings", "nearest_segments", "nearest_points",
           "grouped_quantile", "group_starts"]

CHUNK = 2_000_000


def grouped_reduce(ufunc, values, owner, n_groups, fill):
    """``ufunc.reduce`` of the values of each group (owner non-decreasing); ``fill`` for empty groups.

    Examples
    --------
    >>> grouped_reduce(np.minimum, np.array([3.0, 1.0, 5.0]), np.array([0, 0, 2]), 3, np.inf).tolist()
    [1.0, inf, 5.0]
    """
    values = np.asarray(values)
    result = np.full((n_groups,) + values.shape[1:], fill, dtype=np.result_type(values, type(fill)))
    if len(values) == 0:
        return result
    start, count = group_starts(owner, n_groups)
    has = count > 0
    result[has] = ufunc.reduceat(values, start[has], axis=0)
    return result


def group_starts(owner, n_groups):
    """``(start, count)`` of each group in a non-decreasing owner array."""
    count = np.bincount(owner, minlength=n_groups).astype(np.int64)
    return np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64), count


def flatten_rings(ring_sets):
    """Concatenate ring sets into flat arrays.

    Returns
    -------
    coords : numpy.ndarray
        ``(n, 2)`` vertices of every ring (first vertex not repeated).
    ring_of_vertex : numpy.ndarray
        Ring index of each vertex.
    owner_of_ring : numpy.ndarray
        Set index of each ring.
    """
    rings = [ring for rings in ring_sets for ring in rings]
    owner_of_ring = np.repeat(np.arange(len(ring_sets)), [len(rings) for rings in ring_sets]).astype(np.int64)
    if not rings:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.int64), owner_of_ring
    sizes = np.array([len(ring) for ring in rings], dtype=np.int64)
    return np.concatenate(rings), np.repeat(np.arange(len(rings)), sizes), owner_of_ring


def ring_segments(coords, ring_of_vertex):
    """Closed-ring segments ``(a, b, ring)`` of flat rings: vertex i to i + 1, the last to the first."""
    if len(coords) == 0:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
    nxt = np.arange(1, len(coords) + 1)
    last = np.flatnonzero(np.diff(np.append(ring_of_vertex, -1)) != 0)
    first = np.concatenate([[0], last[:-1] + 1])
    nxt[last] = first
    return coords, coords[nxt], ring_of_vertex


def sample_flat_rings(coords, ring_of_vertex, spacing):
    """Sample closed rings uniformly, about every ``spacing`` px.

    Each segment of length ``L`` px is split into ``max(1, round(L / spacing))`` equal steps
    (round half to even), so every vertex is kept; segment ends shared by two segments appear
    once and each ring is closed by repeating its first vertex. The sample positions are those
    of ``numpy.linspace`` per segment.

    Returns
    -------
    points : numpy.ndarray
        Samples of every ring, each ring closed (first sample repeated at its end).
    ring_of_point : numpy.ndarray
        Ring index of each sample.
    """
    a, b, ring = ring_segments(coords, ring_of_vertex)
    if len(a) == 0:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
    steps = np.maximum(1, np.rint(np.linalg.norm(b - a, axis=1) / max(spacing, 1e-6)).astype(np.int64))
    segment = np.repeat(np.arange(len(steps)), steps)
    k = (np.arange(segment.size) - np.repeat(np.cumsum(steps) - steps, steps)).astype(np.float64)
    delta = (b - a) / steps[:, None]
    points = k[:, None] * delta[segment] + a[segment]
    point_ring = ring[segment]
    # Close each ring: append its first vertex after its last sample.
    ends = np.flatnonzero(np.diff(np.append(point_ring, -1)) != 0)
    closing = coords[np.searchsorted(ring_of_vertex, point_ring[ends])]
    insert_at = ends + 1
    return (np.insert(points, insert_at, closing, axis=0), np.insert(point_ring, insert_at, point_ring[ends]))


def nearest_segments(points, point_owner, a, b, target_owner, n_groups, *, closest=False):
    """For each point, the nearest segment ``a→b`` of its group.

    Ties go to the first target in order. Points whose group has no target get ``inf``.

    Returns
    -------
    distance : numpy.ndarray
        Distance of each point to its nearest target.
    nearest_xy : numpy.ndarray or None
        ``(n, 2)`` closest point on that target when ``closest`` is True.
    """
    n = len(points)
    distance = np.full(n, np.inf)
    nearest_xy = np.array(points, dtype=float, copy=True) if closest else None
    if n == 0 or len(a) == 0:
        return distance, nearest_xy
    t_start, t_count = group_starts(target_owner, n_groups)
    per_point = t_count[point_owner]
    ax, ay = np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])
    dx, dy = np.ascontiguousarray(b[:, 0] - a[:, 0]), np.ascontiguousarray(b[:, 1] - a[:, 1])
    len2 = dx * dx + dy * dy
    inv_len2 = np.divide(1.0, len2, out=np.zeros_like(len2), where=len2 > 0)
    px_all, py_all = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
    done = 0
    bounds = np.concatenate([[0], np.cumsum(per_point)])
    while done < n:
        stop = max(int(np.searchsorted(bounds, bounds[done] + CHUNK, side="right")) - 1, done + 1)
        counts = per_point[done:stop]
        total = int(counts.sum())
        if total:
            first_col = np.repeat(t_start[point_owner[done:stop]] - (np.cumsum(counts) - counts), counts)
            cols = first_col + np.arange(total)
            # Closest point a + t (b - a), t clamped to [0, 1]; squared distance to it.
            ex = np.repeat(px_all[done:stop], counts) - ax[cols]
            ey = np.repeat(py_all[done:stop], counts) - ay[cols]
            cx, cy = dx[cols], dy[cols]
            t = np.clip((ex * cx + ey * cy) * inv_len2[cols], 0.0, 1.0)
            ex -= t * cx
            ey -= t * cy
            d = ex * ex + ey * ey
            has = np.flatnonzero(counts > 0)
            starts = (np.cumsum(counts) - counts)[has]
            best = np.minimum.reduceat(d, starts)
            distance[done + has] = np.sqrt(best)
            if closest:
                local = np.repeat(np.arange(has.size), counts[has])
                hit = np.flatnonzero(d == best[local])
                first = hit[np.flatnonzero(np.diff(local[hit], prepend=-1) != 0)]
                c = cols[first]
                nearest_xy[done + has, 0] = ax[c] + t[first] * dx[c]
                nearest_xy[done + has, 1] = ay[c] + t[first] * dy[c]
        done = stop
    return distance, nearest_xy


def nearest_points(points, point_owner, targets, target_owner, n_groups):
    """Distance from each point to the nearest target point of its group (``inf`` if none).

    All groups go into one KD-tree: each group is moved to its own place along x, further
    from every other group than any distance within a group, so a query never reaches
    another group. Costs ``O(n log n)`` instead of the ``O(n m)`` of :func:`nearest_segments`.
    """
    distance = np.full(len(points), np.inf)
    if len(points) == 0 or len(targets) == 0:
        return distance
    low = np.minimum(grouped_reduce(np.minimum, points, point_owner, n_groups, np.inf),
                     grouped_reduce(np.minimum, targets, target_owner, n_groups, np.inf))
    high = np.maximum(grouped_reduce(np.maximum, points, point_owner, n_groups, -np.inf),
                      grouped_reduce(np.maximum, targets, target_owner, n_groups, -np.inf))
    extent = float(np.max(np.where(np.isfinite(high - low), high - low, 0.0)))
    reach = 2.0 * extent + 1.0
    shift = np.zeros((n_groups, 2))
    shift[:, 0] = np.arange(n_groups) * (2.0 * reach + 1.0)
    move = lambda xy, own: xy - low[own] + shift[own]  # noqa: E731
    tree = cKDTree(move(targets, target_owner))
    found, _ = tree.query(move(points, point_owner), k=1, distance_upper_bound=reach)
    return found


def grouped_quantile(values, owner, n_groups, q):
    """Quantile ``q`` of the values of each group (numpy's default linear method); NaN for empty groups."""
    result = np.full(n_groups, np.nan)
    if len(values) == 0:
        return result
    order = np.lexsort((values, owner))
    values, owner = values[order], owner[order]
    start, count = group_starts(owner, n_groups)
    has = count > 0
    virtual = count[has] * q + (1 + q * (1 - 1 - 1)) - 1
    lo = np.floor(virtual).astype(np.int64)
    hi = np.minimum(lo + 1, count[has] - 1)
    lo = np.clip(lo, 0, count[has] - 1)
    t = virtual - np.floor(virtual)
    left, right = values[start[has] + lo], values[start[has] + hi]
    diff = right - left
    result[has] = np.where(t >= 0.5, right - diff * (1 - t), left + diff * t)
    return result
