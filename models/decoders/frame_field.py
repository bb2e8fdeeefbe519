"""``frame-field`` family: interior mask + frame field → polygons aligned to the field (FFL).

Outputs (roles of ``polytopo.outputs``), both at the tile's resolution:

* ``seg`` (batch, channels, tile, tile): channel 0 is the interior
  probability; a second channel, when present, is the edge probability
  (the layout of FFL's ``seg`` output, sigmoid inside the graph);
* ``frame_field`` (batch, 4, tile, tile): the coefficients
  (Re c0, Im c0, Re c2, Im c2) of the frame-field polynomial
  ``f(z) = z^4 + c2 z^2 + c0`` (FFL's ``crossfield`` output), whose roots
  ``±u, ±v`` are the field's two directions. A direction is the complex
  number ``Δrow + i Δcol`` (FFL's ij convention, card
  ``polytopo.frame_field_axes = "ij"``) or ``Δx + i Δy`` (``"xy"``).

The blended interior probability is thresholded at ``seg_thresh`` (pixels
whose edge probability reaches ``polytopo.edge_threshold`` are removed
when that key is set, which separates buildings sharing a wall) and
polygonized like the semantic family: whole polygons across strips, holes
kept, area filters. Each ring (exterior and holes alike) is then
polygonized as FFL's corner-aware simplification does:

1. the pixel-edge ring is simplified at ``min(1, tolerance)`` px;
2. a vertex is a **corner** where the edges before and after it align to
   different field directions (``|e·u|`` against ``|e·v|``, evaluated on
   the field at that vertex, so the arbitrary labelling of ``u`` and ``v``
   does not matter);
3. between two corners the contour is one **piece**; a piece whose points
   (the midpoints of its unit pixel edges) lie within
   ``max(2 · tolerance, 1.5)`` px of a line running through their centroid
   in the field's direction (the axial mean of the field direction closest
   to the piece's chord, at most 22.5° from the chord) becomes that line;
   other pieces keep their Douglas–Peucker vertices (card tolerance);
4. each corner moves to the intersection of the lines of its two pieces
   (or onto the line of its one straight piece), unless that is more than
   ``2 · max(tolerance, 1) + 1`` px away or the lines are within 20° of
   parallel.

A ring with fewer than 3 corners (no usable field, a round shape), or a
result that is invalid, loses a hole or overlaps the mask polygon by an
IoU under 0.5 falls back to the simplified mask contour
(:func:`~polytopo.models.polygons.cleanup.simplify_keep_valid`), so every
polygon stays valid. FFL's active-contour optimisation of the contour
before the corner detection is not done.
"""

import math

import numpy as np
import shapely

from ..errors import InferenceError
from ..polygons.cleanup import simplify_keep_valid
from ..polygons.strip_polygonizer import NO_CLASS, StripPolygonizer
from .base import Decoder, PolygonRecord

__all__ = ["FrameFieldDecoder", "align_polygon", "field_directions", "frame_corners"]

_ALIGN_MAX_RAD = math.radians(22.5)
_PARALLEL_SIN = math.sin(math.radians(20.0))
_MIN_IOU = 0.5


