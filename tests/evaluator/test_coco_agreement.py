"""The ``coco`` profile agrees with pycocotools' COCOeval (iouType 'segm') to 1e-9.

Scenes are pixel-aligned rectilinear polygons with holes (integer vertices). Pixel
``(c, r)`` covers ``[c, c + 1] x [r, r + 1]``, so filling the polygon's pixel cells gives a
mask whose area equals the vector area and whose IoUs equal the vector IoUs exactly (both
IoU modes then agree with pycocotools); the masks are RLE-encoded for pycocotools.
Non-aligned polygons are in ``test_coco_raster.py``.
"""

import contextlib
import io
from dataclasses import dataclass

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from polytopo.evaluator.profiles.coco import coco_match, evaluate_coco
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.profiles.paper import prepare
from polytopo.evaluator.tables.params import params_for

CANVAS_PX = 256
STAT_KEYS = ("AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large", "AR@1", "AR@10", "AR@100",
             "AR_small", "AR_medium", "AR_large")


@dataclass(frozen=True)
class Shape:
    """A rectangle ``(x, y, w, h)`` px, an optional wing ``(w, h)`` on its right, rectangular holes."""

    x: int
    y: int
    w: int
    h: int
    wing: tuple = None
    holes: tuple = ()

    def moved(self, dx, dy):
        return Shape(self.x + dx, self.y + dy, self.w, self.h, self.wing,
                     tuple((hx + dx, hy + dy, hw, hh) for hx, hy, hw, hh in self.holes))

    def polygon(self):
        body = shapely.box(self.x, self.y, self.x + self.w, self.y + self.h)
        if self.wing:
            body = shapely.union(body, shapely.box(self.x + self.w, self.y, self.x + self.w + self.wing[0],
                                                   self.y + self.wing[1]))
        holes = [shapely.box(hx, hy, hx + hw, hy + hh).exterior.coords for hx, hy, hw, hh in self.holes]
        return shapely.Polygon(shapely.normalize(body).exterior.coords, holes)

    def mask(self):
        mask = np.zeros((CANVAS_PX, CANVAS_PX), dtype=np.uint8)
        mask[self.y:self.y + self.h, self.x:self.x + self.w] = 1
        if self.wing:
            mask[self.y:self.y + self.wing[1], self.x + self.w:self.x + self.w + self.wing[0]] = 1
        for hx, hy, hw, hh in self.holes:
            mask[hy:hy + hh, hx:hx + hw] = 0
        return mask


def _shape(x, y, w, h, wing=None, holes=()):
    return Shape(x, y, w, h, wing, tuple(holes))


def _coco_stats(images, gt, pred):
    """pycocotools' 12 summary numbers and per-threshold AP (NaN for -1).

    ``gt`` holds ``(image_id, category_id, Shape)``, ``pred`` ``(image_id, category_id, Shape,
    score)``; annotation ids start at 1 (pycocotools treats id 0 as "unmatched").
    """
    def rle(shape):
        return mask_utils.encode(np.asfortranarray(shape.mask()))

    categories = sorted({c for _, c, _ in gt} | {c for _, c, _, _ in pred} | {1})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = {
            "images": [{"id": i, "height": CANVAS_PX, "width": CANVAS_PX} for i in images],
            "annotations": [{"id": k + 1, "image_id": i, "category_id": c, "segmentation": rle(s),
                             "area": float(s.mask().sum()), "iscrowd": 0,
                             "bbox": list(mask_utils.toBbox(rle(s)))} for k, (i, c, s) in enumerate(gt)],
            "categories": [{"id": c, "name": str(c)} for c in categories],
        }
        coco_gt.createIndex()
        results = [{"image_id": i, "category_id": c, "segmentation": rle(s), "score": score}
                   for i, c, s, score in pred]
        coco_dt = coco_gt.loadRes(results) if results else COCO()
        evaluator = COCOeval(coco_gt, coco_dt, iouType="segm")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    stats = {key: (np.nan if value == -1 else float(value)) for key, value in zip(STAT_KEYS, evaluator.stats)}
    precision = evaluator.eval["precision"][:, :, :, 0, 2]
    for t, threshold in enumerate(evaluator.params.iouThrs):
        values = precision[t][precision[t] > -1]
        stats[f"AP@{threshold:.2f}"] = float(np.mean(values)) if values.size else np.nan
    return stats


def _sets(images, gt, pred):
    def instance(image, index, category, shape, score=1.0):
        polygon = shape.polygon()
        exterior = shapely.get_coordinates(polygon.exterior)[:-1]
        holes = tuple(shapely.get_coordinates(ring)[:-1] for ring in polygon.interiors)
        return Instance(image, index, exterior, holes, score, category)

    gt_set = InstanceSet(tuple(instance(i, k, c, s) for k, (i, c, s) in enumerate(gt)), tuple(images))
    pred_set = InstanceSet(tuple(instance(i, k, c, s, score) for k, (i, c, s, score) in enumerate(pred)),
                           tuple(images))
    return gt_set, pred_set


