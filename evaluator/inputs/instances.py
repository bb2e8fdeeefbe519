"""Polygon instances in pixel units, the common currency of every profile.

Conventions
-----------
* Coordinates are pixels of the evaluation raster (x to the right, y down for image data;
  map layers are translated to a local origin and divided by the pixel size on loading).
* A ring is an ``(n, 2)`` float64 array with ``n >= 3`` and the first vertex *not* repeated.
* An instance has exactly one exterior ring and zero or more holes, kept exactly as given:
  nothing is repaired here, so invalid input stays invalid and is judged by
  :mod:`polytopo.evaluator.inputs.validity`.
* A MultiPolygon is exploded into one instance per part (``part`` numbers them); every part
  keeps the score, category and source id of its feature.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import shapely

from ...core.errors import InputFormatError
from ..geometry.construct import polygons_of
from ..geometry.geos_validity import geos_is_valid
from ..geometry.kernels import ring_perimeters

__all__ = [
    "Instance",
    "FIELD_NAMES",
    "FieldRows",
    "field_values",
    "InstanceFields",
    "InstanceSet",
    "LEARNABLE",
    "PackedInstances",
    "ring_from_flat",
    "rings_from_flat_lists",
    "flat_ring_table",
    "instances_from_geometry",
    "instances_from_geometries",
    "ring_area",
    "MAX_COORDINATE_PX",
]

MAX_COORDINATE_PX = float(2**30)
"""Largest coordinate magnitude accepted, pixels: float64 spacing there is 2.4e-7 px, so
buffers, areas and distances at the pixel scale stay exact to far below a pixel; larger
values (e.g. 1e300, or metres divided by a wrong pixel size) are refused by record."""


@dataclass(frozen=True, eq=False, slots=True)
class Instance:
    """One polygon instance.

    Parameters
    ----------
    image_id : int or str
        The image (patch, tile) the instance belongs to; matching never crosses images.
    source_id : int or str
        Annotation id, feature id or list position in the source, for reporting.
    exterior : numpy.ndarray
        ``(n, 2)`` exterior ring in pixels, first vertex not repeated.
    holes : tuple of numpy.ndarray
        Interior rings, same convention.
    score : float
        Confidence; 1.0 for ground truth.
    category_id : int or None
        Class of the instance.
    part : int
        Index of this part in its source MultiPolygon (0 for a plain Polygon).
    """

    image_id: object
    source_id: object
    exterior: np.ndarray
    holes: tuple = ()
    score: float = 1.0
    category_id: object = None
    part: int = 0

    @property
    def rings(self):
        """All rings, exterior first."""
        return (self.exterior, *self.holes)

    @property
    def hole_count(self):
        """Number of interior rings as given."""
        return len(self.holes)

    def polygon(self):
        """The instance as a shapely Polygon, exactly as given (possibly invalid)."""
        return shapely.Polygon(self.exterior, list(self.holes))

    def with_holes(self, holes):
        """A copy of this instance with other interior rings."""
        return replace(self, holes=tuple(holes))


_RINGS_ELSEWHERE = ("Expected the rings of an instance of this evaluation, but they stayed on the Dask workers "
                    "that scored it: a cluster run whose workers also made the per-feature records (record_parts) "
                    "sends back only what its summary reads; evaluate without record_parts to have the geometry here")


@dataclass(frozen=True, eq=False, slots=True)
class InstanceFields:
    """An instance whose rings stayed on the cluster worker that scored it: every field but the rings.

    Each instance read from :class:`FieldRows` (a cluster run's instances where the workers
    also made the per-feature records and the profile's dataset-wide phase reads no
    geometry, :attr:`.profiles.Profile.client_rings`). Reading ``exterior``, ``holes``,
    ``rings`` or :meth:`polygon` raises :class:`AttributeError` saying so.

    Parameters
    ----------
    image_id, source_id, score, category_id, part
        As :class:`Instance`.
    hole_count : int
        Number of interior rings.
    """

    image_id: object
    source_id: object
    score: float
    category_id: object
    part: int
    hole_count: int

    @property
    def exterior(self):
        raise AttributeError(_RINGS_ELSEWHERE)

    @property
    def holes(self):
        raise AttributeError(_RINGS_ELSEWHERE)

    @property
    def rings(self):
        raise AttributeError(_RINGS_ELSEWHERE)

    def polygon(self):
        """Not available: see the class."""
        raise AttributeError(_RINGS_ELSEWHERE)


FIELD_NAMES = ("image_id", "source_id", "score", "category_id", "part", "hole_count")
"""The fields of :class:`InstanceFields`, in order: every field of an instance but its rings."""


class FieldRows(Sequence):
    """Instances kept as one list per field (:data:`FIELD_NAMES`): each read makes an :class:`InstanceFields`.

    The ``instances`` of a set whose rings stayed on the cluster workers that read it
    (:mod:`.read_on_workers`), and of a cluster run's filtered sets whose rings stayed on the
    workers that scored them (:meth:`PackedInstances.unpack`): :func:`field_values` and
    :meth:`InstanceSet.column` read its lists as they are, so the merge, the checks and the
    counts that read one field of every instance make no object per instance.
    """

    def __init__(self, columns):
        # a list is taken as it is, not copied: the callers hand over lists made for it
        self.columns = {name: columns[name] if type(columns[name]) is list else list(columns[name])
                        for name in FIELD_NAMES}

    def __len__(self):
        return len(self.columns["image_id"])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        return InstanceFields(*(self.columns[name][index] for name in FIELD_NAMES))

    def taken(self, order):
        """The rows at the positions ``order`` (a sequence of ints), as new :class:`FieldRows`."""
        order = np.asarray(order, dtype=np.int64)
        return FieldRows({name: _object_array(values)[order].tolist() for name, values in self.columns.items()})

    @classmethod
    def joined(cls, parts):
        """The rows of several :class:`FieldRows` one after the other."""
        return cls({name: list(itertools.chain.from_iterable(part.columns[name] for part in parts))
                    for name in FIELD_NAMES})


def _object_array(values):
    """``values`` (a list) as a 1-D object array, whatever its items are (tuples stay items)."""
    return np.fromiter(values, dtype=object, count=len(values))


def field_values(instances, name):
    """The field ``name`` (one of :data:`FIELD_NAMES`) of every one of ``instances``, as a list in order.

    :class:`FieldRows` give their list as it is; other sequences make it from the instances.
    """
    if isinstance(instances, FieldRows):
        return instances.columns[name]
    return [getattr(instance, name) for instance in instances]


@dataclass(frozen=True)
class InstanceSet:
    """Instances of one side (ground truth or predictions) of an evaluation.

    Parameters
    ----------
    instances : tuple of Instance
        All instances, in source order.
    image_ids : tuple
        Every image of the evaluation, including images without instances.
    skipped : dict
        Counts of source records that produced no instance, by reason
        (``"null_geometry"``, ``"empty_geometry"``, ``"below_score_threshold"``, ...).
    source : str
        Where the instances came from (file name), for messages.
    image_sizes : dict
        ``{image_id: (width, height)}`` in pixels, for the images whose size the source
        gives (COCO ``images[].width/height``): raster IoU clips masks to it, as
        pycocotools does; None for an image the source lists without a size. Images
        without a size are not clipped on the right and bottom.
    """

    instances: tuple
    image_ids: tuple
    skipped: dict = field(default_factory=dict)
    source: str = ""
    image_sizes: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.instances)

    def by_image(self):
        """Instances grouped by image id, as ``{image_id: [Instance, ...]}`` in source order."""
        grouped = {image_id: [] for image_id in self.image_ids}
        for instance in self.instances:
            grouped.setdefault(instance.image_id, []).append(instance)
        return grouped

    @property
    def hole_count(self):
        """Total number of interior rings."""
        return sum(self.column("hole_count"))

    def column(self, name):
        """The field ``name`` (one of :data:`FIELD_NAMES`) of every instance, as a list in order."""
        return field_values(self.instances, name)

    @cached_property
    def ring_counts(self):
        """int64, rings of each instance (1 + its holes); computed once per set."""
        return np.fromiter((1 + instance.hole_count for instance in self.instances), np.int64, len(self.instances))

    @cached_property
    def ring_perimeters(self):
        """float64, perimeter (px) of every ring, instance by instance, exterior first; computed once per set.

        Read by the sampling-cost check and by a cluster run's partitioning, each once per
        evaluation: a comparison reads its ground truth's for every method.
        """
        return ring_perimeters([ring for instance in self.instances for ring in instance.rings])

    @cached_property
    def invalid_positions(self):
        """int64, positions of the instances whose polygon, as given, GEOS finds invalid; computed once per set.

        The reference check of every evaluation reads it (:func:`.input_checks.reference_flags`):
        a comparison's ground truth is checked once for all its methods.
        """
        polygons = polygons_of(self.instances)
        return np.flatnonzero(~geos_is_valid(polygons)) if len(polygons) else np.zeros(0, np.int64)

    @cached_property
    def first_invalid_reason(self):
        """GEOS's reason why the first of :attr:`invalid_positions` is invalid (text); None when none is."""
        if not len(self.invalid_positions):
            return None
        return shapely.is_valid_reason(polygons_of([self.instances[int(self.invalid_positions[0])]])[0])

    @cached_property
    def longest_ring(self):
        """The longest ring perimeter (px), or None without rings; computed once per set.

        All perimeters are summed in one pass (:attr:`ring_perimeters`); the few within
        rounding of the longest are summed again ring by ring, so the value does not depend
        on the order of summation (nor on how the set is cut into parts).
        """
        perimeters = self.ring_perimeters
        if not perimeters.size:
            return None
        near = np.flatnonzero(perimeters >= float(perimeters.max()) * (1.0 - 1e-6))
        return max(_ring_perimeter(self.ring_at(int(k))) for k in near)

    @cached_property
    def bounds(self):
        """``(min x, min y, max x, max y)`` of the exterior rings (px); None without instances."""
        if not self.instances:
            return None
        points = np.concatenate([instance.exterior for instance in self.instances])
        return (*points.min(axis=0).tolist(), *points.max(axis=0).tolist())

    def learn(self, **values):
        """Take per-set values (:data:`LEARNABLE`) as found elsewhere: by the cluster workers that hold the rings."""
        for name, value in values.items():
            if name not in LEARNABLE:
                raise ValueError(f"Expected one of {LEARNABLE} but got {name!r}")
            self.__dict__[name] = np.asarray(value, np.int64) if name == "invalid_positions" else value

    def ring_at(self, position):
        """Ring ``position`` of :attr:`ring_perimeters`' order."""
        owner = int(np.searchsorted(np.cumsum(self.ring_counts), position, side="right"))
        first = int(self.ring_counts[:owner].sum())
        return self.instances[owner].rings[position - first]

    def __reduce__(self):
        # pickled with the rings in one array (PackedInstances): sent to Dask workers
        # many times, and a pickled ring array of its own also keeps per-array buffer
        # information alive in numpy for as long as the array lives
        return _unpacked_set, (PackedInstances.pack(self.instances), self.image_ids, self.skipped, self.source,
                               self.image_sizes)

    def replaced(self, instances, **skipped):
        """A copy with other instances and extra skip counts added."""
        counts = dict(self.skipped)
        for reason, count in skipped.items():
            counts[reason] = counts.get(reason, 0) + count
        return replace(self, instances=tuple(instances), skipped=counts)


