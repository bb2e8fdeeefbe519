"""Polygon instances in pixel units, the common currency of every profile.

Conventions
-----------
* Coordinates are pixels of the evaluation raster (x to the right, y down for image data;
  map layers are translated to a local origin and divided by the pixel size on loading).
* A ring is an ``(n, 2)`` float64 array with ``n >= 3`` and the first vertex *not* repeated.
* An instance has exactly one exterior ring and zero or more holes, kept exactly as given:
  nothing is repaired here, so invalid input stays invalid and is judged by
  :mod:`polytopo.evaluator.validity`.
* A MultiPolygon is exploded into one instance per part (``part`` numbers them); every part
  keeps the score, category and source id of its feature.
"""

from dataclasses import dataclass, field, replace

import numpy as np
import shapely

from .errors import InputFormatError

__all__ = [
    "Instance",
    "InstanceSet",
    "ring_from_flat",
    "rings_from_polygon",
    "instances_from_geometry",
    "ring_area",
]


@dataclass(frozen=True, eq=False)
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
    """

    instances: tuple
    image_ids: tuple
    skipped: dict = field(default_factory=dict)
    source: str = ""

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
        return sum(instance.hole_count for instance in self.instances)

    def replaced(self, instances, **skipped):
        """A copy with other instances and extra skip counts added."""
        counts = dict(self.skipped)
        for reason, count in skipped.items():
            counts[reason] = counts.get(reason, 0) + count
        return replace(self, instances=tuple(instances), skipped=counts)


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
    try:
        flat = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputFormatError(
            f"{where}: expected a flat list of numbers [x0, y0, x1, y1, ...] but got {str(values)[:60]}"
        ) from None
    if flat.ndim != 1 or flat.size % 2:
        raise InputFormatError(
            f"{where}: expected an even number of coordinates [x0, y0, x1, y1, ...] but got {flat.size}"
        )
    return _checked_ring(flat.reshape(-1, 2), where)


def _checked_ring(coords, where):
    if not np.all(np.isfinite(coords)):
        raise InputFormatError(f"{where}: expected finite coordinates but got NaN or infinity")
    if coords.shape[0] >= 2 and np.allclose(coords[0], coords[-1], atol=1e-6):
        coords = coords[:-1]
    if len(np.unique(coords, axis=0)) < 3:
        raise InputFormatError(
            f"{where}: expected a ring with at least 3 distinct points but got {len(np.unique(coords, axis=0))}"
        )
    return np.ascontiguousarray(coords, dtype=np.float64)


def rings_from_polygon(polygon, where):
    """Rings of a shapely Polygon as ``(exterior, holes)``, closing vertices dropped."""
    exterior = _checked_ring(shapely.get_coordinates(polygon.exterior), f"{where} exterior")
    holes = tuple(
        _checked_ring(shapely.get_coordinates(ring), f"{where} hole {index + 1}")
        for index, ring in enumerate(polygon.interiors)
    )
    return exterior, holes


def instances_from_geometry(geometry, *, image_id, source_id, score=1.0, category_id=None, where=""):
    """Instances of a shapely Polygon or MultiPolygon (one per part).

    Returns an empty list for None or empty geometry; raises InputFormatError for
    non-polygonal geometry.
    """
    if geometry is None or geometry.is_empty:
        return []
    if isinstance(geometry, shapely.Polygon):
        parts = [geometry]
    elif isinstance(geometry, shapely.MultiPolygon):
        parts = [part for part in geometry.geoms if not part.is_empty]
    else:
        raise InputFormatError(
            f"{where}: expected a Polygon or MultiPolygon but got {geometry.geom_type}; "
            "select a polygon layer"
        )
    instances = []
    for index, part in enumerate(parts):
        exterior, holes = rings_from_polygon(part, f"{where} part {index}")
        instances.append(
            Instance(image_id, source_id, exterior, holes, float(score), category_id, index)
        )
    return instances


def ring_area(ring):
    """Area enclosed by a ring in px² (shoelace; a self-crossing ring gives its signed sum).

    Examples
    --------
    >>> ring_area(np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]]))
    16.0
    """
    x, y = ring[:, 0], ring[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)
