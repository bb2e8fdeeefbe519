"""``vertex-mask`` family: mask + vertex heatmap → polygons whose vertices are heatmap peaks (HiSup, ACPV-Net, GCP).

Outputs: ``mask`` (batch, 1, tile, tile) foreground probability and
``vertices`` (batch, 1, tile, tile) vertex/junction heatmap, both at the
tile's resolution (an attraction field, if the model has one, is not used).
The blended mask is thresholded at ``seg_thresh`` and polygonized like the
semantic family (whole polygons across strips, holes kept). Then, as HiSup
does, each ring's vertices are selected from the heatmap: the peaks (local
maxima of at least ``polytopo.vertex_threshold``) within
``polytopo.vertex_snap_radius_px`` of a ring become its vertices in their
order along the ring; where the ring has no peak nearby its Douglas–Peucker
vertices (card tolerance) are kept. A ring left with fewer than 3 vertices,
or a polygon that the snapping would make invalid, falls back to the
simplified mask contour, so every polygon stays valid.
"""

import math

import numpy as np
import shapely
from scipy import ndimage

from ..polygons.cleanup import simplify_keep_valid
from ..polygons.strip_polygonizer import NO_CLASS, StripPolygonizer
from .base import Decoder, PolygonRecord

__all__ = ["VertexMaskDecoder", "heatmap_peaks", "snap_to_peaks"]

_EIGHT_CONNECTED = np.ones((3, 3), bool)


def heatmap_peaks(heatmap, threshold):
    """Peaks of a heatmap as (x, y) pixel coordinates (centres of plateau pixels).

    Parameters
    ----------
    heatmap : numpy.ndarray, shape (rows, cols)
    threshold : float
        Minimum value of a peak.

    Returns
    -------
    numpy.ndarray, shape (n, 2)

    Examples
    --------
    >>> h = np.zeros((5, 5)); h[1, 3] = 1.0
    >>> heatmap_peaks(h, 0.5).tolist()
    [[3.5, 1.5]]
    """
    values = np.asarray(heatmap, float)
    biggest = ndimage.maximum_filter(values, size=3, mode="constant", cval=-np.inf)
    peak = (values >= biggest) & (values >= threshold)
    labels, count = ndimage.label(peak, structure=_EIGHT_CONNECTED)
    if count == 0:
        return np.empty((0, 2))
    centres = np.asarray(ndimage.center_of_mass(peak, labels, np.arange(1, count + 1)), float)
    return centres[:, ::-1] + 0.5


def _snap_ring(ring, peaks, radius_px, tolerance_px):
    simplified = np.asarray(shapely.simplify(shapely.LineString(ring.coords), tolerance_px).coords)[:-1]
    if len(peaks):
        far = shapely.distance(shapely.points(simplified)[:, None], shapely.points(peaks)[None, :]).min(axis=1) > radius_px
        points = np.concatenate([peaks, simplified[far]])
    else:
        points = simplified
    order = np.argsort(shapely.line_locate_point(shapely.LineString(ring.coords), shapely.points(points)), kind="stable")
    points = points[order]
    distinct = np.r_[True, np.any(points[1:] != points[:-1], axis=1)]
    points = points[distinct]
    if len(points) > 1 and np.array_equal(points[0], points[-1]):
        points = points[:-1]
    return points if len(np.unique(points, axis=0)) >= 3 else None


def snap_to_peaks(polygon, peaks, radius_px, tolerance_px):
    """Replace a pixel-edge polygon's vertices by the heatmap peaks near its rings.

    Parameters
    ----------
    polygon : shapely.Polygon
        Valid polygon (pixel coordinates), holes included.
    peaks : numpy.ndarray, shape (n, 2)
        Candidate vertices (x, y), pixel coordinates.
    radius_px : float
        A peak farther than this from every ring is ignored.
    tolerance_px : float
        Douglas–Peucker tolerance for the stretches of ring without peaks.

    Returns
    -------
    shapely.Polygon
        The snapped polygon, or the simplified input when snapping would
        leave a ring with fewer than 3 vertices or an invalid polygon.

    Examples
    --------
    >>> stairs = shapely.Polygon([(0, 0), (5, 0), (5, 1), (6, 1), (6, 6), (0, 6)])
    >>> corners = np.array([[0.2, 0.1], [5.8, 0.2], [5.9, 5.8], [0.1, 5.9]])
    >>> len(snap_to_peaks(stairs, corners, 1.0, 1.0).exterior.coords)
    5
    """
    fallback = simplify_keep_valid(np.array([polygon], object), tolerance_px)[0]
    rings = [polygon.exterior, *polygon.interiors]
    if not len(peaks):
        return fallback
    points = shapely.points(peaks)
    distance = np.stack([shapely.distance(ring, points) for ring in rings])
    nearest = distance.argmin(axis=0)
    close = distance.min(axis=0) <= radius_px
    snapped = []
    for index, ring in enumerate(rings):
        coords = _snap_ring(ring, peaks[close & (nearest == index)], radius_px, tolerance_px)
        if coords is None:
            return fallback
        snapped.append(coords)
    result = shapely.Polygon(snapped[0], snapped[1:])
    if result.is_valid and result.area > 0 and len(result.interiors) == len(polygon.interiors):
        return result
    return fallback


class VertexMaskDecoder(Decoder):
    """Blended mask and heatmap → polygons with vertices selected from heatmap peaks."""

    dense_roles = ("mask", "vertices")

    def __init__(self, context):
        super().__init__(context)
        self._radius = float(self.card.vertex_snap_radius_px)
        margin = int(math.ceil(self._radius)) + 2
        self._margin = margin
        self._strips = StripPolygonizer(
            context.grid.width_px, [0], self.card.min_area_px2, self.card.min_hole_area_px2,
            closing_margin_rows=margin, aux_channels=1,
        )

    def decode_rows(self, row0, maps, valid, final):
        mask = maps["mask"][0]
        classes = np.where((mask >= self.card.seg_threshold) & valid, 0, NO_CLASS)
        closed = self._strips.push(classes, mask, aux=maps["vertices"][:1], final=final)
        records = []
        for batch in closed:
            heatmap = batch.aux[0]
            for polygon, score in zip(batch.geometries, batch.scores):
                peaks = self._peaks_near(polygon, heatmap, batch.aux_row0)
                snapped = snap_to_peaks(polygon, peaks, self._radius, self.card.simplify_tolerance_px)
                records.append(PolygonRecord(snapped, 0, float(score)))
        return records

    def _peaks_near(self, polygon, heatmap, row0):
        x0, y0, x1, y1 = polygon.bounds
        pad = self._margin
        c0, c1 = max(int(x0) - pad, 0), min(int(math.ceil(x1)) + pad, heatmap.shape[1])
        r0, r1 = max(int(y0) - row0 - pad, 0), min(int(math.ceil(y1)) - row0 + pad, heatmap.shape[0])
        peaks = heatmap_peaks(heatmap[r0:r1, c0:c1], self.card.vertex_threshold)
        peaks = peaks + (c0, r0 + row0)
        inner = (
            (peaks[:, 0] >= x0 - self._radius) & (peaks[:, 0] <= x1 + self._radius)
            & (peaks[:, 1] >= y0 - self._radius) & (peaks[:, 1] <= y1 + self._radius)
        )
        return peaks[inner]
