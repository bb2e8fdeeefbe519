"""The ``p3`` profile: the P3 evaluation card's metrics, averaged per tile, on top of ``paper``.

The ``paper`` profile runs first, so its metrics, records and topology analyses stay
available. The card's metrics are added under ``P3-`` names; a *tile* is an image of the
evaluation (every ground-truth image, plus images that only have predictions). Each metric
is computed per tile and then averaged over the tiles where it is defined:

``P3-IoU``
    ``|∪P ∩ ∪G| / |∪P ∪ ∪G|`` of the union of the tile's predicted and ground-truth
    occupied regions (vector areas); 1 for a tile with neither, 0 for a tile with only one side.
``P3-AP``, ``P3-AR``
    Per tile, predictions by descending score (equal scores in the canonical order of
    :mod:`.ordering`; at most ``max_detections``) are matched greedily at each IoU
    threshold ``t`` in :data:`P3_AP_IOU_THRESHOLDS` = (0.5, 0.75): each takes the unmatched
    ground truth of highest IoU ``>= t`` in the tile (Definition 3 of the ``paper`` profile). ``AP_t`` is
    the 101-point interpolated AP (precision envelope read at recall 0, 0.01, ..., 1; 0
    beyond the recall reached, :func:`.average_precision.interpolated_ap`), ``AR_t`` the
    recall ``TP / |G|``; the tile's AP and AR are the means over the two thresholds. Tiles
    without ground truth are left out.
``P3-POLIS``, ``P3-HD``, ``P3-CD``, ``P3-MTA``, ``P3-N-ratio``
    Over the instance pairs of the ``paper`` matching (IoU >= β = ``iou_threshold``, 0.5 by
    default, one-to-one greedy by score), on the boundaries of *all* rings: POLIS (pixels),
    Hausdorff distance (pixels), Chamfer distance (pixels), MTA (degrees,
    :func:`.mta.max_tangent_angle`), and ``|n_P - n_G| / n_G`` with ``n`` the vertex count of
    all rings. Mean over the tile's pairs, then over tiles with at least one pair.
``P3-C-IoU``
    ``IoU × (1 - |N_P - N_G| / (N_P + N_G))`` per tile, ``N`` the vertex count of all rings of
    the tile's predictions / ground truth (factor 1 when both are 0).

Hausdorff and Chamfer sampling: every ring of each side is sampled every
:data:`P3_BOUNDARY_SPACING_PX` = 0.1 px (:func:`.kernels.sample_flat_rings`, vertices
kept) and each sample's exact distance to the other side's boundary (every segment of
every ring) is measured. HD is the larger of the two directed maxima; CD is the mean of
the two directed mean distances, each mean taken over arc length (trapezoid rule on the
samples). HD is at most ``spacing / 2`` below the exact value; CD is exact when the
distance profile is linear between samples.

Departures from the card's recipe (which zips predictions and ground truth by position):
pairs are the ``paper`` matches, not positional pairs; a tile with neither predictions
nor ground truth has IoU 1, as in the P3 authors' code; the card's ``C-IoU = NR × IoU``
multiplies IoU by its vertex-count *error*, which would give a perfect prediction
C-IoU 0, so C-IoU uses the complexity factor of PolyWorld's C-IoU that the P3 authors'
code uses, while ``P3-N-ratio`` keeps the card's error form on matched pairs. DoF is not
computed: the card does not define it.
"""

from dataclasses import replace

import numpy as np
import shapely

from ..metrics.average_precision import interpolated_ap
from ..metrics.detection import capped_order
from ..geometry.kernels import (flatten_rings, grouped_reduce, nearest_segments, pair_batches, ring_segments, sample_counts,
                      sample_flat_rings)
from ..metrics.matching import greedy_match, iou_candidates
from ..tables.metric_table import suffixes
from .paper import evaluate_paper
from ..metrics.stats import nanmean

