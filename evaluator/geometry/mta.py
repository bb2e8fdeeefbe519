"""Maximum tangent angle (MTA, Definition 10), vectorized over many polygon pairs.

For each pair the predicted contours (exterior and holes) are sampled every ``spacing`` px
(:func:`.kernels.sample_flat_rings`); each sample is projected onto the nearest ground-truth contour. Each
segment between consecutive samples is compared with the segment between their
projections: the orientation-invariant angle ``arccos(|<dp, dq>| / (|dp| |dq|))``. Segments
whose length ratio ``|dp| / |dq|`` is not strictly inside ``(1 / max_stretch, max_stretch)``
are left out, and pairs whose precision ``|P ∩ G| / |P|`` does not exceed
``min_precision`` (strictly, as the FFL code; or at least reaches it, with
``precision_inclusive``) get NaN. MTA is the largest remaining angle, in degrees; NaN when no segment remains.
Pairs are measured in batches of bounded size (:func:`.kernels.map_pair_batches`), with the
same results at any batch size.
"""

import numpy as np
import shapely

from ...core.kernel_threads import chunked

from .kernels import (flatten_rings, grouped_reduce, map_pair_batches, nearest_segments, ring_segments,
                      sample_counts, sample_flat_rings, vertex_counts)

__all__ = ["max_tangent_angle", "region_precision"]


def region_precision(pred_regions, gt_regions, intersection=None):
    """``|P ∩ G| / |P|`` per pair; NaN where a region is missing or has no area.

    ``intersection`` (px²) may be given when already known.
    """
    pred = np.asarray(pred_regions, dtype=object)
    gt = np.asarray(gt_regions, dtype=object)
    result = np.full(len(pred), np.nan)
    present = ~(shapely.is_missing(pred) | shapely.is_missing(gt))
    pred_area = np.zeros(len(pred))
    pred_area[present] = shapely.area(pred[present])
    present[present] &= (pred_area[present] > 0) & (shapely.area(gt[present]) > 0)
    if intersection is None:
        inter = np.zeros(len(pred))
        inter[present] = shapely.area(chunked(shapely.intersection, pred[present], gt[present]))
    else:
        inter = np.asarray(intersection, dtype=float)
    result[present] = np.clip(inter[present] / np.maximum(pred_area[present], 1e-8), 0.0, 1.0)
    return result


def max_tangent_angle(pred_sets, gt_sets, precision, *, spacing_px=2.0, min_precision=0.5, max_stretch=2.0,
                      precision_inclusive=False, batch_points=None):
    """Element-wise MTA in degrees between predicted and ground-truth ring sets.

    Parameters
    ----------
    pred_sets, gt_sets : sequence of sequence of numpy.ndarray
        Contours of each pair (rings in pixels, first vertex not repeated).
    precision : numpy.ndarray
        ``|P ∩ G| / |P|`` of each pair (:func:`region_precision`); NaN gives NaN.
    spacing_px : float
        Sampling step along predicted contours, pixels.
    min_precision : float
        Precision a pair must exceed to be measured.
    precision_inclusive : bool
        Also measure pairs whose precision equals ``min_precision``.
    max_stretch : float
        Limit on the length ratio of a sampled segment and its projection.
    batch_points : float, optional
        Most points (predicted samples plus ground-truth vertices) per batch of pairs;
        :data:`.kernels.PAIR_BATCH_POINTS` by default.

    Returns
    -------
    numpy.ndarray
        One angle per pair in degrees, NaN where undefined.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> float(max_tangent_angle([[square]], [[square]], np.array([1.0]))[0])
    0.0
    """
    precision = np.asarray(precision, dtype=float)
    result = np.full(len(precision), np.nan)
    index = np.flatnonzero(precision >= min_precision if precision_inclusive else precision > min_precision)
    if index.size:
        pred, gt = [pred_sets[i] for i in index], [gt_sets[i] for i in index]
        points = sample_counts(pred, spacing_px) + vertex_counts(gt)
        result[index] = map_pair_batches(lambda p, g: _angles(p, g, spacing_px, max_stretch), points, pred, gt,
                                         budget=batch_points)
    return result


def _angles(pred_sets, gt_sets, spacing, max_stretch):
    n = len(pred_sets)
    coords, vertex_ring, ring_owner = flatten_rings(pred_sets)
    points, contour = sample_flat_rings(coords, vertex_ring, spacing)
    owner = ring_owner[contour]
    t_coords, t_vertex_ring, t_ring_owner = flatten_rings(gt_sets)
    a, b, seg_ring = ring_segments(t_coords, t_vertex_ring)
    # Each sample projects onto the nearest ground-truth segment of its pair (first on ties).
    _, projected = nearest_segments(points, owner, a, b, t_ring_owner[seg_ring], n, closest=True)

    same = contour[1:] == contour[:-1]
    edge = (points[1:] - points[:-1])[same]
    proj_edge = (projected[1:] - projected[:-1])[same]
    pair = owner[1:][same]
    norm = np.linalg.norm(edge, axis=1)
    proj_norm = np.linalg.norm(proj_edge, axis=1)
    keep = (norm > 0) & (proj_norm > 0)
    stretch = np.divide(norm, proj_norm, out=np.zeros_like(norm), where=keep)
    keep &= (stretch > 1.0 / max_stretch) & (stretch < max_stretch)
    cosine = np.ones_like(norm)
    cosine[keep] = np.abs(np.sum(edge[keep] * proj_edge[keep], axis=1)) / (norm[keep] * proj_norm[keep])
    cosine = np.clip(cosine, -1.0, 1.0)
    smallest = grouped_reduce(np.minimum, cosine[keep], pair[keep], n, np.inf)
    return np.where(np.isfinite(smallest), np.degrees(np.arccos(np.minimum(smallest, 1.0))), np.nan)
