"""Training targets drawn from label polygons in grid pixels, and courtyard synthesis.

All functions take polygons in pixels of the grid (x = column, y = row);
a pixel belongs to a polygon when its centre (c + 0.5, r + 0.5) lies inside,
as GDAL's default rasterization does.

* :func:`rasterize` — building mask;
* :func:`class_map` — background / building / boundary / courtyard classes;
* :func:`boundary_band` — the inner band of every ring (exterior *and*
  holes) of every building, per instance, so walls shared by touching
  buildings and the walls around courtyards are both marked;
* :func:`vertex_heatmap` — Gaussian peaks at the polygon vertices;
* :func:`instance_weights` — loss weights that raise small buildings and the
  narrow ground between two buildings;
* :func:`carve_courtyards` — cut synthetic courtyards into buildings: an
  inset of the outline becomes a hole whose pixels are filled with ground
  texture copied from elsewhere in the same image (the label gains the hole).
"""

import math
from dataclasses import dataclass

import numpy as np
import shapely
from scipy import ndimage

__all__ = [
    "CourtyardParams",
    "boundary_band",
    "carve_courtyards",
    "class_map",
    "instance_weights",
    "rasterize",
    "vertex_heatmap",
]


def _window(polygon, shape):
    x0, y0, x1, y1 = polygon.bounds
    c0, r0 = max(int(math.floor(x0)), 0), max(int(math.floor(y0)), 0)
    c1, r1 = min(int(math.ceil(x1)), shape[1]), min(int(math.ceil(y1)), shape[0])
    return r0, r1, c0, c1


def _inside(polygon, r0, r1, c0, c1):
    xs, ys = np.meshgrid(np.arange(c0, c1) + 0.5, np.arange(r0, r1) + 0.5)
    return shapely.contains_xy(polygon, xs, ys)


def rasterize(polygons, shape):
    """Boolean mask of the pixels whose centres lie in any polygon.

    Parameters
    ----------
    polygons : sequence of shapely.Polygon
        Grid pixels.
    shape : tuple of 2 int
        (rows, cols).

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> rasterize([shapely.box(1, 1, 3, 2)], (3, 4)).astype(int).tolist()
    [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    """
    mask = np.zeros(shape, bool)
    for polygon in polygons:
        r0, r1, c0, c1 = _window(polygon, shape)
        if r1 > r0 and c1 > c0:
            mask[r0:r1, c0:c1] |= _inside(polygon, r0, r1, c0, c1)
    return mask


def boundary_band(polygons, shape, width_px):
    """Pixels of each building within ``width_px`` of its own rings (inner band).

    Parameters
    ----------
    polygons : sequence of shapely.Polygon
    shape : tuple of 2 int
    width_px : int
        Band width, pixels (erosion steps with a 3 x 3 cross).

    Returns
    -------
    numpy.ndarray of bool
        Subset of :func:`rasterize`; a courtyard's wall is marked on the
        building side of the hole ring, a shared wall on both buildings.

    Examples
    --------
    >>> ring = shapely.Polygon([(0, 0), (5, 0), (5, 5), (0, 5)], [[(2, 2), (3, 2), (3, 3), (2, 3)]])
    >>> band = boundary_band([ring], (5, 5), 1)
    >>> int(band.sum()), bool(band[1, 2]), bool(band[2, 2])
    (20, True, False)
    """
    band = np.zeros(shape, bool)
    for polygon in polygons:
        r0, r1, c0, c1 = _window(polygon, shape)
        if r1 <= r0 or c1 <= c0:
            continue
        # Pad by the band width so pixels at the grid edge are not called boundary.
        r0p, r1p, c0p, c1p = r0 - width_px, r1 + width_px, c0 - width_px, c1 + width_px
        inside = _inside(polygon, r0p, r1p, c0p, c1p)
        eroded = ndimage.binary_erosion(inside, iterations=width_px, border_value=0)
        edge = inside & ~eroded
        band[r0:r1, c0:c1] |= edge[width_px:width_px + r1 - r0, width_px:width_px + c1 - c0]
    return band


