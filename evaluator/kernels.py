"""Grouped geometry kernels in numpy: nearest segment or point within a group, grouped quantiles.

A *group* is one pair of ring sets being compared; ``owner`` arrays give the group of each
point or segment and must be non-decreasing (groups contiguous). Nearest-target searches
use one KD-tree for all groups and cost ``O(n log n)`` in the number of vertices; work is
done in batches of at most ``CHUNK`` point–candidate combinations, so memory stays bounded
for large polygons.

The pairwise metrics (POLIS, MTA, HD95) run these kernels on consecutive batches of pairs
(:func:`map_pair_batches`), each holding at most :data:`PAIR_BATCH_POINTS` points, so their
transient arrays are bounded whatever the number of pairs. Every result of a pair depends
only on that pair's rings, so it is the same bit for bit whatever the batch size.

Point-to-segment distances are those to the closest point ``a + t (b - a)`` with ``t``
clamped to [0, 1]; they agree with GEOS (shapely's ``distance``, ``line_locate_point``) to
rounding, about 1e-13 px for pixel-sized coordinates.
"""

import contextlib
import contextvars

import numpy as np

__all__ = ["CHUNK", "QUERY_POINTS", "FIRST_K", "SMALL_GROUP", "PAIR_BATCH_POINTS", "grouped_reduce", "flatten_rings",
           "ring_segments", "ring_perimeters", "sample_flat_rings", "vertex_counts", "sample_counts", "pair_batches",
           "map_pair_batches", "nearest_segments", "nearest_points", "reporting", "grouped_quantile", "group_starts"]

#: Most point–candidate combinations held at once (about 80 bytes each while they are compared).
CHUNK = 250_000
#: Query points per KD-tree batch (and per progress report).
QUERY_POINTS = 65_536
#: Candidates each query point takes first; multiplied by 4 while more may be nearer.
FIRST_K = 8
#: Groups with at most this many segments are searched exhaustively (cheaper than a tree).
SMALL_GROUP = 64

#: Most points one batch of pairs holds in :func:`map_pair_batches`: ring vertices (POLIS) or
#: boundary samples plus target vertices (MTA, HD95). A kernel holds a few hundred bytes of
#: transient arrays per point (samples, KD-tree, candidates), some tens of MB a batch.
PAIR_BATCH_POINTS = 100_000

_REPORTER = contextvars.ContextVar("polytopo_kernel_progress", default=None)


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


def ring_perimeters(rings):
    """Perimeter of each closed ring in pixels.

    One pass over all vertices: the segments of every ring (the last vertex back to the
    first included) are summed ring by ring in vertex order.

    Parameters
    ----------
    rings : sequence of numpy.ndarray
        ``(n, 2)`` rings in pixels, first vertex not repeated.

    Returns
    -------
    numpy.ndarray
        float64, one perimeter per ring.

    Examples
    --------
    >>> ring_perimeters([np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]])]).tolist()
    [12.0]
    """
    if len(rings) == 0:
        return np.zeros(0)
    ring_of_vertex = np.repeat(np.arange(len(rings)), np.fromiter(map(len, rings), np.int64, len(rings)))
    a, b, _ = ring_segments(np.concatenate(rings), ring_of_vertex)
    return np.bincount(ring_of_vertex, weights=np.hypot(*(b - a).T), minlength=len(rings))


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
    steps = _sample_steps(a, b, spacing)
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


def _sample_steps(a, b, spacing):
    """Steps :func:`sample_flat_rings` splits each segment ``a→b`` into."""
    return np.maximum(1, np.rint(np.linalg.norm(b - a, axis=1) / max(spacing, 1e-6)).astype(np.int64))


def vertex_counts(ring_sets):
    """Vertices of each ring set.

    Examples
    --------
    >>> vertex_counts([[np.zeros((4, 2)), np.zeros((3, 2))], []]).tolist()
    [7, 0]
    """
    return np.fromiter((sum(len(ring) for ring in rings) for rings in ring_sets), dtype=np.int64,
                       count=len(ring_sets))


