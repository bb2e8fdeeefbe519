"""The ``p3-code`` profile: the metrics as the P3 authors' evaluation code computes them.

The ``p3`` profile follows the P3 card's recipe; this profile follows the P3 authors'
public evaluation code (repository ``PixelsPointsPolygons``, folder ``eval/``), whose
definitions differ. It runs the ``coco`` profile (so its AP/AR and the ``paper`` metrics
stay available) and adds ``P3code-`` metrics. All lengths are pixels.

``P3code-IoU``, ``P3code-C-IoU``, ``P3code-N-ratio``
    Per ground-truth image: the union of the image's ground-truth masks and the union of
    its predicted masks (1-px masks drawn as pycocotools draws polygons,
    :mod:`.raster_iou`), ``IoU = I / (U + 1e-9)`` (1 when both are empty); the complexity
    factor ``NR = 1 - |N_P - N_G| / (N_P + N_G + 1e-9)`` with ``N`` the number of
    *exterior* vertices of the image's predictions / ground truth; ``C-IoU = IoU × NR``.
    Each is the mean over every ground-truth image (``N-ratio`` is the mean of ``NR``).
``P3code-AP``, ``P3code-AR``
    pycocotools' AP over IoU 0.50:0.95 (maxDets 100) and AR@10 (their "AR"), from the
    ``coco`` profile's raster mode.
``P3code-POLIS``, ``P3code-HD``, ``P3code-CD``
    Pairs per image: each ground truth takes the prediction whose *bounding box* (of the
    exterior vertices) has the highest box IoU with its own, if that IoU is ``> 0.5``; a
    prediction may serve several ground truths (first best in the canonical order, see
    :mod:`.ordering`). On exteriors only: POLIS is ``Σ_a d(a, ∂B) / (2(n_A + 1)) +
    Σ_b d(b, ∂A) / (2(n_B + 1))`` (``n`` vertices, ``d`` the distance to the other exterior
    line); HD and CD are point-to-point over the exteriors densified to segments of at
    most 0.1 px (``shapely.segmentize``; the closing vertex listed twice, as shapely lists
    it): HD the larger directed maximum, CD the mean of the two directed means of
    nearest-point distances. Mean over the image's pairs, then over images with a pair.
``P3code-MTA``
    Per image, every predicted ring becomes a polygon; those of zero area are dropped,
    invalid ones buffered by 0, and all are merged (union, then buffer 0). Each merged
    polygon whose precision ``|P ∩ ∪G| / |P|`` exceeds 0.5 (``∪G`` the union of the
    ground-truth ring polygons) is sampled along its exterior and interiors (per edge
    ``max(1, round(length / 2)) + 1`` evenly spaced points), every sample projected onto the
    nearest ground-truth ring of the image (exteriors and holes); segments of zero length
    or with stretch outside ``(1/2, 2)`` are left out; the polygon's value is the largest
    ``arccos |cos|`` over its contours, in degrees. Mean over all such polygons of the
    dataset.

Departures from that code: their IoU code fails on polygons with holes (it stacks one
mask per ring), so here every instance's mask is its exterior with its holes cleared;
ties are broken in the canonical order (:mod:`.ordering`) rather than in file order,
which can move AP when predictions share a score; rings keep their vertex order as given
(CD depends on which vertex comes first). DoF is not
computed (their code runs an external program; see ``docs/evaluator.md``).
"""

from dataclasses import dataclass, replace

import numpy as np
import shapely

from .coco import evaluate_coco
from ...core.scipy_imports import kd_tree
from ..geometry.kernels import nearest_segments
from ..tables.metric_table import suffixes
from .p3 import tile_means
from ..geometry.raster_iou import instance_masks
from ..metrics.stats import nanmean

__all__ = ["P3_CODE_METRICS", "P3CodeParts", "evaluate_p3_code", "p3_code_parts", "merge_p3_code_parts",
           "add_p3_code_metrics", "union_iou_nr", "box_iou", "box_pairs", "polis_p3_code", "hausdorff_chamfer_points", "merged_prediction_mta"]

P3_CODE_METRICS = suffixes("P3code")
_DENSIFY_PX = 0.1
_MTA_SPACING_PX = 2.0
_MTA_MIN_PRECISION = 0.5
_MTA_MAX_STRETCH = 2.0


