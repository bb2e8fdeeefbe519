"""Tiles, blending weights and the strip accumulator that stitches dense outputs.

Tiles of ``tile_size_px`` start every ``tile_size_px - overlap_px`` pixels
(the stride), the last one reaching past the grid edge by less than a stride
(pixels past the edge are read as invalid and get zero weight). The uniform
stride keeps what one tile row hands to the next to exactly ``overlap_px``
rows, which is what bounds the memory.

Overlapping predictions are blended with separable linear ramps: within
``overlap_px`` of a tile edge a tile's weight falls linearly towards that
edge, so where two tiles overlap by ``overlap_px`` their weights sum to one
and the result cross-fades from one tile to the next with no step (seam).
Weights never reach zero, so pixels that only one tile covers (at the grid
edge) keep that tile's value.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ModelCardError

__all__ = ["StripAccumulator", "Tile", "TilingParams", "blend_weights", "resolve_tiling", "tile_origins"]


@dataclass(frozen=True)
class TilingParams:
    """Tile geometry and batching.

    Attributes
    ----------
    tile_size_px : int
        Tile edge, model pixels.
    overlap_px : int
        Overlap of neighbouring tiles, model pixels (0 <= overlap < tile).
    batch_size : int
        Tiles per ``session.run`` call.
    """

    tile_size_px: int
    overlap_px: int
    batch_size: int = 1

    def __post_init__(self):
        if not isinstance(self.tile_size_px, int) or self.tile_size_px < 1:
            raise ModelCardError(f"Expected a tile size >= 1 px but got {self.tile_size_px!r}; pass --tile PX.")
        if not isinstance(self.overlap_px, int) or not 0 <= self.overlap_px < self.tile_size_px:
            raise ModelCardError(
                f"Expected an overlap in [0, {self.tile_size_px}) px for tiles of {self.tile_size_px} px but got "
                f"{self.overlap_px!r}; pass a smaller --overlap."
            )
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ModelCardError(f"Expected a batch size >= 1 but got {self.batch_size!r}; pass --batch N.")

    @property
    def stride_px(self):
        """Distance between the starts of neighbouring tiles, model pixels."""
        return self.tile_size_px - self.overlap_px


def resolve_tiling(card, io, tile_size_px=None, overlap_px=None, batch_size=1):
    """Combine the card, the graph and overrides into :class:`TilingParams`.

    Raises
    ------
    ModelCardError
        No tile size anywhere (dynamic graph, no ``tile_size`` key, no
        override), an override contradicting a graph that fixes the tile or
        batch size.
    """
    tile = tile_size_px if tile_size_px is not None else (io.tile_size_px or card.tile_size_px)
    if tile is None:
        raise ModelCardError(
            "Expected a tile size but the graph accepts any size and the card has no 'tile_size'; set it with "
            "python -m polytopo.models write-card MODEL --set tile_size=512, or pass --tile 512."
        )
    if io.tile_size_px is not None and tile != io.tile_size_px:
        raise ModelCardError(
            f"Expected --tile {io.tile_size_px} (the graph fixes the input to {io.tile_size_px} px) but got {tile}."
        )
    if io.batch_size_fixed is not None and batch_size != io.batch_size_fixed:
        raise ModelCardError(
            f"Expected --batch {io.batch_size_fixed} (the graph fixes the batch dimension) but got {batch_size}."
        )
    if overlap_px is None:
        overlap_px = int(round(tile * card.tiles_overlap_percent / 100.0))
    return TilingParams(int(tile), int(overlap_px), int(batch_size))


def tile_origins(length_px, tile_size_px, stride_px):
    """Start offsets of the tiles along one axis: every ``stride_px``, until the axis is covered.

    Examples
    --------
    >>> tile_origins(100, 40, 30).tolist()
    [0, 30, 60]
    >>> tile_origins(101, 40, 30).tolist()
    [0, 30, 60, 90]
    >>> tile_origins(10, 40, 30).tolist()
    [0]
    """
    count = 1 + max(0, -(-(length_px - tile_size_px) // stride_px))
    return np.arange(count, dtype=np.int64) * stride_px


def blend_weights(tile_size_px, overlap_px):
    """Separable blending weights of one tile, shape (tile, tile), float32, in (0, 1]."""
    if overlap_px == 0:
        return np.ones((tile_size_px, tile_size_px), np.float32)
    position = np.arange(tile_size_px)
    distance = np.minimum(position, tile_size_px - 1 - position)
    ramp = np.minimum(1.0, (distance + 0.5) / overlap_px).astype(np.float32)
    return np.outer(ramp, ramp)


@dataclass(frozen=True)
class Tile:
    """One tile of the grid.

    Attributes
    ----------
    index : int
        Position in processing order.
    col0, row0 : int
        Top-left model pixel.
    size_px : int
        Tile edge, model pixels.
    tile_row, tile_col : int
        Position in the tile grid.
    """

    index: int
    col0: int
    row0: int
    size_px: int
    tile_row: int
    tile_col: int


class StripAccumulator:
    """Blends dense tile outputs row of tiles by row of tiles.

    For each tile row call :meth:`begin_row`, then :meth:`add` for its tiles
    (any order; skipped tiles are simply not added), then :meth:`end_row`,
    which returns the blended values of the rows that no later tile touches.
    The accumulator keeps the weighted sums and weights of one tile row's
    height over the full width; at :meth:`end_row` the rows the next tile row
    overlaps move to the top and the rest is cleared.

    "Full width" is ``width_px``: the grid's, or one column block's window
    (the pipeline then passes tiles with ``col0`` relative to the window).

    Parameters
    ----------
    width_px : int
        Width of the blended area (grid or column-block window), model pixels.
    tile_size_px, overlap_px : int
    channels : int
        Total channels of all dense roles.

    Notes
    -----
    Memory, bytes: ``4 * (channels + 1) * tile * width`` for the sums and
    weights, ``(4 * channels + 1) * stride * width`` for the rows
    :meth:`end_row` returns and ``4 * (channels + 1) * tile**2`` for scratch
    buffers. A pixel is valid when some tile covered it with a valid pixel
    (its weight is positive: weights are zero on invalid pixels).
    """

    def __init__(self, width_px, tile_size_px, overlap_px, channels):
        self.width_px = width_px
        self.tile_size_px = tile_size_px
        self.channels = channels
        self._weights = blend_weights(tile_size_px, overlap_px)
        self._sum = np.zeros((channels, tile_size_px, width_px), np.float32)
        self._weight = np.zeros((tile_size_px, width_px), np.float32)
        self._scratch_sum = np.empty((channels, tile_size_px, tile_size_px), np.float32)
        self._scratch_weight = np.empty((tile_size_px, tile_size_px), np.float32)
        self._top = 0
        self._finished = 0
        self._carried = 0

    def begin_row(self, top_row, next_top_row, height_px):
        """Start the tile row whose tiles start at ``top_row``; the next one starts at ``next_top_row``."""
        self._top = top_row
        self._finished = min(next_top_row, height_px) - top_row
        self._carried = max(0, min(top_row + self.tile_size_px, height_px) - next_top_row)

    def add(self, tile, values, valid):
        """Add one tile's dense outputs (channels, tile, tile) and validity (tile, tile)."""
        c0 = tile.col0
        cols = min(self.tile_size_px, self.width_px - c0)
        if cols <= 0:
            return
        weights = self._weights if valid.all() else np.multiply(self._weights, valid, out=self._scratch_weight)
        weighted = np.multiply(values, weights, out=self._scratch_sum)  # float32, no temporaries
        self._sum[:, :, c0:c0 + cols] += weighted[:, :, :cols]
        self._weight[:, c0:c0 + cols] += weights[:, :cols]

    def end_row(self):
        """Finish the tile row.

        Returns
        -------
        row0 : int
            Grid row of the first returned row.
        values : numpy.ndarray, shape (channels, rows, width)
            Blended values (0 where no valid pixel contributed).
        valid : numpy.ndarray of bool, shape (rows, width)
        """
        n, m = self._finished, self._carried
        weight = self._weight[:n]
        valid = weight > 0
        values = np.zeros((self.channels, n, self.width_px), np.float32)
        np.divide(self._sum[:, :n], weight, out=values, where=valid)
        # the next tile row starts n rows lower: its first m rows already hold this row's sums
        self._sum[:, :m] = self._sum[:, n:n + m]
        self._sum[:, m:] = 0
        self._weight[:m] = self._weight[n:n + m]
        self._weight[m:] = 0
        return self._top, values, valid