LEARNABLE = ("invalid_positions", "first_invalid_reason", "longest_ring", "bounds")
"""The per-set values an :class:`InstanceSet` computes from its rings once, or learns (:meth:`InstanceSet.learn`)."""


def _ring_perimeter(ring):
    closed = np.vstack([ring, ring[:1]])
    return float(np.hypot(*np.diff(closed, axis=0).T).sum())


@dataclass(frozen=True)
class PackedInstances:
    """A list of instances with every ring in one coordinate array, to send between processes.

    Pickling a list of instances pickles each ring as an array of its own: tens of
    thousands of small arrays, slow to send and, once received, about twice the memory of
    the coordinates. :meth:`pack` keeps the instances' other fields as they are and their
    rings as one ``(n, 2)`` float64 array; :meth:`unpack` gives equal instances whose rings
    are views of that array.

    Attributes
    ----------
    fields : tuple of list
        One list per field of :data:`FIELD_NAMES` but ``hole_count`` (``image_id``,
        ``source_id``, ``score``, ``category_id``, ``part``), each with a value per instance.
    hole_counts : numpy.ndarray
        int64, holes of each instance.
    ring_sizes : numpy.ndarray
        int64, vertices of each ring, instance by instance, exterior first (empty without rings).
    coords : numpy.ndarray
        ``(sum(ring_sizes), 2)`` float64, every ring's vertices in pixels.
    with_rings : bool
        Whether the rings were packed (:meth:`pack` with ``rings=False`` sends the fields alone).
    """

    fields: tuple
    hole_counts: np.ndarray
    ring_sizes: np.ndarray
    coords: np.ndarray
    with_rings: bool = True

    @classmethod
    def pack(cls, instances, rings=True):
        """The packed form of a sequence of :class:`Instance`; without their rings unless ``rings``."""
        fields = tuple(field_values(instances, name) for name in FIELD_NAMES[:-1])
        hole_counts = np.fromiter(field_values(instances, "hole_count"), np.int64, len(instances))
        if not rings:
            return cls(fields, hole_counts, np.zeros(0, np.int64), np.zeros((0, 2)), False)
        flat = [ring for instance in instances for ring in instance.rings]
        return cls(fields, hole_counts, np.fromiter(map(len, flat), np.int64, len(flat)),
                   np.concatenate(flat) if flat else np.zeros((0, 2)))

    def unpack(self):
        """The instances again, in their order: a list whose rings are read-only views of :attr:`coords`.

        Packed without rings: :class:`FieldRows`.
        """
        if not self.with_rings:
            return FieldRows(dict(zip(FIELD_NAMES, [*self.fields, self.hole_counts.tolist()], strict=True)))
        coords = self.coords.view()
        coords.flags.writeable = False
        ends = np.cumsum(self.ring_sizes).tolist()
        rings = iter([coords[lo:hi] for lo, hi in zip([0] + ends[:-1], ends)])
        return [Instance(image_id, source_id, next(rings), tuple(next(rings) for _ in range(holes)), score,
                         category_id, part)
                for image_id, source_id, score, category_id, part, holes in zip(*self.fields, self.hole_counts.tolist())]


