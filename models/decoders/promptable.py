"""``promptable`` family: image encoder + prompt decoder driven by boxes or points (SAM2 + Poly.).

The card's model is the image encoder (output role ``embedding``); its
``polytopo.prompt_decoder`` is a second ONNX file taking the embedding, the
prompt points (1, n, 2) in tile pixels and their labels (1, n) — 2 and 3 for
a box's top-left and bottom-right corners, 1 for a point, as SAM expects — and
returning masks (1, m, tile, tile) and their predicted quality (1, m). SAM
exports' extra inputs get neutral values (no mask input, the tile as the
original image size), in the dtype the decoder declares (SAM 2 exports take
int32 labels and sizes). SAM 2's high-resolution encoder features (output
roles ``high_res_0``, ``high_res_1``) are passed to the decoder inputs that
``polytopo.prompt_inputs`` names for the same roles.

Only tiles that hold a prompt are encoded. A prompt goes to the tile that
contains its box entirely, nearest centre first, or else to the tile whose
core holds its centre (its mask is then cut at the tile edge). Each prompt
yields at most one polygon: the largest component of its best mask above
``polytopo.mask_threshold``, holes included, scored by the predicted quality.
"""

import numpy as np
import shapely

from ..errors import InferenceError
from ..polygons.cleanup import simplify_keep_valid
from .base import Decoder, PolygonRecord
from .instance import mask_to_polygon
from .object_stitching import core_owner

__all__ = ["PromptableDecoder"]

_BOX_LABELS = (2.0, 3.0)
_POINT_LABELS = (1.0, -1.0)


class PromptableDecoder(Decoder):
    """Encoder outputs of prompted tiles → one polygon per prompt.

    Parameters
    ----------
    context : DecodeContext
    model : LoadedModel
        Holds the prompt decoder session and its tensor names.
    prompts : sequence of Prompt
        In the raster's CRS.
    """

    def __init__(self, context, model, prompts):
        super().__init__(context)
        if not prompts:
            raise InferenceError(
                "Expected prompts for the promptable model but got none; pass --prompts FILE (boxes or points) "
                "or prompts from another model's output (polytopo.models.prompts_from_geometries)."
            )
        self._session = model.prompt_session
        self._io = model.prompt_io
        self.prompt_seconds = 0.0
        self.dropped_prompts = 0
        self._by_tile = {}
        for prompt in prompts:
            box = self._grid_box(prompt)
            tile = self._tile_for(box)
            if tile is None:
                self.dropped_prompts += 1
            else:
                self._by_tile.setdefault(tile, []).append((prompt, box))

    @classmethod
    def for_model(cls, context, model, prompts=None):
        """Create the decoder with ``model``'s prompt session and the run's ``prompts``."""
        return cls(context, model, prompts)

    def _grid_box(self, prompt):
        gt = self.context.grid.geotransform
        if prompt.kind == "box":
            xs = ((prompt.coords[0] - gt[0]) / gt[1], (prompt.coords[2] - gt[0]) / gt[1])
            ys = ((prompt.coords[1] - gt[3]) / gt[5], (prompt.coords[3] - gt[3]) / gt[5])
        else:
            xs = ((prompt.coords[0] - gt[0]) / gt[1],) * 2
            ys = ((prompt.coords[1] - gt[3]) / gt[5],) * 2
        return (min(xs), min(ys), max(xs), max(ys))

    def _tile_for(self, box):
        grid, tile_px = self.context.grid, self.context.tiling.tile_size_px
        x0, y0, x1, y1 = box
        if x1 < 0 or y1 < 0 or x0 > grid.width_px or y0 > grid.height_px:
            return None
        rows, cols = self.context.tile_rows, self.context.tile_cols
        inside_rows = np.flatnonzero((rows <= y0) & (rows + tile_px >= y1))
        inside_cols = np.flatnonzero((cols <= x0) & (cols + tile_px >= x1))
        cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
        if len(inside_rows) and len(inside_cols):
            row = inside_rows[np.argmin(np.abs(rows[inside_rows] + tile_px / 2.0 - cy))]
            col = inside_cols[np.argmin(np.abs(cols[inside_cols] + tile_px / 2.0 - cx))]
            return int(row), int(col)
        return int(core_owner(np.array([cy]), rows, tile_px)[0]), int(core_owner(np.array([cx]), cols, tile_px)[0])

    def wants_tile(self, tile):
        return (tile.tile_row, tile.tile_col) in self._by_tile

    def _feeds(self, encoded, box, kind, tile):
        x0, y0, x1, y1 = box[0] - tile.col0, box[1] - tile.row0, box[2] - tile.col0, box[3] - tile.row0
        if kind == "box":
            coords, labels = [[x0, y0], [x1, y1]], _BOX_LABELS
        else:
            coords, labels = [[x0, y0], [0.0, 0.0]], _POINT_LABELS
        io, signature = self._io, self._session.signature
        feeds = {
            io.embedding: encoded["embedding"],
            io.point_coords: np.asarray([coords], np.float32),
            io.point_labels: np.asarray([labels], signature.input(io.point_labels).dtype),
        }
        for role, name in io.features:
            feeds[name] = encoded[role]
        for name in io.extra_inputs:
            spec = signature.input(name)
            if name in ("orig_im_size", "original_image_size"):
                feeds[name] = np.asarray([tile.size_px, tile.size_px], spec.dtype)
            elif name in ("has_mask_input", "has_input_masks"):
                feeds[name] = np.zeros([d or 1 for d in spec.shape], spec.dtype)
            else:  # a mask input (prompts, 1, 256, 256): one prompt, SAM's mask size where the export leaves it open
                feeds[name] = np.zeros([d or (1 if axis == 0 else 256) for axis, d in enumerate(spec.shape)], spec.dtype)
        return feeds

    def decode_batch(self, tiles, outputs, valid):
        records = []
        card = self.card
        for b, tile in enumerate(tiles):
            encoded = {role: np.ascontiguousarray(outputs[role][b:b + 1]) for role in ("embedding", *dict(self._io.features))}
            for prompt, box in self._by_tile.get((tile.tile_row, tile.tile_col), []):
                masks, scores = self._session.run([self._io.masks, self._io.scores], self._feeds(encoded, box, prompt.kind, tile))
                masks, scores = np.asarray(masks), np.asarray(scores).reshape(-1)
                if masks.shape[-2:] != (tile.size_px, tile.size_px) or not np.isfinite(masks).all():
                    raise InferenceError(
                        f"Expected finite prompt-decoder masks of {tile.size_px}x{tile.size_px} px but got shape "
                        f"{masks.shape} (finite: {bool(np.isfinite(masks).all())}); check the decoder export."
                    )
                best = int(np.argmax(scores))
                mask = (masks.reshape(-1, tile.size_px, tile.size_px)[best] > card.mask_threshold) & valid[b]
                polygon = mask_to_polygon(mask, card.min_area_px2, card.min_hole_area_px2)
                if polygon is None:
                    continue
                polygon = shapely.transform(polygon, lambda xy, t=tile: xy + (float(t.col0), float(t.row0)))
                polygon = simplify_keep_valid(np.array([polygon], object), card.simplify_tolerance_px)[0]
                records.append(PolygonRecord(polygon, prompt.class_id, float(scores[best])))
        return records
