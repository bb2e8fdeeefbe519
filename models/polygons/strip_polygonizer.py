"""Whole polygons from a class map that arrives strip by strip.

The pipeline finishes the blended class map a few rows at a time. Each
strip is reduced at once to *pixel runs* (maximal horizontal stretches of
one class in one row) with their score sums; nothing else of its pixels is
kept. Runs of adjacent rows that share a column are 4-connected, so the
components are the connected components of the run-overlap graph. A
component that reaches the last pushed row (or comes within
``closing_margin_rows`` of it) may continue in the next strip, so it is
*open*: its runs are carried over. The others are closed: their boundary is
traced from their runs into pixel-edge rings (the same rings
:func:`~polytopo.models.polygons.polygonize.polygonize_mask` traces from pixels), so
polygons come out exactly as if the whole map had been polygonized at once,
holes included (a ring-shaped building that straddles a strip boundary is
one polygon with its courtyard).

When the strips are one column block of a wider grid (see
:mod:`~polytopo.models.raster.column_blocks`), components touching a seam column
are returned as unfiltered *seam pieces* for the
:class:`~polytopo.models.raster.column_blocks.SeamMerger` to complete. A block of a
grid split in rows too (see :mod:`~polytopo.models.raster.grid_blocks`) also has
seams on its first and last rows.

Memory: the carried runs (four numbers per run of an open component) plus,
when the decoder uses auxiliary channels, ``width * rows * 4 * aux_channels``
bytes of carried auxiliary rows, where ``rows`` is the height of the tallest
open component plus one strip. Time: a few passes over each pushed pixel,
then work proportional to the runs.
"""

from dataclasses import dataclass

import numpy as np
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .polygonize import polygons_from_rings, trace_rings

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


@dataclass(frozen=True)
class _Runs:
    """Pixel runs sorted by (row, start): row, start column, end column (exclusive), score sum."""

    row: np.ndarray
    start: np.ndarray
    end: np.ndarray
    score_sum: np.ndarray

    def __len__(self):
        return len(self.row)

    def take(self, index):
        return _Runs(self.row[index], self.start[index], self.end[index], self.score_sum[index])

    @staticmethod
    def concatenate(first, second):
        return _Runs(*(np.concatenate([getattr(first, f), getattr(second, f)]) for f in ("row", "start", "end", "score_sum")))


_NO_RUNS = _Runs(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, float))


def _pixel_runs(mask, scores, row0):
    """Runs of ``mask`` (rows, width) with the sums of ``scores`` over them; rows numbered from ``row0``."""
    rows, width = mask.shape
    padded = np.zeros((rows, width + 2), bool)
    padded[:, 1:-1] = mask
    # changes along each row alternate: a run's first column, then the column after its last
    flat = np.flatnonzero(padded[:, 1:] != padded[:, :-1])
    if not len(flat):
        return _NO_RUNS
    row, start = np.divmod(flat[0::2], width + 1)
    end = flat[1::2] - row * (width + 1)
    # sums over [start, end) and over the gaps after them, interleaved; a run ending the array ends the last sum
    bounds = np.empty(2 * len(row), np.int64)
    bounds[0::2] = row * width + start
    bounds[1::2] = row * width + end
    if bounds[-1] == mask.size:
        bounds = bounds[:-1]
    score_sum = np.add.reduceat(scores.ravel(), bounds, dtype=np.float64)[0::2]
    return _Runs(row + row0, start, end, score_sum)


def _components(runs, width):
    """Component label (0-based, in raster order of each component's first run) of every run."""
    count = len(runs)
    stride = width + 1
    key_start = runs.row * stride + runs.start
    key_end = runs.row * stride + runs.end
    # runs of the previous row overlapping run i: end > start_i and start < end_i
    previous = (runs.row - 1) * stride
    lo = np.searchsorted(key_end, previous + runs.start, side="right")
    hi = np.searchsorted(key_start, previous + runs.end, side="left")
    overlaps = np.maximum(hi - lo, 0)
    upper = np.repeat(lo - np.r_[0, np.cumsum(overlaps)[:-1]], overlaps) + np.arange(overlaps.sum())
    lower = np.repeat(np.arange(count), overlaps)
    graph = coo_matrix((np.ones(len(upper), np.int8), (lower, upper)), shape=(count, count))
    n, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64), int(n)


