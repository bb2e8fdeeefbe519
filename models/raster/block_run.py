"""Whole maps in blocks: one raster cut into grid blocks, each run as one task on a Dask cluster.

The client plans the run exactly as a single-process run (a :class:`PreparedRun`
that checks the card, the bands, the extent and the memory, and reads no tile),
cuts the grid into :class:`~polytopo.models.raster.grid_blocks.GridBlock` objects
aligned to the tile grid and sends one task per block through
:func:`polytopo.core.cluster.map_partitions`. A worker loads the model once
(:func:`~polytopo.models.worker_model.worker_model`), runs the block's tiles
(those of the blending margin included) and returns the polygons inside the
block's core, in map coordinates, and the pixel-edge pieces of the polygons
that touch its seams. The client writes the polygons and merges the pieces of
all blocks with the decoder's own seam merge (union of the pieces, then the
minimum area, minimum hole area and simplification of the whole-grid run).

The output equals the single-process run's: the blended maps are the same bit
for bit (see :mod:`~polytopo.models.raster.grid_blocks`), a polygon cut at seams is
the union of its pixel-edge pieces, and every pixel-edge polygon is in GEOS
normal form before simplification, so the simplified rings do not depend on
where the grid was cut. Scores are means over the same pixels, summed in
another order (equal within 1e-9 relative in the tests).

Memory: a worker holds what a single-process run over one block holds (the
bound of docs/models.md for a grid of the block's window); the client holds
the output polygons and the seam pieces, vectors only.
"""

import time
import warnings
from dataclasses import dataclass

from ...core.cluster import map_partitions
from .grid_blocks import grid_blocks
from ..pipeline import COLUMN_BLOCK_PX, PreparedRun, RunParams, RunReport, empty_output_messages
from .reading import GeoreferenceWarning
from ..session import SessionParams
from ..worker_model import worker_model
from ..writer import VectorWriter

__all__ = ["BlockResult", "BlockTask", "run_block", "run_blocks"]


@dataclass(frozen=True)
class BlockTask:
    """What a worker needs to run one block.

    Attributes
    ----------
    model_path, raster_path : str
        Readable at these paths on every worker.
    session : SessionParams
    params : RunParams
    block : GridBlock
    """

    model_path: str
    raster_path: str
    session: object
    params: object
    block: object


@dataclass(frozen=True)
class BlockResult:
    """What a worker returns for one block.

    Attributes
    ----------
    polygons : list of MapPolygon
        Polygons inside the block's core, finished (map coordinates).
    pieces : list of PolygonRecord
        Pieces of polygons touching the block's seams (model-grid px).
    labels : dict of int to str
        ``class_name`` of the pieces' classes.
    tiles_run, tiles_rerun, invalid_dropped : int
    session_seconds : float
    """

    polygons: list
    pieces: list
    labels: dict
    tiles_run: int
    tiles_rerun: int
    invalid_dropped: int
    session_seconds: float


def run_block(task):
    """Run one block (on a worker); returns a :class:`BlockResult`."""
    model = worker_model(task.model_path, task.session)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeoreferenceWarning)  # the client reports it once
        prepared = PreparedRun(model, task.raster_path, task.params, block=task.block)
    polygons = list(prepared)
    report = prepared.report
    return BlockResult(polygons, prepared.seam_pieces, prepared.seam_labels(), report.tiles_run,
                       report.tiles_rerun, report.invalid_dropped, report.session_seconds)


def run_blocks(model_path, raster_path, out_path, client, params=RunParams(), session=SessionParams(), block_px=COLUMN_BLOCK_PX,
               progress=None, overwrite=False):
    """Run a model over a raster in grid blocks, one task per block, and write the polygons.

    Parameters
    ----------
    model_path, raster_path : str
        Readable at the same paths on the client and on every worker.
    out_path : str or os.PathLike
        ``.gpkg`` or ``.geojson``, written atomically when every block is done.
    client : distributed.Client or None
        From :func:`polytopo.core.cluster.open_client`; None runs the
        blocks one after the other in this process.
    params : RunParams
    session : SessionParams
        Session of the workers (and of the client's plan, which runs no tile).
    block_px : int
        Target edge of a block's core, model px (blocks are aligned to the tile grid).
    progress : callable(done_blocks, total_blocks) or None
    overwrite : bool
        Replace an existing ``out_path``.

    Returns
    -------
    RunReport
        Summed over the blocks; ``tiles_rerun`` counts the tiles of the
        blending margins that two or four blocks run.

    Raises
    ------
    ModelsError
        The checks of a single-process run, or a decoder that cannot run in blocks.
    ClusterError
        A block failed on its worker (the message names the block).
    """
    started = time.perf_counter()
    model = worker_model(model_path, session)
    plan = PreparedRun(model, raster_path, params)
    plan.require_grid_blocks()
    tiling = plan.tiling
    blocks = grid_blocks(plan.grid.width_px, plan.grid.height_px, plan.tile_cols, plan.tile_rows,
                         tiling.tile_size_px, tiling.overlap_px, block_px)
    tasks = [BlockTask(str(model_path), str(raster_path), session, params, b) for b in blocks]
    report = RunReport(plan.report.provider, plan.grid, tiling, tiles_total=plan.report.tiles_total,
                       prefetch_batches=plan.prefetch_batches, messages=list(plan.messages))
    with VectorWriter(out_path, plan.grid.crs_wkt, overwrite=overwrite) as writer:
        results = map_partitions(client, run_block, tasks, names=[b.name for b in blocks], progress=progress)
        pieces, labels = [], {}
        for result in results:
            for polygon in result.polygons:
                writer.write(polygon.geometry, polygon.class_id, polygon.class_name, polygon.score)
            pieces.extend(result.pieces)
            labels.update(result.labels)
            report.tiles_run += result.tiles_run
            report.tiles_rerun += result.tiles_rerun
            report.invalid_dropped += result.invalid_dropped
            report.session_seconds += result.session_seconds
        for polygon in plan.merge_seam_pieces(pieces, labels):
            writer.write(polygon.geometry, polygon.class_id, polygon.class_name, polygon.score)
        report.polygon_count = writer.count
    report.invalid_dropped += plan.report.invalid_dropped
    report.messages.extend(empty_output_messages(report))
    report.total_seconds = time.perf_counter() - started
    return report
