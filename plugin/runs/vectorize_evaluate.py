"""Vectorize a raster and evaluate the polygons against a reference layer, in one run.

The vectorizer writes its polygons once, to ``output_path``; the evaluation takes the
same polygons from the engine directly (reprojected to the reference CRS by the QGIS
transformation a layer read would use), so the numbers equal those of evaluating the
written layer.
"""

import dataclasses

from ..errors import LayerInputError
from .evaluation import evaluate_layers
from .feedback import ScaledFeedback
from .layer_reading import features_from_polygons, layer_crs
from .vectorize import SCORE_FIELD, vectorize_layer

__all__ = ["vectorize_and_evaluate"]

#: Feature id of the first polygon of a written file, by suffix (as OGR and QGIS number them).
_FIRST_FID = {".gpkg": 1, ".geojson": 0}


def vectorize_and_evaluate(raster_layer, reference_layer, model, *, output_path, vectorize_options=None,
                           evaluation_options=None, feedback=None, overwrite=False):
    """Run :func:`polytopo.plugin.runs.vectorize.vectorize_layer`, then :func:`polytopo.plugin.runs.evaluation.evaluate_layers` on its polygons.

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
        ``score`` field; the polygons have no image field (group them with ``patch_size_px``).
    feedback : object, optional
        Progress 0–50 % is the vectorization, 50–100 % the evaluation.
    overwrite : bool
        Replace an existing ``output_path``.

    Returns
    -------
    tuple
        ``(vectorized, run)``: the :class:`~polytopo.plugin.runs.vectorize.VectorizationRun`
        (its ``polygons`` None) and the :class:`~polytopo.plugin.runs.evaluation.EvaluationRun`,
        whose provenance also names the model, its card and the provider used.

    Raises
    ------
    LayerInputError
        ``evaluation_options`` names an image field (the polygons have none); otherwise
        what ``vectorize_layer`` and ``evaluate_layers`` raise.
    """
    options = {**dict(evaluation_options or {}), "score_field": SCORE_FIELD}
    if options.get("image_field"):
        raise LayerInputError(
            f"prediction layer 'vectorized': expected a field {options['image_field']!r} but the vectorized "
            f"polygons have only {SCORE_FIELD!r}, 'class_id' and 'class_name'; group them by patch size instead"
        )
    vectorized = vectorize_layer(raster_layer, model, output_path=output_path, overwrite=overwrite,
                                 feedback=ScaledFeedback(feedback, 0, 50), keep_polygons=True,
                                 **dict(vectorize_options or {}))
    polygons = vectorized.polygons
    vectorized = dataclasses.replace(vectorized, polygons=None)
    prediction = features_from_polygons(
        [polygon.geometry for polygon in polygons], name="vectorized", source=vectorized.source,
        crs=raster_layer.crs(), first_fid=_FIRST_FID[vectorized.path.suffix.lower()],
        values={SCORE_FIELD: [float(polygon.score) for polygon in polygons]},
        target_crs=layer_crs(reference_layer), transform_context=options.get("transform_context"))
    run = evaluate_layers(prediction, reference_layer, feedback=ScaledFeedback(feedback, 50, 100), **options)
    provenance = {**run.provenance, "model": vectorized.model, "card": vectorized.card,
                  "provider_used": vectorized.provider_used, "vectorization": vectorized.provenance}
    return vectorized, dataclasses.replace(run, provenance=provenance)