def class_map(polygons, shape, boundary_width_px=None, courtyards=False):
    """Class of every pixel: 0 background, 1 building, 2 building boundary and 3 courtyard when asked.

    Parameters
    ----------
    polygons : sequence of shapely.Polygon
    shape : tuple of 2 int
    boundary_width_px : int or None
        Width of the boundary class (see :func:`boundary_band`); None for no boundary class.
    courtyards : bool
        Mark class 3 on the pixels inside a building's hole that no building covers (its
        courtyard), so a net learns a courtyard apart from the ground between buildings.

    Returns
    -------
    numpy.ndarray of uint8

    Examples
    --------
    >>> ring = shapely.Polygon([(0, 0), (5, 0), (5, 5), (0, 5)], [[(2, 2), (3, 2), (3, 3), (2, 3)]])
    >>> class_map([ring], (5, 6), 1, courtyards=True)[2].tolist()
    [2, 2, 3, 2, 2, 0]
    """
    classes = rasterize(polygons, shape).astype(np.uint8)
    if boundary_width_px:
        classes[boundary_band(polygons, shape, boundary_width_px) & (classes == 1)] = 2
    if courtyards:
        holes = [shapely.Polygon(ring) for polygon in polygons for ring in polygon.interiors]
        classes[rasterize(holes, shape) & (classes == 0)] = 3
    return classes


def instance_weights(polygons, shape, full_area_px, max_weight, gap_weight=1.0, gap_reach_px=0, wall_weight=1.0):
    """Loss weight of every pixel: small buildings and the ground between two buildings raised.

    A pixel of a building of area ``a`` (grid px², the whole polygon, also beyond the
    grid) weighs ``sqrt(full_area_px / a)``, at least 1 and at most ``max_weight``, so a
    small building counts for more of the loss than its few pixels would (AP counts every
    building once, whatever its size). A background pixel within ``gap_reach_px`` (square
    neighbourhood) of two different buildings weighs ``gap_weight``: the narrow ground that
    keeps touching buildings apart. A building pixel within ``gap_reach_px`` of another
    building weighs at least ``wall_weight``: the two sides of a wall shared by touching
    buildings, where only the boundary class keeps them apart. Every other pixel weighs 1.
    Where polygons overlap, the last one's weight holds for the shared pixels.

    Returns
    -------
    numpy.ndarray of float32, shape ``shape``

    Examples
    --------
    >>> small, large = shapely.box(0, 0, 2, 2), shapely.box(3, 0, 7, 4)
    >>> instance_weights([small, large], (4, 8), 16.0, 3.0, 5.0, 1)[0].tolist()
    [2.0, 2.0, 5.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> left, right = shapely.box(0, 0, 4, 1), shapely.box(4, 0, 8, 1)  # touching
    >>> instance_weights([left, right], (1, 8), 1.0, 1.0, 1.0, 1, wall_weight=4.0)[0].tolist()
    [1.0, 1.0, 1.0, 4.0, 4.0, 1.0, 1.0, 1.0]
    """
    weights = np.ones(shape, np.float32)
    labels = np.zeros(shape, np.int32)
    for index, polygon in enumerate(polygons, 1):
        r0, r1, c0, c1 = _window(polygon, shape)
        if r1 <= r0 or c1 <= c0:
            continue
        inside = _inside(polygon, r0, r1, c0, c1)
        weight = min(max_weight, max(1.0, math.sqrt(full_area_px / max(polygon.area, 1e-9))))
        labels[r0:r1, c0:c1][inside] = index
        weights[r0:r1, c0:c1][inside] = weight
    if (gap_weight != 1.0 or wall_weight != 1.0) and gap_reach_px > 0 and len(polygons) > 1:
        size = 2 * int(gap_reach_px) + 1
        highest = ndimage.maximum_filter(labels, size=size)
        lowest = ndimage.minimum_filter(np.where(labels > 0, labels, np.iinfo(np.int32).max), size=size)
        two_near = lowest < highest
        weights[(labels == 0) & two_near] = gap_weight
        walls = (labels > 0) & two_near
        weights[walls] = np.maximum(weights[walls], wall_weight)
    return weights


def vertex_heatmap(polygons, shape, sigma_px):
    """Gaussian peaks at every ring vertex, combined by maximum.

    Each Gaussian is centred on the pixel that contains the vertex, which
    takes the value 1 exactly (the positive pixel of the focal loss); the
    decoder reads peaks at pixel centres, so nothing finer is lost.

    Parameters
    ----------
    polygons : sequence of shapely.Polygon
    shape : tuple of 2 int
    sigma_px : float
        Standard deviation of each Gaussian, pixels.

    Returns
    -------
    numpy.ndarray of float32, values in [0, 1]

    Examples
    --------
    >>> h = vertex_heatmap([shapely.box(2, 2, 6, 6)], (8, 8), 1.0)
    >>> float(h[2, 2]), round(float(h[1, 2]), 3), round(float(h[4, 4]), 3)
    (1.0, 0.607, 0.018)
    """
    heat = np.zeros(shape, np.float32)
    if not len(polygons):
        return heat
    rings = shapely.get_rings(np.asarray(polygons, object))
    coords, index = shapely.get_coordinates(rings, return_index=True)
    last = np.r_[index[1:] != index[:-1], True]
    vertices = coords[~last]
    reach = int(math.ceil(3 * sigma_px))
    for x, y in np.floor(vertices).astype(np.int64):
        c0, c1 = max(x - reach, 0), min(x + reach + 1, shape[1])
        r0, r1 = max(y - reach, 0), min(y + reach + 1, shape[0])
        if c1 <= c0 or r1 <= r0:
            continue
        dx = np.arange(c0, c1) - x
        dy = np.arange(r0, r1) - y
        g = np.exp(-(dy[:, None] ** 2 + dx[None, :] ** 2) / (2.0 * sigma_px**2)).astype(np.float32)
        np.maximum(heat[r0:r1, c0:c1], g, out=heat[r0:r1, c0:c1])
    return heat


