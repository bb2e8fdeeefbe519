"""Simplification, coordinate transforms and the final validity guarantee."""

import numpy as np
import shapely

__all__ = ["drop_small_holes", "largest_polygon", "simplify_keep_valid", "to_map_coordinates", "valid_polygons_only"]


def simplify_keep_valid(geometries, tolerance_px):
    """Topology-preserving Douglas–Peucker simplification that never breaks validity.

    Parameters
    ----------
    geometries : numpy.ndarray of shapely.Polygon
        Valid polygons, pixel coordinates.
    tolerance_px : float
        Douglas–Peucker tolerance, pixels (0 returns the input).

    Returns
    -------
    numpy.ndarray of shapely.Polygon
        Each polygon simplified with GEOS' topology-preserving simplifier
        (rings keep their nesting and never cross); a polygon whose simplified
        form is invalid, empty, not a single polygon or has lost a hole is
        returned unsimplified.

    Examples
    --------
    >>> stair = shapely.Polygon([(0, 0), (4, 0), (4, 1), (5, 1), (5, 5), (0, 5)])
    >>> len(simplify_keep_valid(np.array([stair]), 1.0)[0].exterior.coords) < 7
    True
    """
    geometries = np.asarray(geometries, object)
    if tolerance_px <= 0 or not len(geometries):
        return geometries
    simplified = shapely.simplify(geometries, tolerance_px, preserve_topology=True)
    holes_before = shapely.get_num_interior_rings(geometries)
    holes_after = shapely.get_num_interior_rings(simplified)
    good = (
        (shapely.get_type_id(simplified) == shapely.GeometryType.POLYGON)
        & shapely.is_valid(simplified)
        & ~shapely.is_empty(simplified)
        & (holes_after == holes_before)
    )
    return np.where(good, simplified, geometries)


def to_map_coordinates(geometries, geotransform):
    """Apply a GDAL geotransform to geometries in (column, row) pixel coordinates."""
    gt = geotransform

    def affine(xy):
        x, y = xy[:, 0], xy[:, 1]
        return np.column_stack([gt[0] + x * gt[1] + y * gt[2], gt[3] + x * gt[4] + y * gt[5]])

    return shapely.transform(np.asarray(geometries, object), affine)


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
