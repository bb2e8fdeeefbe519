"""Processing algorithm ``polytopo:vectorize``: raster → ONNX model → polygons with holes."""

from qgis.core import QgsProcessingAlgorithm

from ..errors import PluginError
from .support import VECTORIZE_PACKAGES, ExplainedRanges, as_processing_error, load_layer_by_source, require_packages
from .vectorize_parameters import (
    VECTORIZE_HELP,
    add_vectorize_outputs,
    add_vectorize_parameters,
    model_argument,
    vectorize_options,
    vectorize_results,
)

__all__ = ["VectorizeAlgorithm"]


class VectorizeAlgorithm(ExplainedRanges, QgsProcessingAlgorithm):
    """Vectorize a raster with an ONNX model; see :func:`polytopo.plugin.runs.vectorize.vectorize_layer`."""

    def name(self):
        return "vectorize"

    def displayName(self):  # noqa: N802 - QGIS API name.
        return "Vectorize raster with ONNX model"

    def group(self):
        return "Vectorization"

    def groupId(self):  # noqa: N802 - QGIS API name.
        return "vectorization"

    def shortHelpString(self):  # noqa: N802 - QGIS API name.
        return ("<p>Runs an exported ONNX polygon model over a raster, tile by tile with blended overlaps, and "
                "writes the polygons it finds, exteriors and holes, as a polygon layer.</p>" + VECTORIZE_HELP)

    def createInstance(self):  # noqa: N802 - QGIS API name.
        return VectorizeAlgorithm()

    def initAlgorithm(self, config=None):  # noqa: N802 - QGIS API name.
        add_vectorize_parameters(self)
        add_vectorize_outputs(self)

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 - QGIS API name.
        require_packages(VECTORIZE_PACKAGES)
        from ..runs import vectorize_layer  # needs onnxruntime: imported once it is known to be there

        raster = self.parameterAsRasterLayer(parameters, "INPUT", context)
        destination = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        try:
            vectorized = vectorize_layer(
                raster, model_argument(self, parameters, context),
                output_path=destination, overwrite=True,
                feedback=feedback, **vectorize_options(self, parameters, context, raster))
        except PluginError as exc:
            raise as_processing_error(exc) from exc
        load_layer_by_source(context, destination, vectorized.source)
        return vectorize_results(vectorized)