__all__ = ["P3_AP_IOU_THRESHOLDS", "P3_BOUNDARY_SPACING_PX", "P3_METRICS", "evaluate_p3", "add_p3_metrics",
           "hausdorff_chamfer", "tile_iou", "tile_ap_ar", "tile_means"]

P3_AP_IOU_THRESHOLDS = (0.5, 0.75)
P3_BOUNDARY_SPACING_PX = 0.1
P3_METRICS = suffixes("P3")
_SAMPLES_PER_CHUNK = 500_000


def evaluate_p3(gt_set, pred_set, params, progress=None):
    """Run the ``p3`` profile.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels, already filtered by :func:`.paper.prepare`.
    params : EvaluationParams
        Uses everything the ``paper`` profile uses; ``iou_threshold`` selects the pairs of
        the boundary metrics, ``max_detections`` caps the predictions of a tile for P3-AP.
    progress : callable, optional
        Called with a phase name as each phase starts.

    Returns
    -------
    Outcome
        The ``paper`` outcome with ``P3-*`` metrics added and ``details["p3"]`` holding
        ``tiles`` (count), ``tiles_averaged`` (tiles behind each metric) and ``per_tile``
        (one dict per tile: ``image_id``, counts and every P3 metric, NaN where undefined).
    """
    return add_p3_metrics(evaluate_paper(gt_set, pred_set, params, progress), params, progress)


def add_p3_metrics(base, params, progress=None):
    """The ``paper`` outcome ``base`` with the P3 metrics and ``details["p3"]`` added (see :func:`evaluate_p3`)."""
    step = progress or (lambda name: None)
    step("P3 tiles")
    gt_image, pred_image = base.image_codes
    n_tiles = len(base.image_ids)
    pairs = base.pairs
    scores = np.array([instance.score for instance in base.pred], dtype=float)
    gt_vertices = np.array([sum(len(r) for r in i.rings) for i in base.gt], dtype=float)
    pred_vertices = np.array([sum(len(r) for r in i.rings) for i in base.pred], dtype=float)

    iou = tile_iou(base.gt_regions, base.pred_regions, gt_image, pred_image, n_tiles)
    n_g = np.bincount(gt_image, weights=gt_vertices, minlength=n_tiles)
    n_p = np.bincount(pred_image, weights=pred_vertices, minlength=n_tiles)
    factor = 1.0 - np.divide(np.abs(n_p - n_g), n_p + n_g, out=np.zeros(n_tiles), where=(n_p + n_g) > 0)
    cand = iou_candidates(base.gt_regions, base.pred_regions, gt_image, pred_image)
    ap, ar = tile_ap_ar(cand, scores, pred_image, gt_image, n_tiles, P3_AP_IOU_THRESHOLDS,
                        params.max_detections)

    gt_sets = [base.gt_table.all_sets[g] for g in pairs.gt_index]
    pred_sets = [base.pred_table.all_sets[p] for p in pairs.pred_index]
    hd, cd = hausdorff_chamfer(pred_sets, gt_sets, P3_BOUNDARY_SPACING_PX)
    g_count = gt_vertices[pairs.gt_index]
    per_pair = {"POLIS": pairs.o_polis, "HD": hd, "CD": cd, "MTA": pairs.o_mta,
                "N-ratio": np.abs(pred_vertices[pairs.pred_index] - g_count) / g_count}
    pair_tile = gt_image[pairs.gt_index]
    tiles = {"IoU": iou, "C-IoU": iou * factor, "AP": ap, "AR": ar,
             **{name: tile_means(values, pair_tile, n_tiles) for name, values in per_pair.items()}}

    metrics = {**base.metrics, **{f"P3-{name}": nanmean(tiles[name]) for name in P3_METRICS}}
    counts = {"gt": np.bincount(gt_image, minlength=n_tiles), "pred": np.bincount(pred_image, minlength=n_tiles),
              "pairs": np.bincount(pair_tile, minlength=n_tiles)}
    per_tile = [{"image_id": image_id, **{k: int(v[t]) for k, v in counts.items()},
                 **{name: float(tiles[name][t]) for name in P3_METRICS}, "complexity_factor": float(factor[t])}
                for t, image_id in enumerate(base.image_ids)]
    details = {**base.details, "p3": {
        "tiles": n_tiles,
        "tiles_averaged": {name: int(np.count_nonzero(~np.isnan(tiles[name]))) for name in P3_METRICS},
        "ap_iou_thresholds": list(P3_AP_IOU_THRESHOLDS),
        "boundary_spacing_px": P3_BOUNDARY_SPACING_PX,
        "per_tile": per_tile,
    }}
    return replace(base, metrics=metrics, details=details)


