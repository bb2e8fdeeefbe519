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
    radius_px : float
        Band radius, pixels.
    exterior_bands, all_bands : numpy.ndarray of shapely geometry
        Their bands (identical objects for instances without holes); made on first use,
        like every geometry below.
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
        self.radius_px = radius_px
        self._index(instances)

    @classmethod
    def merged(cls, instances, tables, positions):
        """The table of ``instances`` assembled from the tables of its parts, computing nothing again.

        Geometry that every part has made (bands, polygons, regions) is taken over; the
        rest is made on first use.

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
        table.radius_px = tables[0].radius_px
        table._index(instances)
        hole_positions = [table.hole_start[pos[part.hole_owner]] + np.arange(len(part.holes))
                          - part.hole_start[part.hole_owner] for part, pos in zip(tables, positions)]
        for name in _DERIVED:
            if all(name in vars(part) for part in tables):
                per_hole = name.startswith("hole_")
                where = hole_positions if per_hole else positions
                values = np.empty(len(table.holes) if per_hole else len(instances), dtype=object)
                for part, pos in zip(tables, where):
                    values[pos] = getattr(part, name)
                setattr(table, name, values)
        return table, hole_positions

    def _index(self, instances):
        """Set the ring sets and the hole table of ``instances``."""
        self.instances = instances
        self.exterior_sets = [[instance.exterior] for instance in instances]
        self.all_sets = [list(instance.rings) for instance in instances]
        counts = np.array([instance.hole_count for instance in instances], dtype=np.int64)
        self.hole_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.hole_owner = np.repeat(np.arange(len(instances)), counts)
        self.holes = [hole for instance in instances for hole in instance.holes]

    def hole_range(self, instance_index):
        """Indices into the hole table of one instance's holes."""
        return range(self.hole_start[instance_index], self.hole_start[instance_index + 1])

    def drop_geometry(self):
        """Forget the bands, polygons and regions made so far; they are made again on first use.

        A worker calls this before sending its table back: the client reads rings and
        counts, and rarely the geometry, which would cost more to send than to rebuild.
        """
        for name in _DERIVED:
            self.__dict__.pop(name, None)

    @cached_property
    def exterior_bands(self):
        return boundary_bands(self.exterior_sets, self.radius_px)

    @cached_property
    def all_bands(self):
        bands = self.exterior_bands.copy()
        holed = np.flatnonzero(np.diff(self.hole_start) > 0)
        if holed.size:
            bands[holed] = boundary_bands([self.all_sets[i] for i in holed], self.radius_px)
        return bands

    @cached_property
    def hole_bands(self):
        return boundary_bands([[hole] for hole in self.holes], self.radius_px)

    @cached_property
    def polygons(self):
        return polygons_of(self.instances)

    @cached_property
    def exterior_regions(self):
        return ring_regions([rings[0] for rings in self.exterior_sets])

    @cached_property
    def hole_regions(self):
        return ring_regions(self.holes)


_DERIVED = ("exterior_bands", "all_bands", "hole_bands", "polygons", "exterior_regions", "hole_regions")
"""The geometry a table derives from its rings, each made on first use."""


def ring_regions(rings):
    """Largest valid polygon bounded by each ring alone (None when it bounds no area)."""
    if not rings:
        return np.empty(0, dtype=object)
    return largest_polygons(ring_polygons(rings))
