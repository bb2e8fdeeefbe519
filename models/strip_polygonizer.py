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

Memory: the carried rows cost ``width * rows * (2 + 4 + 4 * aux_channels)``
bytes, where ``rows`` is the height of the tallest open component plus one
strip.
"""

from dataclasses import dataclass

import numpy as np
import shapely
from scipy import ndimage

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
    """

    class_id: int
    geometries: np.ndarray
    scores: np.ndarray
    aux: object
    aux_row0: int


def _mean_by_label(values, labels, wanted):
    """Mean of ``values`` over the pixels of each label in ``wanted`` (1-D inputs)."""
    order = np.argsort(labels, kind="stable")
    labels = labels[order]
    totals = np.concatenate([[0.0], np.cumsum(values[order], dtype=np.float64)])
    starts = np.searchsorted(labels, wanted, side="left")
    ends = np.searchsorted(labels, wanted, side="right")
    return (totals[ends] - totals[starts]) / np.maximum(ends - starts, 1)


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
    """

    def __init__(self, width_px, class_ids, min_area_px2=0.0, min_hole_area_px2=0.0, closing_margin_rows=0, aux_channels=0):
        self.width_px = width_px
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
            finished = mask & ~is_open[labels]
            if finished.any():
                polygons = polygonize_mask(finished, labels, self.min_area_px2, self.min_hole_area_px2)
                if len(polygons):
                    scores = _mean_by_label(self._scores[finished], labels[finished], polygons.labels)
                    geometries = shapely.transform(polygons.geometries, lambda xy: xy + (0.0, float(self._top)))
                    closed.append(ClosedPolygons(class_id, geometries, np.asarray(scores, float), self._aux, self._top))
                self._classes[finished] = NO_CLASS
            if is_open.any():
                slices = ndimage.find_objects(labels)
                open_from = min(open_from, min(slices[index - 1][0].start for index in np.flatnonzero(is_open)))
        self._classes = self._classes[open_from:]
        self._scores = self._scores[open_from:]
        self._aux = self._aux[:, open_from:]
        self._top += open_from
        return closed
