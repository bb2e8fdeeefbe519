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
        counts = self._index(instances)
        self.exterior_bands = boundary_bands(self.exterior_sets, radius_px)
        self.all_bands = self.exterior_bands.copy()
        holed = np.flatnonzero(counts > 0)
        if holed.size:
            self.all_bands[holed] = boundary_bands([self.all_sets[i] for i in holed], radius_px)
        self.hole_bands = boundary_bands([[hole] for hole in self.holes], radius_px)

    @classmethod
    def merged(cls, instances, tables, positions):
        """The table of ``instances`` assembled from the tables of its parts, computing nothing again.

        Parameters
        ----------
        instances : list of Instance
            All instances, in their final order.
        tables : sequence of RingTable
            Tables of disjoint parts of ``instances`` (same band radius).
        positions : sequence of numpy.ndarray
            ``positions[k][i]`` is the index in ``instances`` of ``tables[k]``'s instance ``i``.

        Returns
        -------
        table : RingTable
        hole_positions : list of numpy.ndarray
            Index in the merged hole table of each part's holes.
        """
        table = cls.__new__(cls)
        table._index(instances)
        hole_positions = [table.hole_start[pos[part.hole_owner]] + np.arange(len(part.holes))
                          - part.hole_start[part.hole_owner] for part, pos in zip(tables, positions)]
        per_instance = ("exterior_bands", "all_bands", "polygons", "exterior_regions")
        per_hole = ("hole_bands", "hole_regions")
        for name in per_instance + per_hole:
            if all(name in vars(part) for part in tables):
                where = positions if name in per_instance else hole_positions
                values = np.empty(len(instances) if name in per_instance else len(table.holes), dtype=object)
                for part, pos in zip(tables, where):
                    values[pos] = getattr(part, name)
                setattr(table, name, values)
        return table, hole_positions

    def _index(self, instances):
        """Set the ring sets and the hole table of ``instances``; return their hole counts."""
        self.instances = instances
        self.exterior_sets = [[instance.exterior] for instance in instances]
        self.all_sets = [list(instance.rings) for instance in instances]
        counts = np.array([instance.hole_count for instance in instances], dtype=np.int64)
        self.hole_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.hole_owner = np.repeat(np.arange(len(instances)), counts)
        self.holes = [hole for instance in instances for hole in instance.holes]
        return counts

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