@dataclass(frozen=True)
class P3CodeParts:
    """The per-image values behind the ``P3code-`` metrics, before any mean over images.

    Every value is a function of one image's instances, so the parts of a set of images
    are the concatenation of the parts of its subsets (see :mod:`.distributed`).

    Attributes
    ----------
    image_ids : list
        Image id of each image code.
    iou, nr : numpy.ndarray
        Per image code: IoU of the mask unions and the complexity factor NR.
    pair_image, polis, hd, cd : numpy.ndarray
        Per box pair (grouped by image): its image code, POLIS, HD and CD (px).
    mta_image, mta : numpy.ndarray
        Per merged prediction polygon that passes the precision filter: its image code
        and MTA (degrees).
    """

    image_ids: list
    iou: np.ndarray
    nr: np.ndarray
    pair_image: np.ndarray
    polis: np.ndarray
    hd: np.ndarray
    cd: np.ndarray
    mta_image: np.ndarray
    mta: np.ndarray


def evaluate_p3_code(gt_set, pred_set, params, progress=None):
    """Run the ``p3-code`` profile.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Ground truth and predictions in pixels, already filtered by :func:`.paper.prepare`.
    params : EvaluationParams
        As for ``coco`` (maxDets 100, raster IoU by default).
    progress : callable, optional
        Called with a phase name as each phase starts.

    Returns
    -------
    Outcome
        The ``coco`` outcome with ``P3code-*`` metrics added and ``details["p3_code"]``
        holding the number of images behind each metric.
    """
    base = evaluate_coco(gt_set, pred_set, params, progress)
    (progress or (lambda name: None))("P3 code metrics")
    return add_p3_code_metrics(base, p3_code_parts(base.gt, base.pred, *base.image_codes, base.image_ids,
                                                   gt_set.image_sizes), gt_set.image_ids)


def p3_code_parts(gt, pred, gt_image, pred_image, image_ids, image_sizes=None):
    """The per-image values of the ``P3code-`` metrics (see the module docstring).

    Parameters
    ----------
    gt, pred : list of Instance
        Filtered instances in canonical order, in pixels.
    gt_image, pred_image : numpy.ndarray
        Image code of each instance.
    image_ids : list
        Image id of each code.
    image_sizes : dict, optional
        ``{image_id: (width, height)}`` px: the masks are clipped to it, as pycocotools clips.

    Returns
    -------
    P3CodeParts
    """
    iou, nr = union_iou_nr(gt, pred, gt_image, pred_image, np.arange(len(image_ids)), image_sizes)
    pairs_gt, pairs_pred = box_pairs(gt, pred, gt_image, pred_image)
    polis = np.array([polis_p3_code(gt[g].exterior, pred[p].exterior) for g, p in zip(pairs_gt, pairs_pred)])
    hd_cd = np.array([hausdorff_chamfer_points(gt[g].exterior, pred[p].exterior) for g, p in zip(pairs_gt, pairs_pred)])
    hd_cd = hd_cd.reshape(-1, 2)
    mta_image, mta = merged_prediction_mta(gt, pred, gt_image, pred_image, len(image_ids))
    return P3CodeParts(list(image_ids), iou, nr, gt_image[pairs_gt], polis.reshape(-1), hd_cd[:, 0], hd_cd[:, 1],
                       mta_image, mta)