def _unpacked_set(packed, image_ids, skipped, source, image_sizes):
    """The :class:`InstanceSet` that :meth:`InstanceSet.__reduce__` pickled."""
    return InstanceSet(tuple(packed.unpack()), image_ids, skipped, source, image_sizes)


def ring_from_flat(values, where):
    """Parse a flat ``[x0, y0, x1, y1, ...]`` ring.

    Parameters
    ----------
    values : sequence of float
        Flat coordinates in pixels; a repeated closing vertex is dropped.
    where : str
        Location used in error messages (file, record, field).

    Returns
    -------
    numpy.ndarray
        ``(n, 2)`` ring.

    Raises
    ------
    InputFormatError
        On an odd number of values, non-numeric or non-finite values, or fewer than
        3 distinct points.

    Examples
    --------
    >>> ring_from_flat([0, 0, 4, 0, 4, 4, 0, 0], "example").tolist()
    [[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]]
    """
    bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, (int, float))), None) \
        if isinstance(values, (list, tuple)) else None
    if bad is not None:
        raise InputFormatError(
            f"{where}: expected a flat list of numbers [x0, y0, x1, y1, ...] but got the {type(bad).__name__} "
            f"{str(bad)[:40]!r}; write coordinates as JSON numbers, not strings or booleans"
        )
    try:
        flat = np.asarray(values, dtype=np.float64)
    except OverflowError:
        raise InputFormatError(
            f"{where}: expected coordinates within ±{MAX_COORDINATE_PX:.0f} px but got an integer too large for "
            "a float; fix the record"
        ) from None
    except (TypeError, ValueError):
        raise InputFormatError(
            f"{where}: expected a flat list of numbers [x0, y0, x1, y1, ...] but got {str(values)[:60]}"
        ) from None
    if flat.ndim != 1 or flat.size % 2:
        raise InputFormatError(
            f"{where}: expected an even number of coordinates [x0, y0, x1, y1, ...] but got {flat.size}"
        )
    return _checked_ring(flat.reshape(-1, 2), where)


