"""Run a model over a raster: windows → batches → onnxruntime → decoder → map polygons.

:class:`PreparedRun` checks everything that can be checked before work starts
(card against graph, bands, extent, tile size, memory) and then yields
:class:`MapPolygon` objects strip by strip; :func:`run_to_file` writes them
to a GeoPackage or GeoJSON atomically. The progress callback is called after
every batch and the cancel check (:mod:`polytopo.core.cancel`) is asked
before every batch.

Memory is bounded whatever the raster size: the grid is processed in column
blocks of about :data:`COLUMN_BLOCK_PX` (when the decoder allows it), each
block top to bottom; tiles are read one at a time, dense outputs are blended
in an accumulator of one tile row's height and one block's width, finished
rows are polygonized at once and only the rows of still-open polygons are
carried to the next strip. Polygons cut at block seams are merged whole. See
docs/models.md for the bound.

A :class:`PreparedRun` can also run one :class:`~polytopo.models.raster.grid_blocks.GridBlock`
of a grid split in rows and columns (one worker task of a block run, see
:mod:`~polytopo.models.raster.block_run`): it then runs only the tiles of that block,
yields the polygons inside its core and keeps the pieces of polygons that
touch its seams in :attr:`PreparedRun.seam_pieces`.
"""

import os
import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import shapely

from ..core.cancel import raise_if_canceled
from .raster.column_blocks import column_blocks
from .decoders import decoder_for
from .decoders.base import DecodeContext
from .decoders.families import SEG_THRESHOLD_FAMILIES
from .errors import InferenceCanceled, InferenceError, ModelCardError, RasterError
from .raster.grid_blocks import whole_rows
from .memory import check_memory, estimate_memory
from .raster.normalize import input_scaling, to_model_input
from .polygons.cleanup import offset_outlines, to_map_coordinates, valid_polygons_only
from .prefetch import Prefetcher
from .raster.reading import GeoreferenceWarning, GridReader, make_grid, open_raster
from .raster.tiling import StripAccumulator, Tile, resolve_tiling, tile_origins
from .work_estimate import DEFAULT_MAX_PIXELS, check_work
from .writer import VectorWriter

__all__ = ["COLUMN_BLOCK_PX", "DECODE_ROWS_PER_CALL", "PREFETCH_BATCHES", "MapPolygon", "PreparedRun", "RunParams", "RunReport",
           "decoding_summary", "decoding_values", "empty_output_messages", "prefetch_depth", "run_to_file"]

DECODE_ROWS_PER_CALL = 512
"""Finished rows are handed to dense decoders in chunks of at most this many rows,
so the decoders' temporaries scale with this, not with the tile size. Tiles up to
about 512 px give one chunk per tile row: every chunk re-reads the rows carried
for still-open polygons, so fewer, taller chunks cost less time."""

PREFETCH_BATCHES = 2
"""Batches read and run ahead of the decoding when prefetching."""

COLUMN_BLOCK_PX = 4096
"""Target width of a column block, model pixels: wider grids are processed in
blocks of about this width (plus one tile), so memory does not grow with the
grid's width."""


