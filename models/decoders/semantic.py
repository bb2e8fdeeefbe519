"""``semantic`` family: per-class probability maps → polygons with holes (U-Net + Poly.).

Follows the Deepness segmentation semantics so a Deepness model runs
unchanged: values below the threshold are zeroed, then a single-channel
output is a foreground mask and a multi-channel output is an argmax over
classes, class 0 being the background unless ``polytopo.background_class``
says otherwise (``-1``: no background). ``seg_small_segment`` applies the
same median filter Deepness applies to the class map. The blended class map
is then polygonized strip by strip (whole polygons across strips), simplified
with the card's tolerance (default 1 px, as in the paper's U-Net + Poly.) and
filtered by minimum area and minimum hole area. Without the median filter
the map can come in column blocks: polygons cut at a block seam are merged
whole before they are filtered and simplified. The same holds for the blocks
of a grid split in rows and columns, whose pieces are merged where the
blocks' results are collected.
"""

import numpy as np

from ..raster.column_blocks import SeamMerger
from ..polygons.cleanup import simplify_keep_valid
from ..polygons.row_filters import StreamingMedianFilter
from ..polygons.strip_polygonizer import NO_CLASS, StripPolygonizer
from .base import Decoder, PolygonRecord

__all__ = ["SemanticDecoder", "classify_probabilities"]


def classify_probabilities(probabilities, thresholds, background_class):
    """Class and score of every pixel of a (classes, rows, cols) probability map.

    Parameters
    ----------
    probabilities : numpy.ndarray, shape (classes, rows, cols)
    thresholds : numpy.ndarray, shape (classes,)
        A pixel can only take a class whose probability reaches its threshold.
    background_class : int or None
        Class that yields :data:`~polytopo.models.polygons.strip_polygonizer.NO_CLASS`.

    Returns
    -------
    classes : numpy.ndarray of int16
        Class of each pixel or ``NO_CLASS``.
    scores : numpy.ndarray of float32
        Probability of the chosen class (of the foreground for one channel).

    Examples
    --------
    >>> p = np.array([[[0.2, 0.7]], [[0.8, 0.3]]], np.float32)
    >>> classify_probabilities(p, np.array([0.5, 0.5]), 0)[0].tolist()
    [[1, -1]]
    """
    if probabilities.shape[0] == 1:
        classes = np.full(probabilities.shape[1:], NO_CLASS, np.int16)
        classes[probabilities[0] >= thresholds[0]] = 0
        return classes, probabilities[0].astype(np.float32, copy=False)
    kept = np.where(probabilities >= thresholds[:, None, None], probabilities, 0.0)
    classes = np.argmax(kept, axis=0).astype(np.int16)
    scores = np.take_along_axis(probabilities, classes[None].astype(np.intp), axis=0)[0].astype(np.float32)
    classes[kept.max(axis=0) <= 0] = NO_CLASS
    if background_class is not None:
        classes[classes == background_class] = NO_CLASS
    return classes, scores


class SemanticDecoder(Decoder):
    """Blended class probabilities → one polygon per connected region of each class."""

    dense_roles = ("probabilities",)

    def __init__(self, context):
        super().__init__(context)
        self._strips = None
        self._median = StreamingMedianFilter(self.card.seg_small_segment_px // 2 * 2 + 1) if self.card.seg_small_segment_px > 1 else None
        self._channels = None
        self._block = (0, context.grid.width_px, False, False)
        self._rows = (0, False, False)
        self._pieces_out = False
        self._merger = SeamMerger(self.card.min_area_px2, self.card.min_hole_area_px2)

    @property
    def supports_column_blocks(self):
        """Column blocks need no neighbouring columns, which the median filter would."""
        return self._median is None

    @property
    def supports_grid_blocks(self):
        """Grid blocks need no neighbouring rows or columns, which the median filter would."""
        return self._median is None

    def begin_grid_block(self, row0_px, seam_top, seam_bottom):
        self._rows = (int(row0_px), bool(seam_top), bool(seam_bottom))
        self._pieces_out = True

    def merge_seam_pieces(self, pieces):
        merger = SeamMerger(self.card.min_area_px2, self.card.min_hole_area_px2)
        for class_id in sorted({p.class_id for p in pieces}):
            mine = [p for p in pieces if p.class_id == class_id]
            merger.add(class_id, [p.geometry for p in mine], [p.score for p in mine])
        return self._finished(merger.end_block(None))

    def begin_column_block(self, col0_px, col1_px, seam_left, seam_right):
        self._block = (int(col0_px), int(col1_px), bool(seam_left), bool(seam_right))
        self._strips = None

    def end_column_block(self):
        col0, col1, _left, right = self._block
        return self._finished(self._merger.end_block(col1 if right else None))

    def _finished(self, merged):
        """Simplified records of the merged polygons (class_id, geometries, scores) of a :class:`SeamMerger`."""
        records = []
        for class_id, geometries, scores in merged:
            geometries = simplify_keep_valid(geometries, self.card.simplify_tolerance_px)
            records.extend(PolygonRecord(g, class_id, float(s)) for g, s in zip(geometries, scores))
        return records

    def _setup(self, channels):
        card = self.card
        self._channels = channels
        if card.class_thresholds is not None:
            self._thresholds = np.broadcast_to(np.asarray(card.class_thresholds, np.float32), (channels,))
        else:
            self._thresholds = np.full(channels, card.seg_threshold, np.float32)
        background = card.background_class
        if background is None and channels > 1:
            background = 0
        self._background = None if background is None or background < 0 else background
        self._class_ids = [c for c in range(channels) if c != self._background]

    def _block_polygonizer(self):
        col0, col1, left, right = self._block
        row0, top, bottom = self._rows
        return StripPolygonizer(
            col1 - col0, self._class_ids, self.card.min_area_px2, self.card.min_hole_area_px2,
            column_offset_px=col0, seam_left=left, seam_right=right, row_offset_px=row0, seam_top=top, seam_bottom=bottom,
        )

    def class_label(self, class_id):
        names = self.card.class_names
        if self._channels == 1 and len(names) == 2:
            return names[1]
        return self.card.class_name(class_id)

    def decode_rows(self, row0, maps, valid, final):
        probabilities = maps["probabilities"]
        if self._channels is None:
            self._setup(probabilities.shape[0])
        if self._strips is None:
            self._strips = self._block_polygonizer()
        classes, scores = classify_probabilities(probabilities, self._thresholds, self._background)
        classes[~valid] = NO_CLASS
        if self._median is not None:
            classes, scores, valid = self._median.push(classes, scores, valid, final=final)
            classes[~valid] = NO_CLASS
        return self._records(self._strips.push(classes, scores, final=final))

    def _records(self, closed):
        records = []
        for batch in closed:
            if batch.on_seam and self._pieces_out:
                records.extend(PolygonRecord(g, batch.class_id, float(s), on_seam=True) for g, s in zip(batch.geometries, batch.scores))
                continue
            if batch.on_seam:
                self._merger.add(batch.class_id, batch.geometries, batch.scores)
                continue
            geometries = simplify_keep_valid(batch.geometries, self.card.simplify_tolerance_px)
            records.extend(PolygonRecord(g, batch.class_id, float(s)) for g, s in zip(geometries, batch.scores))
        return records
