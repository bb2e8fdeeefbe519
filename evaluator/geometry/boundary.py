"""Boundary metrics between ring sets: BIoU bands, POLIS and HD95, vectorized with shapely 2.

A *ring set* is a sequence of rings (``(n, 2)`` arrays in pixels, first vertex not
repeated): the exterior of a polygon, its holes, or all of its rings. Functions taking
``*_sets`` work element-wise on equally long sequences of ring sets, so the GEOS work of a
whole evaluation runs in a few array calls.

Conventions
-----------
* The boundary band of a ring set is the two-sided buffer of its closed ring lines with
  radius ``r`` px, flat caps and mitre joins (mitre limit 5), the rings of a set combined
  into one MultiLineString before buffering. An invalid band (rare GEOS output) is repaired
  with ``make_valid`` keeping its polygonal parts.
* BIoU is ``|B1 ∩ B2| / |B1 ∪ B2|``; 0 when either set is empty.
* POLIS is the symmetric mean vertex-to-boundary distance in pixels (Definition 8), NaN
  when either set is empty; over vertex *sets* (a vertex listed twice counts once) or over
  every listed vertex.
* HD95 is the larger of the two directed 95th-percentile distances between boundary
  samples taken every ``spacing`` px (:func:`.kernels.sample_flat_rings`), in pixels.
* POLIS and HD95 run on batches of pairs of at most ``batch_points`` points (vertices for
  POLIS, samples for HD95; :func:`.kernels.map_pair_batches`), with the same results at
  any batch size.
"""

import functools

import numpy as np
import shapely

from ...core.kernel_threads import chunked

from .construct import ring_linestrings
from .geos_validity import geos_is_valid
from .kernels import (flatten_rings, grouped_quantile, map_pair_batches, nearest_points, nearest_segments,
                      ring_segments, sample_counts, sample_flat_rings, vertex_counts)

__all__ = [
    "ring_lines",
    "boundary_bands",
    "band_iou",
    "polis",
    "hd95",
]


def ring_lines(ring_sets):
    """Closed ring lines of each set: a LineString for one ring, a MultiLineString for more.

    Returns
    -------
    numpy.ndarray of shapely geometries
        None for an empty set.
    """
    sizes = np.array([len(rings) for rings in ring_sets], dtype=np.int64)
    lines = np.full(len(ring_sets), None, dtype=object)
    single, multi = np.flatnonzero(sizes == 1), np.flatnonzero(sizes > 1)
    if single.size:
        lines[single] = ring_linestrings([ring_sets[i][0] for i in single])
    if multi.size:
        parts = ring_linestrings([ring for i in multi for ring in ring_sets[i]])
        lines[multi] = shapely.multilinestrings(parts, indices=np.repeat(np.arange(multi.size), sizes[multi]))
    return lines


def boundary_bands(ring_sets, radius_px):
    """Boundary band (polygonal) of each ring set; None for an empty set.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> float(shapely.area(boundary_bands([[square]], 1.0)[0]))
    80.0
    """
    bands = chunked(functools.partial(shapely.buffer, distance=radius_px, cap_style="flat", join_style="mitre"),
                    ring_lines(ring_sets))
    broken = np.flatnonzero(~chunked(geos_is_valid, bands) & ~shapely.is_missing(bands))
    for index in broken:
        bands[index] = _polygonal(shapely.make_valid(bands[index]))
    return bands


def _polygonal(geometry):
    if geometry is None or geometry.is_empty:
        return None
    if isinstance(geometry, (shapely.Polygon, shapely.MultiPolygon)):
        return geometry
    parts = [part for part in shapely.get_parts(geometry) if isinstance(part, (shapely.Polygon, shapely.MultiPolygon))]
    if not parts:
        return None
    merged = shapely.union_all(parts)
    if not geos_is_valid(merged):
        merged = merged.buffer(0)
    return None if merged.is_empty else merged


def band_iou(bands_a, bands_b):
    """Element-wise IoU of two arrays of bands; 0 where either band is missing.

    Notes
    -----
    The union area is ``|A| + |B| - |A ∩ B|``, one GEOS overlay per pair.
    """
    bands_a = np.asarray(bands_a, dtype=object)
    bands_b = np.asarray(bands_b, dtype=object)
    result = np.zeros(len(bands_a))
    present = ~(shapely.is_missing(bands_a) | shapely.is_missing(bands_b))
    if not present.any():
        return result
    a, b = bands_a[present], bands_b[present]
    inter = shapely.area(chunked(shapely.intersection, a, b))
    union = shapely.area(a) + shapely.area(b) - inter
    # clipped: GEOS areas of a band and itself can differ in the last bits (IoU 1.0000000000000013)
    result[present] = np.clip(np.divide(inter, union, out=np.zeros_like(inter), where=union > 0), 0.0, 1.0)
    return result