def rings_from_flat_lists(ring_lists):
    """Parse many flat rings at once, as :func:`ring_from_flat` would each.

    Parameters
    ----------
    ring_lists : sequence of list
        Flat ``[x0, y0, x1, y1, ...]`` rings in pixels (JSON lists).

    Returns
    -------
    list
        Per ring, the ``(n, 2)`` array that :func:`ring_from_flat` returns (a view into
        one array holding every ring), or None where that ring needs
        :func:`ring_from_flat` itself (see :func:`flat_ring_table`).

    Examples
    --------
    >>> [None if r is None else r.tolist() for r in rings_from_flat_lists([[0, 0, 4, 0, 4, 4, 0, 0], [1, 1]])]
    [[[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]], None]
    """
    coords, starts, sizes, ok = flat_ring_table(ring_lists)
    return [coords[start:start + size] if good else None
            for good, start, size in zip(ok.tolist(), starts.tolist(), sizes.tolist())]


def flat_ring_table(ring_lists):
    """Parse many flat rings at once into one coordinate array and offsets, without an object per ring.

    Parameters
    ----------
    ring_lists : sequence of list
        Flat ``[x0, y0, x1, y1, ...]`` rings in pixels (JSON lists).

    Returns
    -------
    coords : numpy.ndarray of float64, shape (m, 2)
        Every ring's vertices, pixels.
    starts, sizes : numpy.ndarray of int64
        Per ring, its first row in ``coords`` and its vertex count without a repeated
        closing vertex: ``coords[start:start + size]`` is what :func:`ring_from_flat`
        returns.
    ok : numpy.ndarray of bool
        False where a ring needs :func:`ring_from_flat` itself: it would raise (or, for its
        first three vertices not pairwise different, check every vertex). When any value is
        not a JSON number or any ring has an odd length, every entry is False.

    Examples
    --------
    >>> coords, starts, sizes, ok = flat_ring_table([[0, 0, 4, 0, 4, 4, 0, 0], [1, 1]])
    >>> starts.tolist(), sizes.tolist(), ok.tolist()
    ([0, 4], [3, 1], [True, False])
    """
    n = len(ring_lists)
    sizes = np.fromiter(map(len, ring_lists), np.int64, n)
    values = list(itertools.chain.from_iterable(ring_lists))
    none = np.zeros((0, 2)), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
    if not n or (sizes % 2).any() or not set(map(type, values)) <= {int, float}:
        return none
    try:
        coords = np.array(values, dtype=np.float64).reshape(-1, 2)
    except OverflowError:
        return none
    del values
    counts = sizes // 2
    starts = np.cumsum(counts) - counts
    bad = counts < 3
    outside = ~np.isfinite(coords).all(axis=1) | (np.abs(coords) > MAX_COORDINATE_PX).any(axis=1)
    bad[np.repeat(np.arange(n), counts)[outside]] = True
    first, last = coords[starts[~bad]], coords[starts[~bad] + counts[~bad] - 1]
    kept = counts.copy()
    kept[~bad] -= (np.abs(first - last) <= _CLOSING_ATOL + _CLOSING_RTOL * np.abs(last)).all(axis=1)
    bad |= kept < 3
    a, b, c = (coords[starts[~bad] + k] for k in range(3))
    bad[~bad] = ~((a != b).any(axis=1) & (b != c).any(axis=1) & (a != c).any(axis=1))
    return coords, starts, kept, ~bad