def add_p3_code_metrics(base, parts, gt_image_ids):
    """The ``coco`` outcome ``base`` with the ``P3code-`` metrics of ``parts`` added.

    Parameters
    ----------
    base : Outcome
        The ``coco`` outcome of the filtered sets.
    parts : P3CodeParts
        Their per-image values, with the image codes of ``base``.
    gt_image_ids : sequence
        The ground-truth file's images (those the IoU means run over).

    Returns
    -------
    Outcome
    """
    n_images = len(base.image_ids)
    gt_images = _gt_image_codes(base.image_ids, gt_image_ids)
    iou, nr = parts.iou[gt_images], parts.nr[gt_images]
    per_image = {name: tile_means(values, parts.pair_image, n_images)
                 for name, values in (("POLIS", parts.polis), ("HD", parts.hd), ("CD", parts.cd))}
    mta = parts.mta
    values = {"IoU": float(np.mean(iou)) if len(iou) else float("nan"),
              "C-IoU": float(np.mean(iou * nr)) if len(iou) else float("nan"),
              "N-ratio": float(np.mean(nr)) if len(nr) else float("nan"),
              "AP": base.metrics["AP"], "AR": base.metrics["AR@10"],
              **{name: nanmean(v) for name, v in per_image.items()},
              "MTA": float(np.mean(mta)) if len(mta) else float("nan")}
    metrics = {**base.metrics, **{f"P3code-{name}": values[name] for name in P3_CODE_METRICS}}
    details = {**base.details, "p3_code": {
        "images": int(len(gt_images)),
        "images_with_box_pairs": int(np.count_nonzero(~np.isnan(per_image["POLIS"]))),
        "box_pairs": int(len(parts.pair_image)),
        "mta_polygons": int(len(mta)),
    }}
    return replace(base, metrics=metrics, details=details)


def _gt_image_codes(image_ids, gt_image_ids):
    """Codes of the ground-truth file's images (the images their IoU loop visits)."""
    position = {image: code for code, image in enumerate(image_ids)}
    return np.array(sorted({position[i] for i in gt_image_ids if i in position}), dtype=np.int64)


def union_iou_nr(gt, pred, gt_image, pred_image, images, image_sizes=None):
    """Per-image IoU of the mask unions and complexity factor NR, for the image codes ``images``.

    ``image_sizes`` (``{image_id: (width, height)}`` px) clips the masks, as pycocotools does.

    Examples
    --------
    >>> from polytopo.evaluator.inputs.instances import Instance
    >>> square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
    >>> iou, nr = union_iou_nr([Instance(0, 0, square)], [Instance(0, 0, square + [2.0, 0.0])],
    ...                        np.array([0]), np.array([0]), np.array([0, 1]))
    >>> iou.round(6).tolist(), nr.round(6).tolist()
    ([0.333333, 1.0], [1.0, 1.0])
    """
    gt_masks, pred_masks = instance_masks(gt, image_sizes), instance_masks(pred, image_sizes)
    iou, nr = np.ones(len(images)), np.ones(len(images))
    for k, image in enumerate(images):
        g = [m for m, c in zip(gt_masks, gt_image) if c == image]
        p = [m for m, c in zip(pred_masks, pred_image) if c == image]
        g_union = np.unique(np.concatenate(g)) if g else np.zeros(0, dtype=np.int64)
        p_union = np.unique(np.concatenate(p)) if p else np.zeros(0, dtype=np.int64)
        inter = np.intersect1d(g_union, p_union, assume_unique=True).size
        union = g_union.size + p_union.size - inter
        iou[k] = inter / (union + 1e-9) if union else 1.0
        n_g = sum(len(i.exterior) for i, c in zip(gt, gt_image) if c == image)
        n_p = sum(len(i.exterior) for i, c in zip(pred, pred_image) if c == image)
        nr[k] = 1.0 - abs(n_p - n_g) / (n_p + n_g + 1e-9)
    return iou, nr


def _boxes(instances):
    """``(x, y, w, h)`` of each instance's exterior vertices."""
    boxes = np.zeros((len(instances), 4))
    for k, instance in enumerate(instances):
        low, high = instance.exterior.min(axis=0), instance.exterior.max(axis=0)
        boxes[k] = (low[0], low[1], high[0] - low[0], high[1] - low[1])
    return boxes


def box_iou(d, g):
    """Box IoU matrix ``(len(d), len(g))`` of ``(x, y, w, h)`` boxes, as pycocotools' ``bbIou``."""
    width = np.minimum(d[:, None, 0] + d[:, None, 2], g[None, :, 0] + g[None, :, 2]) - np.maximum(d[:, None, 0],
                                                                                                 g[None, :, 0])
    height = np.minimum(d[:, None, 1] + d[:, None, 3], g[None, :, 1] + g[None, :, 3]) - np.maximum(d[:, None, 1],
                                                                                                  g[None, :, 1])
    inter = np.where((width > 0) & (height > 0), width * height, 0.0)
    union = (d[:, None, 2] * d[:, None, 3]) + (g[None, :, 2] * g[None, :, 3]) - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=inter > 0)


