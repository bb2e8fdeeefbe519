"""Processing parameters shared by the vectorization algorithms."""

from qgis.core import (
    QgsProcessing,
    QgsProject,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterEnum,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFile,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorDestination,
    QgsProcessingParameterBand,
    QgsProcessingParameterVectorLayer,
)

from ..runs.layer_choice import default_raster
from .evaluation_parameters import active_layer, advanced
from ..errors import RunParameterError

__all__ = ["CHANNEL_PARAMETERS", "VECTORIZE_HELP", "add_vectorize_parameters", "add_vectorize_outputs",
           "bundled_models", "channel_bands", "model_argument", "providers", "vectorize_options", "vectorize_results"]

VECTORIZE_HELP = """<p><b>Vectorization parameters</b>:</p>
<ul>
<li><b>Raster</b>: a raster file read by GDAL with the bands the model expects (its card's band mapping, else
bands 1…n for n input channels); 8-bit and 16-bit imagery are scaled as the card says.</li>
<li><b>Band for model channel 1 … 4</b>: the raster band feeding each model input channel (one band may feed
several channels; all empty: the card's band mapping, else bands 1…n); the run log says which band feeds which
channel.</li>
<li><b>ONNX model</b>: a model file with a PolyTopo or Deepness model card in its metadata; or
<b>Bundled model</b>: one of the models shipped with PolyTopo. Give exactly one.</li>
<li><b>Execution provider</b>: auto (CUDA when onnxruntime-gpu and a GPU are usable, else CPU), cuda (fail
without a GPU), cpu. The provider actually used is reported in the log and in the output's metadata.</li>
<li><b>Extent</b> / <b>Area of interest</b>: process only this rectangle / only pixels inside these polygons.</li>
<li><b>Tile size</b>, <b>Tile overlap</b>: model pixels (the raster resampled to the model's resolution); default
from the model card. <b>Batch size</b>: tiles per inference call (default 1; larger is faster on a GPU and needs
more memory).</li>
<li><b>Segmentation threshold</b> (0 to 1), <b>Smallest polygon</b>, <b>Smallest hole</b> vectorized (square model
pixels):
probability a pixel needs to be foreground, and the smallest polygon and hole kept; empty takes the model card's
values (<code>seg_thresh</code>, <code>polytopo.min_area_px</code>, <code>polytopo.min_hole_area_px</code>). The
threshold applies to the semantic, vertex-mask and frame-field families only. The values used are written to the
run log and to the output's metadata.</li>
<li><b>Polygons</b>: GeoPackage (or GeoJSON) of polygons with holes, fields class_id, class_name and score, in the
raster's CRS.</li>
</ul>"""


def providers():
    """The execution provider choices (only ``auto`` while the inference engine cannot be imported)."""
    try:
        from ...models import session  # this form lets qgis.utils unload the subpackage with the plugin
    except ImportError:
        return ("auto",)
    return session.PROVIDER_CHOICES


def bundled_models():
    """Names of the models of the bundled zoo (none when the zoo or the engine is unavailable)."""
    try:
        from ...models import zoo  # this form lets qgis.utils unload the subpackage with the plugin

        return tuple(model.name for model in zoo.zoo_models())
    except (ImportError, LookupError):
        return ()


def model_argument(algorithm, parameters, context):
    """The ``model`` argument of :func:`~polytopo.plugin.runs.vectorize.vectorize_layer`: the MODEL file or the BUNDLED_MODEL name.

    Raises
    ------
    RunParameterError
        Neither or both given.
    """
    path = algorithm.parameterAsFile(parameters, "MODEL", context) if parameters.get("MODEL") else ""
    bundled = parameters.get("BUNDLED_MODEL") is not None
    if bool(path) == bundled:
        raise RunParameterError(
            f"Expected either an ONNX model file or a bundled model but got {'both' if path else 'neither'}; "
            f"choose one (bundled models: {list(bundled_models()) or 'none installed'})"
        )
    if path:
        return path
    return bundled_models()[algorithm.parameterAsEnum(parameters, "BUNDLED_MODEL", context)]