@dataclass(frozen=True)
class RunParams:
    """Options of one run (every field overrides the card when set).

    Attributes
    ----------
    tile_size_px, overlap_px : int or None
        Tile edge and overlap, model pixels.
    batch_size : int
        Tiles per ``session.run`` call.
    extent : tuple of 4 float or None
        (xmin, ymin, xmax, ymax) to process, raster CRS units.
    aoi : shapely geometry or None
        Area of interest in the raster's CRS: pixels outside it are treated as
        nodata and the processed extent is its bounding box.
    bands : tuple of int or None
        1-based raster bands in model-channel order.
    resolution_cm_per_px : float or None
        Ground sampling distance to resample to (default: the card's).
    memory_limit_bytes : int or None
        Refuse to start when the estimate exceeds this (default: available memory).
    prompts : tuple of Prompt or None
        Box or point prompts in the raster's CRS (promptable family).
    prefetch_batches : int or None
        Batches that a background thread may read and run ahead of the
        decoding; 0 runs everything in the calling thread. None (default)
        chooses: :data:`PREFETCH_BATCHES` when the graph runs on a GPU or on
        fewer CPU threads than this process may use, else 0 (see
        :func:`prefetch_depth`).
    threshold : float or None
        Segmentation threshold in [0, 1] replacing the card's ``seg_thresh``
        (and its per-class thresholds); only for :data:`SEG_THRESHOLD_FAMILIES`.
    min_area_px, min_hole_area_px : float or None
        Smallest polygon and smallest hole kept, square model pixels (>= 0),
        replacing the card's ``polytopo.min_area_px`` and ``polytopo.min_hole_area_px``.
    max_pixels : int or None
        Refuse to start when the processed area has more model-grid pixels, with the
        estimate of the work (:func:`.work_estimate.check_work`); None for no limit.

    Raises
    ------
    ModelCardError
        At construction, when an override is not finite or out of range.
    """

    tile_size_px: object = None
    overlap_px: object = None
    batch_size: int = 1
    extent: object = None
    aoi: object = None
    bands: object = None
    resolution_cm_per_px: object = None
    memory_limit_bytes: object = None
    prompts: object = None
    prefetch_batches: object = None
    threshold: object = None
    min_area_px: object = None
    min_hole_area_px: object = None
    max_pixels: object = DEFAULT_MAX_PIXELS

    def __post_init__(self):
        _check_override("threshold", self.threshold, "a number from 0 to 1", high=1.0)
        _check_override("min_area_px", self.min_area_px, "an area >= 0 square model pixels")
        _check_override("min_hole_area_px", self.min_hole_area_px, "an area >= 0 square model pixels")

    def card_for(self, card):
        """Return ``card`` with this run's threshold and minimum areas (``card`` itself without overrides).

        Raises
        ------
        ModelCardError
            A threshold for a family that has no segmentation threshold.
        """
        changes = {}
        if self.threshold is not None:
            if card.family not in SEG_THRESHOLD_FAMILIES:
                raise ModelCardError(
                    f"Expected a segmentation threshold only for a model of family {' / '.join(SEG_THRESHOLD_FAMILIES)} "
                    f"but got one for family {card.family!r}, which thresholds masks, scores or vertices instead; "
                    "leave the threshold empty (set its own threshold in the card with write-card).")
            changes.update(seg_threshold=float(self.threshold), class_thresholds=None)
        if self.min_area_px is not None:
            changes["min_area_px2"] = float(self.min_area_px)
        if self.min_hole_area_px is not None:
            changes["min_hole_area_px2"] = float(self.min_hole_area_px)
        return card.with_overrides(**changes) if changes else card


def decoding_values(card):
    """The threshold and minimum areas that ``card`` decodes with, under the :class:`RunParams` names.

    Returns
    -------
    dict
        ``threshold`` (float; a list of per-class thresholds when the card has
        them; None for a family outside :data:`SEG_THRESHOLD_FAMILIES`),
        ``min_area_px`` and ``min_hole_area_px`` (float, square model pixels).
    """
    threshold = None
    if card.family in SEG_THRESHOLD_FAMILIES:
        threshold = list(card.class_thresholds) if card.class_thresholds is not None else card.seg_threshold
    return {"threshold": threshold, "min_area_px": card.min_area_px2, "min_hole_area_px": card.min_hole_area_px2}


def decoding_summary(card):
    """:func:`decoding_values` in words (for run logs).

    >>> from polytopo.models.card.model_card import ModelCard
    >>> decoding_summary(ModelCard("semantic", seg_threshold=0.7, min_area_px2=4.0, min_hole_area_px2=0.0))
    'threshold 0.7, minimum area 4 px², minimum hole area 0 px²'
    """
    values = decoding_values(card)
    areas = f"minimum area {values['min_area_px']:g} px², minimum hole area {values['min_hole_area_px']:g} px²"
    threshold = values["threshold"]
    if threshold is None:
        return areas
    if isinstance(threshold, list):
        return f"per-class thresholds {threshold}, {areas}"
    return f"threshold {threshold:g}, {areas}"


