"""Processing parameters and outputs shared by the evaluation algorithms.

:func:`add_evaluation_parameters` declares the evaluation options on an algorithm,
:func:`evaluation_options` reads them back as keyword arguments of
:func:`~polytopo.plugin.runs.evaluation.evaluate_layers`, and :func:`evaluation_results` turns an export into
the algorithm's outputs (layer sources ``path|layername=...`` and headline numbers).
"""

import math

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputHtml,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingOutputVectorLayer,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterField,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorLayer,
)

from ...core.cluster import max_local_workers
from ...evaluator.tables.error_classes import ERROR_LAYERS as LAYER_TABLE
from ..errors import RunParameterError
from ..runs.raster_pixel import raster_pixel_size

__all__ = [
    "EVALUATION_HELP",
    "active_layer",
    "LAYER_OUTPUTS",
    "add_evaluation_parameters",
    "advanced",
    "add_evaluation_outputs",
    "add_workers_parameter",
    "evaluation_options",
    "evaluation_results",
    "number_outputs",
    "profiles",
]

#: Output name → GeoPackage layer of an evaluation (``SCORED_`` for the layers drawn by error class).
LAYER_OUTPUTS = {f"{'SCORED_' if layer.error_class is None else ''}{layer.name.upper()}": layer.name
                 for layer in LAYER_TABLE}
#: Threshold parameter → (EvaluationParams field, description, minimum, maximum).
_THRESHOLDS = {
    "IOU_THRESHOLD": ("iou_threshold", "Instance match IoU β (0–1; profile default 0.5)", 0.0, 1.0),
    "RING_THRESHOLD": ("ring_match_threshold",
                       "Ring match boundary IoU γ (0–1; profile default 0.1, reference-code 0.5)", 0.0, 1.0),
    "MIN_HOLE_AREA": ("min_hole_area_px2", "Minimum hole area A_min (px²; default 0)", 0.0, None),
    "SCORE_THRESHOLD": ("score_threshold", "Drop predictions scoring below (default 0)", None, None),
}

EVALUATION_HELP = """<p><b>Evaluation parameters</b> (all pixel quantities are pixels of the evaluation grid):</p>
<ul>
<li><b>Reference polygons</b>: the ground truth, another layer than the predictions; its CRS is the CRS of every
output, and the top-left corner of its extent is the grid origin.</li>
<li><b>Pixel size</b>: map units of the reference CRS per pixel (metres for UTM, <i>degrees</i> for a geographic
CRS): the ground sampling distance of the imagery, 1 cm to 10 m on the ground (other values are refused with the
right range). Or take it from a raster layer (<b>Pixel size from raster</b>). Give exactly one; with neither, the
raster the predictions were vectorized from is used when it is in the project.</li>
<li><b>Profile</b>: the metric definitions: paper (the PolyTopoBench paper's, the default) or a profile that
reproduces another evaluator's numbers (the evaluator's documentation describes each).</li>
<li><b>Instance match IoU β</b>: minimum polygon IoU (holes subtracted) of a match, 0–1.</li>
<li><b>Ring match boundary IoU γ</b>: boundary IoU (band radius 1 px) an exterior or hole must exceed to
match, 0–1.</li>
<li><b>Minimum hole area</b>: holes smaller than this many px² are removed from both sides first.</li>
<li><b>Score threshold</b>: predictions scoring below it are dropped (same unit as the score field).</li>
<li><b>Image field</b> / <b>Patch size</b>: group features into images by a field present in both layers, or
into square patches of this many pixels; matching never crosses images. Default: one image.</li>
</ul>
<p><b>Outputs</b>: a GeoPackage with the scored predictions and references, missed and hallucinated holes,
unmatched predictions and missed references (styled, with provenance metadata) and a <i>summary</i> table; a
report folder with report.html (also the HTML output, opened by the results viewer), summary.json, per-feature CSV
files and figures; the layers load as one group per run; the headline numbers AP50,
E-BIoU, Hole-F1 and Topo-EM (0–1).</p>"""


def profiles():
    """The evaluator's registered profile names (:data:`polytopo.evaluator.tables.profiles.REGISTRY`).

    The enum is declared when the provider loads. Without shapely the evaluator cannot be
    imported; the algorithm then offers only ``paper`` and refuses to run with the install
    instructions (:func:`~polytopo.plugin.processing.support.require_packages`).
    """
    try:
        from ...evaluator.tables import profiles as registry  # this form lets qgis.utils unload the subpackage
    except ImportError:
        return ("paper",)
    return registry.PROFILE_NAMES