def field_directions(coefficients, axes="ij"):
    """The two directions of a frame field, as unit (x, y) vectors.

    Parameters
    ----------
    coefficients : numpy.ndarray, shape (..., 4)
        (Re c0, Im c0, Re c2, Im c2) of ``f(z) = z^4 + c2 z^2 + c0``.
    axes : {"ij", "xy"}
        Whether a complex direction is ``Δrow + i Δcol`` or ``Δx + i Δy``.

    Returns
    -------
    u, v : numpy.ndarray, shape (..., 2)
        One root of each pair ``±u``, ``±v`` as (dx, dy) in pixel
        coordinates (x right, y down), normalised; zero where the field is
        zero.

    Examples
    --------
    A field whose directions are the image axes (u² = 1, v² = -1: c0 = -1, c2 = 0):

    >>> u, v = field_directions(np.array([-1.0, 0.0, 0.0, 0.0]))
    >>> sorted([np.abs(u).round(6).tolist(), np.abs(v).round(6).tolist()])
    [[0.0, 1.0], [1.0, 0.0]]
    """
    c = np.asarray(coefficients, float)
    c0 = c[..., 0] + 1j * c[..., 1]
    c2 = c[..., 2] + 1j * c[..., 3]
    root = np.sqrt(c2 * c2 - 4.0 * c0)
    directions = []
    for square in ((-c2 + root) / 2.0, (-c2 - root) / 2.0):
        z = np.sqrt(square)
        xy = np.stack([z.imag, z.real] if axes == "ij" else [z.real, z.imag], axis=-1)
        norm = np.linalg.norm(xy, axis=-1, keepdims=True)
        directions.append(np.divide(xy, norm, out=np.zeros_like(xy), where=norm > 0))
    return directions[0], directions[1]


def _sample(field, points, row0):
    """Bilinear interpolation of a (4, rows, cols) coefficient map at (x, y) points (grid pixels)."""
    _channels, rows, cols = field.shape
    fx = np.clip(points[:, 0] - 0.5, 0.0, cols - 1.0)
    fy = np.clip(points[:, 1] - 0.5 - row0, 0.0, rows - 1.0)
    x0, y0 = np.floor(fx).astype(int), np.floor(fy).astype(int)
    x1, y1 = np.minimum(x0 + 1, cols - 1), np.minimum(y0 + 1, rows - 1)
    wx, wy = fx - x0, fy - y0
    value = (
        field[:, y0, x0] * (1 - wx) * (1 - wy) + field[:, y0, x1] * wx * (1 - wy)
        + field[:, y1, x0] * (1 - wx) * wy + field[:, y1, x1] * wx * wy
    )
    return value.T


def frame_corners(vertices, u, v):
    """Which vertices of a closed ring are corners: its two edges align to different field directions.

    Parameters
    ----------
    vertices : numpy.ndarray, shape (n, 2)
        Ring vertices without the closing repeat.
    u, v : numpy.ndarray, shape (n, 2)
        Field directions at each vertex (see :func:`field_directions`).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Examples
    --------
    >>> square = np.array([[0, 0], [4, 0], [4, 4], [0, 4]], float)
    >>> axes = np.tile([[1.0, 0.0]], (4, 1)), np.tile([[0.0, 1.0]], (4, 1))
    >>> frame_corners(square, *axes).tolist()
    [True, True, True, True]
    """
    before = np.roll(vertices, 1, axis=0) - vertices
    after = np.roll(vertices, -1, axis=0) - vertices

    def along_u(edge):
        return np.abs((edge * u).sum(axis=1)) > np.abs((edge * v).sum(axis=1))

    return along_u(before) != along_u(after)


def _piece_line(points, chord, u, v, straight_px):
    """Line (centroid, direction) of a piece aligned to the field, or None when the piece is not straight."""
    norm = np.linalg.norm(chord)
    if norm == 0 or not len(points):
        return None
    take_u = np.abs(u @ chord) >= np.abs(v @ chord)
    field = np.where(take_u[:, None], u, v)
    doubled = (field[:, 0] + 1j * field[:, 1]) ** 2
    mean = doubled.sum()
    if abs(mean) < 1e-9 * len(points):
        return None
    direction = np.sqrt(mean / abs(mean))
    direction = np.array([direction.real, direction.imag])
    if abs(direction @ chord) / norm < math.cos(_ALIGN_MAX_RAD):
        return None
    centroid = points.mean(axis=0)
    offsets = points - centroid
    if np.abs(offsets[:, 0] * direction[1] - offsets[:, 1] * direction[0]).max() > straight_px:
        return None
    return centroid, direction