def tile_means(values, tile, n_tiles):
    """Mean of the non-NaN ``values`` of each tile; NaN for tiles with none.

    Examples
    --------
    >>> tile_means(np.array([1.0, 3.0, np.nan]), np.array([0, 0, 1]), 3).tolist()
    [2.0, nan, nan]
    """
    values = np.asarray(values, dtype=float)
    present = ~np.isnan(values)
    sums = np.bincount(tile[present], weights=values[present], minlength=n_tiles)
    counts = np.bincount(tile[present], minlength=n_tiles)
    return np.divide(sums, counts, out=np.full(n_tiles, np.nan), where=counts > 0)


def _group(codes, n_groups):
    """Indices of each group, keeping the input order inside a group."""
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_groups + 1))
    return [order[bounds[k]:bounds[k + 1]] for k in range(n_groups)]


def tile_iou(gt_regions, pred_regions, gt_image, pred_image, n_tiles):
    """IoU of the union of predictions and the union of ground truth of each tile.

    Parameters
    ----------
    gt_regions, pred_regions : numpy.ndarray of shapely geometry
        Valid occupied regions in pixels.
    gt_image, pred_image : numpy.ndarray
        Tile code of each region, in ``range(n_tiles)``.
    n_tiles : int

    Returns
    -------
    numpy.ndarray
        One IoU per tile; 1 where both unions are empty.

    Examples
    --------
    >>> gt = np.array([shapely.box(0, 0, 10, 10)])
    >>> pred = np.array([shapely.box(1, 0, 11, 10)])
    >>> tile_iou(gt, pred, np.array([0]), np.array([0]), 2).round(4).tolist()
    [0.8182, 1.0]
    """
    gt_union = np.array([shapely.union_all(gt_regions[k]) for k in _group(gt_image, n_tiles)], dtype=object)
    pred_union = np.array([shapely.union_all(pred_regions[k]) for k in _group(pred_image, n_tiles)], dtype=object)
    inter = shapely.area(shapely.intersection(gt_union, pred_union))
    union = shapely.area(gt_union) + shapely.area(pred_union) - inter
    return np.divide(inter, union, out=np.ones(n_tiles), where=union > 0)


def tile_ap_ar(cand, scores, pred_image, gt_image, n_tiles, thresholds, max_detections=None):
    """Per-tile AP and AR, each the mean over ``thresholds`` (NaN for tiles without GT).

    Parameters
    ----------
    cand : Candidates
        Overlapping same-tile pairs from :func:`.matching.iou_candidates`.
    scores, pred_image, gt_image : numpy.ndarray
        Prediction scores and tile codes of predictions and ground truth.
    n_tiles : int
    thresholds : sequence of float
        IoU thresholds of a match (``>=``).
    max_detections : int or None
        Per-tile cap on predictions (highest scores kept).

    Returns
    -------
    ap, ar : numpy.ndarray
        One value per tile.
    """
    order = capped_order(scores, pred_image, max_detections)
    gt_count = np.bincount(gt_image, minlength=n_tiles)
    by_tile = _group(pred_image[order], n_tiles)
    ap = np.full((len(thresholds), n_tiles), np.nan)
    ar = np.full((len(thresholds), n_tiles), np.nan)
    for k, threshold in enumerate(thresholds):
        matched = greedy_match(order, cand.gt_index, cand.pred_index, cand.iou, threshold, len(gt_image),
                               len(scores))
        tp = (matched[order] >= 0).astype(np.float64)
        for tile in np.flatnonzero(gt_count):
            mine = tp[by_tile[tile]]
            ap[k, tile] = interpolated_ap(mine, 1.0 - mine, gt_count[tile])
            ar[k, tile] = mine.sum() / gt_count[tile]
    return ap.mean(axis=0), ar.mean(axis=0)


