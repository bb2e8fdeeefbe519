"""The ``coco`` profile's raster IoU equals pycocotools on non-pixel-aligned polygons with holes (1e-9).

pycocotools' side: each ring rasterized by ``frPyObjects``, the instance mask the exterior's
pixels with the holes' pixels cleared, RLE-encoded; ground-truth ``area`` is the mask's pixel
count. Predictions are handed to pycocotools in the canonical order the profile ranks
equal scores in, so ties rank alike on both sides.
"""

import contextlib
import io
import json

import numpy as np
import pytest
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from polytopo.evaluator import evaluate
from polytopo.evaluator.profiles.coco import evaluate_coco
from polytopo.core.errors import InputFormatError
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.inputs.io_coco import load_coco_ground_truth, load_coco_predictions
from polytopo.evaluator.profiles.paper import prepare
from polytopo.evaluator.tables.params import params_for
from polytopo.evaluator.geometry.raster_iou import PIXEL_COLUMN, ring_mask

CANVAS_PX = 320
# Position in COCOeval.stats of each key of _stats, in its insertion order.
_SUMMARY_POSITION = (0, 1, 2, 3, 9, 4, 10, 5, 11, 6, 7, 8)


def _ring_pixels(ring, size, height=None):
    """pycocotools' pixels of one ring in a ``size`` px square image (``size`` x ``height`` when given)."""
    height = size if height is None else height
    return mask_utils.decode(mask_utils.frPyObjects([np.asarray(ring).ravel().tolist()], height, size)[0])


def _mask(instance, size, height=None):
    """pycocotools' mask of ``instance``: its exterior's pixels with its holes' pixels cleared."""
    mask = _ring_pixels(instance.exterior, size, height).astype(bool)
    for hole in instance.holes:
        mask &= ~_ring_pixels(hole, size, height).astype(bool)
    return mask


def _rle(mask):
    return mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))


def _pycocotools(gt_set, pred_set, size, max_dets, width=None, height=None):
    """pycocotools' 12 stats (NaN for -1), predictions fed in the profile's tie order.

    Images are ``size`` px square, or ``width`` x ``height`` px when given (masks drawn
    by ``frPyObjects`` in that size, as pycocotools draws polygons of its images).
    """
    width, height = (size, size) if width is None else (width, height)

    def rle(instance):
        return _rle(_mask(instance, width, height))

    ordered = _tie_order(gt_set, pred_set)
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        rles = [rle(i) for i in gt_set.instances]
        coco_gt.dataset = {
            "images": [{"id": i, "height": height, "width": width} for i in gt_set.image_ids],
            "annotations": [{"id": k + 1, "image_id": i.image_id, "category_id": 1, "segmentation": r,
                             "area": float(mask_utils.area(r)), "iscrowd": 0, "bbox": list(mask_utils.toBbox(r))}
                            for k, (i, r) in enumerate(zip(gt_set.instances, rles))],
            "categories": [{"id": 1, "name": "building"}],
        }
        coco_gt.createIndex()
        results = [{"image_id": i.image_id, "category_id": 1, "segmentation": rle(i), "score": i.score}
                   for i in ordered]
        evaluator = COCOeval(coco_gt, coco_gt.loadRes(results), iouType="segm")
        evaluator.params.maxDets = [1, 10, max_dets]
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    stats = _stats(evaluator.eval, max_dets)
    if max_dets == 100:
        summary = [np.nan if v == -1 else float(v) for v in evaluator.stats]
        assert np.allclose(list(stats.values()), [summary[k] for k in _SUMMARY_POSITION], equal_nan=True, rtol=0,
                           atol=0)
    return stats


