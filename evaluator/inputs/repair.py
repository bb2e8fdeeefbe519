"""Turning arbitrary polygonal input into one valid Polygon, as the reference code does.

The ``reference-code`` profile (and corner extraction in every profile) repairs an invalid
polygon with GEOS ``make_valid`` and keeps its largest polygonal part; the ``paper``
profile never repairs the rings it judges, only the region it measures (see
:func:`occupied_region`).
"""

import numpy as np
import shapely

from ...core.kernel_threads import chunked
from ..geometry.geos_validity import geos_is_valid

__all__ = ["largest_polygon", "largest_polygons", "occupied_region"]


def _polygon_parts(geometry):
    if isinstance(geometry, shapely.Polygon):
        return [geometry]
    if isinstance(geometry, shapely.MultiPolygon):
        return [part for part in geometry.geoms if not part.is_empty]
    if isinstance(geometry, shapely.GeometryCollection):
        return [part for part in geometry.geoms if isinstance(part, shapely.Polygon) and not part.is_empty]
    return []


def largest_polygon(geometry, valid=None):
    """The largest polygonal part of ``geometry`` after ``make_valid``, or None.

    Parameters
    ----------
    geometry : shapely geometry or None
    valid : bool, optional
        Known validity of ``geometry`` (skips the check).

    Returns
    -------
    shapely.Polygon or None
        None for missing or empty input, or when the result has no area or fewer than
        4 exterior coordinates. Among equally large parts the first is kept.

    Examples
    --------
    >>> bowtie = shapely.Polygon([(0, 0), (4, 4), (4, 0), (0, 4)])
    >>> largest_polygon(bowtie).area
    4.0
    """
    if geometry is None or geometry.is_empty:
        return None
    if not (bool(geos_is_valid(geometry)) if valid is None else valid):
        geometry = shapely.make_valid(geometry)
    parts = _polygon_parts(geometry)
    if not parts:
        return None
    polygon = max(parts, key=lambda part: part.area)
    if polygon.area <= 0 or len(polygon.exterior.coords) < 4:
        return None
    return polygon


def largest_polygons(geometries):
    """:func:`largest_polygon` over an array; valid non-degenerate Polygons pass through in bulk."""
    geometries = np.asarray(geometries, dtype=object)
    result = np.full(len(geometries), None, dtype=object)
    if len(geometries) == 0:
        return result
    present = ~shapely.is_missing(geometries)
    simple = present.copy()
    simple[present] = (chunked(geos_is_valid, geometries[present])
                       & (shapely.get_type_id(geometries[present]) == shapely.GeometryType.POLYGON)
                       & (shapely.area(geometries[present]) > 0)
                       & (shapely.get_num_coordinates(shapely.get_exterior_ring(geometries[present])) >= 4))
    result[simple] = geometries[simple]
    for index in np.flatnonzero(present & ~simple):
        result[index] = largest_polygon(geometries[index])
    return result


def occupied_region(polygons, valid=None):
    """The region each polygon occupies, Ω = exterior minus holes (Definition 3), as valid geometry in px.

    ``valid``, the polygons' GEOS validity when already known, saves checking it again.

    Valid polygons are returned unchanged. For an invalid one the region is the area the
    exterior ring bounds minus the union of the areas its holes bound, each ring's area
    being its own ``make_valid`` fill (a self-crossing ring covers all its lobes): a hole
    outside the exterior subtracts nothing, and overlapping or nested holes are subtracted
    once. GEOS ``make_valid`` of the whole polygon would instead alternate fill across
    ring crossings and count such overlaps as occupied.

    Examples
    --------
    >>> square = shapely.box(0, 0, 20, 20).exterior.coords
    >>> holes = [shapely.box(2, 2, 10, 10).exterior.coords, shapely.box(6, 6, 14, 14).exterior.coords]
    >>> float(occupied_region([shapely.Polygon(square, holes)])[0].area)
    288.0
    """
    polygons = np.asarray(polygons, dtype=object)
    result = polygons.copy()
    if len(polygons) == 0:
        return result
    invalid = np.flatnonzero(~(geos_is_valid(polygons) if valid is None else np.asarray(valid, dtype=bool)))
    for index in invalid:
        polygon = polygons[index]
        region = _fill(polygon.exterior)
        holes = [_fill(ring) for ring in polygon.interiors]
        if holes:
            region = shapely.difference(region, shapely.union_all(holes))
        parts = _polygon_parts(region)
        result[index] = shapely.multipolygons(parts) if parts else shapely.Polygon()
    return result


def _fill(ring):
    """The area one ring bounds on its own (all polygonal parts of its ``make_valid`` polygon)."""
    parts = _polygon_parts(shapely.make_valid(shapely.Polygon(ring)))
    return shapely.union_all(parts) if parts else shapely.Polygon()
