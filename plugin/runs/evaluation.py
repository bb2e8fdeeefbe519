"""Evaluate a prediction layer against a reference layer: QGIS layers in, an evaluation out.

The reference layer fixes the CRS and the pixel frame (origin at the top-left of its
extent, ``pixel_size`` map units per pixel, see
:func:`polytopo.core.vector_files.frame_for_bounds`); the prediction layer is
reprojected to it with QGIS's transformations. The features become instances in pixels
through the evaluator's frame step (:func:`polytopo.evaluator.inputs.frame.instances_in_frame`),
and :func:`polytopo.evaluator.evaluate` does the rest. Safe to run in a worker thread.
"""

import datetime
import warnings
from dataclasses import dataclass

import shapely
from qgis.core import Qgis, QgsCoordinateReferenceSystem, QgsCoordinateTransformContext, QgsUnitTypes

from ...version import __version__
from ...evaluator import EvaluatorError, InputFormatError, evaluate, params_for
from ...evaluator.inputs.input_checks import DisjointInputsWarning
from ...core.cluster import ClusterAsker, check_cluster_choice, open_client, require_distributed
from ...core.errors import EvaluationCanceled
from ...evaluator.inputs.frame import instances_in_frame
from ...core.vector_files import frame_for_bounds
from ...evaluator.inputs.io_vector import SCORE_FIELD, implied_score_field
from ...evaluator.tables.profiles import DEFAULT_PROFILE
from ..errors import LayerInputError, RunParameterError
from ..setup.dependencies import SCALE_OUT
from .layer_reading import LayerFeatures, describe_layer, layer_crs, read_polygon_features
from .raster_pixel import check_pixel_size
from .feedback import RunSteps

__all__ = ["QGIS_ASKER", "EvaluationRun", "evaluate_layers"]

_EXPECTED_PHASES = 8


@dataclass(frozen=True)
class EvaluationRun:
    """The result of evaluating two QGIS layers.

    Attributes
    ----------
    evaluation : polytopo.evaluator.Evaluation
        Summary, per-feature records (geometry in pixels) and the full outcome.
    frame : polytopo.core.vector_files.PixelFrame
        The pixel grid of the evaluation; ``frame.to_map`` turns record geometry back
        into map units of :attr:`crs`.
    crs : QgsCoordinateReferenceSystem
        The reference layer's CRS; every output is in it.
    provenance : dict
        JSON-ready record of the run: plugin and library versions, date (UTC), profile,
        parameters, pixel size and its unit, input layer names, sources and CRS, feature
        counts, warnings.
    """

    evaluation: object
    frame: object
    crs: object
    provenance: dict