def _check_override(name, value, expected, high=None):
    if value is None:
        return
    number = value if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) else None
    if number is None or not np.isfinite(number) or number < 0 or (high is not None and number > high):
        raise ModelCardError(f"Expected {name} to be {expected} but got {value!r}; "
                             "give a value in that range or leave it empty to keep the model card's.")


@dataclass(frozen=True)
class _TileRow:
    """One tile row of one column block: its tiles, those the model runs on, and their batches."""

    index: int
    row0: int
    tiles: list
    runnable: list
    batches: list


@dataclass(frozen=True)
class _Inferred:
    """One batch after reading and ``session.run``: ``kept`` are the tiles with valid pixels.

    ``outputs`` maps roles to raw output arrays, ``maps`` holds the dense
    roles' activated (batch, channels, tile, tile) arrays, ``valid`` the kept
    tiles' validity masks; all None when no tile was kept.
    """

    tiles: list
    kept: list
    outputs: object
    maps: object
    valid: object


@dataclass(frozen=True)
class MapPolygon:
    """One output polygon in the raster's CRS (pixel coordinates when not georeferenced)."""

    geometry: object
    class_id: int
    class_name: str
    score: float


@dataclass
class RunReport:
    """What a run did.

    Attributes
    ----------
    provider : ProviderReport or None
    grid : ModelGrid
    tiling : TilingParams
    tiles_total, tiles_run : int
        Tiles of the grid, and tiles actually run (tiles without valid pixels
        or prompts are skipped).
    tiles_rerun : int
        Runs of tiles already run by the previous column block (the tile
        column on each block seam runs twice); not counted in ``tiles_run``.
    polygon_count : int
    invalid_dropped : int
        Polygons dropped because they were invalid after the map transform
        (expected 0; counted so that it is never silent).
    session_seconds, total_seconds : float
        Time inside ``session.run`` and overall.
    prefetch_batches : int
        Batches read and run ahead in a background thread (0: none).
    messages : list of str
        Warnings and notes for the user (no georeference, empty output, ...).
    """

    provider: object
    grid: object
    tiling: object
    tiles_total: int = 0
    tiles_run: int = 0
    polygon_count: int = 0
    invalid_dropped: int = 0
    tiles_rerun: int = 0
    session_seconds: float = 0.0
    total_seconds: float = 0.0
    prefetch_batches: int = 0
    messages: list = field(default_factory=list)


def empty_output_messages(report):
    """The note for the user when a run's output is empty (list of at most one str).

    Parameters
    ----------
    report : RunReport
        Of a finished run (``tiles_run`` and ``polygon_count`` set).
    """
    if report.tiles_run == 0:
        return ["No tile had valid pixels (all nodata, or outside the AOI/extent): the output layer is empty."]
    if report.polygon_count == 0:
        return ["The model found no polygons in the processed area: the output layer is empty."]
    return []


def _usable_cpus():
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def prefetch_depth(requested, provider_report):
    """Batches to prefetch: ``requested`` when set, else what pays off for this session.

    Reading and ``session.run`` in a background thread overlap with the
    decoding only where a core is free for it: a GPU runs the graph, or the
    CPU provider uses fewer threads than there are usable CPUs. When the CPU
    provider already uses every core, the two threads compete and the run
    gets slower (measured, see docs/models.md), so nothing is prefetched.

    Parameters
    ----------
    requested : int or None
        :attr:`RunParams.prefetch_batches`.
    provider_report : ProviderReport or None
        The session's report (None for predictors without one: no prefetch).

    Returns
    -------
    int
    """
    if requested is not None:
        if not isinstance(requested, int) or isinstance(requested, bool) or requested < 0:
            raise InferenceError(f"Expected prefetch_batches to be an integer >= 0 or None but got {requested!r}.")
        return requested
    if provider_report is None:
        return 0
    if not provider_report.on_cpu:
        return PREFETCH_BATCHES
    threads = provider_report.intra_op_threads
    return PREFETCH_BATCHES if 0 < threads < _usable_cpus() else 0