def _checked_ring(coords, where):
    if not np.isfinite(coords).all():
        raise InputFormatError(f"{where}: expected finite coordinates but got NaN or infinity")
    _check_magnitude(coords, where)
    if len(coords) >= 2 and _same_point(coords[0], coords[-1]):
        coords = coords[:-1]
    if len(coords) < 3 or not _three_distinct(coords):
        distinct = len(np.unique(coords, axis=0)) if len(coords) else 0
        if distinct < 3:
            raise InputFormatError(f"{where}: expected a ring with at least 3 distinct points but got {distinct}; "
                                   "fix or remove the record (--drop-degenerate-rings skips such rings)")
    return np.ascontiguousarray(coords, dtype=np.float64)


def _check_magnitude(coords, where):
    """Refuse coordinates beyond :data:`MAX_COORDINATE_PX`, where float64 loses sub-pixel precision."""
    largest = float(np.abs(coords).max()) if coords.size else 0.0
    if largest > MAX_COORDINATE_PX:
        raise InputFormatError(
            f"{where}: expected coordinates within ±{MAX_COORDINATE_PX:.0f} px (2^30, where float64 still "
            f"resolves 1e-6 px) but got {largest:.4g}; check the units (for map layers: --pixel-size) or fix "
            "the record"
        )


