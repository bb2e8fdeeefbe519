"""Pre-evaluation filters applied to both sides: score, instance area and hole area.

Areas are px² of the region each ring bounds (a self-crossing ring is measured by its
largest valid part, see :func:`.repair.largest_polygon`).
"""

import numpy as np
import shapely

from .instances import Instance
from .repair import largest_polygon, occupied_region

__all__ = ["hole_area_px2", "drop_small_holes", "apply_score_threshold", "apply_min_instance_area",
           "canonical_rings"]


def hole_area_px2(ring):
    """Area in px² of the region one ring bounds on its own (0 when it bounds none)."""
    polygon = largest_polygon(shapely.Polygon(ring))
    return float(polygon.area) if polygon is not None else 0.0


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
    instances, changed = [], 0
    for instance in instance_set.instances:
        kept = [hole for hole in instance.holes if hole_area_px2(hole) >= min_hole_area_px2]
        if len(kept) != instance.hole_count:
            changed += 1
            instance = instance.with_holes(kept)
        instances.append(instance)
    result = instance_set.replaced(instances)
    return result, _hole_counts(min_hole_area_px2, before, result.hole_count, changed)


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


def _canonical(ring, counter_clockwise):
    """The ring turning the given way (y up) and starting at its lowest (x, then y) vertex."""
    x, y = ring[:, 0], ring[:, 1]
    signed = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))
    if (signed < 0) == counter_clockwise:
        ring = ring[::-1]
    start = np.lexsort((ring[:, 1], ring[:, 0]))[0]
    return np.ascontiguousarray(np.roll(ring, -start, axis=0))


def canonical_rings(instance_set):
    """Put every ring in one vertex order.

    Exteriors run counter-clockwise and holes clockwise (y up), each starting at its lowest
    vertex.

    The shapes are unchanged; metrics that depend on vertex order through tie-breaking
    (the nearest projection of MTA, Douglas–Peucker corners) then give the same result
    whatever order and orientation the input rings had.
    """
    instances = [Instance(i.image_id, i.source_id, _canonical(i.exterior, True),
                          tuple(_canonical(h, False) for h in i.holes), i.score, i.category_id, i.part)
                 for i in instance_set.instances]
    return instance_set.replaced(instances)
