"""Per-instance ring geometry computed once per evaluation: ring sets and boundary bands.

:class:`RingTable` holds, for a list of instances, the exterior band, the band of all
rings, and a flat table of holes (owner instance, band). Every profile reads bands from it
instead of buffering the same ring twice.
"""

from functools import cached_property

import numpy as np

from .boundary import boundary_bands
from .construct import polygons_of, ring_polygons
from ..inputs.instances import field_values
from ..inputs.repair import largest_polygons

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
    def merged(cls, instances, tables, positions, rings=True):
        """The table of ``instances`` assembled from the tables of its parts, computing nothing again.

        Geometry that every part has made (bands, polygons, regions) is taken over; the
        rest is made on first use.

        Parameters
        ----------
        instances : list of Instance
            All instances, in their final order.
        rings : bool
            False when ``instances`` are fields alone (:class:`.instances.FieldRows`; their rings
            stayed on the workers): the table then has the hole table's ``hole_start`` and
            ``hole_owner`` and no ring sets, ``holes`` or geometry.
        tables : sequence of RingTable
            Tables of disjoint parts of ``instances`` (same band radius), or their
            :meth:`hole_index` alone.
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
        table._index(instances, rings)
        hole_positions = [table.hole_start[pos[part.hole_owner]] + np.arange(len(part.hole_owner))
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

    def _index(self, instances, rings=True):
        """Set the hole table of ``instances`` and (``rings``) their ring sets."""
        self.instances = instances
        counts = np.fromiter(field_values(instances, "hole_count"), np.int64, len(instances))
        self.hole_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.hole_owner = np.repeat(np.arange(len(instances)), counts)
        if rings:
            self.exterior_sets = [[instance.exterior] for instance in instances]
            self.all_sets = [list(instance.rings) for instance in instances]
            self.holes = [hole for instance in instances for hole in instance.holes]

    def hole_index(self):
        """A table holding only the band radius and the hole table's ``hole_start`` and ``hole_owner``.

        All that :meth:`merged` reads of a part without geometry: a worker sends this
        back instead of the rings, which the client has with the instances.
        """
        table = RingTable.__new__(RingTable)
        table.radius_px, table.hole_start, table.hole_owner = self.radius_px, self.hole_start, self.hole_owner
        return table

    def hole_range(self, instance_index):
        """Indices into the hole table of one instance's holes."""
        return range(self.hole_start[instance_index], self.hole_start[instance_index + 1])

    def drop_geometry(self, keep=()):
        """Forget the bands, polygons and regions made so far; they are made again on first use.

        A worker calls this before sending its table back: the client reads rings and
        counts, and rarely the geometry, which would cost more to send than to rebuild.
        The profiles call it with ``keep=("polygons",)`` once their pair metrics are done:
        the bands and ring regions (at 4x about 130 MiB of GEOS geometry) are not used
        after that, the polygons are (records, error layers).

        Parameters
        ----------
        keep : collection of str
            Names of :data:`_DERIVED` to keep.
        """
        for name in _DERIVED:
            if name not in keep:
                self.__dict__.pop(name, None)

    def make(self, *names):
        """Make and keep the named geometries of :data:`_DERIVED` for every instance now."""
        for name in names:
            getattr(self, name)

    def of(self, name, index):
        """``getattr(self, name)[index]`` for a geometry of :data:`_DERIVED`, without keeping more.

        From the table's copy when that geometry was made for every instance; otherwise
        made for ``index`` alone and not kept (the same objects, element by element), so
        a caller that needs the bands of some rings once holds no bands of the others.

        Parameters
        ----------
        name : str
            One of :data:`_DERIVED` but ``polygons``.
        index : numpy.ndarray
            Instance indices (hole indices for ``hole_bands`` and ``hole_regions``).

        Returns
        -------
        numpy.ndarray of shapely geometry
        """
        if name in self.__dict__:
            return self.__dict__[name][index]
        return getattr(self, f"_make_{name}")(np.asarray(index, dtype=np.int64))

    def _make_exterior_bands(self, index):
        return boundary_bands([self.exterior_sets[i] for i in index], self.radius_px)

    def _make_all_bands(self, index):
        # an instance without holes has all_sets [exterior]: its band is its exterior band
        return boundary_bands([self.all_sets[i] for i in index], self.radius_px)

    def _make_hole_bands(self, index):
        return boundary_bands([[self.holes[i]] for i in index], self.radius_px)

    def _make_exterior_regions(self, index):
        return ring_regions([self.exterior_sets[i][0] for i in index])

    def _make_hole_regions(self, index):
        return ring_regions([self.holes[i] for i in index])

    @cached_property
    def exterior_bands(self):
        return self._make_exterior_bands(np.arange(len(self.instances)))

    @cached_property
    def all_bands(self):
        bands = self.exterior_bands.copy()
        holed = np.flatnonzero(np.diff(self.hole_start) > 0)
        if holed.size:
            bands[holed] = self._make_all_bands(holed)
        return bands

    @cached_property
    def hole_bands(self):
        return self._make_hole_bands(np.arange(len(self.holes)))

    @cached_property
    def polygons(self):
        return polygons_of(self.instances)

    @cached_property
    def exterior_regions(self):
        return self._make_exterior_regions(np.arange(len(self.instances)))

    @cached_property
    def hole_regions(self):
        return self._make_hole_regions(np.arange(len(self.holes)))


_DERIVED = ("exterior_bands", "all_bands", "hole_bands", "polygons", "exterior_regions", "hole_regions")
"""The geometry a table derives from its rings, each made on first use."""


def ring_regions(rings):
    """Largest valid polygon bounded by each ring alone (None when it bounds no area)."""
    if not rings:
        return np.empty(0, dtype=object)
    return largest_polygons(ring_polygons(rings))