_CLOSING_ATOL, _CLOSING_RTOL = 1e-6, 1e-5
"""A ring's last vertex within these tolerances of its first (numpy.isclose's rule) repeats it."""


def _same_point(a, b):
    """numpy.allclose(a, b, atol=1e-6) for two points, without its overhead."""
    return (abs(a[0] - b[0]) <= _CLOSING_ATOL + _CLOSING_RTOL * abs(b[0])
            and abs(a[1] - b[1]) <= _CLOSING_ATOL + _CLOSING_RTOL * abs(b[1]))


def _three_distinct(coords):
    """Cheap sufficient test: the first three vertices are pairwise different."""
    a, b, c = coords[0], coords[1], coords[2]
    return (a != b).any() and (b != c).any() and (a != c).any()


def instances_from_geometry(geometry, *, image_id, source_id, score=1.0, category_id=None, where=""):
    """Instances of one shapely Polygon or MultiPolygon (one per part).

    Returns an empty list for None or empty geometry; raises InputFormatError for
    non-polygonal geometry (see :func:`instances_from_geometries`).

    Examples
    --------
    >>> square = shapely.Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (2, 1), (2, 2)]])
    >>> [i.hole_count for i in instances_from_geometry(square, image_id=0, source_id=0)]
    [1]
    """
    return instances_from_geometries(np.array([geometry], dtype=object), image_ids=[image_id],
                                     source_ids=[source_id], scores=[score], category_ids=[category_id],
                                     where=lambda index: where or f"geometry of {source_id}")