def _ours(images, gt, pred, iou_mode="raster"):
    params = params_for("coco", iou_mode=iou_mode)
    gt_set, pred_set = prepare(*_sets(images, gt, pred), params)[:2]
    return evaluate_coco(gt_set, pred_set, params).metrics


def _tie_broken(images, gt, pred):
    """The predictions in the canonical order the profile ranks equal scores in (pycocotools' sorts are stable)."""
    ordered = prepare(*_sets(images, gt, pred), params_for("coco"))[1].instances
    canonical = {i.source_id: k for k, i in enumerate(ordered)}
    return [pred[k] for k in sorted(range(len(pred)), key=lambda k: canonical[k])]


def _disagreement(images, gt, pred, iou_mode="raster"):
    """Largest absolute difference of every compared metric (NaN must match NaN)."""
    for _, _, shape, *_ in (*gt, *pred):
        assert shape.mask().sum() == shape.polygon().area, "the scene is not pixel-aligned"
    ours = _ours(images, gt, pred, iou_mode)
    reference = _coco_stats(images, gt, _tie_broken(images, gt, pred))
    worst = 0.0
    for key, expected in reference.items():
        if np.isnan(expected):
            assert np.isnan(ours[key]), (key, ours[key])
        else:
            worst = max(worst, abs(ours[key] - expected))
    return worst


# ----------------------------------------------------------------------------- scenes


@st.composite
def shapes(draw):
    """A rectangle (3..110 px sides, so every COCO area range occurs) with optional wing and holes."""
    x, y = draw(st.integers(0, 100)), draw(st.integers(0, 100))
    w, h = draw(st.integers(3, 110)), draw(st.integers(3, 110))
    wing = (draw(st.integers(1, 30)), draw(st.integers(1, h))) if draw(st.booleans()) else None
    holes = []
    if w >= 8 and h >= 5:
        half = w // 2
        for left in (x + 1, x + half + 1):
            if draw(st.booleans()):
                hw, hh = draw(st.integers(1, half - 2)), draw(st.integers(1, h - 2))
                holes.append((left + draw(st.integers(0, half - 2 - hw)), y + 1 + draw(st.integers(0, h - 2 - hh)),
                              hw, hh))
    return _shape(x, y, w, h, wing, holes)


def _fits(shape):
    """Holes strictly inside the rectangle (1 px margin) and the shape on the canvas."""
    inside = all(hx > shape.x and hy > shape.y and hx + hw < shape.x + shape.w and hy + hh < shape.y + shape.h
                 for hx, hy, hw, hh in shape.holes)
    right = shape.x + shape.w + (shape.wing[0] if shape.wing else 0)
    return inside and shape.x >= 0 and shape.y >= 0 and right <= CANVAS_PX and shape.y + shape.h <= CANVAS_PX


@st.composite
def predictions_of(draw, shape):
    """A jittered copy: shifted, resized, holes dropped; falls back to the exact copy if it breaks."""
    dx, dy = draw(st.integers(-4, 4)), draw(st.integers(-4, 4))
    moved = shape.moved(dx, dy)
    holes = tuple(hole for hole in moved.holes if draw(st.integers(0, 3)) > 0)
    grown = Shape(moved.x, moved.y, moved.w + draw(st.integers(-3, 3)), moved.h + draw(st.integers(-3, 3)),
                  moved.wing, holes)
    wing_ok = grown.wing is None or grown.wing[1] <= grown.h
    return grown if grown.w >= 3 and grown.h >= 3 and wing_ok and _fits(grown) else shape


@st.composite
def scenes(draw):
    """Images (ids shuffled, some empty), GT with holes, jittered/duplicate/false predictions, tied scores."""
    images = draw(st.lists(st.integers(1, 60), min_size=1, max_size=4, unique=True))
    two_classes = draw(st.booleans())
    score = st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]) if draw(st.booleans()) else st.floats(0.01, 1.0)
    gt, pred = [], []
    for image in images:
        for shape in draw(st.lists(shapes(), max_size=5)):
            category = draw(st.sampled_from([1, 2])) if two_classes else 1
            gt.append((image, category, shape))
            for _ in range(draw(st.integers(0, 2))):
                same = draw(st.integers(0, 4)) > 0
                pred.append((image, category if same or not two_classes else 3 - category,
                             draw(predictions_of(shape)), draw(score)))
        for shape in draw(st.lists(shapes(), max_size=2)):
            pred.append((image, draw(st.sampled_from([1, 2])) if two_classes else 1, shape, draw(score)))
    if two_classes and {c for _, c, _ in gt} != {1, 2}:
        # Both categories present in GT, so that pycocotools and the profile average the same classes.
        if len(gt) < 2:
            return images, [(i, 1, s) for i, _, s in gt], [(i, 1, s, v) for i, _, s, v in pred]
        gt[0], gt[1] = (gt[0][0], 1, gt[0][2]), (gt[1][0], 2, gt[1][2])
    order = draw(st.permutations(range(len(pred))))
    return images, gt, [pred[k] for k in order]