def evaluate_layers(prediction_layer, reference_layer, *, pixel_size, profile=DEFAULT_PROFILE, score_field=None,
                    default_score=None, image_field=None, patch_size_px=None, overrides=None, feedback=None,
                    transform_context=None, workers=0, scheduler=None):
    """Evaluate the polygons of ``prediction_layer`` against those of ``reference_layer``.

    Parameters
    ----------
    prediction_layer, reference_layer : QgsVectorLayer or QgsFeatureSource
        Polygon layers; the predictions are reprojected to the reference CRS. The
        predictions may also be :class:`~polytopo.plugin.runs.layer_reading.LayerFeatures`
        already in the reference CRS (:func:`~polytopo.plugin.runs.layer_reading.features_from_polygons`:
        a vectorizer's polygons evaluated without reading its output back).
    pixel_size : float
        Size of one evaluation pixel in map units of the reference CRS (metres for a
        UTM CRS, degrees for a geographic one): the ground sampling distance of the
        imagery. Every pixel threshold (BIoU radius 1 px, A_min in px²) is in this unit.
    profile : str
        One of :data:`polytopo.evaluator.PROFILES`.
    score_field : str, optional
        Numeric field of the predictions holding their confidence; default the numeric
        field ``score`` when the layer has one and no ``default_score`` is given (the
        vectorizer's output is scored by its own confidence).
    default_score : float, optional
        Score of predictions with a NULL score, and of every prediction when there is no
        score field. Without it, a NULL score is an error and, without any score field,
        every prediction scores 1.0 (AP then ranks them in feature order).
    image_field : str, optional
        Field of both layers whose values group features into images (tiles).
    patch_size_px : int, optional
        Group features into square patches of this side, pixels (instead of an image field).
    overrides : dict, optional
        :class:`polytopo.evaluator.EvaluationParams` fields to change, e.g.
        ``{"iou_threshold": 0.5, "ring_match_threshold": 0.1, "min_hole_area_px2": 16.0,
        "score_threshold": 0.0}``; None values are ignored.
    feedback : object, optional
        ``setProgress``, ``isCanceled``, ``pushInfo``, ``reportError`` (see
        :mod:`polytopo.plugin.runs.feedback`).
    transform_context : QgsCoordinateTransformContext, optional
        Datum transformations for the reprojection; defaults to the current project's.
        Pass it from the main thread when running in a worker thread.
    workers : int
        Worker processes of a local Dask cluster for the evaluation (0: in this process);
        they run the system Python, not the QGIS binary (same numbers either way).
    scheduler : str, optional
        Address ``tcp://HOST:PORT`` of a running Dask scheduler to evaluate on instead
        (excludes ``workers``; see :func:`polytopo.core.cluster.open_client`).

    Returns
    -------
    EvaluationRun

    Raises
    ------
    LayerInputError
        A layer is not a valid polygon layer, lacks a named field, has a NULL image id
        or score (without ``default_score``), or a geometry the evaluator cannot read.
    RunParameterError
        No usable pixel size (not 1 cm–10 m on the ground, see
        :func:`polytopo.plugin.runs.raster_pixel.check_pixel_size`), an unknown profile or
        parameter, both ``image_field`` and ``patch_size_px``, both ``workers`` and
        ``scheduler``, a malformed scheduler address, or a cluster asked for without ``dask``
        and ``distributed`` (:data:`QGIS_ASKER`'s message; checked before any layer is read).
    RunCanceled
        ``feedback.isCanceled()`` became true; checked while reading, between phases and, on
        a cluster, after each finished partition (the rest are canceled and the cluster closed).

    Notes
    -----
    Layers that do not overlap are evaluated (everything is then unmatched) but a
    warning is sent to ``feedback`` and kept in ``provenance["warnings"]``.
    """
    steps = RunSteps(feedback, "evaluation")
    params = _params(profile, overrides)
    cluster = _cluster(workers, scheduler)
    crs = layer_crs(reference_layer)
    ground_metres = check_pixel_size(pixel_size, crs, reference_layer.sourceExtent().center(),
                     transform_context or QgsCoordinateTransformContext())
    if image_field and patch_size_px is not None:
        raise RunParameterError(
            f"Expected either an image field or a patch size to group features into images but got both "
            f"(image_field={image_field!r}, patch_size_px={patch_size_px}); choose one"
        )
    steps.progress(0)
    steps.info("Reading the reference layer")
    reference = read_polygon_features(reference_layer, role="reference", fields=[image_field], steps=steps)
    steps.progress(10)
    if isinstance(prediction_layer, LayerFeatures):
        prediction = prediction_layer
    else:
        steps.info("Reading the prediction layer")
        if not score_field:
            numeric = [field.name() for field in prediction_layer.fields() if field.isNumeric()]
            score_field = implied_score_field(numeric, None, default_score)
            if score_field:
                steps.info(f"Scores from the prediction field {SCORE_FIELD!r} (no score field was named)")
        prediction = read_polygon_features(prediction_layer, role="prediction", fields=[image_field, score_field],
                                           numeric_fields=[score_field], target_crs=crs,
                                           transform_context=transform_context, steps=steps)
    steps.progress(30)
    disjoint = _warn_about_overlap(reference, prediction, crs, steps)
    frame = _frame(reference, pixel_size, patch_size_px, crs)
    if not score_field and default_score is None:
        steps.info("No score field: every prediction scores 1.0 and AP ranks them in feature order")
    gt_set = _instance_set(reference, frame, "reference", image_field=image_field)
    pred_set = _instance_set(prediction, frame, "prediction", image_field=image_field, score_field=score_field,
                             default_score=default_score, scored=True)
    # The layers' own words (names, extents, CRS) replace the evaluator's pixel-space ones.
    evaluation = _evaluate(gt_set, pred_set, params, steps, cluster, said=(DisjointInputsWarning,) if disjoint else ())
    steps.progress(100)
    provenance = _provenance(evaluation, frame, crs, prediction_layer, reference_layer, prediction, reference,
                             {"pixel_size_m": ground_metres, "score_field": score_field, "default_score": default_score,
                              "image_field": image_field, "patch_size_px": patch_size_px}, steps.warnings)
    return EvaluationRun(evaluation, frame, crs, provenance)