@dataclass(frozen=True)
class CourtyardParams:
    """How synthetic courtyards are cut.

    Attributes
    ----------
    min_building_area_px2 : float
        Only buildings at least this large (and without holes) get a courtyard.
    probability : float
        Chance that an eligible building gets one.
    wall_fraction : tuple of 2 float
        The wall thickness is drawn from this range, as a fraction of the
        shorter side of the building's minimum rotated rectangle.
    min_hole_area_px2 : float
        Courtyards smaller than this are not cut.
    tries : int
        Random offsets tried to find ground texture for the fill.
    """

    min_building_area_px2: float = 400.0
    probability: float = 0.6
    wall_fraction: tuple = (0.2, 0.3)
    min_hole_area_px2: float = 36.0
    tries: int = 40

    def __post_init__(self):
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"Expected probability in [0, 1] but got {self.probability}.")
        low, high = self.wall_fraction
        if not 0.0 < low <= high < 0.5:
            raise ValueError(f"Expected 0 < wall_fraction[0] <= wall_fraction[1] < 0.5 but got {self.wall_fraction}.")


def _short_side(polygon):
    rectangle = np.asarray(shapely.minimum_rotated_rectangle(polygon).exterior.coords)
    sides = np.hypot(*np.diff(rectangle[:3], axis=0).T)
    return float(sides.min())


def carve_courtyards(image, valid, polygons, rng, params=CourtyardParams()):
    """Cut synthetic courtyards into buildings, in the image and in the labels.

    Parameters
    ----------
    image : numpy.ndarray, shape (bands, rows, cols)
        Not modified.
    valid : numpy.ndarray of bool, shape (rows, cols)
    polygons : sequence of shapely.Polygon
        Labels in grid pixels.
    rng : numpy.random.Generator
    params : CourtyardParams

    Returns
    -------
    image : numpy.ndarray
        A copy with every courtyard filled with ground texture taken, at one
        random offset per courtyard, from valid pixels outside every building.
    polygons : numpy.ndarray of shapely.Polygon
        The labels, carved buildings with the courtyard as an interior ring.
    carved : int
        Number of courtyards cut.
    """
    image = image.copy()
    shape = valid.shape
    buildings = rasterize(polygons, shape)
    ground = valid & ~ndimage.binary_dilation(buildings, iterations=2)
    out = []
    carved = 0
    for polygon in polygons:
        hole = None
        if (len(polygon.interiors) == 0 and polygon.area >= params.min_building_area_px2
                and rng.random() < params.probability):
            wall = rng.uniform(*params.wall_fraction) * _short_side(polygon)
            inset = shapely.buffer(polygon, -wall, join_style="mitre")
            parts = shapely.get_parts(inset)
            if len(parts):
                candidate = parts[np.argmax(shapely.area(parts))]
                if candidate.area >= params.min_hole_area_px2:
                    hole = shapely.Polygon(candidate.exterior)
        if hole is not None and _fill(image, ground, hole, rng, params.tries):
            out.append(shapely.Polygon(polygon.exterior, [hole.exterior]))
            carved += 1
        else:
            out.append(polygon)
    return image, np.asarray(out, object), carved


def _fill(image, ground, hole, rng, tries):
    shape = ground.shape
    r0, r1, c0, c1 = _window(hole, shape)
    if r1 <= r0 or c1 <= c0:
        return False
    inside = _inside(hole, r0, r1, c0, c1)
    if not inside.any():
        return False
    rows, cols = np.nonzero(inside)
    rows, cols = rows + r0, cols + c0
    height, width = r1 - r0, c1 - c0
    for _ in range(tries):
        dr = int(rng.integers(0, max(shape[0] - height, 1))) - r0
        dc = int(rng.integers(0, max(shape[1] - width, 1))) - c0
        src_r, src_c = rows + dr, cols + dc
        if src_r.min() < 0 or src_c.min() < 0 or src_r.max() >= shape[0] or src_c.max() >= shape[1]:
            continue
        if ground[src_r, src_c].all():
            image[:, rows, cols] = image[:, src_r, src_c]
            return True
    return False
