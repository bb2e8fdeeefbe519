"""Nearest-segment and nearest-point kernels against a brute-force reference."""

import numpy as np
import pytest
import shapely

from polytopo.evaluator.geometry import kernels
from polytopo.evaluator.geometry.kernels import SMALL_CALL, SMALL_GROUP, nearest_points, nearest_segments, reporting, ring_perimeters


def _brute_force(points, point_owner, a, b, target_owner):
    """Every point against every segment of its group; the first segment wins ties."""
    distance = np.full(len(points), np.inf)
    closest = np.array(points, dtype=float, copy=True)
    for i, (px, py) in enumerate(points):
        mine = np.flatnonzero(target_owner == point_owner[i])
        if not mine.size:
            continue
        cx, cy = b[mine, 0] - a[mine, 0], b[mine, 1] - a[mine, 1]
        length2 = cx * cx + cy * cy
        inverse = np.divide(1.0, length2, out=np.zeros_like(length2), where=length2 > 0)
        ex, ey = px - a[mine, 0], py - a[mine, 1]
        t = np.clip((ex * cx + ey * cy) * inverse, 0.0, 1.0)
        ex, ey = ex - t * cx, ey - t * cy
        d2 = ex * ex + ey * ey
        j = int(np.argmin(d2))  # the first of equal minima
        distance[i] = np.sqrt(d2[j])
        closest[i] = (a[mine[j], 0] + t[j] * cx[j], a[mine[j], 1] + t[j] * cy[j])
    return distance, closest


def _scene(rng, kind):
    """Groups of points and segments: integer grids (many ties), rings, mixed lengths, rectangles.

    Group sizes straddle :data:`SMALL_GROUP`, so both the exhaustive and the indexed search run.
    """
    points, point_owner, a, b, target_owner = [], [], [], [], []
    for group in range(int(rng.integers(1, 6))):
        n = int(rng.integers(1, 30))
        m = int(rng.integers(0, 25)) if rng.random() < 0.5 else int(rng.integers(SMALL_GROUP + 1, 3 * SMALL_GROUP))
        base = rng.uniform(-500, 500, 2)
        if kind == "grid":
            p = rng.integers(0, 8, (n, 2)) + base
            start, end = rng.integers(0, 8, (m, 2)) + base, rng.integers(0, 8, (m, 2)) + base
        elif kind == "ring":
            angle = np.sort(rng.uniform(0, 2 * np.pi, m))
            start = np.column_stack([np.cos(angle), np.sin(angle)]) * 20 + base
            end = np.roll(start, -1, axis=0)
            p = rng.normal(0, 20, (n, 2)) + base
        elif kind == "mixed":
            start = rng.uniform(0, 50, (m, 2)) + base
            end = start + rng.choice([0.0, 0.01, 1.0, 200.0], (m, 1)) * rng.normal(size=(m, 2))
            p = rng.uniform(-30, 80, (n, 2)) + base
        else:
            x, y, w, h = rng.integers(0, 5, 4) + [0, 0, 1, 1]
            corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float)
            # each side cut into equal collinear pieces: ties at every shared end
            pieces = max(1, m // 4)
            f = np.arange(pieces)[:, None] / pieces
            start = np.concatenate([c + f * (d - c) for c, d in zip(corners, np.roll(corners, -1, axis=0))]) + base
            end = np.roll(start, -1, axis=0)
            p = rng.integers(0, 20, (n, 2)) / 2.0 + base
        points.append(p)
        point_owner.append(np.full(n, group))
        a.append(start.reshape(-1, 2))
        b.append(end.reshape(-1, 2))
        target_owner.append(np.full(len(start), group))
    points, a, b = (np.concatenate(x).astype(float) for x in (points, a, b))
    point_owner, target_owner = (np.concatenate(x).astype(np.int64) for x in (point_owner, target_owner))
    return points, point_owner, a, b, target_owner, int(point_owner.max()) + 1


@pytest.mark.parametrize("small_call", [SMALL_CALL, 0])
@pytest.mark.parametrize("kind", ["grid", "ring", "mixed", "rectangle"])
def test_nearest_segments_equals_brute_force_bit_for_bit(kind, small_call):
    """Each scene as a whole call (small ones all exhaustive) and with the index for the large groups."""
    rng = np.random.default_rng(sum(map(ord, kind)))
    for _ in range(15):
        points, point_owner, a, b, target_owner, n_groups = _scene(rng, kind)
        distance, closest = nearest_segments(points, point_owner, a, b, target_owner, n_groups, closest=True,
                                             small_call=small_call)
        expected_distance, expected_closest = _brute_force(points, point_owner, a, b, target_owner)
        np.testing.assert_array_equal(distance, expected_distance)
        np.testing.assert_array_equal(closest, expected_closest)


def test_many_points_in_groups_of_every_size_match_brute_force():
    """More points than one exhaustive batch holds, in groups of 1 to 3 x SMALL_GROUP segments."""
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 3 * SMALL_GROUP, 60)
    a = rng.uniform(0, 30, (int(sizes.sum()), 2))
    b = a + rng.normal(0, 3, a.shape)
    target_owner = np.repeat(np.arange(60), sizes)
    point_owner = np.sort(rng.integers(0, 60, 80_000))
    points = rng.uniform(-5, 35, (80_000, 2))
    distance, closest = nearest_segments(points, point_owner, a, b, target_owner, 60, closest=True)
    some = rng.choice(80_000, 1500, replace=False)
    expected_distance, expected_closest = _brute_force(points[some], point_owner[some], a, b, target_owner)
    np.testing.assert_array_equal(distance[some], expected_distance)
    np.testing.assert_array_equal(closest[some], expected_closest)


