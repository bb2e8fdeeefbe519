"""Processing algorithm ``polytopo:vectorize_evaluate``: vectorize a raster, then score the result."""

from qgis.core import QgsProcessingAlgorithm, QgsProject

from .evaluation_parameters import (
    EVALUATION_HELP,
    add_evaluation_outputs,
    add_evaluation_parameters,
    evaluation_options,
    evaluation_results,
)
from ..errors import PluginError
from ..runs.layer_choice import default_reference
from .support import (
    VECTORIZE_PACKAGES,
    ExplainedRanges,
    QuietReport,
    as_processing_error,
    load_outputs_on_completion,
    require_packages,
)
from ..runs.feedback import work_and_write
from ..runs.project_layers import run_group_name
from .vectorize_parameters import (
    VECTORIZE_HELP,
    add_vectorize_outputs,
    add_vectorize_parameters,
    model_argument,
    vectorize_options,
    vectorize_results,
)

__all__ = ["VectorizeEvaluateAlgorithm"]


class VectorizeEvaluateAlgorithm(QuietReport, ExplainedRanges, QgsProcessingAlgorithm):
    """Vectorize with an ONNX model and evaluate against a reference; see :func:`polytopo.plugin.runs.vectorize_evaluate.vectorize_and_evaluate`."""

    def name(self):
        return "vectorize_evaluate"

    def displayName(self):  # noqa: N802 - QGIS API name.
        return "Vectorize and evaluate"

    def group(self):
        return "Evaluation"

    def groupId(self):  # noqa: N802 - QGIS API name.
        return "evaluation"

    def shortHelpString(self):  # noqa: N802 - QGIS API name.
        return ("<p>Vectorizes the raster with the ONNX model, then evaluates the polygons (score field: the "
                "model's score) against the reference polygons. Without a pixel size, the raster's pixel size "
                "is the evaluation pixel.</p>" + VECTORIZE_HELP + EVALUATION_HELP)

    def createInstance(self):  # noqa: N802 - QGIS API name.
        return VectorizeEvaluateAlgorithm()

    def initAlgorithm(self, config=None):  # noqa: N802 - QGIS API name.
        add_vectorize_parameters(self)
        add_evaluation_parameters(self, with_pixel_size_from=False)
        reference = default_reference(QgsProject.instance())
        if reference is not None:  # the labels, not a layer an earlier vectorization wrote
            self.parameterDefinition("REFERENCE").setGuiDefaultValueOverride(reference.id())
        add_vectorize_outputs(self)
        add_evaluation_outputs(self)

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 - QGIS API name.
        require_packages(VECTORIZE_PACKAGES)
        from ..runs import export_run, vectorize_and_evaluate  # needs onnxruntime: imported once it is known

        raster = self.parameterAsRasterLayer(parameters, "INPUT", context)
        reference = self.parameterAsVectorLayer(parameters, "REFERENCE", context)
        polygons = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        try:
            work, write = work_and_write(feedback)
            vectorized, run = vectorize_and_evaluate(
                raster, reference, model_argument(self, parameters, context),
                output_path=polygons, overwrite=True,
                vectorize_options=vectorize_options(self, parameters, context, raster), feedback=work,
                evaluation_options=evaluation_options(self, parameters, context, reference_crs=reference.crs(),
                                                      pixel_size_raster=raster))
            files = export_run(run, self.parameterAsFileOutput(parameters, "OUTPUT_GPKG", context),
                               self.parameterAsString(parameters, "OUTPUT_REPORT", context), overwrite=True,
                               feedback=write)
        except PluginError as exc:
            raise as_processing_error(exc) from exc
        load_outputs_on_completion(context, files["geopackage"], run_group_name(raster.name(), reference.name()),
                                   polygons=(polygons, vectorized.source, f"{raster.name()} polygons"),
                                   hidden=(reference.id(),))
        return {**evaluation_results(run, files), **vectorize_results(vectorized)}
