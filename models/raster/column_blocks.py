"""Column blocks: the grid is processed in vertical bands of bounded width, and polygons cut at their seams are merged.

Dense outputs are blended and polygonized one column block at a time, each
block top to bottom in row strips, so the buffers scale with the block's
width instead of the grid's. A block runs every tile that covers one of its
*core* columns, so the tile column that straddles a seam (with an overlap of
more than half a tile, every tile column that reaches past it) is run by both
neighbouring blocks and every core pixel is blended from exactly the tiles
the whole-grid blend would use (no seam in the blended map). The cost is one
repeated tile column per seam.

A component of the class map that crosses a seam is traced as one piece per
block. The pieces are pixel-edge polygons on the same pixel grid, so the
union of the pieces that share an edge on the seam is exactly the polygon of
the whole component, holes included. :class:`SeamMerger` keeps the pieces
that touch a seam unfiltered and unsimplified, merges them once the block on
the other side is done, and only then applies the minimum area, minimum hole
area and (in the decoder) simplification, as for any other polygon.
"""

from dataclasses import dataclass

import numpy as np
import shapely

from ..polygons.cleanup import drop_small_holes

__all__ = ["ColumnBlock", "SeamMerger", "column_blocks"]


@dataclass(frozen=True)
class ColumnBlock:
    """One vertical band of the grid.

    Attributes
    ----------
    tile_col_indices : numpy.ndarray of int
        Indices (into the grid's tile columns) of the tiles this block runs.
    first_fresh_tile_col : int
        Tile columns below this index were already run by the previous block.
    window_col0_px, window_width_px : int
        Grid column and width of the blending window (all of the block's tiles), model px.
    core_col0_px, core_col1_px : int
        Grid columns [col0, col1) whose blended values and polygons this block produces, model px.
    seam_left, seam_right : bool
        Whether another block continues past the core's left / right edge.
    """

    tile_col_indices: np.ndarray
    first_fresh_tile_col: int
    window_col0_px: int
    window_width_px: int
    core_col0_px: int
    core_col1_px: int
    seam_left: bool
    seam_right: bool

    @property
    def core_width_px(self):
        """Width of the core, model px."""
        return self.core_col1_px - self.core_col0_px


def column_blocks(width_px, tile_cols_px, tile_size_px, overlap_px, block_width_px):
    """Split the grid's tile columns into blocks whose cores are about ``block_width_px`` wide.

    Parameters
    ----------
    width_px : int
        Grid width, model px.
    tile_cols_px : numpy.ndarray of int
        Start columns of the tile columns (every stride), model px.
    tile_size_px, overlap_px : int
    block_width_px : int
        Target core width, model px; a grid no wider gets a single block.

    Returns
    -------
    list of ColumnBlock
        Cores tile the grid's columns without gap or overlap.

    Examples
    --------
    >>> [(b.core_col0_px, b.core_col1_px) for b in column_blocks(100, [0, 30, 60], 40, 10, 50)]
    [(0, 40), (40, 100)]
    """
    tile_cols_px = np.asarray(tile_cols_px, np.int64)
    count = len(tile_cols_px)
    blocks_n = max(1, min(count, -(-width_px // max(1, block_width_px))))
    starts = [k * count // blocks_n for k in range(blocks_n)] + [count]
    blocks = []
    fresh = 0
    for k in range(blocks_n):
        first = starts[k]
        final = k == blocks_n - 1
        # the tile before ``first`` ends where this core starts
        core0 = 0 if k == 0 else int(tile_cols_px[first]) + overlap_px
        core1 = width_px if final else int(tile_cols_px[starts[k + 1]]) + overlap_px
        # every tile starting before the core's end covers some of its columns: with an overlap of more
        # than half a tile, that is more than the tile that starts the next core
        last = count - 1 if final else int(np.searchsorted(tile_cols_px, core1, side="left")) - 1
        window0 = int(tile_cols_px[first])
        window1 = min(width_px, int(tile_cols_px[last]) + tile_size_px)
        blocks.append(ColumnBlock(np.arange(first, last + 1), fresh, window0, window1 - window0, core0, core1, k > 0, not final))
        fresh = last + 1
    return blocks


class SeamMerger:
    """Merge the pieces of polygons cut at column-block seams.

    Pieces arrive unfiltered (every pixel-edge polygon that touches a seam,
    whatever its size) with their mean score; each piece's area is its pixel
    count. After each block, :meth:`end_block` unions the pieces of each
    class, returns the merged polygons that cannot grow any more and keeps
    the others (those reaching the next seam) for the next block.

    Parameters
    ----------
    min_area_px2, min_hole_area_px2 : float
        Applied to merged polygons as :func:`~polytopo.models.polygons.polygonize.polygonize_mask`
        applies them to whole components, model px².

    Notes
    -----
    Memory: the pieces along one seam (vector geometries, a few per polygon
    that touches the seam), not pixels.
    """

    def __init__(self, min_area_px2=0.0, min_hole_area_px2=0.0):
        self.min_area_px2 = min_area_px2
        self.min_hole_area_px2 = min_hole_area_px2
        self._pieces = {}

    @property
    def pending_count(self):
        """Pieces and merged polygons held back, waiting for a block to end."""
        return sum(len(g) for g, _s, _c in self._pieces.values())

    def add(self, class_id, geometries, scores):
        """Hold pieces of ``class_id`` (model-grid px) with their mean scores."""
        geometries = np.asarray(geometries, object)
        counts = shapely.area(geometries)
        held = self._pieces.setdefault(int(class_id), ([], [], []))
        held[0].extend(geometries)
        held[1].extend(np.asarray(scores, float) * counts)
        held[2].extend(counts)

    def end_block(self, next_seam_col_px):
        """Merge what a finished block completed.

        Parameters
        ----------
        next_seam_col_px : int or None
            Grid column of the finished block's right seam (None for the last
            block): merged polygons reaching it are kept for the next block.

        Returns
        -------
        list of (class_id, geometries, scores)
            Whole polygons, filtered by area and hole area, not simplified, in
            GEOS normal form like every traced polygon (see
            :func:`~polytopo.models.polygons.polygonize.polygons_from_rings`).
        """
        out = []
        pieces, self._pieces = self._pieces, {}
        for class_id, (geometries, score_sums, counts) in sorted(pieces.items()):
            geometries = np.asarray(geometries, object)
            merged = np.asarray(shapely.get_parts(shapely.union_all(geometries)), object)
            merged = np.asarray(shapely.simplify(merged, 0.0), object)  # drops the collinear vertices left on the seam
            piece, part = shapely.STRtree(merged).query(shapely.point_on_surface(geometries), predicate="within")
            sums = np.bincount(part, weights=np.asarray(score_sums)[piece], minlength=len(merged))
            pixels = np.bincount(part, weights=np.asarray(counts)[piece], minlength=len(merged))
            growing = np.zeros(len(merged), bool)
            if next_seam_col_px is not None:
                growing = shapely.bounds(merged)[:, 2] >= next_seam_col_px
            if growing.any():
                self._pieces[class_id] = (list(merged[growing]), list(sums[growing]), list(pixels[growing]))
            done = ~growing & (pixels >= self.min_area_px2)
            if done.any():
                scores = sums[done] / np.maximum(pixels[done], 1.0)
                whole = np.array([drop_small_holes(polygon, self.min_hole_area_px2) for polygon in merged[done]], object)
                whole = np.asarray(shapely.normalize(whole), object)  # the vertex order of an uncut polygon
                out.append((class_id, whole, scores))
        return out
