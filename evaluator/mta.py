"""Maximum tangent angle (MTA, Definition 10), vectorized over many polygon pairs.

For each pair the predicted contours (exterior and holes) are sampled every ``spacing`` px
(:mod:`.sampling`); each sample is projected onto the nearest ground-truth contour. Each
segment between consecutive samples is compared with the segment between their
projections: the orientation-invariant angle ``arccos(|<dp, dq>| / (|dp| |dq|))``. Segments
whose length ratio ``|dp| / |dq|`` is not strictly inside ``(1 / max_stretch, max_stretch)``
are left out, and pairs whose precision ``|P ∩ G| / |P|`` is below ``min_precision`` get
NaN. MTA is the largest remaining angle, in degrees; NaN when no segment remains.
"""

import numpy as np
import shapely

from .sampling import sample_closed_ring

__all__ = ["max_tangent_angle"]


def _closed(ring):
    return np.vstack([ring, ring[:1]])


def max_tangent_angle(pred_sets, gt_sets, pred_regions, gt_regions, *, spacing_px=2.0,
                      min_precision=0.5, max_stretch=2.0):
    """Element-wise MTA in degrees between predicted and ground-truth ring sets.

    Parameters
    ----------
    pred_sets, gt_sets : sequence of sequence of numpy.ndarray
        Contours of each pair (rings in pixels, first vertex not repeated).
    pred_regions, gt_regions : sequence of shapely geometry or None
        Valid regions the contours bound, for the precision filter; None gives NaN.
    spacing_px : float
        Sampling step along predicted contours, pixels.
    min_precision : float
        Minimum ``|P ∩ G| / |P|`` for a pair to be measured.
    max_stretch : float
        Limit on the length ratio of a sampled segment and its projection.

    Returns
    -------
    numpy.ndarray
        One angle per pair in degrees, NaN where undefined.

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> region = shapely.Polygon(square)
    >>> float(max_tangent_angle([[square]], [[square]], [region], [region])[0])
    0.0
    """
    pred = np.asarray(pred_regions, dtype=object)
    gt = np.asarray(gt_regions, dtype=object)
    result = np.full(len(pred), np.nan)
    present = ~(shapely.is_missing(pred) | shapely.is_missing(gt))
    present[present] = (shapely.area(pred[present]) > 0) & (shapely.area(gt[present]) > 0)
    if present.any():
        index = np.flatnonzero(present)
        inter = shapely.area(shapely.intersection(pred[index], gt[index]))
        precision = inter / np.maximum(shapely.area(pred[index]), 1e-8)
        index = index[precision >= min_precision]
        if index.size:
            result[index] = _angles([pred_sets[i] for i in index], [gt_sets[i] for i in index],
                                    spacing_px, max_stretch)
    return result


def _angles(pred_sets, gt_sets, spacing, max_stretch):
    # Samples of every predicted contour, with the pair and contour they belong to.
    samples, sample_pair, sample_contour = [], [], []
    targets, target_offset, target_count = [], [], []
    contour_id = 0
    for pair, (p, g) in enumerate(zip(pred_sets, gt_sets)):
        for ring in p:
            points = sample_closed_ring(ring, spacing)
            samples.append(points)
            sample_pair.append(np.full(len(points), pair))
            sample_contour.append(np.full(len(points), contour_id))
            contour_id += 1
        target_offset.append(len(targets))
        target_count.append(len(g))
        targets.extend(shapely.linearrings(_closed(ring)) for ring in g)
    points = np.concatenate(samples)
    pair_of = np.concatenate(sample_pair)
    contour_of = np.concatenate(sample_contour)
    targets = np.asarray(targets, dtype=object)
    offset = np.asarray(target_offset)[pair_of]
    count = np.asarray(target_count)[pair_of]

    # Distance of every sample to every target contour of its pair; the first nearest wins.
    rows = np.repeat(np.arange(len(points)), count)
    cols = np.repeat(offset, count) + (np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count))
    geoms = shapely.points(points)
    distance = shapely.distance(geoms[rows], targets[cols])
    starts = np.cumsum(count) - count
    nearest = np.minimum.reduceat(distance, starts)
    is_min = distance == nearest[rows]
    first = np.flatnonzero(is_min)
    _, first_of_row = np.unique(rows[first], return_index=True)
    chosen = targets[cols[first[first_of_row]]]
    along = shapely.line_locate_point(chosen, geoms)
    projected = shapely.get_coordinates(shapely.line_interpolate_point(chosen, along))

    same = contour_of[1:] == contour_of[:-1]
    edge = (points[1:] - points[:-1])[same]
    proj_edge = (projected[1:] - projected[:-1])[same]
    owner = pair_of[1:][same]
    norm = np.linalg.norm(edge, axis=1)
    proj_norm = np.linalg.norm(proj_edge, axis=1)
    keep = (norm > 0) & (proj_norm > 0)
    stretch = np.divide(norm, proj_norm, out=np.zeros_like(norm), where=keep)
    keep &= (stretch > 1.0 / max_stretch) & (stretch < max_stretch)
    cosine = np.ones_like(norm)
    cosine[keep] = np.abs(np.sum(edge[keep] * proj_edge[keep], axis=1)) / (norm[keep] * proj_norm[keep])
    cosine = np.clip(cosine, -1.0, 1.0)
    smallest = np.full(len(pred_sets), np.inf)
    np.minimum.at(smallest, owner[keep], cosine[keep])
    return np.where(np.isfinite(smallest), np.degrees(np.arccos(np.minimum(smallest, 1.0))), np.nan)