def _directed_mean_distance(source_sets, target_sets, vertex_sets):
    """Mean distance of each source set's (distinct) vertices to the target set's ring lines, per set."""
    n = len(source_sets)
    coords, vertex_ring, ring_owner = flatten_rings(source_sets)
    t_coords, t_vertex_ring, t_ring_owner = flatten_rings(target_sets)
    a, b, seg_ring = ring_segments(t_coords, t_vertex_ring)
    owner = ring_owner[vertex_ring]
    if vertex_sets and len(coords):
        distinct = np.unique(np.column_stack([owner, coords]), axis=0)
        owner, coords = distinct[:, 0].astype(owner.dtype), np.ascontiguousarray(distinct[:, 1:])
    distance, _ = nearest_segments(coords, owner, a, b, t_ring_owner[seg_ring], n)
    sums = np.bincount(owner, weights=distance, minlength=n)
    counts = np.bincount(owner, minlength=n)
    return np.divide(sums, counts, out=np.full(n, np.nan), where=counts > 0)


def polis(sets_a, sets_b, vertex_sets=False, *, batch_points=None):
    """Element-wise POLIS distance in pixels between ring sets (Definition 8).

    Parameters
    ----------
    sets_a, sets_b : sequence of sequence of numpy.ndarray
        Equally long sequences of ring sets (rings in pixels).
    vertex_sets : bool
        Average over each set's distinct vertices (the paper's vertex sets ``V``) rather
        than over every listed vertex.
    batch_points : float, optional
        Most vertices (of both sets) per batch of pairs; :data:`.kernels.PAIR_BATCH_POINTS`
        by default.

    Examples
    --------
    >>> a = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> float(polis([[a]], [[a + [1.0, 0.0]]])[0])
    0.5
    """
    sets_a, sets_b = list(sets_a), list(sets_b)

    def symmetric(part_a, part_b):
        return 0.5 * (_directed_mean_distance(part_a, part_b, vertex_sets)
                      + _directed_mean_distance(part_b, part_a, vertex_sets))

    result = map_pair_batches(symmetric, vertex_counts(sets_a) + vertex_counts(sets_b), sets_a, sets_b,
                              budget=batch_points)
    empty = np.array([not a or not b for a, b in zip(sets_a, sets_b)], dtype=bool)
    result[empty] = np.nan
    return result


def hd95(sets_a, sets_b, spacing_px, *, batch_points=None):
    """Element-wise symmetric 95th-percentile Hausdorff distance in pixels (NaN if a set is empty).

    Both boundaries are sampled every ``spacing_px`` px; the result is the larger of the two
    directed 95th percentiles of nearest-sample distances. ``batch_points`` bounds the
    samples (of both sets) per batch of pairs; :data:`.kernels.PAIR_BATCH_POINTS` by default.
    """
    sets_a, sets_b = list(sets_a), list(sets_b)

    def samples(sets):
        coords, vertex_ring, ring_owner = flatten_rings(sets)
        points, point_ring = sample_flat_rings(coords, vertex_ring, spacing_px)
        return points, ring_owner[point_ring] if len(point_ring) else point_ring

    def symmetric(part_a, part_b):
        n = len(part_a)
        pa, oa = samples(part_a)
        pb, ob = samples(part_b)
        q_ab = grouped_quantile(nearest_points(pa, oa, pb, ob, n), oa, n, 0.95)
        q_ba = grouped_quantile(nearest_points(pb, ob, pa, oa, n), ob, n, 0.95)
        return np.maximum(q_ab, q_ba)

    result = np.full(len(sets_a), np.nan)
    both = [i for i, (a, b) in enumerate(zip(sets_a, sets_b)) if a and b]
    sets_a, sets_b = [sets_a[i] for i in both], [sets_b[i] for i in both]
    result[both] = map_pair_batches(symmetric, sample_counts(sets_a, spacing_px) + sample_counts(sets_b, spacing_px),
                                    sets_a, sets_b, budget=batch_points)
    return result