def _corner_position(corner, before, after, shift_px):
    """Where a corner goes: the intersection of the straight lines beside it, or its projection on one."""
    lines = [line for line in (before, after) if line is not None]
    if len(lines) == 2:
        (p, d), (q, e) = lines
        cross = d[0] * e[1] - d[1] * e[0]
        if abs(cross) < _PARALLEL_SIN:
            return corner
        s = ((q - p)[0] * e[1] - (q - p)[1] * e[0]) / cross
        moved = p + s * d
    elif lines:
        p, d = lines[0]
        moved = p + ((corner - p) @ d) * d
    else:
        return corner
    return moved if np.linalg.norm(moved - corner) <= shift_px else corner


def _align_ring(ring, field, row0, axes, tolerance_px):
    """A ring's field-aligned vertices (n, 2), or None when it has fewer than 3 corners."""
    dense = np.asarray(shapely.segmentize(shapely.LinearRing(ring), 1.0).coords)[:-1]
    light = np.asarray(shapely.simplify(shapely.LineString(np.vstack([dense, dense[:1]])), min(1.0, tolerance_px)).coords)[:-1]
    if len(light) < 3:
        return None
    u, v = field_directions(_sample(field, light, row0), axes)
    corner = frame_corners(light, u, v)
    if corner.sum() < 3:
        return None
    index = {tuple(p): k for k, p in enumerate(dense)}
    corners = np.sort([index[tuple(p)] for p in light[corner]])
    straight_px = max(2.0 * tolerance_px, 1.5)
    shift_px = 2.0 * max(tolerance_px, 1.0) + 1.0
    count = len(dense)
    lines, inner = [], []
    for a, b in zip(corners, np.roll(corners, -1)):
        span = dense[np.arange(a, a + (b - a) % count + 1) % count]
        mids = (span[1:] + span[:-1]) / 2.0
        pu, pv = field_directions(_sample(field, mids, row0), axes)
        line = _piece_line(mids, span[-1] - span[0], pu, pv, straight_px)
        lines.append(line)
        if line is None:
            kept = np.asarray(shapely.simplify(shapely.LineString(span), tolerance_px).coords)
            inner.append(kept[1:-1])
        else:
            inner.append(np.empty((0, 2)))
    out = []
    for j, a in enumerate(corners):
        out.append(_corner_position(dense[a], lines[j - 1], lines[j], shift_px)[None])
        out.append(inner[j])
    vertices = np.concatenate(out)
    keep = np.any(np.abs(vertices - np.roll(vertices, 1, axis=0)) > 1e-9, axis=1)
    vertices = vertices[keep]
    return vertices if len(vertices) >= 3 else None


def align_polygon(polygon, field, row0=0, axes="ij", tolerance_px=1.0):
    """Replace a pixel-edge polygon's rings by rings aligned to a frame field, with corners where its directions switch.

    Parameters
    ----------
    polygon : shapely.Polygon
        Valid pixel-edge polygon (grid pixels), holes included.
    field : numpy.ndarray, shape (4, rows, cols)
        Frame-field coefficients of grid rows ``row0`` onwards (all columns).
    row0 : int
        Grid row of ``field[:, 0]``.
    axes : {"ij", "xy"}
        See :func:`field_directions`.
    tolerance_px : float
        Douglas–Peucker tolerance (model px) of the curved stretches and the fallback.

    Returns
    -------
    shapely.Polygon
        The aligned polygon, or the simplified input when a ring has fewer
        than 3 corners or the result is invalid, loses a hole or has an IoU
        under 0.5 with the input.

    Examples
    --------
    In a field aligned with the image axes, a 1-px notch in a wall is absorbed
    into the wall's line (fitted through the midpoints of its pixel edges):

    >>> square = shapely.Polygon([(0, 0), (9, 0), (9, 9), (0, 9)])
    >>> notched = square.difference(shapely.box(4, 0, 5, 1))
    >>> axes_field = np.zeros((4, 12, 12)); axes_field[0] = -1.0
    >>> sorted((round(x, 2), round(y, 2)) for x, y in align_polygon(notched, axes_field).exterior.coords[:-1])
    [(0.0, 0.18), (0.0, 9.0), (9.0, 0.18), (9.0, 9.0)]
    """
    fallback = simplify_keep_valid(np.array([polygon], object), tolerance_px)[0]
    rings = []
    for ring in (polygon.exterior, *polygon.interiors):
        aligned = _align_ring(np.asarray(ring.coords)[:-1], field, row0, axes, tolerance_px)
        if aligned is None:
            return fallback
        rings.append(aligned)
    result = shapely.Polygon(rings[0], rings[1:])
    if not (result.is_valid and result.area > 0 and len(result.interiors) == len(polygon.interiors)):
        return fallback
    overlap = shapely.area(shapely.intersection(result, polygon))
    if overlap < _MIN_IOU * shapely.area(shapely.union(result, polygon)):
        return fallback
    return result


