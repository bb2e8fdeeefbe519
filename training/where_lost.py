"""Where a building model's AP50 is lost on the scored RGB rasters: unlabelled structures, or outlines.

``python -m polytopo.training.where_lost [MODEL.onnx] [--max-shift PX]`` runs the model (the
default ``unet_buildings_rgb`` of the zoo when none is named) with the real engine over the
validation patch and every whole-place raster at zoom 19 (Kampala held-out ground and the
fAIr places), and prints per raster, as a Markdown table (:func:`loss_breakdown`):

* the polygons that touch no reference building, and the AP50 with them dropped: an upper
  bound on what labelling every structure the model finds (sheds, annexes) could give;
* the share of reference buildings that some polygon overlaps with IoU >= 0.5, as they lie
  and with each reference moved by its own best shift of up to ``--max-shift`` evaluation
  pixels (default 6): how much the offsets between roofs and traced footprints cost;
* the references of :data:`LARGE_M2` or more that two or more polygons cover (each polygon
  given to the reference holding most of its area): large roofs drawn in pieces;
* of the references without a polygon of IoU >= 0.5, those no polygon covers 5 % of (with
  their median footprint) and those whose most-overlapping polygon also covers 30 % of
  another reference: buildings missed and buildings drawn together with a neighbour.

A diagnostic: nothing is chosen on it. Needs the shared data folder, not PyTorch.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import shapely

from ..evaluator import evaluate
from ..models.errors import ModelsError
from ..models.model import load_model
from ..models.pipeline import PreparedRun, RunParams
from ..models.zoo import zoo_models
from . import data
from .evaluate_zoo import raster_instance_set
from .heldout import kampala_heldout, kampala_validation, unseen_places
from .shared_data import find_shared_data

__all__ = ["DEFAULT_MAX_SHIFT_PX", "LARGE_M2", "RASTER_KEYS", "loss_breakdown", "main"]

DEFAULT_MAX_SHIFT_PX = 6
"""Largest shift of a reference building, evaluation pixels (1.8 m at zoom 19)."""
LARGE_M2 = 400.0
"""Footprint area from which a reference building counts as large, square metres."""
RASTER_KEYS = ("validation-z19", "kampala-z19", "zanzibar-z19", "nepal-z19", "philippines-z19", "nairobi-z19")
"""The rasters looked at: every place at zoom 19 (each place's split is the model card's)."""


def _ap50(key, gt, pred, scores):
    gt_set = raster_instance_set(gt, key, [1.0] * len(gt), "reference", key)
    pred_set = raster_instance_set(pred, key, scores, "predicted", key)
    return evaluate(gt_set, pred_set, profile="paper", bootstrap_resamples=0).summary["metrics"]["AP50"]


def _best_iou(reference, polygons):
    """Largest IoU of ``reference`` with any of ``polygons`` (0 when there is none)."""
    if len(polygons) == 0:
        return 0.0
    inter = shapely.area(shapely.intersection(reference, polygons))
    union = shapely.area(reference) + shapely.area(polygons) - inter
    return float(np.max(np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)))


def _pieces(gt, pred):
    """How many predictions lie mostly inside each reference (each given to the one holding most of its area)."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros(len(gt), dtype=np.int64)
    which_pred, which_gt = shapely.STRtree(gt).query(pred, predicate="intersects")
    share = shapely.area(shapely.intersection(pred[which_pred], gt[which_gt])) / shapely.area(pred[which_pred])
    order = np.lexsort((-share, which_pred))  # each prediction's largest share first
    best = order[np.r_[True, np.diff(which_pred[order]) != 0]]
    return np.bincount(which_gt[best[share[best] > 0.5]], minlength=len(gt))


def _missed_and_joined(gt, pred, matched, near):
    """Masks over ``gt``: unmatched references no prediction covers 5 % of, and those drawn with a neighbour.

    A reference is drawn with a neighbour when the prediction overlapping most of it covers
    more than 30 % of another reference. ``near`` is an ``STRtree`` of ``pred``.
    """
    missed, joined = np.zeros(len(gt), dtype=bool), np.zeros(len(gt), dtype=bool)
    references = shapely.STRtree(gt)
    for index in np.flatnonzero(~matched):
        candidates = pred[near.query(gt[index], predicate="intersects")]
        overlap = shapely.area(shapely.intersection(gt[index], candidates))
        if len(candidates) == 0 or overlap.max() <= 0.05 * shapely.area(gt[index]):
            missed[index] = True
            continue
        best = candidates[int(np.argmax(overlap))]
        others = references.query(best, predicate="intersects")
        others = others[others != index]
        joined[index] = bool(np.any(shapely.area(shapely.intersection(gt[others], best))
                                    > 0.3 * shapely.area(gt[others])))
    return missed, joined