def _stats(result, max_dets):
    """The 12 summary numbers read from COCOeval's accumulated arrays at the largest maxDets.

    This is ``summarize()``'s arithmetic, except that its AP, AP_small/medium/large and
    AR_small/medium/large always look for maxDets 100 (-1 when it is not in the list), so
    with maxDets 1000 they are read at 1000 here.
    """
    precision, recall = result["precision"], result["recall"]  # [T, R, K, A, M], [T, K, A, M]

    def mean(values):
        values = values[values > -1]
        return float(np.mean(values)) if values.size else np.nan

    stats = {"AP": mean(precision[:, :, :, 0, 2]), "AP50": mean(precision[0, :, :, 0, 2]),
             "AP75": mean(precision[5, :, :, 0, 2])}
    for a, name in enumerate(("small", "medium", "large"), start=1):
        stats[f"AP_{name}"] = mean(precision[:, :, :, a, 2])
        stats[f"AR_{name}"] = mean(recall[:, :, a, 2])
    for m, cap in enumerate((1, 10, max_dets)):
        stats[f"AR@{cap}"] = mean(recall[:, :, 0, m])
    return stats


def _tie_order(gt_set, pred_set):
    """The predictions in the canonical order (descending score, then geometry) the profile ranks them in."""
    canonical = {(i.image_id, i.source_id): k
                 for k, i in enumerate(prepare(gt_set, pred_set, params_for("coco"))[1].instances)}
    return sorted(pred_set.instances, key=lambda i: canonical[i.image_id, i.source_id])


def _ours(gt_set, pred_set, max_dets, **overrides):
    params = params_for("coco", max_detections=max_dets, **overrides)
    gt_set, pred_set = prepare(gt_set, pred_set, params)[:2]
    return evaluate_coco(gt_set, pred_set, params).metrics


def _worst(ours, reference):
    worst = 0.0
    for key, expected in reference.items():
        if np.isnan(expected):
            assert np.isnan(ours[key]), key
        else:
            worst = max(worst, abs(ours[key] - expected))
    return worst


def _polygon(rng, cx, cy, radius, holes):
    """A jittered, slightly rotated rectangle-like ring with up to ``holes`` jittered holes inside."""
    angle = rng.uniform(0, np.pi / 2)
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float) * [radius, radius * rng.uniform(0.5, 1)]
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    exterior = corners @ rotation.T + [cx, cy] + rng.normal(0, 0.3, (4, 2))
    rings = []
    for k in range(holes):
        offset = np.array([(-0.45 if k == 0 else 0.45) * radius, 0.0]) @ rotation.T
        rings.append(corners * 0.3 @ rotation.T + [cx, cy] + offset + rng.normal(0, 0.2, (4, 2)))
    return exterior, rings


def _scene(seed):
    """Three images of non-aligned buildings 3..70 px across (small, medium and large), holes in the larger.

    Predictions: jittered copies (holes sometimes dropped), duplicates, false positives;
    scores continuous, or drawn from three values so that ties occur.
    """
    rng = np.random.default_rng(seed)
    tied = seed % 2 == 1
    gt, pred = [], []
    for image in (3, 1, 2):
        for k in range(rng.integers(3, 7)):
            cx, cy = 50 + 70 * (k % 4) + rng.uniform(-3, 3), 50 + 90 * (k // 4) + rng.uniform(-3, 3)
            radius = float(rng.choice([1.6, 4.0, 12.0, 30.0]) * rng.uniform(0.9, 1.1))
            exterior, holes = _polygon(rng, cx, cy, radius, int(rng.integers(0, 3)) if radius > 10 else 0)
            gt.append(Instance(image, len(gt), exterior, tuple(holes)))
            for _ in range(rng.integers(0, 3)):
                shift = rng.normal(0, 0.4 + 0.05 * radius, 2)
                kept = tuple(h + shift for h in holes if rng.uniform() < 0.7)
                score = float(rng.choice([0.3, 0.6, 0.9])) if tied else float(rng.uniform(0.05, 1.0))
                pred.append(Instance(image, len(pred), exterior + shift + rng.normal(0, 0.3, exterior.shape), kept,
                                     score))
        for _ in range(rng.integers(0, 2)):
            exterior, _ = _polygon(rng, rng.uniform(30, 290), rng.uniform(30, 290), 6.0, 0)
            pred.append(Instance(image, len(pred), exterior, (), float(rng.uniform(0.05, 1.0))))
    return InstanceSet(tuple(gt), (1, 2, 3)), InstanceSet(tuple(pred), (1, 2, 3))


def test_ring_masks_equal_pycocotools_frpyobjects():
    """Convex, self-crossing and half-pixel rings: the same pixels as ``frPyObjects``."""
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(3, 10))
        angle = np.sort(rng.uniform(0, 2 * np.pi, n))
        ring = np.column_stack([60 + rng.uniform(0.5, 25) * np.cos(angle), 60 + rng.uniform(0.5, 25) * np.sin(angle)])
        ring = ring[rng.permutation(n)] if trial % 4 == 0 else np.round(ring * 2) / 2 if trial % 4 == 1 else ring
        rows, cols = np.nonzero(_ring_pixels(ring, 128))
        assert np.array_equal(ring_mask(ring), np.sort(cols.astype(np.int64) * PIXEL_COLUMN + rows))