def _sample_chunks(source_sets, spacing_px):
    """Samples of consecutive sets, at most ``_SAMPLES_PER_CHUNK`` at a time (a larger set alone).

    Yields ``(start, stop, points, owner, ring)``: sets ``start:stop``, their samples, the set
    (relative to ``start``) and the ring of each sample.
    """
    for part in pair_batches(sample_counts(source_sets, spacing_px), _SAMPLES_PER_CHUNK):
        coords, vertex_ring, ring_owner = flatten_rings(source_sets[part])
        points, ring = sample_flat_rings(coords, vertex_ring, spacing_px)
        yield part.start, part.stop, points, ring_owner[ring], ring


def _directed(source_sets, target_sets, spacing_px):
    """Directed maximum and arc-length mean distance from each source set to its target set."""
    maximum, mean = np.full(len(source_sets), np.nan), np.full(len(source_sets), np.nan)
    for start, stop, points, owner, ring in _sample_chunks(source_sets, spacing_px):
        n = stop - start
        coords, vertex_ring, ring_owner = flatten_rings(target_sets[start:stop])
        a, b, segment_ring = ring_segments(coords, vertex_ring)
        distance, _ = nearest_segments(points, owner, a, b, ring_owner[segment_ring], n)
        # Trapezoid rule along each ring (consecutive samples of the same ring).
        same = ring[1:] == ring[:-1]
        step = np.linalg.norm(points[1:] - points[:-1], axis=1)[same]
        piece = step * 0.5 * (distance[1:] + distance[:-1])[same]
        length = np.bincount(owner[1:][same], weights=step, minlength=n)
        integral = np.bincount(owner[1:][same], weights=piece, minlength=n)
        mean[start:stop] = np.divide(integral, length, out=np.full(n, np.nan), where=length > 0)
        maximum[start:stop] = grouped_reduce(np.maximum, distance, owner, n, np.nan)
    return maximum, mean


def hausdorff_chamfer(sets_a, sets_b, spacing_px=P3_BOUNDARY_SPACING_PX):
    """Element-wise Hausdorff and Chamfer distances in pixels between ring sets.

    Parameters
    ----------
    sets_a, sets_b : sequence of sequence of numpy.ndarray
        Equally long sequences of ring sets (rings in pixels, first vertex not repeated).
    spacing_px : float
        Sampling step along the rings, pixels.

    Returns
    -------
    hd, cd : numpy.ndarray
        ``max(h(A, B), h(B, A))`` and ``(m(A, B) + m(B, A)) / 2`` with ``h`` the largest and
        ``m`` the arc-length mean distance of samples of one boundary to the other; NaN where
        a set is empty.

    Notes
    -----
    Cost: about ``perimeter / spacing_px`` samples per ring and direction, each measured
    against every segment of the other set, in chunks of about 500 000 samples.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> hd, cd = hausdorff_chamfer([[square]], [[square + [1.0, 0.0]]])
    >>> round(float(hd[0]), 9), round(float(cd[0]), 9)
    (1.0, 0.5)
    """
    hd, cd = np.full(len(sets_a), np.nan), np.full(len(sets_a), np.nan)
    present = np.flatnonzero([len(a) > 0 and len(b) > 0 for a, b in zip(sets_a, sets_b)])
    if present.size:
        sets_a, sets_b = [sets_a[i] for i in present], [sets_b[i] for i in present]
        max_ab, mean_ab = _directed(sets_a, sets_b, spacing_px)
        max_ba, mean_ba = _directed(sets_b, sets_a, spacing_px)
        hd[present] = np.maximum(max_ab, max_ba)
        cd[present] = 0.5 * (mean_ab + mean_ba)
    return hd, cd
