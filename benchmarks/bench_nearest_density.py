"""Cost of the nearest-segment search against the spacing of the vertices (issue 30, item 11).

One circle ring of ``n`` vertices is compared with a circle 1 px smaller of as many
vertices (same centre, same angles, so each vertex's nearest point is a vertex shared by two
segments: a tie). The cases:

- **dense**: vertices 0.025 px apart (``n = 10^5``: radius 398 px), 40 vertices per pixel
  of the distance searched;
- **sparse**: vertices 2.5 px apart (``n = 10^5``: radius 39,789 px);
- **dense 10^6**: a million vertices 0.025 px apart.

Two measures: **kernel**, every vertex of each ring searching the nearest segment of the
other (:func:`polytopo.evaluator.geometry.kernels.nearest_segments`, both directions, with the
closest points), and **POLIS+MTA**, the two metrics of the pair that use that search
(:func:`~polytopo.evaluator.geometry.boundary.polis`, :func:`~polytopo.evaluator.geometry.mta.max_tangent_angle`).
Each is timed with the package's search (a hierarchy of capsules over consecutive
segments) and, up to ``--legacy-max`` vertices, with the KD-tree search it replaced
(:func:`legacy_nearest_segments`, kept in this file only), alternating their order every
round, in CPU seconds of this process (the work is single-threaded, so other jobs on the
machine inflate them less than wall time). It prints the median times, the speed-ups and
the ratio dense / sparse of each search, and checks that both searches give the same
distances, closest points and metrics bit for bit. Then, as a check on the common case,
many pairs of small rings (70, 200 and 1,000 vertices, 2 x 10^5 in all;
:func:`many_rings`) are searched once with each (one direction, closest points).

Needs no data. Exit status 1 when the new search's dense / sparse ratio exceeds
``--max-ratio`` (default 2) in either measure, when the 10^6 dense case takes more than
``--max-seconds`` (default 60 s of CPU), or when the two searches differ.

Run ``python benchmarks/bench_nearest_density.py --help``.
"""

import argparse
import contextlib
import importlib
import statistics
import sys
import time

import numpy as np

from polytopo.evaluator.geometry.kernels import (
    CHUNK,
    QUERY_POINTS,
    _SeparatedTree,
    group_starts,
    grouped_reduce,
    nearest_segments,
)

__all__ = ["circles", "many_rings", "legacy_nearest_segments", "both_ways", "metrics", "main"]

# The modules, not the functions of the same names that polytopo.evaluator exports.
boundary = importlib.import_module("polytopo.evaluator.geometry.boundary")
mta = importlib.import_module("polytopo.evaluator.geometry.mta")


def circles(n, spacing, gap=1.0):
    """Two concentric circles of ``n`` vertices each, ``spacing`` px apart on the larger, ``gap`` px apart.

    Parameters
    ----------
    n : int
        Vertices of each ring.
    spacing : float
        Distance between consecutive vertices of the outer ring, in pixels.
    gap : float
        Difference of the radii, in pixels.

    Returns
    -------
    outer, inner : numpy.ndarray
        ``(n, 2)`` vertices in pixels, first vertex not repeated, all coordinates positive.
    """
    radius = n * spacing / (2 * np.pi)
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    unit = np.column_stack([np.cos(angle), np.sin(angle)])
    return unit * radius + radius + 10, unit * (radius - gap) + radius + 10


def many_rings(size, total=200_000, seed=0):
    """``total // size`` circles of ``size`` vertices, 5–50 px radius, scattered over 10⁴ px, one group each.

    Returns
    -------
    points, a, b, owner : numpy.ndarray
        The vertices moved by 0.5 px (normal), the segments ``a→b`` of each circle in
        pixels, and the group of each point and segment (the same array).
    """
    rng = np.random.default_rng(seed)
    groups = total // size
    angle = np.linspace(0, 2 * np.pi, size, endpoint=False)
    unit = np.column_stack([np.cos(angle), np.sin(angle)])
    rings = unit[None] * rng.uniform(5, 50, (groups, 1, 1)) + rng.uniform(0, 1e4, (groups, 1, 2))
    a, b = rings.reshape(-1, 2), np.roll(rings, -1, axis=1).reshape(-1, 2)
    return a + rng.normal(0, 0.5, a.shape), a, b, np.repeat(np.arange(groups), size)


def both_ways(search, outer, inner):
    """Distances and closest points of each ring's vertices to the other ring, concatenated."""
    owner = np.zeros(len(outer), dtype=np.int64)
    d1, xy1 = search(outer, owner, inner, np.roll(inner, -1, axis=0), owner, 1, closest=True)
    d2, xy2 = search(inner, owner, outer, np.roll(outer, -1, axis=0), owner, 1, closest=True)
    return np.concatenate([d1, d2]), np.concatenate([xy1, xy2])


# -- The KD-tree search the capsule hierarchy replaced, for comparison only. ----------------

