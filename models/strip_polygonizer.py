"""Whole polygons from a class map that arrives strip by strip.

The pipeline finishes the blended class map a few rows at a time. A
component that touches the last finished row may continue in the next strip,
so it is *open*: its rows are carried over and it is polygonized only once a
later strip shows it has ended (or at the end of the grid). Closed
components are polygonized at once and removed from the carried rows, so the
carry holds only the rows from the top of the oldest open component down.
Because a component's rings depend only on its own pixels, polygons come out
exactly as if the whole map had been polygonized at once, holes included
(a ring-shaped building that straddles a strip boundary is one polygon with
its courtyard).

When the strips are one column block of a wider grid (see
:mod:`~polytopo.models.column_blocks`), components touching a seam column
are returned as unfiltered *seam pieces* for the
:class:`~polytopo.models.column_blocks.SeamMerger` to complete.

Memory: the carried rows cost ``width * rows * (2 + 4 + 4 * aux_channels)``
bytes, where ``rows`` is the height of the tallest open component plus one
strip.
"""

from dataclasses import dataclass

import numpy as np
import shapely

from .polygonize import label_components, polygonize_mask

__all__ = ["ClosedPolygons", "NO_CLASS", "StripPolygonizer"]

NO_CLASS = -1
"""Class map value of pixels that belong to no class (background, nodata)."""


@dataclass(frozen=True)
class ClosedPolygons:
    """Polygons of one class that a push completed.

    Attributes
    ----------
    class_id : int
    geometries : numpy.ndarray of shapely.Polygon
        In model-grid pixel coordinates (x = column, y = row of the whole grid).
    scores : numpy.ndarray of float
        Mean score map value over each polygon's pixels.
    aux : numpy.ndarray or None
        The auxiliary channels of the carried rows, shape (channels, rows, width).
    aux_row0 : int
        Grid row of ``aux[:, 0]``.
    on_seam : bool
        True for pieces of components that touch a column-block seam: they are
        not filtered by area or hole area and must be merged with the pieces of
        the neighbouring block before use.
    """

    class_id: int
    geometries: np.ndarray
    scores: np.ndarray
    aux: object
    aux_row0: int
    on_seam: bool = False


def _mean_by_label(values, labels, wanted):
    """Mean of ``values`` over the pixels of each label in ``wanted`` (1-D inputs)."""
    size = max(int(labels.max(initial=0)), int(np.max(wanted, initial=0))) + 1
    totals = np.bincount(labels, weights=values, minlength=size)
    counts = np.bincount(labels, minlength=size)
    return totals[wanted] / np.maximum(counts[wanted], 1)