def test_nearest_segments_agrees_with_geos_on_a_dense_ring():
    angle = np.linspace(0, 2 * np.pi, 5000, endpoint=False)
    ring = np.column_stack([np.cos(angle), np.sin(angle)]) * (300 + 10 * np.sin(41 * angle))[:, None]
    points = np.random.default_rng(3).uniform(-400, 400, (300, 2))
    distance, _ = nearest_segments(points, np.zeros(300, dtype=np.int64), ring, np.roll(ring, -1, axis=0),
                                   np.zeros(len(ring), dtype=np.int64), 1)
    expected = shapely.distance(shapely.points(points), shapely.LinearRing(ring))
    np.testing.assert_allclose(distance, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("small_group", [SMALL_GROUP, 0])
def test_groups_never_see_each_other(small_group):
    """Two groups at the same place: each point only sees the segments of its own group."""
    a = np.array([[0.0, 0.0], [0.0, 100.0]])
    b = np.array([[10.0, 0.0], [10.0, 100.0]])
    points = np.array([[5.0, 99.0], [5.0, 1.0], [5.0, 50.0]])
    distance, _ = nearest_segments(points, np.array([0, 1, 2]), a, b, np.array([0, 1]), 3, small_group=small_group,
                                   small_call=0)
    assert distance.tolist() == [99.0, 99.0, np.inf]


def test_nearest_points_exact_with_many_far_apart_groups():
    """Group offsets in the KD-tree never leak into the distances, even for huge extents."""
    rng = np.random.default_rng(5)
    n_groups = 400
    targets = rng.uniform(0, 1, (n_groups * 3, 2)) * 1e6 + 1e7
    target_owner = np.repeat(np.arange(n_groups), 3)
    points = targets[::3] + 0.25
    found = nearest_points(points, np.arange(n_groups), targets, target_owner, n_groups)
    expected = np.min(np.linalg.norm(points[:, None, :] - targets.reshape(n_groups, 3, 2), axis=2), axis=1)
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-9)


def test_nearest_points_bit_for_bit_brute_force_with_ties():
    """Integer grids make many exact ties (the second candidate as near as the first): the
    distance is still the brute-force minimum to the last bit, also for empty and one-target groups."""
    rng = np.random.default_rng(17)
    n_groups = 60
    sizes = rng.integers(0, 40, n_groups)
    sizes[:3] = (0, 1, 2)
    target_owner = np.repeat(np.arange(n_groups), sizes)
    targets = rng.integers(0, 12, (len(target_owner), 2)).astype(float) + 3.5
    point_owner = np.sort(rng.integers(0, n_groups, 3000))
    points = rng.integers(0, 12, (3000, 2)).astype(float) + rng.choice([0.0, 0.5], (3000, 2)) + 3.5
    found = nearest_points(points, point_owner, targets, target_owner, n_groups)
    expected = np.full(len(points), np.inf)
    for i, (point, owner) in enumerate(zip(points, point_owner)):
        mine = targets[target_owner == owner]
        if len(mine):
            ex, ey = point[0] - mine[:, 0], point[1] - mine[:, 1]
            expected[i] = np.sqrt(np.min(ex * ex + ey * ey))
    assert np.array_equal(found, expected)
    assert np.isinf(found[point_owner == 0]).all()


def test_progress_reaches_the_total():
    seen = []
    points = np.random.default_rng(0).uniform(0, 10, (70_000, 2))
    ring = np.column_stack([np.cos(np.arange(100) / 16), np.sin(np.arange(100) / 16)])
    owner = np.repeat([0, 1], 35_000)
    a = np.concatenate([ring[:3], ring])  # group 0 small (exhaustive), group 1 large (indexed)
    with reporting(lambda done, total: seen.append((done, total))):
        nearest_segments(points, owner, a, np.roll(a, -1, axis=0), np.repeat([0, 1], [3, 100]), 2)
    assert seen[-1] == (70_000, 70_000) and len(seen) >= 2
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_ring_perimeters_are_the_closed_ring_lengths():
    """Each ring's perimeter, closing segment included, as GEOS measures the closed ring."""
    rng = np.random.default_rng(7)
    rings = [rng.uniform(0, 500, size=(n, 2)) for n in (3, 4, 17, 250)]
    expected = [shapely.LinearRing(ring).length for ring in rings]
    np.testing.assert_allclose(ring_perimeters(rings), expected, rtol=1e-12)
    assert ring_perimeters([]).shape == (0,)