def add_vectorize_parameters(algorithm):
    """Declare the raster, model, provider, extent, AOI, tiling and decoding parameters and the OUTPUT destination."""
    add = algorithm.addParameter
    raster = QgsProcessingParameterRasterLayer("INPUT", "Raster")
    chosen = default_raster(QgsProject.instance(), active_layer())
    if chosen is not None:  # the dialog's default: the active raster, else the first one (not an empty box)
        raster.setGuiDefaultValueOverride(chosen.id())
    add(raster)
    add(QgsProcessingParameterFile("MODEL", "ONNX model", behavior=QgsProcessingParameterFile.File,
                                   extension="onnx", optional=True))
    add(QgsProcessingParameterEnum("BUNDLED_MODEL", "Bundled model", options=list(bundled_models()),
                                   optional=True))
    for channel in range(1, CHANNEL_PARAMETERS + 1):  # one choice per model channel; a band may feed several
        add(advanced(QgsProcessingParameterBand(
            f"BAND_{channel}", f"Band for model channel {channel} (empty: the card's band mapping)",
            parentLayerParameterName="INPUT", optional=True)))
    add(QgsProcessingParameterEnum("PROVIDER", "Execution provider", options=list(providers()),
                                   defaultValue=0))
    add(QgsProcessingParameterExtent("EXTENT", "Extent (raster CRS)", optional=True))
    add(QgsProcessingParameterVectorLayer("AOI", "Area of interest", [QgsProcessing.TypeVectorPolygon],
                                          optional=True))
    for name, description, minimum in (("TILE", "Tile size (model pixels)", 1),
                                        ("OVERLAP", "Tile overlap (model pixels)", 0),
                                        ("BATCH", "Batch size (tiles)", 1)):
        add(advanced(QgsProcessingParameterNumber(name, description, QgsProcessingParameterNumber.Integer,
                                                  optional=True, minValue=minimum)))
    for name, description, maximum in (
            ("SEG_THRESHOLD", "Segmentation threshold (0–1; default: the card's)", 1.0),
            ("POLYGON_MIN_AREA_PX", "Smallest polygon vectorized (square model pixels; default: the card's)", None),
            ("POLYGON_MIN_HOLE_AREA_PX", "Smallest hole vectorized (square model pixels; default: the card's)", None)):
        number = QgsProcessingParameterNumber(name, description, QgsProcessingParameterNumber.Double, optional=True,
                                              minValue=0.0)
        if maximum is not None:
            number.setMaximum(maximum)
        add(advanced(number))
    add(advanced(QgsProcessingParameterNumber(
        "MAX_PIXELS", "Maximum model pixels (a larger processed area is refused with the estimate of the work; "
        "default: the engine's limit, 2e9)", QgsProcessingParameterNumber.Double, optional=True, minValue=1.0)))
    add(QgsProcessingParameterVectorDestination("OUTPUT", "Polygons", QgsProcessing.TypeVectorPolygon))


def add_vectorize_outputs(algorithm):
    """Declare the FEATURES (polygon count) and PROVIDER_USED outputs."""
    algorithm.addOutput(QgsProcessingOutputNumber("FEATURES", "Polygons written"))
    algorithm.addOutput(QgsProcessingOutputString("PROVIDER_USED", "Execution provider used"))


def _optional_int(algorithm, parameters, name, context):
    return None if parameters.get(name) is None else algorithm.parameterAsInt(parameters, name, context)


def _optional_double(algorithm, parameters, name, context):
    return None if parameters.get(name) is None else algorithm.parameterAsDouble(parameters, name, context)


CHANNEL_PARAMETERS = 4
"""``BAND_1`` … ``BAND_4``: one band choice per model input channel (RGB + near infrared)."""


def channel_bands(algorithm, parameters, context):
    """The bands of ``BAND_1`` … ``BAND_n`` in channel order, or None when none is set (the card's mapping).

    Raises
    ------
    RunParameterError
        A channel is set while an earlier one is not (the channels are consecutive from 1).
    """
    chosen = [algorithm.parameterAsInt(parameters, f"BAND_{channel}", context)
              if parameters.get(f"BAND_{channel}") not in (None, "") else None
              for channel in range(1, CHANNEL_PARAMETERS + 1)]
    while chosen and chosen[-1] is None:
        chosen.pop()
    if not chosen:
        return None
    if None in chosen:
        missing = [index + 1 for index, band in enumerate(chosen) if band is None]
        raise RunParameterError(
            f"Expected a band for every model channel from 1 to {len(chosen)} but BAND_{missing[0]} is empty; choose "
            "one band per channel in order, or leave them all empty for the card's band mapping")
    return chosen


def vectorize_options(algorithm, parameters, context, raster):
    """Keyword arguments of :func:`~polytopo.plugin.runs.vectorize.vectorize_layer` besides the raster, model and output.

    Parameters
    ----------
    algorithm : QgsProcessingAlgorithm
    parameters : dict
    context : QgsProcessingContext
    raster : QgsRasterLayer
        The input raster; the extent is taken in its CRS.
    """
    extent = None
    if parameters.get("EXTENT"):
        extent = algorithm.parameterAsExtent(parameters, "EXTENT", context, raster.crs())
    aoi = algorithm.parameterAsVectorLayer(parameters, "AOI", context) if parameters.get("AOI") else None
    return {
        "provider": providers()[algorithm.parameterAsEnum(parameters, "PROVIDER", context)],
        "extent": extent,
        "aoi_layer": aoi,
        "tile_px": _optional_int(algorithm, parameters, "TILE", context),
        "overlap_px": _optional_int(algorithm, parameters, "OVERLAP", context),
        "batch": _optional_int(algorithm, parameters, "BATCH", context),
        "threshold": _optional_double(algorithm, parameters, "SEG_THRESHOLD", context),
        "min_area_px": _optional_double(algorithm, parameters, "POLYGON_MIN_AREA_PX", context),
        "min_hole_area_px": _optional_double(algorithm, parameters, "POLYGON_MIN_HOLE_AREA_PX", context),
        "bands": channel_bands(algorithm, parameters, context),
        "transform_context": context.transformContext(),
        **({} if parameters.get("MAX_PIXELS") is None
           else {"max_pixels": int(algorithm.parameterAsDouble(parameters, "MAX_PIXELS", context))}),
    }


def vectorize_results(vectorized):
    """``OUTPUT``, ``FEATURES`` and ``PROVIDER_USED`` of a :class:`~polytopo.plugin.runs.vectorize.VectorizationRun`."""
    return {"OUTPUT": vectorized.source, "FEATURES": vectorized.features, "PROVIDER_USED": vectorized.provider_used}
