"""Metrics of matched instance pairs and of their hole matches, vectorized over all pairs.

Given matched ``(gt, pred)`` instance pairs, :func:`evaluate_pairs` computes for each pair
the Overall and Exterior scope BIoU, POLIS, MTA and HD95, and matches the two hole sets
one-to-one (Hungarian on per-hole BIoU, Definition 12). Accepted hole matches get their
own BIoU, POLIS, MTA and HD95. All distances are in pixels, angles in degrees.
"""

from dataclasses import dataclass

import numpy as np
import shapely

from ...core.kernel_threads import side_by_side
from ..geometry.boundary import band_iou, hd95, polis
from .matching import hungarian_match
from ..geometry.mta import max_tangent_angle, region_precision

__all__ = ["PairMetrics", "HoleMatches", "evaluate_pairs", "match_holes_of_pairs"]


@dataclass(frozen=True)
class HoleMatches:
    """Accepted hole matches of all pairs (flat arrays of equal length).

    ``pair`` indexes the instance pair; ``gt_hole`` / ``pred_hole`` index the ring tables'
    hole lists; ``biou``, ``polis`` (px), ``mta`` (degrees), ``hd95`` (px) are per match.
    """

    pair: np.ndarray
    gt_hole: np.ndarray
    pred_hole: np.ndarray
    biou: np.ndarray
    polis: np.ndarray
    mta: np.ndarray
    hd95: np.ndarray


@dataclass(frozen=True)
class PairMetrics:
    """Per-pair metrics (arrays of length n_pairs) and the accepted hole matches."""

    gt_index: np.ndarray
    pred_index: np.ndarray
    iou: np.ndarray
    o_biou: np.ndarray
    e_biou: np.ndarray
    o_polis: np.ndarray
    e_polis: np.ndarray
    o_mta: np.ndarray
    e_mta: np.ndarray
    o_hd95: np.ndarray
    e_hd95: np.ndarray
    hole_tp: np.ndarray
    holes: HoleMatches


BAND_PAIRS_PER_BATCH = 4096
"""Pairs whose boundary bands are made, intersected and dropped together (bounds their memory)."""


def _pair_band_iou(gt_table, pred_table, name, gt_index, pred_index):
    """:func:`.boundary.band_iou` of the ``name`` bands of each pair, made batch by batch.

    A table that holds those bands already gives them; otherwise only one batch's bands
    exist at a time (each instance is in at most one pair here, so none is made twice).
    """
    result = np.zeros(len(gt_index))
    for start in range(0, len(gt_index), BAND_PAIRS_PER_BATCH):
        part = slice(start, start + BAND_PAIRS_PER_BATCH)
        result[part] = band_iou(gt_table.of(name, gt_index[part]), pred_table.of(name, pred_index[part]))
    return result

def match_holes_of_pairs(gt_table, pred_table, gt_index, pred_index, threshold, inclusive):
    """Hungarian hole matching inside each pair.

    Returns
    -------
    pair, gt_hole, pred_hole, biou : numpy.ndarray
        Accepted matches (flat).
    """
    blocks, cells_gt, cells_pred = [], [], []
    for k, (g, p) in enumerate(zip(gt_index, pred_index)):
        gh, ph = gt_table.hole_range(g), pred_table.hole_range(p)
        if len(gh) and len(ph):
            blocks.append((k, len(gh), len(ph)))
            cells_gt.append(np.repeat(np.arange(gh.start, gh.stop), len(ph)))
            cells_pred.append(np.tile(np.arange(ph.start, ph.stop), len(gh)))
    out = ([], [], [], [])
    if not blocks:
        return tuple(np.array(values, dtype=dtype) for values, dtype in zip(out, (np.int64, np.int64, np.int64, float)))
    cells_gt, cells_pred = np.concatenate(cells_gt), np.concatenate(cells_pred)
    gt_holes, gt_cell = np.unique(cells_gt, return_inverse=True)
    pred_holes, pred_cell = np.unique(cells_pred, return_inverse=True)
    similarity = band_iou(gt_table.of("hole_bands", gt_holes)[gt_cell], pred_table.of("hole_bands", pred_holes)[pred_cell])
    offset = 0
    for k, n_gt, n_pred in blocks:
        size = n_gt * n_pred
        block = similarity[offset:offset + size].reshape(n_gt, n_pred)
        first_gt, first_pred = cells_gt[offset], cells_pred[offset]
        for r, c, value in hungarian_match(block, threshold, inclusive):
            out[0].append(k)
            out[1].append(first_gt + r)
            out[2].append(first_pred + c)
            out[3].append(value)
        offset += size
    return (np.array(out[0], dtype=np.int64), np.array(out[1], dtype=np.int64),
            np.array(out[2], dtype=np.int64), np.array(out[3], dtype=float))


