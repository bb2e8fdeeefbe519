"""Per-instance ring geometry computed once per evaluation: ring sets and boundary bands.

:class:`RingTable` holds, for a list of instances, the exterior band, the band of all
rings, and a flat table of holes (owner instance, band). Every profile reads bands from it
instead of buffering the same ring twice.
"""

from functools import cached_property

import numpy as np

from .boundary import boundary_bands
from .construct import polygons_of, ring_polygons
from .repair import largest_polygons

__all__ = ["RingTable", "ring_regions"]


class RingTable:
    """Ring sets and ``radius_px`` boundary bands of ``instances``.

    Attributes
    ----------
    exterior_sets, all_sets : list of list of numpy.ndarray
        ``[exterior]`` and ``[exterior, *holes]`` of each instance.
    exterior_bands, all_bands : numpy.ndarray of shapely geometry
        Their bands (identical objects for instances without holes).
    holes : list of numpy.ndarray
        Every hole ring, instance by instance.
    hole_owner : numpy.ndarray
        Instance index of each hole.
    hole_start : numpy.ndarray
        ``hole_start[i]:hole_start[i + 1]`` are instance ``i``'s holes (length n + 1).
    hole_bands : numpy.ndarray
        Band of each hole alone.
    exterior_regions, hole_regions : numpy.ndarray
        The region each exterior / hole ring bounds on its own, repaired to its largest
        valid part (None when nothing is left); computed on first use.
    polygons : numpy.ndarray
        Each instance's polygon exactly as given (possibly invalid); computed on first use.
    """

    def __init__(self, instances, radius_px):
        self.instances = instances
        self.exterior_sets = [[instance.exterior] for instance in instances]
        self.all_sets = [list(instance.rings) for instance in instances]
        counts = np.array([instance.hole_count for instance in instances], dtype=np.int64)
        self.hole_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.hole_owner = np.repeat(np.arange(len(instances)), counts)
        self.holes = [hole for instance in instances for hole in instance.holes]
        self.exterior_bands = boundary_bands(self.exterior_sets, radius_px)
        self.all_bands = self.exterior_bands.copy()
        holed = np.flatnonzero(counts > 0)
        if holed.size:
            self.all_bands[holed] = boundary_bands([self.all_sets[i] for i in holed], radius_px)
        self.hole_bands = boundary_bands([[hole] for hole in self.holes], radius_px)

    def hole_range(self, instance_index):
        """Indices into the hole table of one instance's holes."""
        return range(self.hole_start[instance_index], self.hole_start[instance_index + 1])

    @cached_property
    def polygons(self):
        return polygons_of(self.instances)

    @cached_property
    def exterior_regions(self):
        return ring_regions([rings[0] for rings in self.exterior_sets])

    @cached_property
    def hole_regions(self):
        return ring_regions(self.holes)


def ring_regions(rings):
    """Largest valid polygon bounded by each ring alone (None when it bounds no area)."""
    if not rings:
        return np.empty(0, dtype=object)
    return largest_polygons(ring_polygons(rings))