def number_outputs():
    """Number output name → metric of the summary: the key metrics of the evaluator's metric table.

    ``{"AP50": "AP50", "E_BIOU": "E-BIoU", "HOLE_F1": "Hole-F1", "TOPO_EM": "Topo-EM"}``. The
    outputs are declared when the provider loads; without shapely the evaluator cannot be
    imported, and the algorithm declares none and refuses to run (as for :func:`profiles`).
    """
    try:
        from ...evaluator.tables import metric_table  # this form lets qgis.utils unload the subpackage with the plugin
    except ImportError:
        return {}
    return metric_table.OUTPUT_NAMES


def add_evaluation_parameters(algorithm, *, prediction_parameter=None, with_pixel_size_from=True):
    """Declare the reference layer, pixel size, profile, thresholds, grouping and output parameters.

    Parameters
    ----------
    algorithm : QgsProcessingAlgorithm
        The algorithm being initialised (``initAlgorithm``).
    prediction_parameter : str, optional
        Name of the algorithm's prediction-layer parameter; when given, the score and image
        fields are chosen from that layer.
    with_pixel_size_from : bool
        Offer ``PIXEL_SIZE_FROM`` (a raster layer whose pixel size is used).
    """
    add = algorithm.addParameter
    if prediction_parameter:
        add(QgsProcessingParameterField("SCORE_FIELD", "Score field (numeric, higher is more confident)",
                                        parentLayerParameterName=prediction_parameter,
                                        type=QgsProcessingParameterField.Numeric, optional=True))
    add(QgsProcessingParameterVectorLayer("REFERENCE", "Reference polygons", [QgsProcessing.TypeVectorPolygon]))
    add(QgsProcessingParameterNumber("PIXEL_SIZE", "Pixel size (reference map units per pixel)",
                                     QgsProcessingParameterNumber.Double, optional=True, minValue=0.0))
    if with_pixel_size_from:
        add(QgsProcessingParameterRasterLayer("PIXEL_SIZE_FROM", "Pixel size from raster", optional=True))
    add(QgsProcessingParameterEnum("PROFILE", "Profile", options=list(profiles()), defaultValue=0))
    for name, (_, description, minimum, maximum) in _THRESHOLDS.items():
        parameter = QgsProcessingParameterNumber(name, description, QgsProcessingParameterNumber.Double,
                                                 optional=True)
        if minimum is not None:
            parameter.setMinimum(minimum)
        if maximum is not None:
            parameter.setMaximum(maximum)
        add(advanced(parameter))
    if prediction_parameter:
        add(advanced(QgsProcessingParameterField("IMAGE_FIELD", "Image field (in both layers)",
                                                 parentLayerParameterName=prediction_parameter, optional=True)))
    add(advanced(QgsProcessingParameterNumber("PATCH_SIZE", "Patch size (pixels)",
                                              QgsProcessingParameterNumber.Integer, optional=True, minValue=1)))
    add(QgsProcessingParameterFileDestination("OUTPUT_GPKG", "Evaluation GeoPackage", "GeoPackage (*.gpkg)"))
    add(QgsProcessingParameterFolderDestination("OUTPUT_REPORT", "Report folder"))