def _aoi_extent(aoi, extent):
    xmin, ymin, xmax, ymax = aoi.bounds
    if extent is not None:
        xmin, ymin = max(xmin, extent[0]), max(ymin, extent[1])
        xmax, ymax = min(xmax, extent[2]), min(ymax, extent[3])
    if not (xmin < xmax and ymin < ymax):
        raise RasterError(f"Expected an AOI that overlaps the extent {extent} but got AOI bounds {aoi.bounds}.")
    return (xmin, ymin, xmax, ymax)


class PreparedRun:
    """A run of a model over a raster, checked and planned at construction; iterate it to get :class:`MapPolygon` objects.

    Parameters
    ----------
    model : LoadedModel
    raster_path : str or os.PathLike
    params : RunParams
    progress : callable(done_tiles, total_tiles) or None
    cancel : callable() -> bool or None
        The cancel check (:mod:`polytopo.core.cancel`), asked before every batch;
        True stops with :class:`~polytopo.models.errors.InferenceCanceled`.
    block : GridBlock or None
        Run only this block of the grid (see :mod:`~polytopo.models.raster.grid_blocks`);
        None runs the whole grid.

    Attributes
    ----------
    seam_pieces : list of PolygonRecord
        After a block run: the pieces of polygons that touch the block's
        seams (model-grid px, unfiltered, unsimplified), for
        :meth:`merge_seam_pieces` to complete together with the other
        blocks' pieces. Empty for a whole-grid run.

    Raises
    ------
    RasterError, ModelCardError, MemoryBudgetError
        At construction, before any tile is read.
    """

    def __init__(self, model, raster_path, params=RunParams(), progress=None, cancel=None, block=None):
        card = params.card_for(model.card)
        if card is not model.card:
            model = replace(model, card=card)  # every decoder family reads the run's values from the card
        self.model = model
        self.params = params
        self._progress = progress
        self._cancel = cancel
        io = model.io
        self.messages = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", GeoreferenceWarning)
            self._dataset, self.info = open_raster(raster_path)
        for warning in caught:
            self.messages.append(str(warning.message))
            warnings.warn(warning.message, GeoreferenceWarning, stacklevel=2)
        extent = params.extent
        if params.aoi is not None:
            extent = _aoi_extent(params.aoi, extent)
        resolution = params.resolution_cm_per_px if params.resolution_cm_per_px is not None else card.resolution_cm_per_px
        self.grid = make_grid(self.info, resolution, extent)
        bands = params.bands or card.bands or tuple(range(1, io.channels + 1))
        if len(bands) != io.channels:
            raise RasterError(f"Expected {io.channels} bands for the model's {io.channels} input channels but got {list(bands)}; fix --bands.")
        if self.info.band_count < max(bands):
            raise RasterError(
                f"Expected a raster with at least {max(bands)} bands for the model's {io.channels} input channels "
                f"(bands {list(bands)}) but {self.info.path} has {self.info.band_count}; pass --bands or use another raster."
            )
        self.reader = GridReader(self._dataset, self.info, self.grid, bands)
        if io.input_dtype == "uint8":
            if any(t != "Byte" for t in self.reader.data_types):
                raise RasterError(
                    f"Expected 8-bit bands for the model's uint8 input but got {list(self.reader.data_types)}; "
                    "convert the raster (gdal_translate -ot Byte -scale) or export the model with a float input."
                )
            self._scaling = None
        else:
            self._scaling = input_scaling(card, self.reader.data_types, io.channels)
        self.tiling = resolve_tiling(card, io, params.tile_size_px, params.overlap_px, params.batch_size)
        tile, stride = self.tiling.tile_size_px, self.tiling.stride_px
        self.tile_rows = tile_origins(self.grid.height_px, tile, stride)
        self.tile_cols = tile_origins(self.grid.width_px, tile, stride)
        if block is None:  # a block of a planned run was checked with the whole grid
            check_work(self.grid.width_px, self.grid.height_px, len(self.tile_rows) * len(self.tile_cols),
                       params.max_pixels)
        context = DecodeContext(card, io, self.grid, self.tiling, self.tile_rows, self.tile_cols)
        self.decoder = decoder_for(model, context, params.prompts)
        roles = len(self.decoder.dense_roles)
        self.seam_pieces = []
        if block is None:
            block_px = COLUMN_BLOCK_PX if roles and self.decoder.supports_column_blocks else self.grid.width_px
            self.blocks = column_blocks(self.grid.width_px, self.tile_cols, tile, self.tiling.overlap_px, block_px)
            self.row_band = whole_rows(self.grid.height_px, self.tile_rows)
        else:
            self.require_grid_blocks()
            self.blocks = [block.cols]
            self.row_band = block.rows
            self.decoder.begin_grid_block(block.rows.core_row0_px, block.rows.seam_top, block.rows.seam_bottom)
        dense = (io.class_count or 1) + roles - 1 if roles else 0
        per_pixel_outputs = dense if roles else 2
        widest = max(block.window_width_px for block in self.blocks)
        report = model.session.report if hasattr(model.session, "report") else None
        self.prefetch_batches = prefetch_depth(params.prefetch_batches, report)
        estimate = estimate_memory(widest, tile, self.tiling.batch_size, io.channels, per_pixel_outputs, dense,
                                   self.prefetch_batches)
        check_memory(estimate, params.memory_limit_bytes)
        if params.aoi is not None:
            shapely.prepare(params.aoi)
        self.report = RunReport(report, self.grid, self.tiling, prefetch_batches=self.prefetch_batches, messages=self.messages)
        band = self.row_band
        fresh_rows = int(np.count_nonzero(band.tile_row_indices >= band.first_fresh_tile_row))
        fresh_cols = sum(int(np.count_nonzero(b.tile_col_indices >= b.first_fresh_tile_col)) for b in self.blocks)
        self.report.tiles_total = fresh_rows * fresh_cols
        self._done = 0
        self._channels = None

    def require_grid_blocks(self):
        """Raise :class:`ModelCardError` unless the decoder can run in grid blocks (see :mod:`~polytopo.models.raster.grid_blocks`)."""
        if not self.decoder.supports_grid_blocks:
            raise ModelCardError(
                f"Expected a model whose decoder can run in blocks (semantic family without seg_small_segment) for "
                f"--workers/--scheduler/--block-px on a raster but got family {self.model.card.family!r}"
                f"{' with seg_small_segment' if self.model.card.seg_small_segment_px else ''}; run it with 0 workers.")

    def _read_tile(self, tile):
        data, valid = self.reader.read(tile.col0, tile.row0, tile.size_px, tile.size_px)
        if self.params.aoi is not None and valid.any():
            xs, ys = self.grid.pixel_centres(tile.col0, tile.row0, tile.size_px, tile.size_px)
            valid &= shapely.contains_xy(self.params.aoi, xs, ys)
            data[:, ~valid] = 0.0
        return data, valid

    def _tile_in_aoi(self, tile):
        if self.params.aoi is None:
            return True
        gt = self.grid.geotransform
        x0, x1 = sorted((gt[0] + tile.col0 * gt[1], gt[0] + (tile.col0 + tile.size_px) * gt[1]))
        y0, y1 = sorted((gt[3] + tile.row0 * gt[5], gt[3] + (tile.row0 + tile.size_px) * gt[5]))
        return shapely.intersects(self.params.aoi, shapely.box(x0, y0, x1, y1))

    def _run_batch(self, tiles, data):
        io = self.model.io
        batch = to_model_input(data, self._scaling, io.input_dtype, io.layout)
        fixed = io.batch_size_fixed
        if fixed is not None and len(tiles) < fixed:
            pad = np.zeros((fixed - len(tiles), *batch.shape[1:]), batch.dtype)
            batch = np.concatenate([batch, pad])
        roles = [role for role, _name in io.outputs]
        names = [name for _role, name in io.outputs]
        start = time.perf_counter()
        arrays = self.model.session.run(names, {io.input_name: batch})
        self.report.session_seconds += time.perf_counter() - start
        outputs = {}
        for role, name, array in zip(roles, names, arrays):
            array = np.asarray(array)
            if array.dtype.kind == "f" and role not in self.decoder.padded_roles and not np.isfinite(array).all():
                bad = next(t for i, t in enumerate(tiles) if i >= len(array) or not np.isfinite(array[i]).all())
                raise InferenceError(
                    f"Expected finite values in output {name!r} ({role}) but the tile at model pixel "
                    f"(column {bad.col0}, row {bad.row0}) has NaN or Inf; check the export and the input scaling "
                    "(card keys polytopo.input_range, standardization_mean, standardization_std). No output was written."
                )
            if fixed is not None and array.ndim and array.shape[0] == fixed and fixed != len(tiles):
                array = array[: len(tiles)]
            outputs[role] = array
        return outputs

    def _dense(self, role, array, tiles):
        size = tiles[0].size_px
        if array.ndim == 3 and array.shape[1:] == (size, size):
            array = array[:, None]
        elif array.ndim == 4 and array.shape[2:] != (size, size) and array.shape[1:3] == (size, size):
            array = array.transpose(0, 3, 1, 2)
        if array.ndim != 4 or array.shape[2:] != (size, size) or array.shape[0] < len(tiles):
            raise InferenceError(
                f"Expected dense output {role!r} of shape (batch, channels, {size}, {size}) but got {array.shape}; "
                "the engine needs dense outputs at the input tile's resolution."
            )
        activation = self.model.card.output_activation
        array = array.astype(np.float32, copy=False)
        if activation == "sigmoid":
            array = 1.0 / (1.0 + np.exp(-array))
        elif activation == "softmax":
            shifted = np.exp(array - array.max(axis=1, keepdims=True))
            array = shifted / shifted.sum(axis=1, keepdims=True)
        return array

    def _check_cancel(self):
        raise_if_canceled(self._cancel, InferenceCanceled, "inference")

    def _to_map(self, records, label=None):
        pieces = [r for r in records if r.on_seam]
        if pieces:  # kept in grid pixels for merge_seam_pieces
            self.seam_pieces.extend(pieces)
            records = [r for r in records if not r.on_seam]
        if not records:
            return []
        label = label or self.decoder.class_label
        geometries = offset_outlines(np.array([r.geometry for r in records], object), self.model.card.outline_offset_px)
        geometries = to_map_coordinates(geometries, self.grid.geotransform)
        ok = valid_polygons_only(geometries)
        self.report.invalid_dropped += int((~ok).sum())
        out = []
        for record, geometry, good in zip(records, geometries, ok):
            if good:
                out.append(MapPolygon(geometry, record.class_id, label(record.class_id), record.score))
        self.report.polygon_count += len(out)
        return out

    def seam_labels(self):
        """``class_name`` of each class among :attr:`seam_pieces` (the decoder may only know it after decoding)."""
        return {r.class_id: self.decoder.class_label(r.class_id) for r in self.seam_pieces}

    def merge_seam_pieces(self, pieces, labels):
        """Merge the seam pieces of every block of a block run into whole map polygons.

        Parameters
        ----------
        pieces : list of PolygonRecord
            The :attr:`seam_pieces` of all blocks (model-grid px).
        labels : dict of int to str
            The blocks' :meth:`seam_labels`, merged.

        Returns
        -------
        list of MapPolygon
            Filtered and simplified exactly as the whole-grid run does it.
        """
        return self._to_map(self.decoder.merge_seam_pieces(pieces), labels.__getitem__)

    def __iter__(self):
        started = time.perf_counter()
        self._done = 0
        depth = self.prefetch_batches
        stream = Prefetcher(self._stream(), depth) if depth else self._stream()
        try:
            for block in self.blocks:
                yield from self._run_block(block, stream)
        finally:
            if depth:
                stream.close()
        yield from self._to_map(self.decoder.finish())
        self.messages.extend(empty_output_messages(self.report))
        self.report.total_seconds = time.perf_counter() - started

    def _schedule(self):
        """The tile rows of every column block in run order, with their batches of runnable tiles."""
        tile_px, size = self.tiling.tile_size_px, self.tiling.batch_size
        for block in self.blocks:
            for k in self.row_band.tile_row_indices:
                k, row0 = int(k), self.tile_rows[k]
                tiles = [
                    Tile(k * len(self.tile_cols) + int(j), int(self.tile_cols[j]), int(row0), tile_px, k, int(j))
                    for j in block.tile_col_indices
                ]
                runnable = [t for t in tiles if self.decoder.wants_tile(t) and self._tile_in_aoi(t)]
                batches = [runnable[start:start + size] for start in range(0, len(runnable), size)]
                yield _TileRow(k, int(row0), tiles, runnable, batches)

    def _stream(self):
        """Every tile row in run order, each followed by its batches, read and run.

        This is all the prefetch thread does; the tile schedule (decoder and
        AOI tests) and the reading are only ever done by the thread that
        iterates it.
        """
        for row in self._schedule():
            yield row
            for batch in row.batches:
                yield self._infer(batch)

    def _infer(self, tiles):
        """Read a batch of tiles and run the model on those with valid pixels.

        Returns
        -------
        _Inferred
        """
        read = [self._read_tile(t) for t in tiles]
        keep = [i for i, (_data, valid) in enumerate(read) if valid.any()]
        if not keep:
            return _Inferred(tiles, [], None, None, None)
        kept = [tiles[i] for i in keep]
        outputs = self._run_batch(kept, [read[i][0] for i in keep])
        maps = [self._dense(role, outputs[role], kept) for role in self.decoder.dense_roles]
        return _Inferred(tiles, kept, outputs, maps, np.stack([read[i][1] for i in keep]))

    def _run_block(self, block, stream):
        """Take the tile rows of one column block and their batches from ``stream`` and decode its core columns."""
        decoder = self.decoder
        decoder.begin_column_block(block.core_col0_px, block.core_col1_px, block.seam_left, block.seam_right)
        tile_px = self.tiling.tile_size_px
        window0 = block.window_col0_px
        core = slice(block.core_col0_px - window0, block.core_col1_px - window0)

        band = self.row_band

        def fresh(tiles):  # tiles the previous block has not run (progress counts each tile once)
            return sum(t.tile_col >= block.first_fresh_tile_col and t.tile_row >= band.first_fresh_tile_row for t in tiles)

        accumulator = None
        for _k in range(len(band.tile_row_indices)):
            row = next(stream)
            last = row.index == band.tile_row_indices[-1]
            grid_last = row.index == len(self.tile_rows) - 1
            next_top = self.grid.height_px if grid_last else int(self.tile_rows[row.index + 1])
            if accumulator is not None:
                accumulator.begin_row(row.row0, next_top, self.grid.height_px)
            self._done += fresh(row.tiles) - fresh(row.runnable)
            for _batch in row.batches:
                self._check_cancel()
                result = next(stream)
                self._done += fresh(result.tiles) - fresh(result.kept)
                if result.kept:
                    new = fresh(result.kept)
                    self.report.tiles_run += new
                    self.report.tiles_rerun += len(result.kept) - new
                    self._done += new
                    if result.maps:
                        if accumulator is None:
                            self._channels = [m.shape[1] for m in result.maps]
                            accumulator = StripAccumulator(block.window_width_px, tile_px, self.tiling.overlap_px, sum(self._channels))
                            accumulator.begin_row(row.row0, next_top, self.grid.height_px)
                            yield from self._skipped_rows(row.row0, self._channels, block.core_width_px)
                        for i, tile in enumerate(result.kept):
                            accumulator.add(replace(tile, col0=tile.col0 - window0), np.concatenate([m[i] for m in result.maps]), result.valid[i])
                    yield from self._to_map(decoder.decode_batch(result.kept, result.outputs, result.valid))
                if self._progress is not None:
                    self._progress(self._done, self.report.tiles_total)
            if accumulator is not None:
                row_start, values, valid_rows = accumulator.end_row()
                # rows outside the band's core lack tiles of the band above or below
                top = max(0, band.core_row0_px - row_start)
                bottom = min(values.shape[1], band.core_row1_px - row_start)
                if bottom > top or last:
                    rows = slice(top, max(top, bottom))
                    yield from self._decode_rows(row_start + top, values[:, rows, core], valid_rows[rows, core], self._channels, last)
        yield from self._to_map(decoder.end_column_block())

    def _decode_rows(self, row_start, values, valid, channels, last):
        count = values.shape[1]
        for top in range(0, max(count, 1), DECODE_ROWS_PER_CALL):
            chunk = slice(top, min(top + DECODE_ROWS_PER_CALL, count))
            maps = dict(zip(self.decoder.dense_roles, np.split(values[:, chunk], np.cumsum(channels)[:-1])))
            final = last and chunk.stop == count
            yield from self._to_map(self.decoder.decode_rows(row_start + top, maps, valid[chunk], final))

    def _skipped_rows(self, first_row, channels, width):
        """Hand the core rows above the first run tile to the decoder as invalid, in tile-height chunks."""
        for top in range(self.row_band.core_row0_px, first_row, DECODE_ROWS_PER_CALL):
            rows = min(DECODE_ROWS_PER_CALL, first_row - top)
            maps = {role: np.zeros((c, rows, width), np.float32) for role, c in zip(self.decoder.dense_roles, channels)}
            yield from self._to_map(self.decoder.decode_rows(top, maps, np.zeros((rows, width), bool), False))