# ----------------------------------------------------------------------------- tests


@given(scenes())
def test_random_scenes_agree_with_pycocotools(scene):
    """AP, AP50, AP75, AP@t, AP/AR by area and AR@1/10/100 equal pycocotools' on random scenes."""
    assert _disagreement(*scene) <= 1e-9


@pytest.mark.parametrize("iou_mode", ["raster", "vector"])
def test_holes_duplicates_and_false_positives(iou_mode):
    """A building with two courtyards: exact, hole-less, duplicate and false predictions."""
    building = _shape(10, 10, 60, 40, None, [(15, 15, 10, 10), (45, 20, 12, 20)])
    small = _shape(120, 20, 20, 20, (6, 8), [(125, 25, 5, 5)])
    gt = [(7, 1, building), (7, 1, small), (3, 1, _shape(30, 30, 100, 100, None, [(60, 60, 40, 40)]))]
    pred = [(7, 1, building, 0.9),
            (7, 1, _shape(10, 10, 60, 40), 0.95),                          # courtyards filled in
            (7, 1, building.moved(1, 0), 0.6),                             # duplicate
            (7, 1, small.moved(0, 2), 0.6),
            (3, 1, _shape(32, 31, 100, 100, None, [(62, 61, 40, 40)]), 0.8),
            (3, 1, _shape(150, 150, 30, 30), 0.99)]                        # false positive
    assert _disagreement([7, 3, 5], gt, pred, iou_mode) <= 1e-9


def test_equal_iou_goes_to_the_later_ground_truth():
    """A prediction with IoU 0.5 to two GTs takes the later one (pycocotools), freeing the first.

    The prediction covers both 10 x 10 squares (IoU 100/200 with each). With the later
    square taken, the exact copy of the first square is a TP too, so AP50 is 1.
    """
    left, right = _shape(0, 0, 10, 10), _shape(10, 0, 10, 10)
    gt = [(1, 1, left), (1, 1, right)]
    pred = [(1, 1, _shape(0, 0, 20, 10), 0.9), (1, 1, left, 0.8)]
    assert _ours([1], gt, pred)["AP50"] == pytest.approx(1.0)
    assert _disagreement([1], gt, pred) <= 1e-9


def test_area_range_boundaries_are_inclusive():
    """A 32 x 32 (1024 px²) GT is both small and medium, as in pycocotools."""
    gt = [(1, 1, _shape(0, 0, 32, 32)), (1, 1, _shape(40, 0, 100, 100, None, [(50, 10, 20, 20)]))]
    pred = [(1, 1, _shape(1, 0, 32, 32), 0.7), (1, 1, _shape(40, 2, 100, 100, None, [(50, 12, 20, 20)]), 0.6)]
    ours = _ours([1], gt, pred)
    assert not np.isnan(ours["AP_small"]) and not np.isnan(ours["AP_medium"])
    assert _disagreement([1], gt, pred) <= 1e-9


def test_two_categories_are_matched_and_averaged_separately():
    """With two GT categories a prediction of the wrong class cannot match; AP averages classes."""
    house, shed = _shape(0, 0, 50, 50, None, [(10, 10, 10, 10)]), _shape(100, 100, 20, 20)
    gt = [(1, 1, house), (1, 2, shed)]
    pred = [(1, 2, house, 0.9), (1, 1, house, 0.5), (1, 2, shed, 0.4)]
    assert _disagreement([1], gt, pred) <= 1e-9


def test_no_predictions_and_no_ground_truth():
    """No predictions give AP 0; no ground truth gives NaN (pycocotools' -1)."""
    gt = [(1, 1, _shape(0, 0, 40, 40))]
    assert _disagreement([1], gt, []) <= 1e-9
    assert np.isnan(_ours([1], [], [(1, 1, _shape(0, 0, 40, 40), 0.5)])["AP"])


def test_max_detections_caps_each_image():
    """Only the 100 highest-scoring predictions of an image are evaluated."""
    gt = [(1, 1, _shape(200, 200, 10, 10))]
    pred = [(1, 1, _shape(k % 19 * 10, k // 19 * 10, 9, 9), 0.9 - k * 1e-3) for k in range(120)]
    pred.append((1, 1, _shape(200, 200, 10, 10), 0.05))
    assert _ours([1], gt, pred)["AR@100"] == 0.0
    assert _disagreement([1], gt, pred) <= 1e-9


def test_coco_match_prefers_regular_ground_truth():
    """A regular GT is taken before an ignored one of higher IoU."""
    gt, pred, iou = np.array([0, 1]), np.array([0, 0]), np.array([0.9, 0.6])
    matched = coco_match(np.array([0]), gt, pred, iou, np.array([True, False]), 0.5, 2, 1)
    assert matched.tolist() == [1]