def instances_from_geometries(geometries, *, image_ids, source_ids, scores, category_ids, where):
    """Instances of many Polygons / MultiPolygons at once (one per non-empty part).

    Parameters
    ----------
    geometries : numpy.ndarray of shapely geometry
        In pixels; None and empty geometries give no instance.
    image_ids, source_ids, scores, category_ids : sequence
        One value per geometry.
    where : callable
        ``where(index)`` names geometry ``index`` in error messages (file, feature, field).

    Returns
    -------
    list of Instance
        In input order, parts in order.

    Raises
    ------
    InputFormatError
        For non-polygonal geometry, NaN or infinite coordinates, or a ring with fewer than
        3 distinct points (the first offending geometry is named).
    """
    geometries = np.asarray(geometries, dtype=object)
    present = np.flatnonzero(~shapely.is_missing(geometries))
    types = shapely.get_type_id(geometries[present])
    polygonal = (types == shapely.GeometryType.POLYGON) | (types == shapely.GeometryType.MULTIPOLYGON)
    if not polygonal.all():
        bad = present[np.flatnonzero(~polygonal)[0]]
        raise InputFormatError(f"{where(bad)}: expected a Polygon or MultiPolygon but got "
                               f"{geometries[bad].geom_type}; select a polygon layer")
    parts, part_owner = shapely.get_parts(geometries[present], return_index=True)
    part_owner = present[part_owner]
    keep = ~shapely.is_empty(parts)
    parts, part_owner = parts[keep], part_owner[keep]
    part_rank = np.arange(len(parts)) - np.searchsorted(part_owner, part_owner)
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
    sizes = np.bincount(coord_ring, minlength=len(rings))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    bad_coord = ~np.isfinite(coords).all(axis=1)
    if bad_coord.any():
        part = ring_part[coord_ring[np.flatnonzero(bad_coord)[0]]]
        raise InputFormatError(f"{where(part_owner[part])} part {part_rank[part]}: expected finite coordinates "
                               "but got NaN or infinity")
    far = (np.abs(coords) > MAX_COORDINATE_PX).any(axis=1)
    if far.any():
        part = ring_part[coord_ring[np.flatnonzero(far)[0]]]
        _check_magnitude(coords[coord_ring == coord_ring[np.flatnonzero(far)[0]]],
                         f"{where(part_owner[part])} part {part_rank[part]}")
    # GEOS rings are closed: drop each ring's closing vertex.
    open_sizes = sizes - 1
    for ring in np.flatnonzero((open_sizes < 3) | ~_first_three_distinct(coords, starts, open_sizes)):
        ring_coords = coords[starts[ring]:starts[ring] + open_sizes[ring]]
        distinct = len(np.unique(ring_coords, axis=0)) if len(ring_coords) else 0
        if distinct < 3:
            part = ring_part[ring]
            rank = ring - np.searchsorted(ring_part, part)
            role = "exterior" if rank == 0 else f"hole {rank}"
            raise InputFormatError(f"{where(part_owner[part])} part {part_rank[part]} {role}: expected a ring with "
                                   f"at least 3 distinct points but got {distinct}")
    ring_start_of_part = np.searchsorted(ring_part, np.arange(len(parts)))
    ring_stop_of_part = np.searchsorted(ring_part, np.arange(len(parts)), side="right")
    instances = []
    for k in range(len(parts)):
        owner = int(part_owner[k])
        ring_list = [coords[starts[r]:starts[r] + open_sizes[r]] for r in range(ring_start_of_part[k],
                                                                              ring_stop_of_part[k])]
        instances.append(Instance(image_ids[owner], source_ids[owner], ring_list[0], tuple(ring_list[1:]),
                                  float(scores[owner]), category_ids[owner], int(part_rank[k])))
    return instances


def _first_three_distinct(coords, starts, sizes):
    """Per ring: True when its first three vertices are pairwise different (rings of >= 3 vertices)."""
    ok = sizes >= 3
    i = starts[ok]
    a, b, c = coords[i], coords[i + 1], coords[i + 2]
    result = np.zeros(len(sizes), dtype=bool)
    result[ok] = (a != b).any(axis=1) & (b != c).any(axis=1) & (a != c).any(axis=1)
    return result


def ring_area(ring):
    """Area enclosed by a ring in px² (shoelace; a self-crossing ring gives its signed sum).

    Examples
    --------
    >>> ring_area(np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]]))
    16.0
    """
    x, y = ring[:, 0], ring[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)