def loss_breakdown(key, gt, pred, scores, max_shift_px=DEFAULT_MAX_SHIFT_PX, large_px2=np.inf):
    """What one raster's AP50 loses to polygons off every label and to offset outlines.

    Parameters
    ----------
    key : str
        Image id of the evaluation.
    gt, pred : numpy.ndarray of shapely.Polygon
        Reference and predicted polygons in evaluation pixels.
    scores : sequence of float
        The predictions' scores.
    max_shift_px : int
        Largest shift of a reference tried, whole evaluation pixels in x and in y.
    large_px2 : float
        Area from which a reference counts as large, square evaluation pixels.

    Returns
    -------
    dict
        ``references``, ``predictions``, ``touching_none`` (predictions that intersect no
        reference), ``AP50`` and ``AP50_without_touching_none``, ``overlapped`` (share of
        references some prediction overlaps with IoU >= 0.5) and ``overlapped_shifted``
        (the same, each reference at its own best shift), ``large`` (references of at least
        ``large_px2``) and ``large_in_pieces`` (the share of them that two or more
        predictions lying mostly inside them cover; NaN without large references),
        ``missed`` (references without IoU >= 0.5 that no prediction covers 5 % of) and
        ``missed_median_px2`` (their median area; NaN without any), ``joined`` (references
        without IoU >= 0.5 whose most-overlapping prediction covers 30 % of another reference).

    Examples
    --------
    >>> gt = np.array([shapely.box(0, 0, 10, 10), shapely.box(20, 0, 30, 10)])
    >>> pred = np.array([shapely.box(3, 0, 13, 10), shapely.box(50, 50, 52, 52)])
    >>> row = loss_breakdown("i", gt, pred, [0.9, 0.8], max_shift_px=3)
    >>> row["touching_none"], row["overlapped"], row["overlapped_shifted"], row["missed"], row["joined"]
    (1, 0.5, 0.5, 1, 0)
    """
    gt, pred = np.asarray(gt, dtype=object), np.asarray(pred, dtype=object)
    scores = np.asarray(scores, dtype=float)
    touching = np.zeros(len(pred), dtype=bool)
    touching[shapely.STRtree(gt).query(pred, predicate="intersects")[0]] = True
    near = shapely.STRtree(pred)
    shifts = [(dx, dy) for dx in range(-max_shift_px, max_shift_px + 1) for dy in range(-max_shift_px, max_shift_px + 1)]
    as_lies, shifted = np.zeros(len(gt)), np.zeros(len(gt))
    for index, reference in enumerate(gt):
        candidates = pred[near.query(shapely.buffer(reference, max_shift_px + 1))]
        as_lies[index] = _best_iou(reference, candidates)
        shifted[index] = max(_best_iou(shapely.transform(reference, lambda xy, d=d: xy + d), candidates)
                             for d in np.array(shifts, dtype=float))
    large = shapely.area(gt) >= large_px2 if len(gt) else np.zeros(0, dtype=bool)
    missed, joined = _missed_and_joined(gt, pred, as_lies >= 0.5, near)
    return {
        "references": len(gt), "predictions": len(pred), "touching_none": int((~touching).sum()),
        "AP50": _ap50(key, gt, pred, scores),
        "AP50_without_touching_none": _ap50(key, gt, pred[touching], scores[touching]),
        "overlapped": float(np.mean(as_lies >= 0.5)) if len(gt) else float("nan"),
        "overlapped_shifted": float(np.mean(shifted >= 0.5)) if len(gt) else float("nan"),
        "large": int(large.sum()),
        "large_in_pieces": float(np.mean(_pieces(gt, pred)[large] >= 2)) if large.any() else float("nan"),
        "missed": int(missed.sum()),
        "missed_median_px2": float(np.median(shapely.area(gt[missed]))) if missed.any() else float("nan"),
        "joined": int(joined.sum()),
    }


def main(argv=None):
    """Print the table for one model; returns 0 (1 after an error, said on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m polytopo.training.where_lost", description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", type=Path, help="ONNX building model (default: the zoo's unet_buildings_rgb)")
    parser.add_argument("--max-shift", type=int, default=DEFAULT_MAX_SHIFT_PX, help="largest shift of a reference, px")
    parser.add_argument("--work-dir", type=Path, help="folder for the mosaics (default: a temporary one, removed)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.max_shift < 0:
        parser.error(f"--max-shift must be 0 or more pixels but got {args.max_shift}")
    try:
        path = args.model or next(entry.path for entry in zoo_models() if entry.name == "unet_buildings_rgb")
        model, shared = load_model(path), find_shared_data()
        with tempfile.TemporaryDirectory(prefix="polytopo-where-lost-") as temporary:
            work = args.work_dir or Path(temporary)
            rasters = kampala_validation(shared, work) + kampala_heldout(shared, work) + unseen_places(shared, work)
            _print_table(model, [r for r in rasters if r.key in RASTER_KEYS], args.max_shift)
    except ModelsError as exc:  # a missing or unreadable model, the shared data folder absent
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _print_table(model, rasters, max_shift_px):
    print("| raster | references | polygons | touching no reference | AP50 | AP50 without them "
          f"| IoU >= 0.5 | IoU >= 0.5, own shift <= {max_shift_px} px "
          f"| references >= {LARGE_M2:g} m² | of them in 2+ pieces | missed (median m²) | drawn with a neighbour |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for raster in rasters:
        polygons = list(PreparedRun(model, raster.raster, RunParams(extent=raster.extent, batch_size=4)))
        predicted = np.array([p.geometry for p in polygons], object)
        pred = data.map_to_pixels(predicted, raster.geotransform) if len(predicted) else predicted
        gt = data.map_to_pixels(raster.reference, raster.geotransform)
        pixel_m2 = (raster.gsd_cm / 100.0) ** 2
        row = loss_breakdown(raster.key, gt, pred, [p.score for p in polygons], max_shift_px,
                             large_px2=LARGE_M2 / pixel_m2)
        print(f"| {raster.key} | {row['references']} | {row['predictions']} | {row['touching_none']} "
              f"| {row['AP50']:.3f} | {row['AP50_without_touching_none']:.3f} | {row['overlapped']:.2f} "
              f"| {row['overlapped_shifted']:.2f} | {row['large']} | {row['large_in_pieces']:.2f} "
              f"| {row['missed']} ({row['missed_median_px2'] * pixel_m2:.0f}) | {row['joined']} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
