"""Vectorize a raster and evaluate the polygons against a reference layer, in one run."""

import dataclasses

from qgis.core import QgsVectorLayer

from ..errors import RunFailedError
from .evaluation import evaluate_layers
from .feedback import ScaledFeedback
from .vectorize import SCORE_FIELD, vectorize_layer

__all__ = ["vectorize_and_evaluate"]


def vectorize_and_evaluate(raster_layer, reference_layer, model, *, output_path, vectorize_options=None,
                           evaluation_options=None, feedback=None, overwrite=False):
    """Run :func:`polytopo.plugin.runs.vectorize.vectorize_layer`, then :func:`polytopo.plugin.runs.evaluation.evaluate_layers` on its output.

    Parameters
    ----------
    raster_layer : QgsRasterLayer
    reference_layer : QgsVectorLayer
    model : str or Path
        The ONNX model file.
    output_path : str or Path
        Where the vectorized polygons go (``.gpkg`` or ``.geojson``).
    vectorize_options : dict, optional
        Keyword arguments of ``vectorize_layer`` (provider, extent, aoi_layer, tile_px,
        overlap_px, batch, transform_context).
    evaluation_options : dict, optional
        Keyword arguments of ``evaluate_layers``; ``pixel_size`` is required (map units
        of the reference CRS per pixel). ``score_field`` is always the vectorizer's
        ``score`` field.
    feedback : object, optional
        Progress 0–50 % is the vectorization, 50–100 % the evaluation.
    overwrite : bool
        Replace an existing ``output_path``.

    Returns
    -------
    tuple
        ``(vectorized, run)``: the dict of ``vectorize_layer`` and the
        :class:`~polytopo.plugin.runs.evaluation.EvaluationRun`, whose provenance also names the model, its
        card and the provider used.
    """
    vectorized = vectorize_layer(raster_layer, model, output_path=output_path, overwrite=overwrite,
                                 feedback=ScaledFeedback(feedback, 0, 50), **dict(vectorize_options or {}))
    prediction = QgsVectorLayer(str(vectorized["path"]), "vectorized", "ogr")
    if not prediction.isValid():
        raise RunFailedError(f"Expected to open the vectorized polygons {vectorized['path']} but QGIS cannot")
    options = {**dict(evaluation_options or {}), "score_field": SCORE_FIELD}
    run = evaluate_layers(prediction, reference_layer, feedback=ScaledFeedback(feedback, 50, 100), **options)
    provenance = {**run.provenance, "model": vectorized["model"], "card": vectorized["card"],
                  "provider_used": vectorized["provider_used"], "vectorization": vectorized["provenance"]}
    return vectorized, dataclasses.replace(run, provenance=provenance)