def box_pairs(gt, pred, gt_image, pred_image, threshold=0.5):
    """Each ground truth with the prediction of highest box IoU in its image, when ``> threshold``.

    Returns
    -------
    gt_index, pred_index : numpy.ndarray
        The pairs (a prediction can appear several times), by ground-truth index.

    Examples
    --------
    >>> from polytopo.evaluator.inputs.instances import Instance
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> gt = [Instance(0, 0, square), Instance(0, 1, square + [1.0, 0.0])]
    >>> [a.tolist() for a in box_pairs(gt, [Instance(0, 0, square)], np.array([0, 0]), np.array([0]))]
    [[0, 1], [0, 0]]
    """
    gt_boxes, pred_boxes = _boxes(gt), _boxes(pred)
    pairs_gt, pairs_pred = [], []
    for image in np.unique(gt_image):
        g, p = np.flatnonzero(gt_image == image), np.flatnonzero(pred_image == image)
        if not len(p):
            continue
        ious = box_iou(pred_boxes[p], gt_boxes[g])
        best = np.argmax(ious, axis=0)
        keep = ious[best, np.arange(len(g))] > threshold
        pairs_gt.append(g[keep])
        pairs_pred.append(p[best[keep]])
    if not pairs_gt:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(pairs_gt), np.concatenate(pairs_pred)


def polis_p3_code(ring_a, ring_b):
    """POLIS of two exteriors with the P3 code's normalisation ``2(n + 1)`` per direction (pixels).

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> round(polis_p3_code(square, square + [1.0, 0.0]), 6)  # 2 * (0 + 1 + 1 + 0) / (2 * 5)
    0.4
    """
    line_a, line_b = shapely.linearrings(ring_a), shapely.linearrings(ring_b)
    a_to_b = shapely.distance(shapely.points(ring_a), line_b).sum() / (2.0 * (len(ring_a) + 1))
    b_to_a = shapely.distance(shapely.points(ring_b), line_a).sum() / (2.0 * (len(ring_b) + 1))
    return float(a_to_b + b_to_a)


def hausdorff_chamfer_points(ring_a, ring_b, max_segment_px=_DENSIFY_PX):
    """``(HD, CD)`` of two exteriors densified to segments of at most ``max_segment_px`` (pixels).

    Examples
    --------
    >>> square = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    >>> [round(v, 6) for v in hausdorff_chamfer_points(square, square + [1.0, 0.0])]
    [1.0, 0.5]
    """
    a, b = _densified(ring_a, max_segment_px), _densified(ring_b, max_segment_px)
    tree = kd_tree()
    a_to_b, _ = tree(b).query(a)
    b_to_a, _ = tree(a).query(b)
    return float(max(a_to_b.max(), b_to_a.max())), float((a_to_b.mean() + b_to_a.mean()) / 2.0)


def _densified(ring, max_segment_px):
    """Exterior coordinates of the ring's polygon after ``shapely.segmentize`` (closing vertex included).

    Densifying a polygon (not its ring) is what the P3 code does; GEOS repairs a densified
    polygon that became invalid, and a repair into several parts lists every part's exterior.
    """
    dense = shapely.segmentize(shapely.Polygon(ring), max_segment_px)
    return np.concatenate([shapely.get_coordinates(part.exterior) for part in shapely.get_parts(dense)])


def _merged_predictions(rings):
    """The P3 code's prediction polygons of one image: ring polygons, repaired, merged."""
    polygons = []
    for ring in rings:
        polygon = shapely.Polygon(ring)
        if polygon.area == 0.0:
            continue
        polygons.append(polygon if polygon.is_valid else polygon.buffer(0))
    if not polygons:
        return []
    merged = shapely.union_all(polygons).buffer(0)
    return [part for part in shapely.get_parts(merged) if part.area > 0]


def _sampled(ring_coords, spacing):
    """Closed coordinates sampled per edge with ``max(1, round(length / spacing)) + 1`` points."""
    pieces = []
    lengths = np.linalg.norm(ring_coords[:-1] - ring_coords[1:], axis=1)
    for k, length in enumerate(lengths):
        num = max(1, int(round(length / spacing))) + 1
        piece = np.column_stack([np.linspace(ring_coords[k, 0], ring_coords[k + 1, 0], num),
                                 np.linspace(ring_coords[k, 1], ring_coords[k + 1, 1], num)])
        pieces.append(piece if k == 0 else piece[1:])
    return np.concatenate(pieces)


