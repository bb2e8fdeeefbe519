"""Simplification, coordinate transforms and the final validity guarantee."""

import numpy as np
import shapely

__all__ = ["drop_small_holes", "largest_polygon", "offset_outlines", "simplify_keep_valid", "to_map_coordinates",
           "valid_polygons_only"]


def _vertices_kept(originals, simplified):
    """Whether every vertex of each simplified geometry is a vertex of its original (nothing was added)."""
    xy0, index0 = shapely.get_coordinates(originals, return_index=True)
    xy1, index1 = shapely.get_coordinates(simplified, return_index=True)
    row = np.dtype((np.void, 24))
    found = np.isin(
        np.ascontiguousarray(np.column_stack([index1.astype(float), xy1])).view(row).ravel(),
        np.ascontiguousarray(np.column_stack([index0.astype(float), xy0])).view(row).ravel(),
    )
    kept = np.ones(len(originals), bool)
    kept[index1[~found]] = False
    return kept


def _same_topology(originals, simplified):
    """Simplified geometries that are valid, non-empty single polygons with as many holes as their originals."""
    return (
        (shapely.get_type_id(simplified) == shapely.GeometryType.POLYGON)
        & shapely.is_valid(simplified)
        & ~shapely.is_empty(simplified)
        & (shapely.get_num_interior_rings(simplified) == shapely.get_num_interior_rings(originals))
    )


def simplify_keep_valid(geometries, tolerance_px):
    """Douglas–Peucker simplification that preserves every polygon's topology and validity.

    Parameters
    ----------
    geometries : numpy.ndarray of shapely.Polygon
        Valid polygons, pixel coordinates.
    tolerance_px : float
        Douglas–Peucker tolerance, pixels (0 returns the input).

    Returns
    -------
    numpy.ndarray of shapely.Polygon
        Each polygon simplified by plain Douglas–Peucker when the result is a
        valid polygon with the same holes and only original vertices (GEOS
        repairs a ring that would cross itself, which adds vertices: such a
        result is not taken); otherwise by GEOS' topology-preserving
        simplifier (rings keep their nesting and never cross); a polygon
        whose simplified form is still invalid, empty, not a single polygon
        or has lost a hole is returned unsimplified.

    Examples
    --------
    >>> stair = shapely.Polygon([(0, 0), (4, 0), (4, 1), (5, 1), (5, 5), (0, 5)])
    >>> len(simplify_keep_valid(np.array([stair]), 1.0)[0].exterior.coords) < 7
    True
    """
    geometries = np.asarray(geometries, object)
    if tolerance_px <= 0 or not len(geometries):
        return geometries
    simplified = np.asarray(shapely.simplify(geometries, tolerance_px, preserve_topology=False), object)
    good = _same_topology(geometries, simplified)
    good[good] = _vertices_kept(geometries[good], simplified[good])
    retry = np.flatnonzero(~good)
    if len(retry):
        preserved = np.asarray(shapely.simplify(geometries[retry], tolerance_px, preserve_topology=True), object)
        simplified[retry] = np.where(_same_topology(geometries[retry], preserved), preserved, geometries[retry])
    return simplified


def to_map_coordinates(geometries, geotransform):
    """Apply a GDAL geotransform to geometries in (column, row) pixel coordinates."""
    gt = geotransform

    def affine(xy):
        x, y = xy[:, 0], xy[:, 1]
        return np.column_stack([gt[0] + x * gt[1] + y * gt[2], gt[3] + x * gt[4] + y * gt[5]])

    return shapely.transform(np.asarray(geometries, object), affine)


OFFSET_MITRE_LIMIT = 2.0
"""How far a mitred corner of :func:`offset_outlines` may reach, in offsets (sharper corners are bevelled)."""


def offset_outlines(geometries, distance_px):
    """Every polygon with its rings moved outward by ``distance_px``: exteriors grow, holes shrink.

    Parameters
    ----------
    geometries : numpy.ndarray of shapely.Polygon
        Valid polygons, pixel coordinates.
    distance_px : float
        Offset, pixels (0 returns the input). Corners stay square (mitre joins, up to
        :data:`OFFSET_MITRE_LIMIT` offsets from the corner). A hole narrower than twice
        the offset closes; an inlet of the exterior narrower than that closes too and is
        filled, never turned into a hole: each result has at most its polygon's holes.

    Returns
    -------
    numpy.ndarray of shapely.Polygon

    Examples
    --------
    >>> square = shapely.Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (3, 1), (3, 3), (1, 3)]])
    >>> grown = offset_outlines(np.array([square]), 0.5)[0]
    >>> grown.bounds, grown.area
    ((-0.5, -0.5, 4.5, 4.5), 24.0)
    >>> notched = shapely.Polygon([(0, 0), (6, 0), (6, 6), (3.5, 6), (3.5, 2), (2.5, 2), (2.5, 6), (0, 6)])
    >>> len(offset_outlines(np.array([notched]), 1.0)[0].interiors)
    0
    """
    geometries = np.asarray(geometries, object)
    if not distance_px or not len(geometries):
        return geometries
    distance = float(distance_px)
    grown = shapely.buffer(shapely.polygons(shapely.get_exterior_ring(geometries)), distance, join_style="mitre",
                           mitre_limit=OFFSET_MITRE_LIMIT)
    out = shapely.polygons(shapely.get_exterior_ring(grown))  # an inlet closed by the growth is filled
    for index in np.flatnonzero(shapely.get_num_interior_rings(geometries)):
        holes = shapely.polygons(list(geometries[index].interiors))
        shrunk = shapely.buffer(holes, -distance, join_style="mitre", mitre_limit=OFFSET_MITRE_LIMIT)
        out[index] = shapely.difference(out[index], shapely.union_all(shrunk))
    return out


def valid_polygons_only(geometries):
    """Mask of the geometries that are valid, non-empty single polygons."""
    geometries = np.asarray(geometries, object)
    return (
        (shapely.get_type_id(geometries) == shapely.GeometryType.POLYGON)
        & shapely.is_valid(geometries)
        & ~shapely.is_empty(geometries)
        & (shapely.area(geometries) > 0)
    )


def largest_polygon(geometry):
    """The polygon of largest area in a (multi)polygon or collection; None when there is none."""
    parts = shapely.get_parts(geometry)
    parts = [part for part in parts if shapely.get_type_id(part) == shapely.GeometryType.POLYGON and part.area > 0]
    if not parts:
        return None
    return max(parts, key=lambda part: part.area)


def drop_small_holes(polygon, min_hole_area_px2):
    """The polygon without the holes smaller than ``min_hole_area_px2`` (px²).

    Examples
    --------
    >>> p = shapely.Polygon([(0, 0), (9, 0), (9, 9), (0, 9)], [[(1, 1), (2, 1), (2, 2), (1, 2)]])
    >>> len(drop_small_holes(p, 2.0).interiors)
    0
    """
    if min_hole_area_px2 <= 0 or not polygon.interiors:
        return polygon
    holes = [ring for ring in polygon.interiors if shapely.Polygon(ring).area >= min_hole_area_px2]
    return shapely.Polygon(polygon.exterior, holes)
