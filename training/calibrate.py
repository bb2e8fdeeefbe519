"""Choose a model's segmentation threshold on the validation ground only, and write it into the card.

The exported model is run by the real engine over each validation raster
(:func:`.heldout.kampala_validation`: the Kampala validation patch at zoom 19
and 20, never trained on; for a hole-aware recipe also its zoom-20 variant with
synthetic courtyards) once per candidate threshold
(:class:`polytopo.models.RunParams` ``threshold``), scored with the paper
profile, and the threshold with the best validation score (:func:`choice_score`:
the mean AP50 over the validation rasters, and for a hole-aware recipe the
courtyard raster's Hole-F1 as one more term; ties: the threshold nearer 0.5)
becomes the card's ``seg_thresh``. No held-out or unseen-place raster is looked at.
"""

from pathlib import Path

import numpy as np

from ..evaluator import InstanceSet, evaluate
from ..models.card.card_files import write_card
from ..models.model import load_model
from ..models.pipeline import PreparedRun, RunParams
from ..models.session import SessionParams
from . import data
from .evaluate_zoo import _instances
from .heldout import kampala_validation

__all__ = ["THRESHOLDS", "calibrate_threshold", "choice_score", "validation_scores"]

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
"""Candidate segmentation thresholds."""


def validation_scores(model, rasters, threshold):
    """AP50, AP and Hole-F1 (paper profile) of ``model`` at ``threshold`` on each validation raster, by key."""
    out = {}
    for raster in rasters:
        prepared = PreparedRun(model, raster.raster, RunParams(extent=raster.extent, batch_size=4, threshold=threshold))
        polygons = list(prepared)
        predicted = np.array([p.geometry for p in polygons], object)
        pred_px = data.map_to_pixels(predicted, raster.geotransform) if len(predicted) else predicted
        gt_px = data.map_to_pixels(raster.reference, raster.geotransform)
        gt_set = InstanceSet(_instances(gt_px, raster.key, [1.0] * len(gt_px), "reference"), (raster.key,),
                             source=raster.key)
        pred_set = InstanceSet(_instances(pred_px, raster.key, [p.score for p in polygons], "predicted"), (raster.key,),
                               source=str(model.path))
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
                        holes=False):
    """Pick the threshold with the best validation score and (``write``) store it as the card's ``seg_thresh``.

    ``holes`` (a hole-aware recipe) adds the validation raster with synthetic courtyards.

    Returns
    -------
    best : float
    table : dict of float to dict
        Scores per threshold (see :func:`validation_scores`).
    """
    model = load_model(Path(model_path), SessionParams(provider="cpu", intra_op_threads=threads))
    rasters = kampala_validation(shared, work_dir, courtyards=holes)
    table = {}
    for threshold in thresholds:
        table[threshold] = validation_scores(model, rasters, threshold)
        log(f"{Path(model_path).name} threshold {threshold}: "
            + ", ".join(f"{key} AP50 {row['AP50']} AP {row['AP']} Hole-F1 {row['Hole-F1']} ({row['predicted']} polygons)"
                        for key, row in table[threshold].items())
            + f"; score {choice_score(table[threshold]):.4f}")
    best = max(thresholds, key=lambda t: (choice_score(table[t]), -abs(t - 0.5)))
    log(f"{Path(model_path).name}: best validation threshold {best}")
    if write:
        write_card(Path(model_path), {"seg_thresh": float(best)})
    return best, table
