"""The interface every decoder family implements.

The pipeline reads tiles, runs the session and hands each decoder two kinds
of data:

* ``decode_batch(tiles, outputs, valid)``: the raw outputs of one batch of
  tiles, for decoders that read instances per tile (``instance``, ``rings``,
  ``promptable``);
* ``decode_rows(row0, maps, valid, final)``: finished rows of the blended
  dense outputs named in :attr:`Decoder.dense_roles`, for decoders that work
  on stitched maps (``semantic``, ``vertex-mask``).

Both return :class:`PolygonRecord` objects in model-grid pixel coordinates;
the pipeline maps them to the raster's CRS, checks them and writes them.

A dense decoder whose :attr:`Decoder.supports_column_blocks` is true gets
the grid one column block at a time (see
:mod:`~polytopo.models.raster.column_blocks`): ``begin_column_block``, then the rows
of that block top to bottom, then ``end_column_block``. Such a decoder must
not rely on ``decode_batch``, because the tiles on a seam run twice.

A decoder whose :attr:`Decoder.supports_grid_blocks` is true can also run one
block of a grid split in rows and columns (see
:mod:`~polytopo.models.raster.grid_blocks`): ``begin_grid_block`` says which rows
the block's core starts at and which of its edges are seams; every polygon
touching a seam is then returned as a :class:`PolygonRecord` with
``on_seam=True`` (unfiltered, unsimplified pixel-edge piece), and
``merge_seam_pieces`` completes the pieces of all blocks.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["DecodeContext", "Decoder", "PolygonRecord"]


@dataclass(frozen=True)
class PolygonRecord:
    """One output polygon.

    Attributes
    ----------
    geometry : shapely.Polygon
        Model-grid pixel coordinates (x = column, y = row), holes included.
    class_id : int
    score : float
        Mean class probability over the polygon (dense families) or the
        model's instance / ring / prompt score.
    on_seam : bool
        True for a piece of a polygon cut at a grid-block seam, to be merged
        by :meth:`Decoder.merge_seam_pieces` (its area is its pixel count).
    """

    geometry: object
    class_id: int
    score: float
    on_seam: bool = False


@dataclass(frozen=True)
class DecodeContext:
    """What a decoder knows about the run.

    Attributes
    ----------
    card : ModelCard
    io : ModelIO
    grid : ModelGrid
    tiling : TilingParams
    tile_rows, tile_cols : numpy.ndarray of int
        Start rows and columns of the tile grid, model pixels.
    """

    card: object
    io: object
    grid: object
    tiling: object
    tile_rows: np.ndarray
    tile_cols: np.ndarray


class Decoder:
    """Base class: a decoder that yields nothing; families override what they use.

    Parameters
    ----------
    context : DecodeContext
    """

    dense_roles = ()
    """Output roles the pipeline blends into maps and passes to :meth:`decode_rows`."""
    padded_roles = ()
    """Output roles where NaN marks padding, exempt from the pipeline's finite-value check."""
    supports_column_blocks = False
    """Whether the pipeline may hand the dense maps over in column blocks (else one block, the full width)."""
    supports_grid_blocks = False
    """Whether the decoder can run one block of a grid split in rows and columns (see the module docstring)."""

    def __init__(self, context):
        self.context = context
        self.card = context.card

    @classmethod
    def for_model(cls, context, model, prompts=None):
        """Create the decoder of ``model`` (families with a second session or prompts override this).

        Parameters
        ----------
        context : DecodeContext
        model : LoadedModel
        prompts : sequence of Prompt, optional
            Used only by families whose row sets ``needs_prompts``.
        """
        return cls(context)

    def class_label(self, class_id):
        """Name written to the ``class_name`` field for ``class_id``."""
        return self.card.class_name(class_id)

    def wants_tile(self, tile):
        """Whether the pipeline should run the model on ``tile`` (all tiles by default)."""
        return True

    def decode_batch(self, tiles, outputs, valid):
        """Decode the raw outputs of a batch.

        Parameters
        ----------
        tiles : list of Tile
        outputs : dict of str to numpy.ndarray
            Role to output array, batch first.
        valid : numpy.ndarray of bool, shape (batch, tile, tile)
            Valid pixels of each tile (not nodata, inside the raster and AOI).

        Returns
        -------
        list of PolygonRecord
        """
        return []

    def decode_rows(self, row0, maps, valid, final):
        """Decode finished rows of the blended dense outputs.

        Parameters
        ----------
        row0 : int
            Grid row of the first row.
        maps : dict of str to numpy.ndarray, each (channels, rows, width)
        valid : numpy.ndarray of bool, shape (rows, width)
        final : bool
            True for the last rows of the grid.

        Returns
        -------
        list of PolygonRecord
        """
        return []

    @staticmethod
    def check_outputs(card, signature, outputs, fail):
        """Check the graph's outputs beyond the family table's roles and class counts (none by default).

        Parameters
        ----------
        card : ModelCard
        signature : GraphSignature
            The graph's inputs and outputs (:mod:`polytopo.models.card.validation`).
        outputs : dict of str to str
            Output role → graph output name.
        fail : callable(key, expected, got, family)
            Raises the card error for ``key``.
        """

    def begin_column_block(self, col0_px, col1_px, seam_left, seam_right):
        """Start the column block of grid columns [col0_px, col1_px); the seam flags say whether blocks continue past its edges."""

    def end_column_block(self):
        """Return the polygons completed by the end of the current column block (list of PolygonRecord)."""
        return []

    def begin_grid_block(self, row0_px, seam_top, seam_bottom):
        """Run one grid block whose core starts at grid row ``row0_px``; its seam pieces are returned, not merged."""
        raise NotImplementedError(f"{type(self).__name__} cannot run in grid blocks")

    def merge_seam_pieces(self, pieces):
        """Merge the seam pieces (PolygonRecord, ``on_seam``) of all grid blocks; returns whole PolygonRecords."""
        raise NotImplementedError(f"{type(self).__name__} cannot run in grid blocks")

    def finish(self):
        """Return the polygons still held back once every tile is done."""
        return []
