"""Score the exported models honestly: the real engine on held-out rasters, the real evaluator.

For each bundled model and each of its held-out rasters (:mod:`.heldout`),
the ONNX file is loaded with :func:`polytopo.models.load_model` and run over
the raster by :class:`polytopo.models.PreparedRun` (tiling, resampling,
decoding and polygonization exactly as a user gets them). The polygons and
the reference are put in pixels of the held-out raster (so the evaluator's
pixel size is the raster's GSD) and scored by
:func:`polytopo.evaluator.evaluate` with the ``paper`` profile (one image
per raster, no bootstrap). The scores are written into the card
(``polytopo.scores``), the zoo index and the table of models/README.md.
"""

import math
import time
from pathlib import Path

import numpy as np

from ..evaluator import InstanceSet, evaluate
from ..evaluator.inputs.instances import instances_from_geometries
from ..models.card.card_files import write_card
from ..models.model import load_model
from ..models.pipeline import PreparedRun, RunParams
from ..models.session import SessionParams
from . import data
from .heldout import (
    atlanta_heldout,
    kampala_heldout,
    kampala_validation,
    place_validation,
    rendered_city_squares,
    rendered_heldout,
    unseen_places,
)
from .readme import SCORED_METRICS, update_readme
from .zoo_index import update_entry

__all__ = ["HEADLINE_RASTER", "SCORE_NOTE", "evaluate_model", "heldout_for", "raster_instance_set", "score_raster"]

HEADLINE_RASTER = {"kampala_rgb": "kampala-z19", "atlanta_pan": "atlanta-east"}
"""Held-out raster whose scores head the zoo index, per data source (the one at the model's own GSD)."""
SCORE_NOTE = (
    "paper profile of polytopo.evaluator; one image per raster; pixel size = the raster's GSD. Split "
    "'held-out': ground never used for training or for any choice; split 'unseen place': a whole place "
    f"({', '.join(place.capitalize() for place in data.UNSEEN_PLACES)}) never used for training or for any "
    "choice; split 'trained place': a place of that list the model WAS trained on (every tile), not a measure of "
    "new ground; split 'unseen square': a rendered square of a city the model was trained on, kept out of its "
    "training squares; split 'validation': ground never used "
    "for training, on which the resolution and schedule were chosen. Hole-F1 is null (undefined) where "
    "neither side has a hole and 0 where only the prediction has holes: the real references have no "
    "holes, so Hole-F1 on them is uninformative; only the SYNTHETIC courtyard raster measures holes."
)


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float):
        return round(value, 4)
    return value


def raster_instance_set(geometries, key, scores, role, source):
    """Polygons of one raster, in its evaluation pixels, as the :class:`InstanceSet` of its one image ``key``.

    ``role`` (``reference`` or ``predicted``) names a polygon in an error message; ``source``
    names the set.
    """
    where = (lambda index: f"{role} polygon {index}")
    instances = instances_from_geometries(
        np.asarray(geometries, object), image_ids=[key] * len(geometries), source_ids=list(range(len(geometries))),
        scores=list(scores), category_ids=[None] * len(geometries), where=where,
    )
    return InstanceSet(tuple(instances), (key,), source=source)