def sample_counts(ring_sets, spacing):
    """Samples :func:`sample_flat_rings` takes of each ring set every ``spacing`` px.

    Counted in batches of at most :data:`PAIR_BATCH_POINTS` vertices.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> sample_counts([[square], []], 2.0).tolist()
    [21, 0]
    """
    counts = np.zeros(len(ring_sets), dtype=np.int64)
    for part in pair_batches(vertex_counts(ring_sets)):
        coords, vertex_ring, ring_owner = flatten_rings(ring_sets[part])
        a, b, ring = ring_segments(coords, vertex_ring)
        # Every segment's steps, plus the closing sample of each ring.
        per_ring = np.bincount(ring, weights=_sample_steps(a, b, spacing), minlength=len(ring_owner)) + 1
        counts[part] = np.rint(np.bincount(ring_owner, weights=per_ring, minlength=part.stop - part.start))
    return counts


def pair_batches(points, budget=None):
    """Consecutive slices of pairs holding at most ``budget`` points each; a larger pair is alone.

    Parameters
    ----------
    points : numpy.ndarray
        Points (vertices or samples) of each pair.
    budget : float, optional
        Most points per batch; :data:`PAIR_BATCH_POINTS` by default, ``math.inf`` for one
        batch of all pairs.

    Returns
    -------
    list of slice

    Examples
    --------
    >>> pair_batches(np.array([3, 3, 5, 1, 1]), 6)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    budget = PAIR_BATCH_POINTS if budget is None else budget
    end = np.cumsum(points)
    batches, start = [], 0
    while start < len(end):
        base = end[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(end, base + budget, side="right")))
        batches.append(slice(start, stop))
        start = stop
    return batches


def map_pair_batches(kernel, points, *per_pair, budget=None):
    """Run ``kernel`` on batches of pairs (:func:`pair_batches`); its results in pair order.

    Parameters
    ----------
    kernel : callable
        Called with the batch's slice of each of ``per_pair``; returns one value per pair.
    points : numpy.ndarray
        Points of each pair, the measure of the budget.
    *per_pair : sequence
        Equally long per-pair sequences (lists of ring sets, arrays).
    budget : float, optional
        Points per batch (:func:`pair_batches`).

    Notes
    -----
    Progress goes to the reporter of :func:`reporting` after each batch, counted in
    ``points``; the kernels' own reports inside a batch are muted.
    """
    callback = _REPORTER.get()
    points = np.asarray(points, dtype=np.int64)
    results, done = [], 0
    with reporting(None):
        for part in pair_batches(points, budget):
            results.append(np.asarray(kernel(*(values[part] for values in per_pair)), dtype=float))
            done += int(points[part].sum())
            if callback is not None:
                callback(done, int(points.sum()))
    return np.concatenate(results) if results else np.zeros(0)


def nearest_segments(points, point_owner, a, b, target_owner, n_groups, *, closest=False, small_group=SMALL_GROUP,
                     first_k=FIRST_K):
    """For each point, the nearest segment ``a→b`` of its group.

    Ties go to the first target in order. Points whose group has no target get ``inf``.

    Parameters
    ----------
    points, a, b : numpy.ndarray
        ``(n, 2)`` query points and ``(m, 2)`` segment ends, in any one unit (pixels).
    point_owner, target_owner : numpy.ndarray
        Group of each point and of each segment (``target_owner`` non-decreasing).
    n_groups : int
    closest : bool
        Also return the closest point on the nearest segment.
    small_group : int
        Groups with at most this many segments are searched exhaustively.
    first_k : int
        Candidates a KD-tree query starts with.

    Returns
    -------
    distance : numpy.ndarray
        Distance of each point to its nearest target, in the units of the coordinates.
    nearest_xy : numpy.ndarray or None
        ``(n, 2)`` closest point on that target when ``closest`` is True.

    Notes
    -----
    Costs ``O((n + m) log m)`` for ``n`` points and ``m`` segments instead of ``O(n m)``.
    A group of at most :data:`SMALL_GROUP` segments is searched exhaustively. In larger
    groups each segment is represented by points along it (its ends and steps of at most
    ``h``, the mean segment length of its group) in one KD-tree. A point takes its ``k`` nearest
    representatives, the exact distance ``U`` to their segments, and grows ``k`` until the
    ``k``-th representative lies beyond ``U + h / 2``: every segment as close as ``U`` has a
    representative within ``U + h / 2``, so the minimum and its first-in-order segment are
    among those seen. Distances come from the original coordinates with the clamped
    projection of the module docstring, so the KD-tree never changes a result. Progress (in
    points) goes to the reporter installed with :func:`reporting`.

    Examples
    --------
    >>> a, b = np.array([[0.0, 0.0], [10.0, 0.0]]), np.array([[10.0, 0.0], [10.0, 10.0]])
    >>> d, xy = nearest_segments(np.array([[4.0, 3.0]]), np.array([0]), a, b, np.array([0, 0]), 1, closest=True)
    >>> d.tolist(), xy.tolist()
    ([3.0], [[4.0, 0.0]])
    """
    points = np.asarray(points, dtype=float)
    n = len(points)
    distance = np.full(n, np.inf)
    nearest_xy = np.array(points, dtype=float, copy=True) if closest else None
    if n == 0 or len(a) == 0:
        return distance, nearest_xy
    segments = _Segments(np.asarray(a, dtype=float), np.asarray(b, dtype=float), np.asarray(target_owner))
    t_start, t_count = group_starts(segments.owner, n_groups)
    small = t_count <= small_group
    exhaustive = np.flatnonzero((t_count[point_owner] > 0) & small[point_owner])
    queried = np.flatnonzero(~small[point_owner])
    total = exhaustive.size + queried.size

    def store(which, d2, segment, t, done):
        distance[which] = np.sqrt(d2)
        if closest:
            nearest_xy[which, 0] = segments.ax[segment] + t * segments.dx[segment]
            nearest_xy[which, 1] = segments.ay[segment] + t * segments.dy[segment]
        _report(done, total)

    # Points of groups with as many segments side by side: little padding in each batch.
    exhaustive = exhaustive[np.argsort(t_count[point_owner[exhaustive]], kind="stable")]
    rows = max(1, CHUNK // max(small_group, 1))
    for start in range(0, exhaustive.size, rows):
        which = exhaustive[start:start + rows]
        owner = point_owner[which]
        segment = t_start[owner, None] + np.arange(t_count[owner[-1]])  # the largest group of the batch
        valid = segment < (t_start + t_count)[owner, None]
        store(which, *segments.best_of(points[which], np.minimum(segment, len(a) - 1), valid),
              start + len(which))
    if queried.size:
        reps, rep_segment, half_step = segments.representatives(n_groups)
        large = ~small[segments.owner[rep_segment]]
        reps, rep_segment = reps[large], rep_segment[large]
        index = _SeparatedTree(reps, segments.owner[rep_segment], points[queried], point_owner[queried], n_groups)
        for start in range(0, queried.size, QUERY_POINTS):
            part = slice(start, start + QUERY_POINTS)
            which = queried[part]
            store(which, *index.nearest(part, points[which], point_owner[which], segments, rep_segment,
                                        half_step[point_owner[which]], first_k),
                  exhaustive.size + min(start + QUERY_POINTS, queried.size))
    return distance, nearest_xy


class _Segments:
    """Segments ``a→b`` with their group, in the arrays the clamped projection needs."""

    def __init__(self, a, b, owner):
        self.owner = owner
        self.ax, self.ay = np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])
        self.dx, self.dy = np.ascontiguousarray(b[:, 0] - a[:, 0]), np.ascontiguousarray(b[:, 1] - a[:, 1])
        len2 = self.dx * self.dx + self.dy * self.dy
        self.length = np.sqrt(len2)
        self.inv_len2 = np.divide(1.0, len2, out=np.zeros_like(len2), where=len2 > 0)

    def squared_distance(self, px, py, segment):
        """Squared distance and clamped parameter ``t`` of points ``(px, py)`` to ``segment`` (broadcast)."""
        ex, ey = px - self.ax[segment], py - self.ay[segment]
        cx, cy = self.dx[segment], self.dy[segment]
        t = np.clip((ex * cx + ey * cy) * self.inv_len2[segment], 0.0, 1.0)
        ex -= t * cx
        ey -= t * cy
        return ex * ex + ey * ey, t

    def best_of(self, points, segment, valid):
        """Nearest of the candidate ``segment`` matrix (one row per point, ``valid`` marks real ones).

        Returns the squared distance, the segment (the first in order on ties) and its ``t``.
        """
        d2, t = self.squared_distance(points[:, 0, None], points[:, 1, None], segment)
        d2[~valid] = np.inf
        best = d2.min(axis=1)
        tied = d2 == best[:, None]
        first = np.where(tied, segment, np.iinfo(np.int64).max).min(axis=1)
        column = np.argmax(tied & (segment == first[:, None]), axis=1)
        return best, first, t[np.arange(len(points)), column]

    def representatives(self, n_groups):
        """Points along every segment, the segment of each, and half the largest step of each group.

        A segment of length ``L`` gets ``ceil(L / h) + 1`` evenly spaced points, ``h`` the mean
        positive segment length of its group; a zero-length segment gets one.
        """
        positive = self.length > 0
        total = np.bincount(self.owner, weights=self.length, minlength=n_groups)
        count = np.bincount(self.owner[positive], minlength=n_groups)
        mean = np.divide(total, count, out=np.ones(n_groups), where=count > 0)
        steps = np.where(positive, np.ceil(self.length / mean[self.owner]), 0).astype(np.int64)
        half_step = grouped_reduce(np.maximum, np.divide(self.length, 2 * np.maximum(steps, 1)), self.owner,
                                   n_groups, 0.0)
        segment = np.repeat(np.arange(len(steps)), steps + 1)
        k = np.arange(segment.size) - np.repeat(np.cumsum(steps + 1) - (steps + 1), steps + 1)
        f = k / np.maximum(steps, 1)[segment]
        reps = np.column_stack([self.ax[segment] + f * self.dx[segment], self.ay[segment] + f * self.dy[segment]])
        return reps, segment, half_step


class _SeparatedTree:
    """One KD-tree of the representatives of all groups, each group moved to its own grid cell.

    Cells are wider than any distance a query needs, so a query never reaches another
    group; the KD-tree only proposes candidates, whose distances are then computed exactly.
    """

    def __init__(self, reps, rep_owner, queries, query_owner, n_groups):
        low = np.minimum(grouped_reduce(np.minimum, reps, rep_owner, n_groups, np.inf),
                         grouped_reduce(np.minimum, queries, query_owner, n_groups, np.inf))
        high = np.maximum(grouped_reduce(np.maximum, reps, rep_owner, n_groups, -np.inf),
                          grouped_reduce(np.maximum, queries, query_owner, n_groups, -np.inf))
        extent = float(np.max(np.where(np.isfinite(high - low), high - low, 0.0)))
        # Within a group every distance is below sqrt(2) extent and a query needs at most
        # twice that; another group's cell is at least 3 extent + 4 away.
        self.reach = 3.0 * extent + 2.0
        cell = 4.0 * extent + 4.0
        columns = int(np.ceil(np.sqrt(n_groups)))
        offset = np.column_stack([np.arange(n_groups) % columns, np.arange(n_groups) // columns]) * cell
        offset = offset - np.where(np.isfinite(low), low, 0.0)
        from scipy.spatial import cKDTree

        # Sliding-midpoint splits build and query faster here than median splits; which tree
        # is built never changes a result (candidates are checked exactly, see nearest_segments).
        self.tree = cKDTree(reps + offset[rep_owner], balanced_tree=False)
        self.moved = queries + offset[query_owner]
        self.size = len(reps)
        # Rounding of the moved coordinates, bounded generously.
        self.margin = 8.0 * float(np.spacing(max(float(np.max(np.abs(self.moved), initial=1.0)),
                                                 float(np.max(np.abs(self.tree.data), initial=1.0)))))

    def nearest(self, rows, points, owner, segments, rep_segment, half_step, first_k):
        """Exact squared distance, first nearest segment and its ``t`` for the queries ``rows``."""
        moved = self.moved[rows]
        q = len(points)
        best_d2, best_segment, best_t = np.full(q, np.inf), np.zeros(q, dtype=np.int64), np.zeros(q)
        pending, k = np.arange(q), first_k
        while pending.size:
            k = min(k, self.size)
            parts = np.array_split(pending, min(pending.size, -(-pending.size * k // CHUNK)))
            pending = np.concatenate([part[self._refine(part, k, moved, points, owner, segments, rep_segment,
                                                        half_step, best_d2, best_segment, best_t)]
                                      for part in parts])
            if k == self.size:
                break
            k *= 4
        return best_d2, best_segment, best_t

    def _refine(self, part, k, moved, points, owner, segments, rep_segment, half_step, best_d2, best_segment,
                best_t):
        found, rep = self.tree.query(moved[part], k=k, distance_upper_bound=self.reach)
        found, rep = found.reshape(len(part), k), rep.reshape(len(part), k)
        valid = rep < self.size
        segment = rep_segment[np.minimum(rep, self.size - 1)]
        valid &= segments.owner[segment] == owner[part, None]
        row_best, best_segment[part], best_t[part] = segments.best_of(points[part], segment, valid)
        best_d2[part] = row_best
        # More representatives may matter while the k-th is still within U + h / 2.
        return valid[:, -1] & (found[:, -1] <= np.sqrt(row_best) + half_step[part] + self.margin)


@contextlib.contextmanager
def reporting(callback):
    """Context manager: long kernels inside the block call ``callback(done, total)``.

    ``done`` and ``total`` count the query points of the current kernel call, or the points
    of the pairs of the current :func:`map_pair_batches` call. ``callback`` None mutes them.

    Examples
    --------
    >>> seen = []
    >>> with reporting(lambda done, total: seen.append((done, total))):
    ...     _ = nearest_points(np.zeros((3, 2)), np.zeros(3, dtype=int), np.ones((1, 2)), np.zeros(1, dtype=int), 1)
    >>> seen
    [(3, 3)]
    """
    token = _REPORTER.set(callback)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def _report(done, total):
    callback = _REPORTER.get()
    if callback is not None:
        callback(done, total)


def nearest_points(points, point_owner, targets, target_owner, n_groups):
    """Distance from each point to the nearest target point of its group (``inf`` if none).

    All targets go into one KD-tree (:class:`_SeparatedTree`); each query takes its two
    nearest there and computes their distances exactly from the original coordinates. The
    nearer is the answer unless the second lies within rounding of it; those few points
    (and only they) are searched again by :func:`nearest_segments` with the targets as
    zero-length segments. ``O(n log m)``, exact, and bit for bit the distance that
    comparing every point with every target gives.
    """
    points = np.asarray(points, dtype=float)
    targets = np.asarray(targets, dtype=float)
    target_owner = np.asarray(target_owner)
    distance = np.full(len(points), np.inf)
    if len(points) == 0 or len(targets) == 0:
        return distance
    _, t_count = group_starts(target_owner, n_groups)
    queried = np.flatnonzero(t_count[point_owner] > 0)
    if queried.size == 0:
        return distance
    index = _SeparatedTree(targets, target_owner, points[queried], point_owner[queried], n_groups)
    unsettled = []
    for start in range(0, queried.size, QUERY_POINTS):
        part = slice(start, start + QUERY_POINTS)
        which = queried[part]
        found, target = index.tree.query(index.moved[part], k=2, distance_upper_bound=index.reach)
        present = target < index.size
        target = np.minimum(target, index.size - 1)
        present &= target_owner[target] == point_owner[which, None]
        ex = points[which, 0, None] - targets[target, 0]
        ey = points[which, 1, None] - targets[target, 1]
        d2 = np.where(present, ex * ex + ey * ey, np.inf)
        best = d2.min(axis=1)
        distance[which] = np.sqrt(best)
        # another target may be as near while the second candidate is within rounding of the first
        unsettled.append(which[present[:, 1] & (found[:, 1] <= distance[which] + index.margin)])
        _report(min(start + QUERY_POINTS, queried.size), queried.size)
    again = np.concatenate(unsettled)
    if again.size:
        distance[again] = nearest_segments(points[again], point_owner[again], targets, targets, target_owner,
                                           n_groups, small_group=0, first_k=4)[0]
    return distance


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
