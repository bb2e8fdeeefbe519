"""Choose a model's segmentation threshold and outline offset on the validation ground only, and write them into the card.

The exported model is run by the real engine over each validation raster
(:func:`.heldout.kampala_validation`: the Kampala validation patch at zoom 19
and 20, never trained on; for a hole-aware recipe also its zoom-20 variant with
synthetic courtyards; and :func:`.heldout.place_validation`: the recipe's validation
places, whole, at zoom 19 and 20) once per candidate threshold
(:class:`polytopo.models.RunParams` ``threshold``) and outline offset (the card's
``polytopo.outline_offset_px``: the boundary-aware models' outlines lie inside the
buildings'), scored with the paper profile, and the pair with the best validation score
(:func:`choice_score`: the mean AP50 over the validation rasters, and for a hole-aware
recipe the courtyard raster's Hole-F1 as one more term; ties: the threshold nearer 0.5,
then the smaller offset) goes into the card (``seg_thresh``, ``polytopo.outline_offset_px``).
A ``courtyard4`` recipe with candidate reaches (``courtyard_reaches_px``) is exported once
per reach and calibrated at each; the reach with the best score (ties: the shorter) is the
one exported into the zoo (:func:`calibrate_courtyard_reach`).
No held-out or unseen-place raster is looked at.
"""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..evaluator import evaluate
from ..models.card.card_files import write_card
from ..models.model import load_model
from ..models.pipeline import PreparedRun, RunParams
from ..models.session import SessionParams
from . import data
from .evaluate_zoo import raster_instance_set
from .heldout import kampala_validation, place_validation

__all__ = ["OUTLINE_OFFSETS_PX", "THRESHOLDS", "calibrate_courtyard_reach", "calibrate_threshold", "choice_score",
           "validation_scores"]

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
"""Candidate segmentation thresholds."""

OUTLINE_OFFSETS_PX = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
"""Candidate outline offsets, model px (0: the outlines as polygonized)."""


def validation_scores(model, rasters, threshold):
    """AP50, AP and Hole-F1 (paper profile) of ``model`` at ``threshold`` on each validation raster, by key."""
    out = {}
    for raster in rasters:
        prepared = PreparedRun(model, raster.raster, RunParams(extent=raster.extent, batch_size=4, threshold=threshold))
        polygons = list(prepared)
        predicted = np.array([p.geometry for p in polygons], object)
        pred_px = data.map_to_pixels(predicted, raster.geotransform) if len(predicted) else predicted
        gt_px = data.map_to_pixels(raster.reference, raster.geotransform)
        gt_set = raster_instance_set(gt_px, raster.key, [1.0] * len(gt_px), "reference", raster.key)
        pred_set = raster_instance_set(pred_px, raster.key, [p.score for p in polygons], "predicted", str(model.path))
        metrics = evaluate(gt_set, pred_set, profile="paper", bootstrap_resamples=0).summary["metrics"]
        out[raster.key] = {"AP50": round(float(metrics["AP50"]), 4), "AP": round(float(metrics["AP"]), 4),
                           "Hole-F1": round(float(metrics["Hole-F1"]), 4), "predicted": len(pred_set),
                           "synthetic": raster.synthetic}
    return out


def choice_score(rows):
    """The validation score a choice maximizes: mean of every raster's AP50 and each synthetic-courtyard raster's Hole-F1.

    Parameters
    ----------
    rows : dict
        :func:`validation_scores` of one candidate.
    """
    terms = [row["AP50"] for row in rows.values()] + [row["Hole-F1"] for row in rows.values() if row["synthetic"]]
    return float(np.mean(terms))


def calibrate_threshold(model_path, shared, work_dir, thresholds=THRESHOLDS, threads=2, write=True, log=print,
                        holes=False, offsets=OUTLINE_OFFSETS_PX, places=()):
    """Pick the threshold and outline offset with the best validation score and (``write``) store them in the card.

    ``holes`` (a hole-aware recipe) adds the validation raster with synthetic courtyards;
    ``places`` (a recipe's ``validation_places``) the validation places.
    Each ``(threshold, offset)`` is a run of the engine with the card's offset replaced.

    Returns
    -------
    best : tuple of float
        ``(threshold, offset in model px)``.
    table : dict of tuple to dict
        Scores per ``(threshold, offset)`` (see :func:`validation_scores`).
    """
    model = load_model(Path(model_path), SessionParams(provider="cpu", intra_op_threads=threads))
    rasters = kampala_validation(shared, work_dir, courtyards=holes) + place_validation(shared, work_dir, places)
    table = {}
    for threshold in thresholds:
        for offset in offsets:
            candidate = replace(model, card=replace(model.card, outline_offset_px=float(offset)))
            table[threshold, offset] = rows = validation_scores(candidate, rasters, threshold)
            log(f"{Path(model_path).name} threshold {threshold} offset {offset} px: "
                + ", ".join(f"{key} AP50 {row['AP50']} AP {row['AP']} Hole-F1 {row['Hole-F1']} "
                            f"({row['predicted']} polygons)" for key, row in rows.items())
                + f"; score {choice_score(rows):.4f}")
    best = max(table, key=lambda pair: (choice_score(table[pair]), -abs(pair[0] - 0.5), -pair[1]))
    log(f"{Path(model_path).name}: best validation threshold {best[0]}, outline offset {best[1]} px, "
        f"score {choice_score(table[best]):.4f}")
    if write:
        write_card(Path(model_path), {"seg_thresh": float(best[0]), "polytopo.outline_offset_px": float(best[1])})
    return best, table


def calibrate_courtyard_reach(recipe, shared, work_dir, zoo_dir, max_bytes, threads=2, log=print):
    """Choose a ``courtyard4`` recipe's reach, threshold and outline offset together, on validation only.

    The trained checkpoint (``work_dir``) is exported at each of ``recipe.courtyard_reaches_px``
    (under ``work_dir/reach/N px``) and calibrated there (:func:`calibrate_threshold`, cards
    left as exported); the file of the reach whose best pair scores highest (ties: the shorter
    reach) is copied into ``zoo_dir`` with that pair in its card.

    Returns
    -------
    reach : int
        The chosen reach, grid pixels.
    best : tuple of float
        ``(threshold, offset in model px)``.
    scores : dict of int to float
        Best choice score at each reach.
    """
    from .export import export_model
    from .train import checkpoint_path

    checkpoint = checkpoint_path(work_dir, recipe.name)
    exported, chosen, scores = {}, {}, {}
    for reach in recipe.courtyard_reaches_px:
        folder = Path(work_dir) / "reach" / f"{reach}px"
        folder.mkdir(parents=True, exist_ok=True)
        exported[reach] = export_model(replace(recipe, courtyard_reach_px=reach), checkpoint, folder, max_bytes).path
        best, table = calibrate_threshold(exported[reach], shared, work_dir, threads=threads, write=False, log=log,
                                          holes=True, places=recipe.validation_places)
        chosen[reach], scores[reach] = best, choice_score(table[best])
    reach = max(scores, key=lambda item: (scores[item], -item))
    log(f"{recipe.name}: validation score by courtyard reach "
        + ", ".join(f"{item} px {score:.4f}" for item, score in scores.items()) + f"; chosen {reach} px")
    # the calibrated file itself goes into the zoo (its card already says the reach), replaced whole
    target = Path(zoo_dir) / exported[reach].name
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(exported[reach], partial)
    os.replace(partial, target)
    best = chosen[reach]
    write_card(target, {"seg_thresh": float(best[0]), "polytopo.outline_offset_px": float(best[1])})
    return reach, best, scores
