"""Building shapely geometries from many rings at once (one GEOS call per kind).

Rings are ``(n, 2)`` arrays in pixels with the first vertex not repeated; the closing
vertex is added here.
"""

import numpy as np
import shapely

__all__ = ["closed_coords", "ring_linestrings", "ring_linearrings", "polygons_of", "ring_polygons"]


def closed_coords(rings):
    """Flat coordinates of the rings, each closed, and the ring index of each coordinate."""
    if len(rings) == 0:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
    sizes = np.array([len(ring) for ring in rings], dtype=np.int64)
    coords = np.concatenate(rings)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    ends = np.cumsum(sizes)
    closed = np.insert(coords, ends, coords[first], axis=0)
    return closed, np.repeat(np.arange(len(rings)), sizes + 1)


def ring_linestrings(rings):
    """Closed LineString of each ring."""
    if len(rings) == 0:
        return np.empty(0, dtype=object)
    coords, index = closed_coords(rings)
    return shapely.linestrings(coords, indices=index)


def ring_linearrings(rings):
    """LinearRing of each ring."""
    if len(rings) == 0:
        return np.empty(0, dtype=object)
    coords, index = closed_coords(rings)
    return shapely.linearrings(coords, indices=index)


def ring_polygons(rings):
    """Polygon bounded by each ring alone (possibly invalid)."""
    return shapely.polygons(ring_linearrings(rings)) if len(rings) else np.empty(0, dtype=object)


def polygons_of(instances):
    """The polygon of each instance exactly as given (exterior and holes, possibly invalid)."""
    if len(instances) == 0:
        return np.empty(0, dtype=object)
    rings = [ring for instance in instances for ring in instance.rings]
    owner = np.repeat(np.arange(len(instances)), [1 + instance.hole_count for instance in instances])
    return shapely.polygons(ring_linearrings(rings), indices=owner)