class StripPolygonizer:
    """Polygonize a class map pushed as consecutive horizontal strips.

    Parameters
    ----------
    width_px : int
        Width of every strip, model pixels.
    class_ids : sequence of int
        Classes to polygonize (every other value is ignored).
    min_area_px2, min_hole_area_px2 : float
        Passed to :func:`~polytopo.models.polygonize.polygonize_mask`.
    closing_margin_rows : int
        A component counts as open while it comes within this many rows of
        the last pushed row (0: only when it touches it). Decoders that look
        at pixels around a polygon set it to their radius.
    aux_channels : int
        Number of auxiliary float channels pushed with each strip.
    column_offset_px : int
        Grid column of the strips' first column (x offset of the polygons), model px.
    seam_left, seam_right : bool
        Whether the strips' first / last column borders another column block:
        components touching it come back as seam pieces
        (:attr:`ClosedPolygons.on_seam`).
    """

    def __init__(self, width_px, class_ids, min_area_px2=0.0, min_hole_area_px2=0.0, closing_margin_rows=0, aux_channels=0,
                 column_offset_px=0, seam_left=False, seam_right=False):
        self.width_px = width_px
        self.column_offset_px = int(column_offset_px)
        self.seam_left = bool(seam_left)
        self.seam_right = bool(seam_right)
        self.class_ids = tuple(int(c) for c in class_ids)
        self.min_area_px2 = min_area_px2
        self.min_hole_area_px2 = min_hole_area_px2
        self.closing_margin_rows = closing_margin_rows
        self._top = 0
        self._classes = np.empty((0, width_px), np.int16)
        self._scores = np.empty((0, width_px), np.float32)
        self._aux = np.empty((aux_channels, 0, width_px), np.float32)

    @property
    def carried_rows(self):
        """Rows currently carried over, waiting for open components to close."""
        return self._classes.shape[0]

    def push(self, classes, scores, aux=None, final=False):
        """Add the next strip and return the polygons it completes.

        Parameters
        ----------
        classes : numpy.ndarray of int, shape (rows, width)
            Class of each pixel, :data:`NO_CLASS` for none.
        scores : numpy.ndarray of float, shape (rows, width)
            Score of each pixel (e.g. the probability of its class).
        aux : numpy.ndarray of float, shape (aux_channels, rows, width), optional
        final : bool
            True for the last strip: every component is then closed.

        Returns
        -------
        list of ClosedPolygons
        """
        self._classes = np.concatenate([self._classes, classes.astype(np.int16)])
        self._scores = np.concatenate([self._scores, scores.astype(np.float32)])
        if self._aux.shape[0]:
            self._aux = np.concatenate([self._aux, aux.astype(np.float32)], axis=1)
        rows = self._classes.shape[0]
        open_from = rows
        margin_start = max(0, rows - 1 - self.closing_margin_rows)
        closed = []
        for class_id in self.class_ids:
            mask = self._classes == class_id
            if not mask.any():
                continue
            labels, count = label_components(mask)
            is_open = np.zeros(count + 1, bool)
            if not final:
                is_open[np.unique(labels[margin_start:])] = True
                is_open[0] = False
            open_pixels = is_open[labels]
            finished = mask & ~open_pixels
            if finished.any():
                on_seam = self._seam_pixels(finished, labels, count)
                if on_seam is None:
                    closed.extend(self._close(class_id, finished, labels, self.min_area_px2, self.min_hole_area_px2, False))
                else:
                    closed.extend(self._close(class_id, finished & ~on_seam, labels, self.min_area_px2, self.min_hole_area_px2, False))
                    closed.extend(self._close(class_id, on_seam, labels, 0.0, 0.0, True))
                self._classes[finished] = NO_CLASS
            if is_open.any():
                open_from = min(open_from, int(np.argmax(open_pixels.any(axis=1))))
        self._classes = self._classes[open_from:]
        self._scores = self._scores[open_from:]
        self._aux = self._aux[:, open_from:]
        self._top += open_from
        return closed

    def _seam_pixels(self, finished, labels, count):
        """Pixels of finished components touching a seam column (None when there is no seam)."""
        if not (self.seam_left or self.seam_right):
            return None
        touches = np.zeros(count + 1, bool)
        if self.seam_left:
            touches[labels[:, 0][finished[:, 0]]] = True
        if self.seam_right:
            touches[labels[:, -1][finished[:, -1]]] = True
        return finished & touches[labels]

    def _close(self, class_id, pixels, labels, min_area_px2, min_hole_area_px2, on_seam):
        rows = np.flatnonzero(pixels.any(axis=1))
        if not len(rows):
            return []
        cols = np.flatnonzero(pixels.any(axis=0))
        # trace only the bounding box of the pixels: empty rows and columns cost nothing
        box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
        pixels, labels = pixels[box], labels[box]
        polygons = polygonize_mask(pixels, labels, min_area_px2, min_hole_area_px2)
        if not len(polygons):
            return []
        scores = _mean_by_label(self._scores[box][pixels], labels[pixels], polygons.labels)
        offset = (float(self.column_offset_px + cols[0]), float(self._top + rows[0]))
        geometries = shapely.transform(polygons.geometries, lambda xy: xy + offset)
        return [ClosedPolygons(class_id, geometries, np.asarray(scores, float), self._aux, self._top, on_seam)]