def _polygon_mta(polygon, a, b):
    """Largest tangent angle (degrees) of one merged prediction against segments ``a→b``; None if none."""
    smallest = []
    for ring in (polygon.exterior, *polygon.interiors):
        points = _sampled(shapely.get_coordinates(ring), _MTA_SPACING_PX)
        _, projected = nearest_segments(points, np.zeros(len(points), dtype=np.int64), a, b,
                                        np.zeros(len(a), dtype=np.int64), 1, closest=True)
        edge, proj_edge = np.diff(points, axis=0), np.diff(projected, axis=0)
        norm, proj_norm = np.linalg.norm(edge, axis=1), np.linalg.norm(proj_edge, axis=1)
        keep = norm * proj_norm > 0
        stretch = norm[keep] / proj_norm[keep]
        valid = (1.0 / _MTA_MAX_STRETCH < stretch) & (stretch < _MTA_MAX_STRETCH)
        if not valid.any():
            continue
        dot = np.abs(np.sum(edge[keep][valid] * proj_edge[keep][valid], axis=1))
        smallest.append(float((dot / (norm[keep][valid] * proj_norm[keep][valid])).min()))
    return float(np.degrees(np.arccos(min(min(smallest), 1.0)))) if smallest else None


def merged_prediction_mta(gt, pred, gt_image, pred_image, n_images):
    """MTA (degrees) of every merged prediction polygon that passes the precision filter.

    Returns
    -------
    image, mta : numpy.ndarray
        Image code and MTA of each such polygon, by image code.
    """
    images, values = [], []
    for image in range(n_images):
        gt_rings = [ring for i, c in zip(gt, gt_image) if c == image for ring in i.rings]
        pred_rings = [ring for i, c in zip(pred, pred_image) if c == image for ring in i.rings]
        if not gt_rings or not pred_rings:
            continue
        gt_region = shapely.union_all([shapely.make_valid(shapely.Polygon(r)) for r in gt_rings])
        closed = [np.vstack([r, r[:1]]) for r in gt_rings]
        a = np.concatenate([c[:-1] for c in closed])
        b = np.concatenate([c[1:] for c in closed])
        for polygon in _merged_predictions(pred_rings):
            if not _MTA_MIN_PRECISION < polygon.intersection(gt_region).area / polygon.area:
                continue
            value = _polygon_mta(polygon, a, b)
            if value is not None:
                images.append(image)
                values.append(value)
    return np.array(images, dtype=np.int64), np.array(values, dtype=float)


def merge_p3_code_parts(parts, image_ids):
    """One :class:`.p3_code.P3CodeParts` of the whole set from those of its partitions.

    Parameters
    ----------
    parts : list of P3CodeParts
        Of disjoint groups of images, each with its own image codes.
    image_ids : list
        Image id of each code of the whole set; every one is in some part.

    Returns
    -------
    P3CodeParts
        Per-image arrays indexed by the whole set's codes; per-pair and per-polygon
        arrays ordered by image code, each image's values in their order in its part.
    """
    code_of = {image: code for code, image in enumerate(image_ids)}
    codes = [np.array([code_of.get(image, -1) for image in part.image_ids], dtype=np.int64) for part in parts]
    per_image = {}
    for name in ("iou", "nr"):
        values = np.full(len(image_ids), np.nan)
        for part, code in zip(parts, codes):
            known = code >= 0
            values[code[known]] = getattr(part, name)[known]
        per_image[name] = values

    def by_image(image_field, names):
        image = np.concatenate([code[getattr(part, image_field)] for part, code in zip(parts, codes)])
        order = np.argsort(image, kind="stable")
        return [image[order]] + [np.concatenate([getattr(part, n) for part in parts])[order] for n in names]

    return P3CodeParts(list(image_ids), per_image["iou"], per_image["nr"],
                       *by_image("pair_image", ("polis", "hd", "cd")), *by_image("mta_image", ("mta",)))