def evaluate_pairs(gt_table, pred_table, gt_regions, pred_regions, gt_index, pred_index, iou, intersection,
                   params):
    """All pair-level metrics of matched instance pairs.

    Parameters
    ----------
    gt_table, pred_table : RingTable
        Ring geometry of both sides.
    gt_regions, pred_regions : numpy.ndarray
        Valid occupied regions of the instances (for the MTA precision filter).
    gt_index, pred_index, iou, intersection : numpy.ndarray
        The matched pairs, their IoU and region intersection area (px²).
    params : EvaluationParams
        Uses ``sample_spacing_px``, ``mta_min_precision``, ``mta_precision_inclusive``,
        ``mta_max_stretch``, ``polis_vertex_sets``, ``ring_match_threshold`` and
        ``ring_match_inclusive``.

    Notes
    -----
    When neither instance of a pair has holes and both regions are exactly their exterior
    polygons, the Overall scope *is* the Exterior scope: its metrics are copied rather than
    computed twice.
    """
    g, p = np.asarray(gt_index, dtype=np.int64), np.asarray(pred_index, dtype=np.int64)
    spacing = params.sample_spacing_px
    mta_options = dict(spacing_px=spacing, min_precision=params.mta_min_precision,
                       max_stretch=params.mta_max_stretch, precision_inclusive=params.mta_precision_inclusive)
    vertex_sets = params.polis_vertex_sets
    gt_ext = [gt_table.exterior_sets[i] for i in g]
    pred_ext = [pred_table.exterior_sets[i] for i in p]
    holed = (np.diff(gt_table.hole_start)[g] > 0) | (np.diff(pred_table.hole_start)[p] > 0)
    gt_exterior_regions, pred_exterior_regions = gt_table.of("exterior_regions", g), pred_table.of("exterior_regions", p)
    same_region = np.zeros(len(g), dtype=bool)
    if len(g):
        same_region = (shapely.equals_exact(gt_regions[g], gt_exterior_regions, 0.0)
                       & shapely.equals_exact(pred_regions[p], pred_exterior_regions, 0.0))
    overall = np.flatnonzero(holed | ~same_region)
    o_precision = region_precision(pred_regions[p], gt_regions[g], intersection)
    e_precision = o_precision.copy()
    e_precision[overall] = region_precision(pred_exterior_regions[overall], gt_exterior_regions[overall])
    del gt_exterior_regions, pred_exterior_regions

    def scope(bands, gt_sets, pred_sets, precision, scope_gt, scope_pred):
        """The four metric families of one scope's pairs, heaviest first (:func:`side_by_side`)."""
        return {
            "biou": lambda: _pair_band_iou(gt_table, pred_table, bands, scope_gt, scope_pred),
            "hd95": lambda: hd95(gt_sets, pred_sets, spacing),
            "mta": lambda: max_tangent_angle(pred_sets, gt_sets, precision, **mta_options),
            "polis": lambda: polis(gt_sets, pred_sets, vertex_sets),
        }

    scopes = {"e": scope("exterior_bands", gt_ext, pred_ext, e_precision, g, p)}
    if overall.size:
        go, po = g[overall], p[overall]
        scopes["o"] = scope("all_bands", [gt_table.all_sets[i] for i in go], [pred_table.all_sets[i] for i in po],
                            o_precision[overall], go, po)
    calls = {(name, key): call for name, families in scopes.items() for key, call in families.items()}
    calls["holes"] = lambda: _hole_metrics(gt_table, pred_table, g, p, params, mta_options)
    done = dict(zip(calls, side_by_side(*calls.values())))
    e = {key: done["e", key] for key in scopes["e"]}
    o = {key: value.copy() for key, value in e.items()}
    for key in scopes.get("o", ()):
        o[key][overall] = done["o", key]
    holes = done["holes"]
    return PairMetrics(
        gt_index=g, pred_index=p, iou=np.asarray(iou, dtype=float),
        o_biou=o["biou"], e_biou=e["biou"], o_polis=o["polis"], e_polis=e["polis"],
        o_mta=o["mta"], e_mta=e["mta"], o_hd95=o["hd95"], e_hd95=e["hd95"],
        hole_tp=np.bincount(holes.pair, minlength=len(g)).astype(np.int64),
        holes=holes,
    )


def _hole_metrics(gt_table, pred_table, g, p, params, mta_options):
    """:class:`HoleMatches` of the pairs ``g``, ``p``: holes matched inside each pair, then their metrics."""
    pair, gt_hole, pred_hole, hole_biou = match_holes_of_pairs(
        gt_table, pred_table, g, p, params.ring_match_threshold, params.ring_match_inclusive)
    gh_sets = [[gt_table.holes[i]] for i in gt_hole]
    ph_sets = [[pred_table.holes[i]] for i in pred_hole]
    hole_precision = region_precision(pred_table.of("hole_regions", pred_hole), gt_table.of("hole_regions", gt_hole))
    return HoleMatches(
        pair=pair, gt_hole=gt_hole, pred_hole=pred_hole, biou=hole_biou,
        polis=polis(gh_sets, ph_sets, params.polis_vertex_sets),
        mta=max_tangent_angle(ph_sets, gh_sets, hole_precision, **mta_options),
        hd95=hd95(gh_sets, ph_sets, params.sample_spacing_px),
    )