def score_raster(model, heldout, batch_size=4):
    """Run ``model`` over one held-out raster and evaluate it.

    Parameters
    ----------
    model : LoadedModel
    heldout : HeldOutRaster
    batch_size : int

    Returns
    -------
    dict
        ``key``, ``title``, ``gsd_cm``, ``synthetic``, instance and hole
        counts of both sides, the :data:`.readme.SCORED_METRICS` (None when undefined),
        ``Hole-TP/FP/FN`` and ``invalid_predictions``.
    """
    prepared = PreparedRun(model, heldout.raster, RunParams(extent=heldout.extent, batch_size=batch_size))
    polygons = list(prepared)
    predicted = np.array([p.geometry for p in polygons], object)
    scores = [p.score for p in polygons]
    pred_px = data.map_to_pixels(predicted, heldout.geotransform) if len(predicted) else predicted
    gt_px = data.map_to_pixels(heldout.reference, heldout.geotransform)
    gt_set = raster_instance_set(gt_px, heldout.key, [1.0] * len(gt_px), "reference", heldout.key)
    pred_set = raster_instance_set(pred_px, heldout.key, scores, "predicted", model.path)
    result = evaluate(gt_set, pred_set, profile="paper", bootstrap_resamples=0)
    metrics = result.summary["metrics"]
    row = {
        "key": heldout.key,
        "split": heldout.split,
        "title": heldout.title,
        "gsd_cm": round(heldout.gsd_cm, 2),
        "synthetic": heldout.synthetic,
        "reference_instances": len(gt_set),
        "reference_holes": gt_set.hole_count,
        "predicted_instances": len(pred_set),
        "predicted_holes": pred_set.hole_count,
    }
    row.update({name: _clean(metrics[name]) for name in SCORED_METRICS})
    row.update({name: int(metrics[name]) for name in ("Hole-TP", "Hole-FP", "Hole-FN")})
    row["invalid_predictions"] = int(metrics["invalid_pred"])
    row["invalid_dropped_by_engine"] = prepared.report.invalid_dropped
    return row


def heldout_for(recipe, shared, work_dir):
    """The rasters a recipe is scored on.

    Validation first (Kampala, then the recipe's validation places), then held-out Kampala,
    the other places, and the rendered held-out city last (for recipes trained on rendered
    geometry: its evaluation square, then all its courtyard squares side by side), followed by the training
    cities' unseen squares where the recipe keeps them out.
    """
    if recipe.source == "atlanta_pan":
        return atlanta_heldout(shared)
    rendered = []
    if recipe.rendered_share > 0:
        rendered = (rendered_heldout(shared, work_dir, recipe.resolution_cm, recipe.rendered_held_out)
                    + rendered_city_squares(shared, work_dir, recipe.resolution_cm, recipe.rendered_held_out))
        for city in recipe.rendered_cities if recipe.rendered_keep_out else ():
            rendered += rendered_heldout(shared, work_dir, recipe.resolution_cm, city, split="unseen square")
    return (kampala_validation(shared, work_dir, courtyards=recipe.courtyards)
            + place_validation(shared, work_dir, recipe.validation_places) + kampala_heldout(shared, work_dir)
            + unseen_places(shared, work_dir, trained=recipe.train_places, validation=recipe.validation_places)
            + rendered)


def evaluate_model(recipe, shared, work_dir, zoo_dir, readme_path, threads=2, log=print):
    """Score one exported model and record the scores in its card, the zoo index and the README.

    Returns
    -------
    dict
        The ``polytopo.scores`` entry written into the card.
    """
    started = time.perf_counter()
    path = Path(zoo_dir) / f"{recipe.name}.onnx"
    model = load_model(path, SessionParams(provider="cpu", intra_op_threads=threads))
    rows = []
    for heldout in heldout_for(recipe, shared, work_dir):
        row = score_raster(model, heldout)
        log(f"{recipe.name} on {heldout.key}: " + ", ".join(f"{m} {row[m]}" for m in SCORED_METRICS))
        rows.append(row)
    scores = {"note": SCORE_NOTE, "headline": HEADLINE_RASTER[recipe.source], "results": rows}
    write_card(path, {"polytopo.scores": scores})
    seconds = round(time.perf_counter() - started, 1)
    headline = next(r for r in rows if r["key"] == HEADLINE_RASTER[recipe.source])
    update_entry(zoo_dir, recipe, {
        "evaluate_seconds": seconds,
        "scores": {"heldout": headline["key"], **{m: headline[m] for m in SCORED_METRICS}},
    })
    update_readme(readme_path, zoo_dir)
    return scores
