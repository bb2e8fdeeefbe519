"""Instance IoU on 1-px masks rasterized the way pycocotools rasterizes polygons.

pycocotools turns each polygon ring into a run-length mask (``frPyObjects``): the ring is
upsampled by 5, traced as integer points, and each pixel column is toggled where the
traced boundary crosses the column's centre line. This module reproduces that rule for
every ring (exterior and holes) with numpy and builds each instance's mask as *exterior
filled, holes cleared*: the exterior's pixels minus the union of its holes' pixels. Areas
are pixel counts and IoU is ``|A ∩ B| / |A ∪ B|`` in pixels, as ``maskUtils.iou``.

A mask is a sorted array of pixel codes ``x * PIXEL_COLUMN + y`` (column ``x``, row ``y``;
pixel ``(x, y)`` covers ``[x, x + 1] x [y, y + 1]``). The canvas is unbounded to the right
and bottom unless the image's width and height are known (COCO ``images[]``): then
columns from the width on are dropped and the fill stops at the height, as pycocotools
clips; without them masks agree with pycocotools' exactly when every polygon lies inside
its image. Pixels left of column 0 or above row 0 are always dropped, as pycocotools does.
"""

import numpy as np
import shapely

from ..metrics.matching import Candidates, same_image_pairs

__all__ = ["PIXEL_COLUMN", "ring_toggles", "ring_mask", "instance_masks", "raster_candidates"]

PIXEL_COLUMN = 1 << 32
_SCALE = 5.0


def ring_toggles(ring, size=None):
    """Pixel codes where pycocotools' rasterization of one ring toggles the fill.

    Parameters
    ----------
    ring : numpy.ndarray
        ``(n, 2)`` ring in pixels, first vertex not repeated.
    size : tuple of (int, int), optional
        ``(width, height)`` of the image in pixels: crossings right of column
        ``width - 1`` are dropped and rows clamped to ``height``, as pycocotools' ``frPyObjects``
        does with the image size. None: unbounded on the right and bottom.

    Returns
    -------
    numpy.ndarray
        int64 codes (unsorted, possibly repeated); a pixel is filled when an odd number of
        toggles lie at or before it in its column.
    """
    # Vertices on the 1/5 px grid, rounded as C's (int)(5 * v + 0.5) does (toward zero).
    grid = (_SCALE * np.asarray(ring, dtype=np.float64) + 0.5).astype(np.int64)
    xs, ys = grid[:, 0], grid[:, 1]
    xe, ye = np.roll(xs, -1), np.roll(ys, -1)
    dx, dy = np.abs(xe - xs), np.abs(ye - ys)
    along_x = dx >= dy
    flip = (along_x & (xs > xe)) | (~along_x & (ys > ye))
    x0, y0 = np.where(flip, xe, xs), np.where(flip, ye, ys)
    x1, y1 = np.where(flip, xs, xe), np.where(flip, ys, ye)
    steps = np.maximum(dx, dy)
    slope = np.divide(np.where(along_x, y1 - y0, x1 - x0), steps, out=np.zeros(len(steps)), where=steps > 0)
    # Every edge traced from its first to its last grid point, endpoints included.
    edge = np.repeat(np.arange(len(steps)), steps + 1)
    d = np.arange(len(edge)) - np.repeat(np.cumsum(steps + 1) - (steps + 1), steps + 1)
    t = np.where(flip[edge], steps[edge] - d, d)
    along = along_x[edge]
    fractional = (np.where(along, y0[edge], x0[edge]) + slope[edge] * t + 0.5).astype(np.int64)
    u = np.where(along, t + x0[edge], fractional)
    v = np.where(along, fractional, t + y0[edge])
    # Crossings of the column centre lines, back on the 1 px grid.
    moved = np.flatnonzero(u[1:] != u[:-1]) + 1
    xd = (np.minimum(u[moved], u[moved - 1]) + 0.5) / _SCALE - 0.5
    keep = (np.floor(xd) == xd) & (xd >= 0)
    if size is not None:
        keep &= xd <= size[0] - 1
    yd = (np.minimum(v[moved], v[moved - 1])[keep] + 0.5) / _SCALE - 0.5
    yd = np.maximum(yd, 0.0) if size is None else np.clip(yd, 0.0, size[1])
    yd = np.ceil(yd)
    return xd[keep].astype(np.int64) * PIXEL_COLUMN + yd.astype(np.int64)


def _filled(toggles):
    """Sorted pixel codes between pairs of toggles (toggles at one code cancel in pairs)."""
    codes, counts = np.unique(toggles, return_counts=True)
    edges = codes[counts % 2 == 1]
    starts, stops = edges[0::2], edges[1::2]
    if len(starts) != len(stops):
        raise ValueError(f"Expected an even number of column crossings but got {len(edges)}")
    lengths = stops - starts
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets


def ring_mask(ring, size=None):
    """Sorted pixel codes of the mask pycocotools draws for one ring (``size``: see :func:`ring_toggles`).

    Examples
    --------
    >>> ring_mask(np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]])).tolist() == [0, PIXEL_COLUMN]
    True
    """
    return _filled(ring_toggles(ring, size))


def instance_masks(instances, image_sizes=None):
    """Mask of each instance: its exterior's pixels minus its holes' pixels (sorted codes).

    ``image_sizes`` maps an image id to its ``(width, height)`` in pixels; the masks of
    its instances are clipped to it (:func:`ring_toggles`).
    """
    sizes = image_sizes or {}
    masks = []
    for instance in instances:
        size = sizes.get(instance.image_id)
        mask = ring_mask(instance.exterior, size)
        if instance.holes:
            mask = np.setdiff1d(mask, np.concatenate([ring_mask(h, size) for h in instance.holes]),
                                assume_unique=False)
        masks.append(mask)
    return masks


def _boxes(masks):
    """Pixel-cell bounding box of each mask as a shapely box (empty masks: an empty polygon)."""
    boxes = np.full(len(masks), None, dtype=object)
    for k, mask in enumerate(masks):
        if mask.size:
            x, y = mask // PIXEL_COLUMN, mask % PIXEL_COLUMN
            boxes[k] = shapely.box(x.min(), y.min(), x.max() + 1, y.max() + 1)
        else:
            boxes[k] = shapely.Polygon()
    return boxes


def raster_candidates(gt_masks, pred_masks, gt_image, pred_image):
    """Mask IoU of every same-image pair whose masks share a pixel.

    Parameters
    ----------
    gt_masks, pred_masks : list of numpy.ndarray
        Sorted pixel codes (:func:`instance_masks`).
    gt_image, pred_image : numpy.ndarray
        Image code of each mask.

    Returns
    -------
    Candidates
        As :func:`.matching.iou_candidates`, with IoU and intersection in pixels.
    """
    empty = np.zeros(0, dtype=np.int64)
    if not gt_masks or not pred_masks:
        return Candidates(empty, empty, np.zeros(0), np.zeros(0), len(gt_masks))
    g, p = same_image_pairs(_boxes(gt_masks), gt_image, _boxes(pred_masks), pred_image, predicate="intersects")
    inter = np.array([np.intersect1d(gt_masks[i], pred_masks[j], assume_unique=True).size for i, j in zip(g, p)],
                     dtype=np.float64)
    union = np.array([gt_masks[i].size + pred_masks[j].size for i, j in zip(g, p)], dtype=np.float64) - inter
    keep = inter > 0
    iou = inter[keep] / union[keep]
    order = np.lexsort((g[keep], p[keep]))
    return Candidates(g[keep][order], p[keep][order], iou[order], inter[keep][order], len(gt_masks))