class FrameFieldDecoder(Decoder):
    """Blended interior probability and frame field → polygons with field-aligned edges and corners."""

    dense_roles = ("seg", "frame_field")

    @staticmethod
    def check_outputs(card, signature, outputs, fail):
        """Refuse outputs the decoder cannot read (see :meth:`.base.Decoder.check_outputs`).

        ``seg`` must be (batch, interior[, edge], height, width), with the edge channel when
        the card sets ``edge_threshold``; the frame field must have 4 channels (Re c0, Im c0,
        Re c2, Im c2).
        """
        seg = signature.output(outputs["seg"])
        field = signature.output(outputs["frame_field"])
        if len(seg.shape) != 4:
            fail("polytopo.outputs", f"output {seg.name!r} (seg) of shape (batch, interior[, edge], height, width)", f"shape {list(seg.shape)}", card.family)
        if card.edge_threshold is not None and seg.shape[1] is not None and seg.shape[1] < 2:
            fail(
                "polytopo.edge_threshold",
                f"an edge channel (channel 1 of output {seg.name!r}) for the edge threshold",
                f"{seg.shape[1]} channel; remove the key or export the edge channel",
                card.family,
            )
        if len(field.shape) != 4 or field.shape[1] not in (None, 4):
            fail(
                "polytopo.outputs",
                f"output {field.name!r} (frame_field) of shape (batch, 4 = Re c0, Im c0, Re c2, Im c2, height, width)",
                f"shape {list(field.shape)}",
                card.family,
            )

    def __init__(self, context):
        super().__init__(context)
        self._strips = StripPolygonizer(
            context.grid.width_px, [0], self.card.min_area_px2, self.card.min_hole_area_px2,
            closing_margin_rows=2, aux_channels=4,
        )

    def decode_rows(self, row0, maps, valid, final):
        seg, field = maps["seg"], maps["frame_field"]
        if field.shape[0] != 4:
            raise InferenceError(
                f"Expected the frame_field output to have 4 channels (Re c0, Im c0, Re c2, Im c2) but got {field.shape[0]}; "
                "map polytopo.outputs frame_field to the frame-field tensor (FFL: crossfield)."
            )
        foreground = (seg[0] >= self.card.seg_threshold) & valid
        if self.card.edge_threshold is not None and seg.shape[0] > 1:
            foreground &= seg[1] < self.card.edge_threshold
        classes = np.where(foreground, 0, NO_CLASS)
        records = []
        for batch in self._strips.push(classes, seg[0], aux=field, final=final):
            for polygon, score in zip(batch.geometries, batch.scores):
                aligned = align_polygon(polygon, batch.aux, batch.aux_row0, self.card.frame_field_axes,
                                        self.card.simplify_tolerance_px)
                records.append(PolygonRecord(aligned, 0, float(score)))
        return records
