"""``instance`` family: boxes, scores and per-instance masks → one polygon per instance (Mask R-CNN + Poly.).

Outputs (roles of ``polytopo.outputs``): ``boxes`` (batch, n, 4) as
(x1, y1, x2, y2) in tile pixels, ``scores`` (batch, n), ``masks``
(batch, n, tile, tile) or (batch, n, 1, tile, tile) at the tile's
resolution (torchvision pastes them so) or (batch, n, [1,] m, m) relative to
each box (Mask R-CNN's raw 28 x 28 heads: detectron2, mmdetection without
pasting), optional ``labels`` (batch, n). A box-relative mask is pasted into
its box with bilinear interpolation (the mask's m x m cells cover the box)
before the threshold. A graph with a fixed batch of 1
may omit the batch axis. Instances scoring below ``det_conf`` are dropped;
each mask is thresholded at ``polytopo.mask_threshold`` (nodata pixels
removed) and its largest 4-connected component becomes the polygon, holes
included. Duplicates across tile overlaps are removed by core ownership and
polygon NMS at ``det_iou_thresh`` (see :mod:`.object_stitching`).
"""

import numpy as np
import shapely
from scipy import ndimage

from ..errors import InferenceError
from ..polygons.cleanup import simplify_keep_valid
from ..polygons.polygonize import polygonize_mask
from .base import Decoder, PolygonRecord
from .object_stitching import ObjectStitcher, core_owner, with_batch_axis

__all__ = ["InstanceDecoder", "mask_to_polygon", "paste_box_mask"]


def mask_to_polygon(mask, min_area_px2=0.0, min_hole_area_px2=0.0):
    """Largest 4-connected component of a mask as a pixel-edge polygon with holes (None when empty).

    Examples
    --------
    >>> m = np.zeros((5, 5), bool); m[1:4, 1:4] = True; m[2, 2] = False; m[0, 4] = True
    >>> p = mask_to_polygon(m); p.area, len(p.interiors)
    (8.0, 1)
    """
    polygons = polygonize_mask(mask, min_area_px2=min_area_px2, min_hole_area_px2=min_hole_area_px2)
    if not len(polygons):
        return None
    return polygons.geometries[int(np.argmax(polygons.areas_px2))]


def paste_box_mask(mask, box, tile_px):
    """A box-relative mask (m_rows, m_cols) sampled at the pixel centres of a tile, bilinearly; 0 outside the box.

    Parameters
    ----------
    mask : numpy.ndarray, shape (m_rows, m_cols)
        Mask values whose cells cover the box evenly (Mask R-CNN's 28 x 28).
    box : sequence of float
        (x1, y1, x2, y2) in tile pixels.
    tile_px : int

    Returns
    -------
    numpy.ndarray of float32, shape (tile_px, tile_px)

    Examples
    --------
    >>> pasted = paste_box_mask(np.ones((28, 28)), (2.0, 1.0, 6.0, 3.0), 8)
    >>> int(pasted.sum()), pasted[1:3, 2:6].min()
    (8, 1.0)
    """
    mask = np.asarray(mask, np.float32)
    x1, y1, x2, y2 = (float(v) for v in box)
    out = np.zeros((tile_px, tile_px), np.float32)
    c0, c1 = max(int(np.floor(x1)), 0), min(int(np.ceil(x2)), tile_px)
    r0, r1 = max(int(np.floor(y1)), 0), min(int(np.ceil(y2)), tile_px)
    if c1 <= c0 or r1 <= r0 or x2 <= x1 or y2 <= y1:
        return out
    cols = (np.arange(c0, c1) + 0.5 - x1) / (x2 - x1) * mask.shape[1] - 0.5
    rows = (np.arange(r0, r1) + 0.5 - y1) / (y2 - y1) * mask.shape[0] - 0.5
    grid_rows, grid_cols = np.meshgrid(rows, cols, indexing="ij")
    inside = (grid_cols > -0.5) & (grid_cols < mask.shape[1] - 0.5) & (grid_rows > -0.5) & (grid_rows < mask.shape[0] - 0.5)
    values = ndimage.map_coordinates(mask, [grid_rows, grid_cols], order=1, mode="nearest")
    out[r0:r1, c0:c1] = np.where(inside, values, 0.0)
    return out


class InstanceDecoder(Decoder):
    """Per-tile instance masks → polygons, deduplicated across tiles."""

    def __init__(self, context):
        super().__init__(context)
        self._stitch = ObjectStitcher(self.card.det_iou_threshold)

    def _arrays(self, outputs, batch, tile_px):
        boxes = with_batch_axis(outputs["boxes"], batch, 3)
        scores = with_batch_axis(outputs["scores"], batch, 2)
        masks = np.asarray(outputs["masks"])
        if masks.ndim == 4 and batch == 1 and masks.shape[1] == 1 and masks.shape[0] != 1:
            masks = masks[None, :, 0]
        masks = with_batch_axis(masks, batch, 4)
        if masks.ndim == 5 and masks.shape[2] == 1:
            masks = masks[:, :, 0]
        labels = outputs.get("labels")
        labels = np.zeros(scores.shape, np.int64) if labels is None else with_batch_axis(labels, batch, 2)
        if boxes.shape[:2] != scores.shape or masks.ndim != 4 or masks.shape[:2] != scores.shape:
            raise InferenceError(
                f"Expected boxes (batch, n, 4), scores (batch, n) and masks (batch, n, {tile_px}, {tile_px}) or "
                f"(batch, n, m, m) relative to the boxes but got {boxes.shape}, {scores.shape} and {masks.shape}."
            )
        return boxes, scores, masks, labels

    def decode_batch(self, tiles, outputs, valid):
        tile_px = tiles[0].size_px
        boxes, scores, masks, labels = self._arrays(outputs, len(tiles), tile_px)
        card, context = self.card, self.context
        released = self._stitch.release_before(tiles[0])
        candidates = []
        for b, tile in enumerate(tiles):
            for k in np.flatnonzero(scores[b] >= card.det_confidence):
                x1, y1, x2, y2 = boxes[b, k]
                owner_col = core_owner(np.array([tile.col0 + (x1 + x2) / 2.0]), context.tile_cols, tile_px)[0]
                owner_row = core_owner(np.array([tile.row0 + (y1 + y2) / 2.0]), context.tile_rows, tile_px)[0]
                if (owner_row, owner_col) != (tile.tile_row, tile.tile_col):
                    continue
                values = masks[b, k] if masks.shape[2:] == (tile_px, tile_px) else paste_box_mask(masks[b, k], boxes[b, k], tile_px)
                mask = (values >= card.mask_threshold) & valid[b]
                polygon = mask_to_polygon(mask, card.min_area_px2, card.min_hole_area_px2)
                if polygon is None:
                    continue
                polygon = shapely.transform(polygon, lambda xy, t=tile: xy + (float(t.col0), float(t.row0)))
                polygon = simplify_keep_valid(np.array([polygon], object), card.simplify_tolerance_px)[0]
                candidates.append(PolygonRecord(polygon, int(labels[b, k]), float(scores[b, k])))
        self._stitch.add(candidates)
        return released

    def finish(self):
        return self._stitch.release(np.inf)