@pytest.mark.parametrize("max_dets", [100, 1000])
@pytest.mark.parametrize("seed", range(4))
def test_jittered_polygons_with_holes_agree_with_pycocotools(seed, max_dets):
    gt_set, pred_set = _scene(seed)
    assert _worst(_ours(gt_set, pred_set, max_dets), _pycocotools(gt_set, pred_set, CANVAS_PX, max_dets)) <= 1e-9


def test_max_detections_cap_on_raster_masks():
    """130 small non-aligned predictions in one image: maxDets 100 drops the last ones, 1000 keeps them."""
    rng = np.random.default_rng(11)
    gt, pred = [], []
    for k in range(130):
        exterior, _ = _polygon(rng, 12 + 22 * (k % 13), 12 + 22 * (k // 13), 5.0, 0)
        gt.append(Instance(1, k, exterior))
        pred.append(Instance(1, k, exterior + rng.normal(0, 0.6, 2), (), float(1.0 - k / 200)))
    gt_set, pred_set = InstanceSet(tuple(gt), (1,)), InstanceSet(tuple(pred), (1,))
    for max_dets in (100, 1000):
        ours = _ours(gt_set, pred_set, max_dets)
        assert _worst(ours, _pycocotools(gt_set, pred_set, CANVAS_PX, max_dets)) <= 1e-9
    assert _ours(gt_set, pred_set, 100)["AR@100"] < _ours(gt_set, pred_set, 1000)["AR@1000"]


def test_bundled_sample_agrees_with_pycocotools(fixtures_dir):
    """The ptb_small sample (512 px patches, real building outlines with courtyards)."""
    gt_set = load_coco_ground_truth(fixtures_dir / "ptb_small" / "gt.json")
    pred_set = load_coco_predictions(fixtures_dir / "ptb_small" / "pred.json")
    for max_dets in (100, 1000):
        assert _worst(_ours(gt_set, pred_set, max_dets), _pycocotools(gt_set, pred_set, 512, max_dets)) <= 1e-9


def test_vector_mode_is_kept_and_differs_on_non_aligned_polygons():
    gt_set, pred_set = _scene(0)
    raster, vector = _ours(gt_set, pred_set, 100), _ours(gt_set, pred_set, 100, iou_mode="vector")
    assert raster["AP"] != vector["AP"]


def test_raster_mode_is_refused_outside_the_coco_profile(make_set, square):
    with pytest.raises(ValueError, match="raster IoU is a mode of the coco profile"):
        evaluate(make_set([(square(0, 0, 4), [])]), make_set([(square(0, 0, 4), [])]), iou_mode="raster")


def test_pycocotools_fed_ring_lists_fills_holes():
    """Given ``[exterior, hole]`` as one segmentation, pycocotools unions the rings: the hole counts as occupied."""
    exterior = [2.3, 2.1, 40.6, 2.4, 40.2, 30.7, 2.5, 30.2]
    hole = [10.2, 10.4, 20.7, 10.1, 20.3, 20.6, 10.6, 20.2]
    filled = mask_utils.merge(mask_utils.frPyObjects([exterior, hole], 64, 64))
    outline = mask_utils.frPyObjects([exterior], 64, 64)[0]
    assert mask_utils.area(filled) == mask_utils.area(outline)
    instance = Instance(0, 0, np.reshape(exterior, (-1, 2)), (np.reshape(hole, (-1, 2)),))
    assert _mask(instance, 64).sum() == mask_utils.area(outline) - _ring_pixels(hole, 64).sum()


def _edge_scene(seed):
    """Two images of 90 x 70 px whose buildings reach past the right and the bottom edge."""
    rng = np.random.default_rng(seed)
    gt, pred = [], []
    for image in (1, 2):
        for _ in range(6):
            cx, cy = float(rng.uniform(30, 105)), float(rng.uniform(30, 85))  # some centres outside the image
            exterior, holes = _polygon(rng, cx, cy, float(rng.uniform(6, 14)), int(rng.integers(0, 2)))
            gt.append(Instance(image, len(gt), exterior, tuple(holes)))
            shift = rng.normal(0, 1.5, 2)
            pred.append(Instance(image, len(pred), exterior + shift, tuple(h + shift for h in holes),
                                 float(rng.uniform(0.1, 1.0))))
    return InstanceSet(tuple(gt), (1, 2)), InstanceSet(tuple(pred), (1, 2))


def _coco_files(folder, gt_set, pred_set, sizes):
    def rings(instance):
        return [np.asarray(r).ravel().tolist() for r in (instance.exterior, *instance.holes)]

    images = [{"id": i, **({"width": 90, "height": 70} if sizes else {})} for i in gt_set.image_ids]
    gt = {"images": images, "annotations": [{"id": k + 1, "image_id": i.image_id, "category_id": 1, "iscrowd": 0,
                                             "segmentation": rings(i)} for k, i in enumerate(gt_set.instances)]}
    pred = [{"image_id": i.image_id, "category_id": 1, "score": i.score, "segmentation": rings(i)}
            for i in pred_set.instances]
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "pred.json").write_text(json.dumps(pred))
    return folder / "gt.json", folder / "pred.json"


@pytest.mark.parametrize("seed", range(3))
def test_images_sizes_clip_masks_as_pycocotools_does(seed, tmp_path):
    """Polygons past the right and bottom edges: with images[].width/height read, the coco profile equals pycocotools."""
    gt_set, pred_set = _edge_scene(seed)
    reference = _pycocotools(gt_set, pred_set, None, 100, width=90, height=70)
    gt_path, pred_path = _coco_files(tmp_path, gt_set, pred_set, sizes=True)
    loaded_gt = load_coco_ground_truth(gt_path)
    assert loaded_gt.image_sizes == {1: (90, 70), 2: (90, 70)}
    assert load_coco_ground_truth(_coco_files(tmp_path, gt_set, pred_set, sizes=False)[0]).image_sizes == {
        1: None, 2: None}
    gt_path, pred_path = _coco_files(tmp_path, gt_set, pred_set, sizes=True)
    ours = evaluate(loaded_gt, load_coco_predictions(pred_path), profile="coco").summary["metrics"]
    assert _worst(ours, reference) <= 1e-9
    unsized = load_coco_ground_truth(_coco_files(tmp_path, gt_set, pred_set, sizes=False)[0])
    with pytest.warns(UserWarning, match="2 of 2 images of the reference give no width and height"):
        unclipped = evaluate(unsized, load_coco_predictions(pred_path), profile="coco").summary["metrics"]
    assert _worst(unclipped, reference) > 1e-3


def test_a_partial_image_size_is_refused(tmp_path):
    (tmp_path / "gt.json").write_text(json.dumps({"images": [{"id": 1, "width": 90}], "annotations": []}))
    with pytest.raises(InputFormatError, match=r"images\[0\] field 'height': expected a whole number of pixels"):
        load_coco_ground_truth(tmp_path / "gt.json")
