"""Grid blocks: the model grid cut in rows and columns, each block run on its own (one per worker task).

A block is one row band crossed with one column band. Both bands come from
:func:`~polytopo.models.raster.column_blocks.column_blocks` (the split is the same
along either axis): a band runs every tile that covers one of its *core*
pixels, so the tile row / column on each seam runs in both neighbouring
blocks and every core pixel is blended from exactly the tiles, in the order,
the whole-grid run uses. The blended maps are therefore the same, bit for bit,
whatever the split, and the cores tile the grid without gap or overlap.

Components of the class map that touch a block's seam come out of the block
as unfiltered, unsimplified pixel-edge pieces; the pieces of all blocks are
merged where they are collected (see :mod:`~polytopo.models.raster.block_run`).
"""

from dataclasses import dataclass

import numpy as np

from .column_blocks import ColumnBlock, column_blocks

__all__ = ["GridBlock", "RowBand", "grid_blocks", "whole_rows"]


@dataclass(frozen=True)
class RowBand:
    """One horizontal band of the grid (the row counterpart of a :class:`ColumnBlock`).

    Attributes
    ----------
    tile_row_indices : numpy.ndarray of int
        Indices (into the grid's tile rows) of the tile rows this band runs.
    first_fresh_tile_row : int
        Tile rows below this index are also run by the band above.
    core_row0_px, core_row1_px : int
        Grid rows [row0, row1) whose blended values and polygons this band produces, model px.
    seam_top, seam_bottom : bool
        Whether another band continues past the core's top / bottom edge.
    """

    tile_row_indices: np.ndarray
    first_fresh_tile_row: int
    core_row0_px: int
    core_row1_px: int
    seam_top: bool
    seam_bottom: bool

    @classmethod
    def from_axis_block(cls, block):
        """The row band described by a :class:`ColumnBlock` computed along the rows."""
        return cls(block.tile_col_indices, block.first_fresh_tile_col, block.core_col0_px, block.core_col1_px,
                   block.seam_left, block.seam_right)


def whole_rows(height_px, tile_rows_px):
    """The single band of a grid that is not split in rows: every tile row, every grid row, no seam."""
    return RowBand(np.arange(len(tile_rows_px)), 0, 0, int(height_px), False, False)


@dataclass(frozen=True)
class GridBlock:
    """One block of the grid: a row band crossed with a column band.

    Attributes
    ----------
    row, col : int
        Position of the block in the block grid.
    rows : RowBand
    cols : ColumnBlock
    """

    row: int
    col: int
    rows: RowBand
    cols: ColumnBlock

    @property
    def name(self):
        """How messages name the block: its position and its core in grid pixels."""
        return (f"block ({self.row}, {self.col}) (grid rows {self.rows.core_row0_px}-{self.rows.core_row1_px}, "
                f"columns {self.cols.core_col0_px}-{self.cols.core_col1_px})")

    @property
    def has_seam(self):
        """Whether another block borders this one."""
        return self.rows.seam_top or self.rows.seam_bottom or self.cols.seam_left or self.cols.seam_right


def grid_blocks(width_px, height_px, tile_cols_px, tile_rows_px, tile_size_px, overlap_px, block_px):
    """Cut the grid into blocks whose cores are about ``block_px`` square, aligned to the tile grid.

    Parameters
    ----------
    width_px, height_px : int
        Grid size, model px.
    tile_cols_px, tile_rows_px : numpy.ndarray of int
        Start columns and rows of the tile grid, model px.
    tile_size_px, overlap_px : int
    block_px : int
        Target core edge, model px; an axis no longer gets one band.

    Returns
    -------
    list of GridBlock
        Row-major; the cores tile the grid without gap or overlap.

    Examples
    --------
    >>> blocks = grid_blocks(100, 70, [0, 30, 60], [0, 30], 40, 10, 50)
    >>> [(b.rows.core_row0_px, b.rows.core_row1_px, b.cols.core_col0_px, b.cols.core_col1_px) for b in blocks]
    [(0, 40, 0, 40), (0, 40, 40, 100), (40, 70, 0, 40), (40, 70, 40, 100)]
    """
    if isinstance(block_px, bool) or not isinstance(block_px, int) or block_px < 1:
        raise ValueError(f"Expected a block size of at least 1 px but got {block_px!r}.")
    cols = column_blocks(width_px, tile_cols_px, tile_size_px, overlap_px, block_px)
    rows = [RowBand.from_axis_block(b) for b in column_blocks(height_px, tile_rows_px, tile_size_px, overlap_px, block_px)]
    return [GridBlock(i, j, band, column) for i, band in enumerate(rows) for j, column in enumerate(cols)]
