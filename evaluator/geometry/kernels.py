"""Grouped geometry kernels in numpy: nearest segment or point within a group, grouped quantiles.

A *group* is one pair of ring sets being compared; ``owner`` arrays give the group of each
point or segment and must be non-decreasing (groups contiguous). Nearest-segment searches
descend a hierarchy of capsules over consecutive segments of each group, nearest-point
searches one KD-tree for all groups; both cost ``O(n log n)`` in the number of vertices,
whatever their spacing. Work is done in batches of at most ``CHUNK`` point–candidate
combinations, so memory stays bounded for large polygons.

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

from ...core.kernel_threads import ordered_map, query_workers
from ...core.scipy_imports import kd_tree

__all__ = ["CHUNK", "QUERY_POINTS", "TREE_QUERIES", "LEAF_SEGMENTS", "SMALL_GROUP", "SMALL_CALL",
           "PAIR_BATCH_POINTS",
           "PERIMETER_CHUNK_VERTICES",
           "grouped_reduce", "flatten_rings", "ring_segments", "ring_perimeters", "sample_flat_rings", "vertex_counts",
           "sample_counts", "pair_batches", "map_pair_batches", "nearest_segments", "nearest_points", "reporting",
           "grouped_quantile", "group_starts"]

#: Most point–candidate combinations held at once (about 80 bytes each while they are compared).
CHUNK = 250_000
#: Query points per KD-tree batch (and per progress report).
QUERY_POINTS = 65_536
#: Query points going up the nearest-segment index together (their arrays stay in the CPU cache).
TREE_QUERIES = 8192
#: Most segments of a leaf of the nearest-segment index, compared with each query reaching it.
LEAF_SEGMENTS = 8
#: Groups with at most this many segments are searched exhaustively (cheaper than a tree).
SMALL_GROUP = 64
#: A call with at most this many point–segment combinations in all is searched exhaustively:
#: building the index costs about a millisecond, as much as comparing some 40,000 of them.
SMALL_CALL = 40_000

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


PERIMETER_CHUNK_VERTICES = 1 << 20
"""Vertices :func:`ring_perimeters` handles at once (whole rings; a longer ring alone):
its temporaries take about 80 bytes a vertex, 84 MB at this size, where the rings of a
300,000-instance set together took about 500 MB."""


def ring_perimeters(rings):
    """Perimeter of each closed ring in pixels.

    The segments of every ring (the last vertex back to the first included) are summed
    ring by ring in vertex order, over runs of whole rings of about
    :data:`PERIMETER_CHUNK_VERTICES` vertices (each ring's sum is the same in any run).

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
    sizes = np.fromiter(map(len, rings), np.int64, len(rings))
    ends = np.cumsum(sizes)
    perimeters = np.zeros(len(rings))
    start = 0
    while start < len(rings):
        done = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, done + PERIMETER_CHUNK_VERTICES, side="right")))
        ring_of_vertex = np.repeat(np.arange(stop - start), sizes[start:stop])
        a, b, _ = ring_segments(np.concatenate(rings[start:stop]), ring_of_vertex)
        perimeters[start:stop] = np.bincount(ring_of_vertex, weights=np.hypot(*(b - a).T), minlength=stop - start)
        start = stop
    return perimeters


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
    ``points``; the kernels' own reports inside a batch are muted. In a
    :func:`~polytopo.core.kernel_threads.kernel_threads` block the batches run side by
    side on its threads (:func:`~polytopo.core.kernel_threads.ordered_map`).
    """
    callback = _REPORTER.get()
    points = np.asarray(points, dtype=np.int64)
    results, done = [], 0
    parts = list(pair_batches(points, budget))

    def run(part):
        return np.asarray(kernel(*(values[part] for values in per_pair)), dtype=float)

    with reporting(None):
        for part, result in zip(parts, ordered_map(run, parts)):
            results.append(result)
            done += int(points[part].sum())
            if callback is not None:
                callback(done, int(points.sum()))
    return np.concatenate(results) if results else np.zeros(0)


def nearest_segments(points, point_owner, a, b, target_owner, n_groups, *, closest=False, small_group=SMALL_GROUP,
                     small_call=SMALL_CALL):
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
    small_call : int
        All groups are searched exhaustively when that compares at most this many
        point–segment combinations.

    Returns
    -------
    distance : numpy.ndarray
        Distance of each point to its nearest target, in the units of the coordinates.
    nearest_xy : numpy.ndarray or None
        ``(n, 2)`` closest point on that target when ``closest`` is True, in the units of
        the coordinates.

    Notes
    -----
    Costs ``O((n + m) log m)`` for ``n`` points and ``m`` segments instead of ``O(n m)``,
    whatever the spacing of the vertices relative to the distances searched. A group of at
    most :data:`SMALL_GROUP` segments is searched exhaustively, and so is every group of a call
    with at most :data:`SMALL_CALL` point–segment combinations. The segments of a larger group
    are indexed in their order (:class:`_CapsuleTree`): the group's run of consecutive
    segments, its halves, quarters, ... down to leaves of at most :data:`LEAF_SEGMENTS`, each
    bounded by the capsule around its chord (its radius about the sagitta of the run, for a
    run along a smooth curve) and by the box of its segment ends. A point first compares the
    segments of the leaf whose middle vertex is nearest (one KD-tree of the leaf middles for
    all groups), which gives ``U``, about its final distance; then, going up to the root, it
    searches the other half at each level only where a capsule or box comes within ``U``,
    which it keeps lowering. A run is dropped only when every segment in it is farther than
    ``U`` by more than rounding (see :class:`_CapsuleTree`), so the minimum and its
    first-in-order segment are among those compared. Along a curve a point compares about
    one leaf and bounds one run per level, whether the curve's vertices are much closer
    together than the distance searched or much farther apart. Distances come from the
    original coordinates with the clamped projection of the module docstring, so the index
    never changes a result.
    Progress (in points) goes to the reporter installed with :func:`reporting`.

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
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    segments = _Segments(a, b, np.asarray(target_owner))
    t_start, t_count = group_starts(segments.owner, n_groups)
    if int(t_count[point_owner].sum()) <= small_call:
        small_group = max(small_group, int(t_count[point_owner].max()))
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

    # Points of groups with as many segments side by side, a batch's groups within a factor of two
    # of each other (each point is compared with as many segments as the batch's largest group has):
    # little padding, also where a small call searches every group exhaustively.
    counts = t_count[point_owner[exhaustive]]
    order = np.argsort(counts, kind="stable")
    exhaustive, counts = exhaustive[order], counts[order]
    size_class = np.frexp(np.maximum(counts - 1, 0))[1]  # k for 2^(k-1) < count <= 2^k
    ends = [*(np.flatnonzero(np.diff(size_class)) + 1).tolist(), exhaustive.size] if exhaustive.size else []
    rows = max(1, CHUNK // max(small_group, 1))
    for first, end in zip([0, *ends[:-1]], ends):
        for start in range(first, end, rows):
            which = exhaustive[start:min(start + rows, end)]
            owner = point_owner[which]
            segment = t_start[owner, None] + np.arange(t_count[owner[-1]])  # the largest group of the batch
            valid = segment < (t_start + t_count)[owner, None]
            store(which, *segments.best_of(points[which], np.minimum(segment, len(a) - 1), valid),
                  start + len(which))
    if queried.size:
        large = np.flatnonzero(~small & (np.bincount(point_owner[queried], minlength=n_groups) > 0))
        tree = _CapsuleTree(segments, t_start[large], t_count[large])
        # Each point starts at the leaf whose middle vertex is nearest (any leaf would give the
        # same result; a near one leaves little else to search).
        leaf = tree.leaves
        middle = (tree.lo[leaf] + tree.hi[leaf]) // 2
        seeds = _SeparatedTree(a[middle], segments.owner[middle], points[queried], point_owner[queried], n_groups)
        scale = max(float(np.max(np.abs(points[queried]))), float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1.0)
        for start in range(0, queried.size, QUERY_POINTS):
            which = queried[start:start + QUERY_POINTS]
            nearest_middle = seeds.tree.query(seeds.moved[start:start + QUERY_POINTS], workers=query_workers())[1]
            store(which, *tree.nearest(points[which], leaf[nearest_middle], scale),
                  exhaustive.size + min(start + QUERY_POINTS, queried.size))
    return distance, nearest_xy


class _Segments:
    """Segments ``a→b`` with their group, in the arrays the clamped projection needs."""

    def __init__(self, a, b, owner):
        self.owner = owner
        self.ax, self.ay = np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])
        self.bx, self.by = np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])
        self.dx, self.dy = self.bx - self.ax, self.by - self.ay
        len2 = self.dx * self.dx + self.dy * self.dy
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


def _chord_distance(px, py, sx, sy, cx, cy, inv_len2):
    """Distance of points ``(px, py)`` to the segments from ``(sx, sy)`` along ``(cx, cy)``, clamped."""
    ex, ey = px - sx, py - sy
    t = np.minimum(np.maximum((ex * cx + ey * cy) * inv_len2, 0.0), 1.0)
    ex -= t * cx
    ey -= t * cy
    return np.sqrt(ex * ex + ey * ey)


class _CapsuleTree:
    """Runs of consecutive segments of each group, halved down to :data:`LEAF_SEGMENTS`, each in a capsule.

    Node ``i`` holds the segments ``lo[i]`` to ``hi[i] - 1`` of one group (a root holds the whole
    group) and, unless it is a leaf, has the children ``child[i]`` and ``child[i] + 1`` (the two
    halves). Its chord runs from the start ``S`` of segment ``lo`` to the end ``E`` of segment
    ``hi - 1``; its capsule is every point within ``radius`` of the chord, ``radius`` at least
    the largest distance of a segment end of the run from the chord (about the sagitta
    ``s² / (8 R)`` for a run of length ``s`` along a curve of radius ``R``). The capsule is
    convex and holds every segment end of the run, so it holds every segment. For a point
    ``p`` whose nearest point on the chord is ``c`` (at parameter ``t``), the run's segments
    are therefore

    - no nearer than ``|p c| - radius`` (the lower bound), and
    - no farther, for the nearest of them, than ``|p c| + min(t, 1 - t) |S E|`` (a chord end is
      a segment end), nor than ``|p c| + radius`` when the run is connected (each segment
      ends where the next starts): a path from ``S`` to ``E`` crosses the perpendicular to
      the chord through ``c`` inside the capsule (the upper bound);
    - no nearer than the distance to the box of the segment ends (tighter for whole rings
      and their halves, whose chords are short or shared).

    Runs that jump (several rings, unordered segments) only loosen the bounds, never change a
    result. Each row of ``capsule`` holds what a bound needs of one node: ``S``, ``E - S``,
    ``1 / |S E|²`` (0 for a point), ``radius``, ``|S E|``, ``radius`` again where the run is
    connected (``inf`` elsewhere) and the box ``xmin, ymin, xmax, ymax`` of its segment ends.
    Leaves' radii are computed from their segment ends, inner ones bounded from the
    children's (:meth:`_inner_radii`).

    Parameters
    ----------
    segments : _Segments
    start, count : numpy.ndarray
        First segment and number of segments of each group indexed, one root each.
    """

    def __init__(self, segments, start, count):
        self.segments = segments
        lo, hi = np.asarray(start, dtype=np.int64), np.asarray(start + count, dtype=np.int64)
        levels, size = [], 0
        while lo.size:
            inner = np.flatnonzero(hi - lo > LEAF_SEGMENTS)
            child = np.full(lo.size, -1, dtype=np.int64)
            child[inner] = size + lo.size + 2 * np.arange(inner.size)
            levels.append((lo, hi, child))
            size += lo.size
            mid = (lo[inner] + hi[inner]) // 2
            lo, hi = np.column_stack([lo[inner], mid]).ravel(), np.column_stack([mid, hi[inner]]).ravel()
        self.lo, self.hi, self.child = (np.concatenate(column) for column in zip(*levels))
        s = segments
        sx, sy = s.ax[self.lo], s.ay[self.lo]
        cx, cy = s.bx[self.hi - 1] - sx, s.by[self.hi - 1] - sy
        len2 = cx * cx + cy * cy
        inv_len2 = np.divide(1.0, len2, out=np.zeros_like(len2), where=len2 > 0)
        # Segment i ends where segment i + 1 starts; breaks before segment k: broken[k].
        joined = (s.bx[:-1] == s.ax[1:]) & (s.by[:-1] == s.ay[1:])
        broken = np.concatenate([[0], np.cumsum(~joined)])
        # b_i is an end of its own (not a_{i+1}, not a_i), whose distance counts in the radius.
        loose = np.append(~joined, True) & ((s.bx != s.ax) | (s.by != s.ay))
        self.capsule = np.zeros((len(cx), 12))
        self.capsule[:, :5] = np.column_stack([sx, sy, cx, cy, inv_len2])
        self.capsule[:, 6] = np.sqrt(len2)
        inner = np.flatnonzero(self.child >= 0)
        self.parent, self.sibling = np.full(len(self.lo), -1), np.full(len(self.lo), -1)
        self.parent[self.child[inner]], self.parent[self.child[inner] + 1] = inner, inner
        self.sibling[self.child[inner]], self.sibling[self.child[inner] + 1] = self.child[inner] + 1, self.child[inner]
        leaf = np.flatnonzero(self.child < 0)
        self.leaves = leaf[np.argsort(self.lo[leaf])]  # in segment order, so by group
        self.capsule[leaf, 5] = self._leaf_radii(leaf, loose)
        offsets = np.cumsum([0] + [len(level[0]) for level in levels])
        for (_, _, child), offset in zip(levels[::-1], offsets[-2::-1]):
            self._inner_radii(offset + np.flatnonzero(child >= 0))
        connected = broken[self.hi - 1] == broken[self.lo]
        self.capsule[:, 7] = np.where(connected, self.capsule[:, 5], np.inf)
        self.capsule[:, 8:] = self._boxes(levels, offsets)

    def _boxes(self, levels, offsets):
        """``(xmin, ymin, xmax, ymax)`` of the segment ends of every node: leaves first, then each level up."""
        s = self.segments
        box = np.zeros((len(self.lo), 4))
        leaf = np.flatnonzero(self.child < 0)
        count = self.hi[leaf] - self.lo[leaf]
        segment = np.arange(count.sum()) + np.repeat(self.lo[leaf] - (np.cumsum(count) - count), count)
        ends = np.cumsum(count) - count
        box[leaf, 0] = np.minimum.reduceat(np.minimum(s.ax[segment], s.bx[segment]), ends)
        box[leaf, 1] = np.minimum.reduceat(np.minimum(s.ay[segment], s.by[segment]), ends)
        box[leaf, 2] = np.maximum.reduceat(np.maximum(s.ax[segment], s.bx[segment]), ends)
        box[leaf, 3] = np.maximum.reduceat(np.maximum(s.ay[segment], s.by[segment]), ends)
        for (_, _, child), offset in zip(levels[::-1], offsets[-2::-1]):
            inner = np.flatnonzero(child >= 0)
            left, right = box[child[inner]], box[child[inner] + 1]
            box[offset + inner] = np.concatenate([np.minimum(left[:, :2], right[:, :2]),
                                                  np.maximum(left[:, 2:], right[:, 2:])], axis=1)
        return box

    def _leaf_radii(self, leaf, loose):
        """Largest distance of the segment ends of each ``leaf`` from its chord (``loose``: ends not starting the next)."""
        count = self.hi[leaf] - self.lo[leaf]
        last = np.cumsum(count)
        segment = np.arange(last[-1]) + np.repeat(self.lo[leaf] - (last - count), count)
        chord = [np.repeat(column, count) for column in self.capsule[leaf, :5].T]
        s = self.segments
        far = _chord_distance(s.ax[segment], s.ay[segment], *chord)
        # The run's last end is the chord's end; other ends are starts of the next segment
        # unless the run jumps there.
        loose = loose[segment]
        loose[last - 1] = False
        loose = np.flatnonzero(loose)
        far[loose] = np.maximum(far[loose], _chord_distance(s.bx[segment[loose]], s.by[segment[loose]],
                                                            *(column[loose] for column in chord)))
        return np.maximum.reduceat(far, last - count)

    def _inner_radii(self, node):
        """Radii of the inner ``node`` from their children's, which must be known.

        A child's segments lie within its radius of its chord, and its chord within the
        larger distance of its two ends from the parent's chord (the capsule is convex): the
        sum bounds the child's ends' distance from the parent's chord. About ``4 / 3`` of the
        exact radius along a smooth curve, and ``O(1)`` work per node instead of per segment.
        """
        chord = self.capsule[node, :5].T
        far = np.zeros(node.size)
        for child in (self.child[node], self.child[node] + 1):
            start = self.capsule[child, :2].T
            end = start + self.capsule[child, 2:4].T
            reach = np.maximum(_chord_distance(*start, *chord), _chord_distance(*end, *chord))
            far = np.maximum(far, self.capsule[child, 5] + reach)
        self.capsule[node, 5] = far

    def nearest(self, points, leaf, scale):
        """Exact squared distance, first nearest segment and its ``t`` for ``points``, each starting at a ``leaf``.

        Parameters
        ----------
        points : numpy.ndarray
            ``(q, 2)`` query points, in the units of the segments.
        leaf : numpy.ndarray
            A leaf of each point's group, near the point (any leaf gives the same result).
        scale : float
            Largest absolute coordinate of the points and segments, in those units: runs are
            dropped only when farther than ``U`` by more than ``1024`` units in the last place
            of it, far more than the rounding of the distances computed here (some tens of such
            units) and of the radii summed up the levels (a few per level).

        Returns
        -------
        d2 : numpy.ndarray
            Squared distance to the nearest segment, in squared units.
        segment : numpy.ndarray
            That segment, the first in order on ties.
        t : numpy.ndarray
            Parameter of the closest point along it, ``a + t (b - a)``.
        """
        margin = 1024.0 * float(np.spacing(scale))
        x, y = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
        q = len(x)
        best_d2, best_t = np.full(q, np.inf), np.zeros(q)
        best_segment = np.full(q, np.iinfo(np.int64).max)
        bound = np.full(q, np.inf)  # U: a segment end or segment at most that far
        # Each point first compares the segments of its leaf, so that U is about its final
        # distance, then bounds the other half at each level on the way up to the root.
        # Points go in batches whose arrays stay in the CPU cache.
        passed = []
        for start in range(0, q, TREE_QUERIES):
            row = np.arange(start, min(start + TREE_QUERIES, q))
            self._compare(x, y, row, leaf[row], best_d2, best_segment, best_t, bound, distinct=True)
            node = leaf[row]
            while row.size:
                up = self.parent[node] >= 0
                row, node = row[up], node[up]
                other = self.sibling[node]
                lower, upper = self._bounds(x[row], y[row], other)
                bound[row] = np.minimum(bound[row], upper)
                passed.append((row, other, lower))
                node = self.parent[node]
        # The halves passed by are searched only where they come within U: mostly none, or
        # down to the next leaf.
        row, node, lower = (np.concatenate(column) for column in zip(*passed))
        near = np.flatnonzero(lower <= bound[row] + margin)
        near = near[np.argsort(row[near], kind="stable")]
        self._search(x, y, row[near], node[near], margin, best_d2, best_segment, best_t, bound)
        return best_d2, best_segment, best_t

    def _bounds(self, x, y, node):
        """Lower and upper bounds of the distance of the points ``(x, y)`` to the segments of ``node``.

        The lower bound is the larger of the distances to the capsule and to the bounding box
        of the segment ends (tighter for whole rings and their halves); the upper bound is
        that of the class docstring.
        """
        capsule = self.capsule[node]
        ex, ey = x - capsule[:, 0], y - capsule[:, 1]
        cx, cy = capsule[:, 2], capsule[:, 3]
        t = np.minimum(np.maximum((ex * cx + ey * cy) * capsule[:, 4], 0.0), 1.0)
        ex -= t * cx
        ey -= t * cy
        chord = np.sqrt(ex * ex + ey * ey)
        gx = np.maximum(np.maximum(capsule[:, 8] - x, x - capsule[:, 10]), 0.0)
        gy = np.maximum(np.maximum(capsule[:, 9] - y, y - capsule[:, 11]), 0.0)
        lower = np.maximum(chord - capsule[:, 5], np.sqrt(gx * gx + gy * gy))
        return lower, chord + np.minimum(np.minimum(t, 1.0 - t) * capsule[:, 6], capsule[:, 7])

    def _search(self, x, y, row, node, margin, best_d2, best_segment, best_t, bound):
        """Search the runs ``node`` for the points ``row`` (non-decreasing), all their halves kept within ``U``."""
        stack = [(row, node)] if row.size else []
        while stack:
            row, node = stack.pop()
            lower, upper = self._bounds(x[row], y[row], node)
            first = np.flatnonzero(np.concatenate([[True], row[1:] != row[:-1]]))
            bound[row[first]] = np.minimum(bound[row[first]], np.minimum.reduceat(upper, first))
            keep = lower <= bound[row] + margin
            row, node = row[keep], node[keep]
            child = self.child[node]
            leaf = child < 0
            if leaf.any():
                for part in range(0, int(np.count_nonzero(leaf)), CHUNK // LEAF_SEGMENTS):
                    part = slice(part, part + CHUNK // LEAF_SEGMENTS)
                    self._compare(x, y, row[leaf][part], node[leaf][part], best_d2, best_segment, best_t, bound)
                row, child = row[~leaf], child[~leaf]
            row, node = np.repeat(row, 2), np.column_stack([child, child + 1]).ravel()
            if row.size > CHUNK and row[0] != row[-1]:
                # Halve the points (never one point's runs) to keep the arrays within CHUNK.
                cut = int(np.searchsorted(row, row[row.size // 2]))
                cut = cut or int(np.searchsorted(row, row[0], side="right"))
                stack += [(row[cut:], node[cut:]), (row[:cut], node[:cut])]
            elif row.size:
                stack.append((row, node))

    def _compare(self, x, y, row, node, best_d2, best_segment, best_t, bound, distinct=False):
        """Compare the points ``row`` (non-decreasing; ``distinct``: each once) with every segment of the leaves ``node``.

        Keeps the best (the first segment in order on ties) in ``best_*`` and lowers ``bound``.
        """
        segment = self.lo[node, None] + np.arange(LEAF_SEGMENTS)
        valid = segment < self.hi[node, None]
        d2, segment, t = self.segments.best_of(np.column_stack([x[row], y[row]]),
                                               np.minimum(segment, self.hi[node, None] - 1), valid)
        r = row
        if not distinct:
            step = np.concatenate([[False], row[1:] != row[:-1]])
            first, group = np.flatnonzero(step | (np.arange(row.size) == 0)), np.cumsum(step)
            least = np.minimum.reduceat(d2, first)[group]
            key = np.where(d2 == least, segment, np.iinfo(np.int64).max)
            pick = np.flatnonzero(key == np.minimum.reduceat(key, first)[group])  # one per point: leaves are disjoint
            r, d2, segment, t = row[pick], d2[pick], segment[pick], t[pick]
        better = (d2 < best_d2[r]) | ((d2 == best_d2[r]) & (segment < best_segment[r]))
        r = r[better]
        best_d2[r], best_segment[r], best_t[r] = d2[better], segment[better], t[better]
        bound[r] = np.minimum(bound[r], np.sqrt(best_d2[r]))


class _SeparatedTree:
    """One KD-tree of the target points of all groups, each group moved to its own grid cell.

    Cells are wider than any distance a query needs, so a query never reaches another
    group; the KD-tree only proposes candidates, whose distances are then computed exactly.
    """

    def __init__(self, targets, target_owner, queries, query_owner, n_groups):
        low = np.minimum(grouped_reduce(np.minimum, targets, target_owner, n_groups, np.inf),
                         grouped_reduce(np.minimum, queries, query_owner, n_groups, np.inf))
        high = np.maximum(grouped_reduce(np.maximum, targets, target_owner, n_groups, -np.inf),
                          grouped_reduce(np.maximum, queries, query_owner, n_groups, -np.inf))
        extent = float(np.max(np.where(np.isfinite(high - low), high - low, 0.0)))
        # Within a group every distance is below sqrt(2) extent and a query needs at most
        # twice that; another group's cell is at least 3 extent + 4 away.
        self.reach = 3.0 * extent + 2.0
        cell = 4.0 * extent + 4.0
        columns = int(np.ceil(np.sqrt(n_groups)))
        offset = np.column_stack([np.arange(n_groups) % columns, np.arange(n_groups) // columns]) * cell
        offset = offset - np.where(np.isfinite(low), low, 0.0)
        # Sliding-midpoint splits build and query faster here than median splits; which tree
        # is built never changes a result (candidates are checked exactly, see nearest_points).
        self.tree = kd_tree()(targets + offset[target_owner], balanced_tree=False)
        self.moved = queries + offset[query_owner]
        self.size = len(targets)
        # Rounding of the moved coordinates, bounded generously.
        self.margin = 8.0 * float(np.spacing(max(float(np.max(np.abs(self.moved), initial=1.0)),
                                                 float(np.max(np.abs(self.tree.data), initial=1.0)))))


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
    nearer is the answer unless the second lies within rounding of it (repeated targets, as
    the closing sample of a ring); those few points (and only they) take every target within
    rounding of that distance from the KD-tree and compare them all exactly. ``O(n log m)``,
    exact, and bit for bit the distance that comparing every point with every target gives.

    Parameters
    ----------
    points, targets : numpy.ndarray
        ``(n, 2)`` query points and ``(m, 2)`` targets, in any one unit (pixels).
    point_owner, target_owner : numpy.ndarray
        Group of each point and of each target (``target_owner`` non-decreasing).
    n_groups : int

    Returns
    -------
    numpy.ndarray
        Distance of each point to its nearest target, in the units of the coordinates.
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
        found, target = index.tree.query(index.moved[part], k=2, distance_upper_bound=index.reach,
                                         workers=query_workers())
        present = target < index.size
        target = np.minimum(target, index.size - 1)
        present &= target_owner[target] == point_owner[which, None]
        ex = points[which, 0, None] - targets[target, 0]
        ey = points[which, 1, None] - targets[target, 1]
        d2 = np.where(present, ex * ex + ey * ey, np.inf)
        best = d2.min(axis=1)
        distance[which] = np.sqrt(best)
        # another target may be as near while the second candidate is within rounding of the first
        unsettled.append(start + np.flatnonzero(present[:, 1] & (found[:, 1] <= distance[which] + index.margin)))
        _report(min(start + QUERY_POINTS, queried.size), queried.size)
    again = np.concatenate(unsettled)
    if again.size:
        which = queried[again]
        # Every target whose exact distance is at most the best found lies in this ball.
        near = index.tree.query_ball_point(index.moved[again], distance[which] + 2.0 * index.margin)
        count = np.fromiter(map(len, near), dtype=np.int64, count=len(near))
        target = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in near])
        row = np.repeat(which, count)
        ex, ey = points[row, 0] - targets[target, 0], points[row, 1] - targets[target, 1]
        d2 = np.where(target_owner[target] == point_owner[row], ex * ex + ey * ey, np.inf)
        distance[which] = np.sqrt(np.minimum.reduceat(d2, np.cumsum(count) - count))
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
