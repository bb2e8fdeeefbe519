"""Polygon validity as Definition 15 of the PolyTopoBench paper, with the reason for each failure.

A polygon is valid when (1) its exterior ring is simple, (2) each hole is simple, (3) every
hole lies inside the exterior (touching it at points is allowed; a hole running *along*
the exterior, sharing a stretch of boundary with it, is not inside), (4) no two holes
overlap or cross (touching is allowed) and the holes do not split the interior into
pieces (holes touching the exterior, or each other and the exterior, at two or more
points so that the occupied region falls apart), and (5) the occupied region is
non-empty. A ring is *simple* when it does not cross or touch itself and encloses a
positive area. The occupied region is exterior minus holes (:func:`.repair.occupied_region`).

Every GEOS-valid polygon satisfies all five conditions, so only GEOS-invalid polygons are
examined one by one. A polygon can break Definition 15 for several reasons; all are
reported, in the order above, joined by ``"; "``.
"""

import numpy as np
import shapely

from ..geometry.construct import polygons_of
from ..geometry.geos_validity import geos_is_valid
from .repair import occupied_region

__all__ = ["REASONS", "validity_reasons"]

REASONS = {
    "exterior": "exterior not simple",
    "hole": "hole not simple",
    "outside": "hole not inside exterior",
    "along": "hole along exterior boundary",
    "overlap": "holes overlap or cross",
    "split": "holes split the interior",
    "empty": "empty",
}


def _simple(ring):
    closed = np.vstack([ring, ring[:1]])
    line = shapely.linearrings(closed)
    return bool(shapely.is_simple(line)) and shapely.Polygon(closed).area > 0


def _reasons(instance):
    reasons = []
    ext_simple = _simple(instance.exterior)
    if not ext_simple:
        reasons.append(REASONS["exterior"])
    holes_simple = [_simple(hole) for hole in instance.holes]
    if not all(holes_simple):
        reasons.append(REASONS["hole"])
    shell = shapely.make_valid(shapely.Polygon(instance.exterior))
    hole_regions = [shapely.make_valid(shapely.Polygon(hole)) for hole in instance.holes]
    exterior_line = shapely.linearrings(np.vstack([instance.exterior, instance.exterior[:1]]))
    hole_lines = [shapely.linearrings(np.vstack([h, h[:1]])) for h in instance.holes]
    if any(not shell.covers(line) for line in hole_lines):
        reasons.append(REASONS["outside"])
    if any(shapely.length(shapely.intersection(exterior_line, line)) > 0 for line in hole_lines):
        reasons.append(REASONS["along"])
    if _holes_overlap(hole_regions):
        reasons.append(REASONS["overlap"])
    region = occupied_region([instance.polygon()])[0]
    if instance.holes and _part_count(region) > _part_count(shell):
        reasons.append(REASONS["split"])
    if region.is_empty or region.area <= 0:
        reasons.append(REASONS["empty"])
    return reasons


def _part_count(geometry):
    """Number of polygonal parts with area."""
    parts = shapely.get_parts(geometry)
    polygonal = np.isin(shapely.get_type_id(parts), (shapely.GeometryType.POLYGON,))
    return int(np.count_nonzero(polygonal & (shapely.area(parts) > 0)))


def _holes_overlap(regions):
    """True when two hole regions share area (overlapping, crossing or nested holes)."""
    if len(regions) < 2:
        return False
    regions = np.asarray(regions, dtype=object)
    left, right = shapely.STRtree(regions).query(regions)
    keep = left < right
    return bool(np.any(shapely.area(shapely.intersection(regions[left[keep]], regions[right[keep]])) > 0))


def validity_reasons(instances, polygons=None, valid=None):
    """Definition 15 reasons of each instance ("" when valid).

    Parameters
    ----------
    instances : sequence of Instance
    polygons : numpy.ndarray, optional
        The instances' polygons as given, when already built (:func:`.construct.polygons_of`).
    valid : numpy.ndarray of bool, optional
        Their GEOS validity, when already known (:func:`.geos_validity.geos_is_valid`).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from polytopo.evaluator.inputs.instances import Instance
    >>> bowtie = Instance(0, 0, np.array([[0.0, 0.0], [4.0, 4.0], [4.0, 0.0], [0.0, 4.0]]))
    >>> validity_reasons([bowtie])
    ['exterior not simple']
    """
    if valid is None:
        if polygons is None:
            polygons = polygons_of(instances)
        valid = geos_is_valid(polygons) if len(polygons) else np.zeros(0, dtype=bool)
    result = [""] * len(instances)
    for index in np.flatnonzero(~valid):
        result[index] = "; ".join(_reasons(instances[index]))
    return result