def test_ring_perimeters_in_runs_of_whole_rings_are_bit_identical(monkeypatch):
    """Runs of a few vertices (a ring longer than a run alone) give the one-pass sums to the last bit."""
    rng = np.random.default_rng(11)
    rings = [rng.uniform(0, 500, size=(n, 2)) for n in (3, 4, 17, 250, 5, 3, 9, 40, 3)]
    whole = ring_perimeters(rings)
    for run in (1, 7, 10, 20, 251, 10_000):
        monkeypatch.setattr(kernels, "PERIMETER_CHUNK_VERTICES", run)
        assert ring_perimeters(rings).tobytes() == whole.tobytes()
    monkeypatch.setattr(kernels, "PERIMETER_CHUNK_VERTICES", 4)
    assert ring_perimeters(rings[:1]).tobytes() == whole[:1].tobytes()


def _both_match_brute_force(points, point_owner, a, b, target_owner, n_groups, **options):
    """The kernel's distances and closest points equal the brute force's to the last bit."""
    distance, closest = nearest_segments(points, point_owner, a, b, target_owner, n_groups, closest=True, **options)
    expected_distance, expected_closest = _brute_force(points, point_owner, a, b, target_owner)
    np.testing.assert_array_equal(distance, expected_distance)
    np.testing.assert_array_equal(closest, expected_closest)


def _circle(n, radius, center=(0.0, 0.0), phase=0.0):
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False) + phase
    return np.column_stack([np.cos(angle), np.sin(angle)]) * radius + center


@pytest.mark.parametrize("spacing", [0.002, 0.05, 3.0])
def test_dense_and_sparse_rings_close_together_match_brute_force(spacing):
    """Two concentric circles 0.5 px apart, vertices far closer together than that or farther
    apart, searched both ways (the capsule hierarchy, whatever the spacing); vertices on the
    same rays make ties between the two segments at each nearest vertex."""
    n = 1500
    radius = n * spacing / (2 * np.pi)
    outer, inner = _circle(n, radius, (radius + 3, radius + 7)), _circle(n, radius - 0.5, (radius + 3, radius + 7))
    owner = np.zeros(n, dtype=np.int64)
    for points, ring in ((outer, inner), (inner, outer), (outer + 0.01, outer)):
        _both_match_brute_force(points, owner, ring, np.roll(ring, -1, axis=0), owner, 1)


def test_collinear_pieces_repeated_points_and_duplicates_take_the_first_segment():
    """A line cut into equal collinear pieces, with zero-length segments (repeated vertices)
    and every segment twice: points on the line, at the shared ends and off it tie between
    several segments, and the first in order must win with its own closest point."""
    rng = np.random.default_rng(23)
    x = np.repeat(np.arange(0.0, 200.0, 0.5), rng.integers(1, 3, 400))  # repeated vertices
    line = np.column_stack([x, 0.25 * x + 10])
    a = np.concatenate([line[:-1], line[:-1]])
    b = np.concatenate([line[1:], line[1:]])
    points = np.concatenate([line[rng.integers(0, len(line), 300)],
                             np.column_stack([rng.uniform(-20, 220, 300), rng.uniform(-40, 90, 300)]),
                             np.column_stack([rng.integers(-10, 220, 300) / 2.0, np.full(300, 12.5)])])
    owner = np.zeros(len(points), dtype=np.int64)
    _both_match_brute_force(points, owner, a, b, np.zeros(len(a), dtype=np.int64), 1)
    _both_match_brute_force(points, owner, a, b, np.zeros(len(a), dtype=np.int64), 1, small_group=0)