def _params(profile, overrides):
    try:
        return params_for(profile, **dict(overrides or {}))
    except EvaluatorError as exc:
        raise RunParameterError(str(exc)) from exc


def _unit_name(crs):
    return QgsUnitTypes.toString(crs.mapUnits()) if crs.isValid() else "map units"


def _warn_about_overlap(reference, prediction, crs, steps):
    """Warn when a layer is empty or the two do not overlap; True when the layers lie apart."""
    for features, role in ((reference, "reference"), (prediction, "prediction")):
        if not any(geometry is not None for geometry in features.geometries):
            steps.warn(f"The {role} layer {features.name!r} has no polygons; every feature of the other "
                       "layer is unmatched")
            return False
    ref_box, pred_box = shapely.box(*reference.bounds()), shapely.box(*prediction.bounds())
    if ref_box.intersects(pred_box):
        return False
    steps.warn(
        f"The prediction layer {prediction.name!r} does not overlap the reference layer "
        f"{reference.name!r} (extents {_rounded(pred_box.bounds)} and {_rounded(ref_box.bounds)} in "
        f"{crs.authid() or 'the reference CRS'}): no prediction can match and every score is 0; check "
        "that both layers cover the same area and carry the right CRS"
    )
    return True


def _rounded(bounds):
    return "(" + ", ".join(f"{value:.6g}" for value in bounds) + ")"


def _frame(reference, pixel_size, patch_size_px, crs):
    crs_wkt = crs.toWkt(QgsCoordinateReferenceSystem.WKT_PREFERRED) if crs.isValid() else None
    try:
        return frame_for_bounds(reference.bounds(), pixel_size=float(pixel_size), patch_size_px=patch_size_px,
                                crs_wkt=crs_wkt)
    except EvaluatorError as exc:
        raise RunParameterError(str(exc)) from exc


def _instance_set(features, frame, role, **fields):
    fids = features.fids
    try:
        return instances_in_frame(frame, features.geometries, source_ids=fids, source=features.source,
                                  values=features.values, skipped=features.skipped,
                                  describe=lambda index: f"{role} layer {features.name!r} feature {fids[index]}",
                                  **fields)
    except InputFormatError as exc:
        raise LayerInputError(str(exc)) from exc


#: The dock's and Processing's words in the message when Dask is missing.
QGIS_ASKER = ClusterAsker("the Workers or Scheduler field (WORKERS in Processing)", SCALE_OUT.how_to_install(),
                          "set Workers to 0 and leave Scheduler empty to evaluate in the QGIS process")


def _cluster(workers, scheduler):
    try:
        workers, scheduler = check_cluster_choice(workers, scheduler)
        if workers or scheduler:
            require_distributed(QGIS_ASKER)
    except EvaluatorError as exc:
        raise RunParameterError(str(exc)) from exc
    return workers, scheduler


def _evaluate(gt_set, pred_set, params, steps, cluster, said=()):
    """Run the evaluator; its warnings go to ``steps``, but those of the categories in ``said``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with open_client(*cluster) as client:
                evaluation = evaluate(gt_set, pred_set, params, progress=steps.phases(30, 99, _EXPECTED_PHASES),
                                      cancel=steps.cancel, client=client)
        except EvaluationCanceled as exc:
            raise steps.canceled() from exc
        except InputFormatError as exc:
            raise LayerInputError(str(exc)) from exc
        except EvaluatorError as exc:
            raise RunParameterError(str(exc)) from exc
    for warning in caught:
        if not issubclass(warning.category, said):
            steps.warn(str(warning.message))
    return evaluation


def _provenance(evaluation, frame, crs, prediction_layer, reference_layer, prediction, reference, inputs,
                run_warnings):
    summary = evaluation.summary
    return {
        "plugin": "PolyTopo",
        "plugin_version": __version__,
        "qgis_version": Qgis.QGIS_VERSION,
        "created_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "profile": summary["profile"],
        "parameters": summary["parameters"],
        "pixel_size": frame.pixel_size,
        "pixel_size_unit": f"{_unit_name(crs)} per pixel",
        "frame_origin": [frame.origin_x, frame.origin_y],
        "crs": crs.authid() if crs.isValid() else None,
        "prediction": {**describe_layer(prediction_layer), "features": len(prediction.fids),
                       "skipped": dict(prediction.skipped)},
        "reference": {**describe_layer(reference_layer), "features": len(reference.fids),
                      "skipped": dict(reference.skipped)},
        **inputs,
        "versions": summary["versions"],
        "warnings": list(run_warnings),
    }