def legacy_nearest_segments(points, point_owner, a, b, target_owner, n_groups, *, closest=False, small_group=64,
                            first_k=8):
    """The KD-tree search that :func:`nearest_segments` replaced: same arguments and results.

    Each segment is represented by points along it (steps of at most ``h``, the mean segment
    length of its group) in one KD-tree; a point takes its ``k`` nearest representatives, the
    exact distance ``U`` to their segments, and grows ``k`` fourfold until the ``k``-th lies
    beyond ``U + h / 2``. When the vertices are much closer together than ``U``, ``k`` grows
    with the number of vertices within ``U``: the cost this benchmark shows.
    """
    points = np.asarray(points, dtype=float)
    n = len(points)
    distance = np.full(n, np.inf)
    nearest_xy = np.array(points, dtype=float, copy=True) if closest else None
    if n == 0 or len(a) == 0:
        return distance, nearest_xy
    segments = _LegacySegments(np.asarray(a, dtype=float), np.asarray(b, dtype=float), np.asarray(target_owner))
    t_start, t_count = group_starts(segments.owner, n_groups)
    small = t_count <= small_group
    exhaustive = np.flatnonzero((t_count[point_owner] > 0) & small[point_owner])
    queried = np.flatnonzero(~small[point_owner])

    def store(which, d2, segment, t):
        distance[which] = np.sqrt(d2)
        if closest:
            nearest_xy[which, 0] = segments.ax[segment] + t * segments.dx[segment]
            nearest_xy[which, 1] = segments.ay[segment] + t * segments.dy[segment]

    exhaustive = exhaustive[np.argsort(t_count[point_owner[exhaustive]], kind="stable")]
    rows = max(1, CHUNK // max(small_group, 1))
    for start in range(0, exhaustive.size, rows):
        which = exhaustive[start:start + rows]
        owner = point_owner[which]
        segment = t_start[owner, None] + np.arange(t_count[owner[-1]])
        valid = segment < (t_start + t_count)[owner, None]
        store(which, *segments.best_of(points[which], np.minimum(segment, len(a) - 1), valid))
    if queried.size:
        reps, rep_segment, half_step = segments.representatives(n_groups)
        large = ~small[segments.owner[rep_segment]]
        reps, rep_segment = reps[large], rep_segment[large]
        index = _LegacyTree(reps, segments.owner[rep_segment], points[queried], point_owner[queried], n_groups)
        for start in range(0, queried.size, QUERY_POINTS):
            part = slice(start, start + QUERY_POINTS)
            which = queried[part]
            store(which, *index.nearest(part, points[which], point_owner[which], segments, rep_segment,
                                        half_step[point_owner[which]], first_k))
    return distance, nearest_xy


class _LegacySegments:
    def __init__(self, a, b, owner):
        self.owner = owner
        self.ax, self.ay = np.ascontiguousarray(a[:, 0]), np.ascontiguousarray(a[:, 1])
        self.dx, self.dy = np.ascontiguousarray(b[:, 0] - a[:, 0]), np.ascontiguousarray(b[:, 1] - a[:, 1])
        len2 = self.dx * self.dx + self.dy * self.dy
        self.length = np.sqrt(len2)
        self.inv_len2 = np.divide(1.0, len2, out=np.zeros_like(len2), where=len2 > 0)

    def best_of(self, points, segment, valid):
        ex, ey = points[:, 0, None] - self.ax[segment], points[:, 1, None] - self.ay[segment]
        cx, cy = self.dx[segment], self.dy[segment]
        t = np.clip((ex * cx + ey * cy) * self.inv_len2[segment], 0.0, 1.0)
        ex -= t * cx
        ey -= t * cy
        d2 = ex * ex + ey * ey
        d2[~valid] = np.inf
        best = d2.min(axis=1)
        tied = d2 == best[:, None]
        first = np.where(tied, segment, np.iinfo(np.int64).max).min(axis=1)
        column = np.argmax(tied & (segment == first[:, None]), axis=1)
        return best, first, t[np.arange(len(points)), column]

    def representatives(self, n_groups):
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


class _LegacyTree(_SeparatedTree):
    """The package's grid-cell KD-tree with the old candidate search (growing k) of the previous release."""

    def nearest(self, rows, points, owner, segments, rep_segment, half_step, first_k):
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
        return valid[:, -1] & (found[:, -1] <= np.sqrt(row_best) + half_step[part] + self.margin)


# -- The benchmark. ------------------------------------------------------------------------

@contextlib.contextmanager
def _searching_with(search):
    """POLIS and MTA call ``search`` instead of :func:`nearest_segments` inside the block."""
    saved = boundary.nearest_segments, mta.nearest_segments
    boundary.nearest_segments = mta.nearest_segments = search
    try:
        yield
    finally:
        boundary.nearest_segments, mta.nearest_segments = saved


def metrics(search, outer, inner):
    """POLIS and MTA (2 px samples) of the pair of rings, with ``search`` as the nearest-segment kernel."""
    with _searching_with(search):
        return (boundary.polis([[outer]], [[inner]]),
                mta.max_tangent_angle([[inner]], [[outer]], np.array([1.0])))


MEASURES = {"kernel": both_ways, "POLIS+MTA": metrics}
SEARCHES = {"capsules": nearest_segments, "KD-tree (legacy)": legacy_nearest_segments}


def _timed(measure, search, rings):
    started = time.process_time()
    result = MEASURES[measure](search, *rings)
    return time.process_time() - started, result


def _same(first, second):
    return all(np.array_equal(x, y) for x, y in zip(first, second))


def main(argv=None):
    """Run the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e5, help="vertices per ring of the dense and sparse cases")
    parser.add_argument("--large", type=float, default=1e6, help="vertices per ring of the large dense case (0: skip)")
    parser.add_argument("--dense", type=float, default=0.025, help="vertex spacing of the dense cases, px")
    parser.add_argument("--sparse", type=float, default=2.5, help="vertex spacing of the sparse case, px")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the dense and sparse cases (medians)")
    parser.add_argument("--legacy-max", type=float, default=1e5,
                        help="largest ring the KD-tree search is timed on (it takes minutes at 10^6)")
    parser.add_argument("--max-ratio", type=float, default=2.0, help="largest dense / sparse time ratio accepted")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="most CPU seconds for the large dense case")
    args = parser.parse_args(argv)
    n = int(args.n)
    searches = [name for name in SEARCHES if name == "capsules" or n <= args.legacy_max]
    cases = {"dense": circles(n, args.dense), "sparse": circles(n, args.sparse)}
    seconds = {(measure, case, name): [] for measure in MEASURES for case in cases for name in searches}
    failed = False
    for measure in MEASURES:  # first calls (imports, caches) outside the timings
        for name in searches:
            _timed(measure, SEARCHES[name], circles(2000, args.dense))
    for round_ in range(args.repeats):
        for case, rings in cases.items():
            for measure in MEASURES:
                results = [_timed(measure, SEARCHES[name], rings)
                           for name in (searches if round_ % 2 == 0 else searches[::-1])]
                for name, (elapsed, _) in zip(searches if round_ % 2 == 0 else searches[::-1], results):
                    seconds[measure, case, name].append(elapsed)
                if round_ == 0 and len(results) == 2:
                    same = _same(results[0][1], results[1][1])
                    print(f"{case:>6} n={n} {measure:>9}: outputs of both searches "
                          f"{'identical' if same else 'DIFFERENT'}", flush=True)
                    failed |= not same
    median = {key: statistics.median(values) for key, values in seconds.items()}
    print(f"\nmedian CPU seconds over {args.repeats} rounds, n = {n} vertices per ring "
          f"(kernel: both directions with closest points)")
    for measure in MEASURES:
        for name in searches:
            dense, sparse = median[measure, "dense", name], median[measure, "sparse", name]
            print(f"  {measure:>9} {name:>16}: dense ({args.dense} px) {dense:7.3f} s   sparse ({args.sparse} px) "
                  f"{sparse:7.3f} s   dense/sparse {dense / sparse:5.2f}")
        if len(searches) == 2:
            print(f"  {measure:>9} speed-up: " + ", ".join(
                f"{case} x{median[measure, case, searches[1]] / median[measure, case, 'capsules']:.1f}"
                for case in cases))
        ratio = median[measure, "dense", "capsules"] / median[measure, "sparse", "capsules"]
        if ratio > args.max_ratio:
            print(f"FAIL: {measure} dense / sparse {ratio:.2f} above {args.max_ratio}", file=sys.stderr)
            failed = True
    if len(searches) == 2:
        print("\nmany pairs, 2 x 10^5 vertices in all, one direction with closest points (CPU seconds, once)")
        for size in (70, 200, 1000):
            points, a, b, owner = many_rings(size)
            timed = {}
            for name in searches:
                started = time.process_time()
                result = SEARCHES[name](points, owner, a, b, owner, owner[-1] + 1, closest=True)
                timed[name] = (time.process_time() - started, result)
            same = _same(timed["capsules"][1], timed[searches[1]][1])
            print(f"  {len(points) // size:>5} rings of {size:>4} vertices: capsules {timed['capsules'][0]:6.3f} s, "
                  f"KD-tree (legacy) {timed[searches[1]][0]:6.3f} s, outputs {'identical' if same else 'DIFFERENT'}")
            failed |= not same
    if args.large:
        large = int(args.large)
        rings = circles(large, args.dense)
        elapsed, result = _timed("kernel", nearest_segments, rings)
        print(f"  {'kernel':>9} {'capsules':>16}: dense ({args.dense} px) n = {large}: {elapsed:8.3f} s")
        if large <= args.legacy_max:
            legacy, expected = _timed("kernel", legacy_nearest_segments, rings)
            same = _same(result, expected)
            print(f"  {'kernel':>9} {'KD-tree (legacy)':>16}: dense ({args.dense} px) n = {large}: {legacy:8.3f} s, "
                  f"outputs {'identical' if same else 'DIFFERENT'}")
            failed |= not same
        if elapsed > args.max_seconds:
            print(f"FAIL: {elapsed:.1f} s above {args.max_seconds} s at n = {large}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
