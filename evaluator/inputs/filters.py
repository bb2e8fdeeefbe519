"""Pre-evaluation filters applied to both sides: score, instance area and hole area.

Areas are px² of the region each ring bounds (a self-crossing ring is measured by its
largest valid part, see :func:`.repair.largest_polygon`).
"""

import numpy as np
import shapely

from .instances import Instance
from .repair import occupied_region
from ..geometry.rings import ring_regions

__all__ = ["hole_areas_px2", "kept_holes", "drop_small_holes", "apply_score_threshold", "apply_min_instance_area",
           "oriented_rings", "canonical_rings"]


def hole_areas_px2(rings):
    """Area in px² of the region each ring bounds on its own (0 where it bounds none).

    Examples
    --------
    >>> bowtie = np.array([[0.0, 0.0], [4.0, 4.0], [4.0, 0.0], [0.0, 4.0]])
    >>> hole_areas_px2([bowtie, np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0]])]).tolist()
    [4.0, 2.0]
    """
    regions = ring_regions(list(rings))
    present = ~shapely.is_missing(regions)
    areas = np.zeros(len(regions))
    areas[present] = shapely.area(regions[present])
    return areas


def drop_small_holes(instance_set, min_hole_area_px2):
    """Remove holes whose area is below ``min_hole_area_px2`` (kept when ``>=``).

    Returns
    -------
    InstanceSet, dict
        The filtered set and counts ``holes_before``, ``holes_after``, ``holes_removed``,
        ``buildings_changed``.
    """
    before = instance_set.hole_count
    if min_hole_area_px2 <= 0:
        return instance_set, _hole_counts(min_hole_area_px2, before, before, 0)
    instances = list(instance_set.instances)
    kept, changed = kept_holes(instances, min_hole_area_px2)
    for index in changed:
        instances[index] = instances[index].with_holes(kept[index])
    result = instance_set.replaced(instances)
    return result, _hole_counts(min_hole_area_px2, before, result.hole_count, len(changed))


def kept_holes(instances, min_hole_area_px2):
    """The holes of each instance whose area (:func:`hole_areas_px2`) is at least ``min_hole_area_px2``.

    Returns
    -------
    kept : dict
        ``{instance index: list of kept hole rings}`` for the instances that lose a hole.
    changed : list of int
        Those instance indices, in order.
    """
    holes = [hole for instance in instances for hole in instance.holes]
    owner = np.repeat(np.arange(len(instances)), [instance.hole_count for instance in instances])
    keep = hole_areas_px2(holes) >= min_hole_area_px2
    changed = np.unique(owner[~keep]).tolist()
    start = np.concatenate([[0], np.cumsum([instance.hole_count for instance in instances])]).astype(np.int64)
    kept = {index: [hole for hole, k in zip(instances[index].holes, keep[start[index]:start[index + 1]]) if k]
            for index in changed}
    return kept, changed


def _hole_counts(threshold, before, after, changed):
    return {"min_hole_area": float(threshold), "holes_before": int(before), "holes_after": int(after),
            "holes_removed": int(before - after), "buildings_changed": int(changed)}


def apply_score_threshold(instance_set, threshold):
    """Drop predictions with score below ``threshold`` (counted as ``below_score_threshold``)."""
    kept = [instance for instance in instance_set.instances if instance.score >= threshold]
    return instance_set.replaced(kept, below_score_threshold=len(instance_set) - len(kept))


def apply_min_instance_area(instance_set, min_area_px2, inclusive):
    """Keep instances with area ``>= A`` (``inclusive``, ground truth) or ``> A`` (predictions)."""
    if min_area_px2 <= 0:
        return instance_set
    kept = []
    for instance in instance_set.instances:
        area = occupied_region([instance.polygon()])[0].area
        if area >= min_area_px2 if inclusive else area > min_area_px2:
            kept.append(instance)
    return instance_set.replaced(kept, below_min_area=len(instance_set) - len(kept))


def oriented_rings(rings, counter_clockwise):
    """Each ring turning the given way (y up) and starting at its lowest (x, then y) vertex.

    Parameters
    ----------
    rings : sequence of numpy.ndarray
        ``(n, 2)`` rings in pixels, first vertex not repeated.
    counter_clockwise : numpy.ndarray of bool
        Wanted turning of each ring.

    Returns
    -------
    list of numpy.ndarray
        The rings, reversed where they turn the other way and rotated to start at their
        lowest vertex (the first such vertex of the reversed ring on ties).

    Notes
    -----
    One pass over all vertices at once. The turning is the sign of the shoelace sum; where
    that sum is too close to zero for the order of summation not to matter, it is taken
    from the ring's own dot products, so the result never depends on how rings are grouped.

    Examples
    --------
    >>> square = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    >>> oriented_rings([square], np.array([True]))[0].tolist()
    [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    """
    if len(rings) == 0:
        return []
    sizes = np.array([len(ring) for ring in rings], dtype=np.int64)
    coords = np.concatenate(rings)
    owner = np.repeat(np.arange(len(rings)), sizes)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(len(coords)) - first[owner]
    following = np.where(position == sizes[owner] - 1, first[owner], np.arange(len(coords)) + 1)
    x, y = coords[:, 0], coords[:, 1]
    forward = x * y[following]
    backward = y * x[following]
    signed = (np.bincount(owner, forward, len(rings)) - np.bincount(owner, backward, len(rings)))
    scale = np.bincount(owner, np.abs(forward) + np.abs(backward), len(rings))
    for index in np.flatnonzero(np.abs(signed) <= 1e-6 * scale):
        ring = rings[index]
        signed[index] = np.dot(ring[:, 0], np.roll(ring[:, 1], -1)) - np.dot(ring[:, 1], np.roll(ring[:, 0], -1))
    reverse = (signed < 0) == np.asarray(counter_clockwise, dtype=bool)
    oriented = np.where(reverse[owner], sizes[owner] - 1 - position, position)
    lowest = np.lexsort((oriented, y, x, owner))[first]
    start = oriented[lowest]
    shifted = (position + start[owner]) % sizes[owner]
    source = first[owner] + np.where(reverse[owner], sizes[owner] - 1 - shifted, shifted)
    ordered = coords[source]
    # slices of one array (np.split makes the same views ten times slower)
    return [ordered[lo:hi] for lo, hi in zip(first.tolist(), (first + sizes).tolist())]


def canonical_rings(instance_set):
    """Put every ring in one vertex order.

    Exteriors run counter-clockwise and holes clockwise (y up), each starting at its lowest
    vertex.

    The shapes are unchanged; metrics that depend on vertex order through tie-breaking
    (the nearest projection of MTA, Douglas–Peucker corners) then give the same result
    whatever order and orientation the input rings had.
    """
    originals = instance_set.instances
    rings = [ring for instance in originals for ring in instance.rings]
    exterior = np.zeros(len(rings), dtype=bool)
    exterior[np.cumsum([0] + [1 + instance.hole_count for instance in originals[:-1]])[:len(originals)]] = True
    ordered = iter(oriented_rings(rings, exterior))
    instances = [Instance(i.image_id, i.source_id, next(ordered), tuple(next(ordered) for _ in i.holes), i.score,
                          i.category_id, i.part) for i in originals]
    return instance_set.replaced(instances)