def test_groups_of_every_size_around_the_leaf_and_exhaustive_limits():
    """Groups of 0 to 1,000 segments (rings, random segments, points as zero-length segments),
    points listed in no particular group order, with and without the exhaustive search."""
    rng = np.random.default_rng(29)
    sizes = [0, 1, 2, 7, 8, 9, 16, 17, SMALL_GROUP - 1, SMALL_GROUP, SMALL_GROUP + 1, 200, 1000]
    a, b = [], []
    for group, m in enumerate(sizes):
        center = rng.uniform(-1e3, 1e3, 2)
        if group % 3 == 0:
            start = _circle(m, rng.uniform(1, 50), center, rng.uniform(0, 1)) if m else np.zeros((0, 2))
            end = np.roll(start, -1, axis=0)
        elif group % 3 == 1:
            start = center + rng.uniform(-30, 30, (m, 2))
            end = start + rng.normal(0, 5, (m, 2))
        else:
            start = np.round(center + rng.uniform(-10, 10, (m, 2)))
            end = start
        a.append(start)
        b.append(end)
    target_owner = np.repeat(np.arange(len(sizes)), sizes)
    a, b = np.concatenate(a), np.concatenate(b)
    point_owner = rng.integers(0, len(sizes) + 1, 2500)  # the last group has no segments
    centers = np.array([a[target_owner == g].mean(axis=0) if m else np.zeros(2) for g, m in enumerate(sizes)] + [[0, 0]])
    points = centers[point_owner] + rng.normal(0, 40, (2500, 2))
    for small_group in (SMALL_GROUP, 0, 8):
        _both_match_brute_force(points, point_owner, a, b, target_owner, len(sizes) + 1, small_group=small_group,
                                small_call=0)


def test_a_small_call_compares_each_point_with_at_most_twice_its_groups_segments(monkeypatch):
    """A call small enough to search every group exhaustively, with many points in groups of 3 segments and a few in
    one of 150: the small groups are not padded to the large one's width (the results stay the brute force's)."""
    rng = np.random.default_rng(37)
    sizes = [3] * 40 + [150]
    a = np.concatenate([_circle(m, 20.0, rng.uniform(-500, 500, 2)) for m in sizes])
    b = np.roll(a, -1, axis=0)
    target_owner = np.repeat(np.arange(len(sizes)), sizes)
    point_owner = np.concatenate([np.repeat(np.arange(40), 10), np.full(20, 40)])
    points = rng.uniform(-500, 500, (len(point_owner), 2))
    assert sum(sizes[g] for g in point_owner) <= SMALL_CALL  # every group searched exhaustively
    compared, best_of = [], kernels._Segments.best_of

    def counting(self, points, segment, valid):
        compared.append((valid.size, int(valid.sum())))
        return best_of(self, points, segment, valid)

    monkeypatch.setattr(kernels._Segments, "best_of", counting)
    _both_match_brute_force(points, point_owner, a, b, target_owner, len(sizes))
    padded, real = map(sum, zip(*compared))
    assert real == 400 * 3 + 20 * 150 and padded <= 2 * real  # one batch of all: 420 x 150 = 63,000


@pytest.mark.parametrize("center", [(1.0e7, -3.0e7), (1.0e9, -1.0e9)])
def test_far_from_the_origin_with_tiny_features(center):
    """Coordinates near 10^7 and near the largest accepted (2^30 px) with vertices 1.6e-3 px
    apart: rounding never drops the nearest run."""
    ring = _circle(2000, 0.5, center)
    rng = np.random.default_rng(31)
    points = ring[rng.integers(0, 2000, 600)] + rng.normal(0, 0.01, (600, 2))
    owner = np.zeros(600, dtype=np.int64)
    _both_match_brute_force(points, owner, ring, np.roll(ring, -1, axis=0), np.zeros(2000, dtype=np.int64), 1)


def test_near_ties_everywhere_split_the_search_and_still_match(monkeypatch):
    """Points at the centre of a circle are about as near to every segment: the search keeps
    most runs of every point and splits its points in smaller sets (a smaller ``CHUNK``
    here) to bound its arrays; the result is still the brute force's."""
    monkeypatch.setattr(kernels, "CHUNK", 4000)
    ring = _circle(640, 30.0, (100.0, 100.0))
    points = np.random.default_rng(37).normal(100.0, 1e-3, (400, 2))
    points[:4] = 100.0
    owner = np.zeros(400, dtype=np.int64)
    _both_match_brute_force(points, owner, ring, np.roll(ring, -1, axis=0), np.zeros(640, dtype=np.int64), 1)


def test_ties_between_leaves_found_at_different_depths():
    """17 segments make leaves at two depths (8, then 4 and 5 segments). Segments 9 to 16 are
    the mirror images of 0 to 7 across the x axis, so points on that axis are equally near to
    a segment and its mirror, with another closest point: ties settled across leaves compared
    at different steps of the search, which the first segment in order must still win."""
    rng = np.random.default_rng(41)
    a = rng.integers(1, 20, (17, 2)).astype(float)
    b = rng.integers(1, 20, (17, 2)).astype(float)
    a[9:], b[9:] = a[:8] * [1, -1], b[:8] * [1, -1]
    points = np.column_stack([rng.integers(-5, 25, 400) / 2.0, np.zeros(400)])
    owner = np.zeros(400, dtype=np.int64)
    for order in (slice(None), slice(None, None, -1)):
        _both_match_brute_force(points, owner, a[order], b[order], np.zeros(17, dtype=np.int64), 1, small_group=0,
                                small_call=0)