def run_to_file(model, raster_path, out_path, params=RunParams(), progress=None, cancel=None, overwrite=False,
                inputs=(), finish=None, on_polygon=None):
    """Run ``model`` over ``raster_path`` and write the polygons to ``out_path``.

    Parameters
    ----------
    model : LoadedModel
    raster_path : str or os.PathLike
    out_path : str or os.PathLike
        ``.gpkg`` or ``.geojson``; written to a temporary name and renamed
        when complete, so it never exists half-written.
    params : RunParams
    progress, cancel : callable or None
        See :class:`PreparedRun`.
    overwrite : bool
        Replace an existing ``out_path``.
    inputs : iterable of str
        Other inputs of the run (AOI, prompts, model) that ``out_path`` must not
        be; the raster is always one.
    finish : callable, optional
        ``finish(path, report)`` with the complete, closed file and the finished
        :class:`RunReport`, before the file moves into place (e.g. to write
        metadata into it).
    on_polygon : callable, optional
        ``on_polygon(polygon)`` with each written polygon result (geometry in the
        raster's CRS, class, score), e.g. to evaluate them without reading the file.

    Returns
    -------
    RunReport

    Raises
    ------
    ModelsError
        Any check failure, NaN outputs, cancellation; the destination is then
        left untouched.
    """
    prepared = PreparedRun(model, raster_path, params, progress, cancel)
    with VectorWriter(out_path, prepared.grid.crs_wkt, overwrite=overwrite, inputs=(raster_path, *inputs),
                      finish=(lambda path: finish(path, prepared.report)) if finish else None) as writer:
        for polygon in prepared:
            writer.write(polygon.geometry, polygon.class_id, polygon.class_name, polygon.score)
            if on_polygon is not None:
                on_polygon(polygon)
    return prepared.report