def advanced(parameter):
    """Mark ``parameter`` Advanced (folded away in the dialog) and return it."""
    parameter.setFlags(parameter.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
    return parameter


def active_layer():
    """The layer selected in the Layers panel of QGIS desktop, or None (headless, ``qgis_process``)."""
    from qgis.utils import iface

    return iface.activeLayer() if iface is not None else None


def add_workers_parameter(algorithm):
    """Declare the advanced ``WORKERS`` parameter: Dask worker processes (0 = in process)."""
    limit = max_local_workers()
    algorithm.addParameter(advanced(QgsProcessingParameterNumber(
        "WORKERS", f"Workers (local Dask worker processes, 0 to {limit}; 0 = in this process)",
        QgsProcessingParameterNumber.Integer, defaultValue=0, minValue=0, maxValue=limit)))


def add_evaluation_outputs(algorithm):
    """Declare the layer outputs of :data:`LAYER_OUTPUTS`, the numbers of :func:`number_outputs` and the report.

    ``OUTPUT_HTML`` is the report.html of the report folder, which the Processing results
    viewer lists and opens.
    """
    algorithm.addOutput(QgsProcessingOutputHtml("OUTPUT_HTML", "Evaluation report"))
    algorithm.addOutput(QgsProcessingOutputString(
        "SUMMARY", "Key metrics in words ('undefined' where a number output is NaN, e.g. Hole-F1 without holes)"))
    for name, layer in LAYER_OUTPUTS.items():
        algorithm.addOutput(QgsProcessingOutputVectorLayer(name, layer.replace("_", " ").capitalize(),
                                                           QgsProcessing.TypeVectorPolygon))
    for name, metric in number_outputs().items():
        algorithm.addOutput(QgsProcessingOutputNumber(name, metric))


def _optional_number(algorithm, parameters, name, context):
    if parameters.get(name) is None:
        return None
    return algorithm.parameterAsDouble(parameters, name, context)


def evaluation_options(algorithm, parameters, context, *, reference_crs, pixel_size_raster=None):
    """Keyword arguments of :func:`~polytopo.plugin.runs.evaluation.evaluate_layers` (without the layers) from ``parameters``.

    Parameters
    ----------
    algorithm : QgsProcessingAlgorithm
    parameters : dict
    context : QgsProcessingContext
    reference_crs : QgsCoordinateReferenceSystem
        CRS the pixel size is expressed in.
    pixel_size_raster : QgsRasterLayer, optional
        Raster whose pixel size is used when neither ``PIXEL_SIZE`` nor ``PIXEL_SIZE_FROM``
        is given (the vectorized raster).

    Raises
    ------
    RunParameterError
        Both or neither of ``PIXEL_SIZE`` and ``PIXEL_SIZE_FROM`` given (without a fallback).
    """
    pixel_size = _optional_number(algorithm, parameters, "PIXEL_SIZE", context)
    raster = None
    if parameters.get("PIXEL_SIZE_FROM") is not None:
        raster = algorithm.parameterAsRasterLayer(parameters, "PIXEL_SIZE_FROM", context)
    if pixel_size is not None and raster is not None:
        raise RunParameterError("Expected either a pixel size or a raster to take it from but got both; "
                                "clear one of them")
    raster = raster if raster is not None else (pixel_size_raster if pixel_size is None else None)
    if raster is not None:
        pixel_size = raster_pixel_size(raster, reference_crs, context.transformContext())
    patch = parameters.get("PATCH_SIZE")
    return {
        "pixel_size": pixel_size,
        "profile": profiles()[algorithm.parameterAsEnum(parameters, "PROFILE", context)],
        "score_field": _field(algorithm, parameters, "SCORE_FIELD", context),
        "image_field": _field(algorithm, parameters, "IMAGE_FIELD", context),
        "patch_size_px": None if patch is None else algorithm.parameterAsInt(parameters, "PATCH_SIZE", context),
        "overrides": {field: _optional_number(algorithm, parameters, name, context)
                      for name, (field, *_) in _THRESHOLDS.items()},
        "transform_context": context.transformContext(),
        **({"workers": algorithm.parameterAsInt(parameters, "WORKERS", context)}
           if algorithm.parameterDefinition("WORKERS") is not None else {}),
    }


def _field(algorithm, parameters, name, context):
    if algorithm.parameterDefinition(name) is None or not parameters.get(name):
        return None
    fields = algorithm.parameterAsFields(parameters, name, context)
    return fields[0] if fields else None


def evaluation_results(run, files):
    """The evaluation outputs of an algorithm: layer sources, numbers and output paths.

    Parameters
    ----------
    run : EvaluationRun
    files : dict
        What :func:`~polytopo.plugin.runs.export.export_run` returned.

    Returns
    -------
    dict
        ``OUTPUT_GPKG``, ``OUTPUT_REPORT``, ``OUTPUT_HTML`` (report.html), one ``path|layername=...`` per
        :data:`LAYER_OUTPUTS`, one float per :func:`number_outputs` (NaN when undefined) and
        ``SUMMARY``, the same numbers in words ("Hole-F1 undefined").
    """
    gpkg = str(files["geopackage"])
    metrics = run.evaluation.summary["metrics"]
    results = {"OUTPUT_GPKG": gpkg, "OUTPUT_REPORT": str(files["report_html"].parent),
               "OUTPUT_HTML": str(files["report_html"])}
    results.update({name: f"{gpkg}|layername={layer}" for name, layer in LAYER_OUTPUTS.items()})
    words = []
    for name, metric in number_outputs().items():
        value = metrics.get(metric)
        results[name] = math.nan if value is None else float(value)
        words.append(f"{metric} {'undefined' if math.isnan(results[name]) else format(results[name], '.4f')}")
    results["SUMMARY"] = ", ".join(words)
    return results