def _boundary_runs(runs, labels, width):
    """Maximal straight boundary runs of the pixels in ``runs``, in the form :func:`trace_rings` takes."""
    stride = width + 1
    key_start = runs.row * stride + runs.start
    # horizontal: on lattice line y the code P(y, x) - P(y - 1, x) changes by +-1 at run ends
    line = np.concatenate([runs.row, runs.row, runs.row + 1, runs.row + 1])
    x = np.concatenate([runs.start, runs.end, runs.start, runs.end])
    step = np.repeat(np.array([1, -1, -1, 1], np.int64), len(runs))
    key = line * stride + x
    order = np.argsort(key, kind="stable")
    key, step = key[order], step[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    step = np.add.reduceat(step, first)
    key = key[first][step != 0]
    code = np.cumsum(step[step != 0])  # every line's steps sum to 0, so the running sum restarts on each line
    edge = np.flatnonzero(code)
    y, x0 = np.divmod(key[edge], stride)
    x1 = key[edge + 1] - y * stride
    east = code[edge] > 0  # mask below the line
    pixel_row = np.where(east, y, y - 1)
    owner = np.searchsorted(key_start, pixel_row * stride + x0, side="right") - 1
    h_lab = labels[owner]
    h = (np.where(east, x0, x1), y, np.where(east, 0, 2), np.where(east, x1, x0), y, h_lab)
    # vertical: each run has a north edge on its left side and a south edge on its right, one row tall
    vx = np.concatenate([runs.start, runs.end])
    vrow = np.concatenate([runs.row, runs.row])
    south = np.repeat(np.array([False, True]), len(runs))
    vlab = np.concatenate([labels, labels])
    order = np.lexsort((vrow, vx))
    vx, vrow, south, vlab = vx[order], vrow[order], south[order], vlab[order]
    starts = np.flatnonzero(np.r_[True, (vx[1:] != vx[:-1]) | (vrow[1:] != vrow[:-1] + 1) | (south[1:] != south[:-1])])
    ends = np.r_[starts[1:], len(vx)] - 1
    x, top, bottom, down = vx[starts], vrow[starts], vrow[ends] + 1, south[starts]
    v = (x, np.where(down, top, bottom), np.where(down, 1, 3), x, np.where(down, bottom, top), vlab[starts])
    return tuple(np.concatenate([a, b]) for a, b in zip(h, v))


class StripPolygonizer:
    """Polygonize a class map pushed as consecutive horizontal strips.

    Parameters
    ----------
    width_px : int
        Width of every strip, model pixels.
    class_ids : sequence of int
        Classes to polygonize (every other value is ignored).
    min_area_px2, min_hole_area_px2 : float
        Components with fewer pixels are dropped and holes smaller than this
        are filled, px² (as in :func:`~polytopo.models.polygons.polygonize.polygonize_mask`).
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
    row_offset_px : int
        Grid row of the first pushed row (y offset of the polygons), model px.
    seam_top, seam_bottom : bool
        Whether the first pushed row / the last row (of the final push)
        borders another block: components touching it come back as seam pieces.
    """

    def __init__(self, width_px, class_ids, min_area_px2=0.0, min_hole_area_px2=0.0, closing_margin_rows=0, aux_channels=0,
                 column_offset_px=0, seam_left=False, seam_right=False, row_offset_px=0, seam_top=False, seam_bottom=False):
        self.width_px = width_px
        self.column_offset_px = int(column_offset_px)
        self.seam_left = bool(seam_left)
        self.seam_right = bool(seam_right)
        self.row_offset_px = int(row_offset_px)
        self.seam_top = bool(seam_top)
        self.seam_bottom = bool(seam_bottom)
        self.class_ids = tuple(int(c) for c in class_ids)
        self.min_area_px2 = min_area_px2
        self.min_hole_area_px2 = min_hole_area_px2
        self.closing_margin_rows = closing_margin_rows
        self._rows_pushed = self.row_offset_px
        self._open = {c: _NO_RUNS for c in self.class_ids}
        self._aux_row0 = self.row_offset_px
        self._aux = np.empty((aux_channels, 0, width_px), np.float32)

    @property
    def carried_rows(self):
        """Rows from the top of the oldest open component to the last pushed row (0 when none is open)."""
        tops = [int(runs.row[0]) for runs in self._open.values() if len(runs)]
        return self._rows_pushed - min(tops) if tops else 0

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
        row0 = self._rows_pushed
        self._rows_pushed += classes.shape[0]
        if self._aux.shape[0]:
            self._aux = np.concatenate([self._aux, aux.astype(np.float32)], axis=1)
        scores = np.asarray(scores, np.float32)
        open_from = self._rows_pushed
        closed = []
        for class_id in self.class_ids:
            runs = _Runs.concatenate(self._open[class_id], _pixel_runs(classes == class_id, scores, row0))
            self._open[class_id] = _NO_RUNS
            if not len(runs):
                continue
            labels, count = _components(runs, self.width_px)
            is_open = np.zeros(count, bool)
            if not final:
                is_open[labels[runs.row >= self._rows_pushed - 1 - self.closing_margin_rows]] = True
            keep = is_open[labels]
            if keep.any():
                self._open[class_id] = runs.take(keep)
                open_from = min(open_from, int(runs.row[keep][0]))
            on_seam = np.zeros(count, bool)
            if self.seam_left:
                on_seam[labels[runs.start == 0]] = True
            if self.seam_right:
                on_seam[labels[runs.end == self.width_px]] = True
            if self.seam_top:
                on_seam[labels[runs.row == self.row_offset_px]] = True
            if self.seam_bottom and final:
                on_seam[labels[runs.row == self._rows_pushed - 1]] = True
            for seam in (False, True):
                done = ~is_open & (on_seam == seam)
                if done.any():
                    closed.extend(self._close(class_id, runs, labels, count, done[labels], seam))
        self._aux = self._aux[:, open_from - self._aux_row0:]
        self._aux_row0 = open_from
        return closed

    def _close(self, class_id, runs, labels, count, selected, on_seam):
        """Trace the components whose runs are ``selected``; seam pieces are not filtered."""
        runs, labels = runs.take(selected), labels[selected]
        minimum = (0.0, 0.0) if on_seam else (self.min_area_px2, self.min_hole_area_px2)
        polygons = polygons_from_rings(trace_rings(_boundary_runs(runs, labels, self.width_px), self.width_px), *minimum)
        if not len(polygons):
            return []
        pixels = np.bincount(labels, weights=runs.end - runs.start, minlength=count)
        totals = np.bincount(labels, weights=runs.score_sum, minlength=count)
        scores = totals[polygons.labels] / np.maximum(pixels[polygons.labels], 1)
        geometries = shapely.transform(polygons.geometries, lambda xy: xy + (float(self.column_offset_px), 0.0))
        return [ClosedPolygons(class_id, geometries, scores, self._aux, self._aux_row0, on_seam)]
