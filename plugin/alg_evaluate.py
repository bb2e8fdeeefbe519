"""Processing algorithm ``polytopo:evaluate``: score a polygon layer against a reference layer."""

from qgis.core import QgsProcessing, QgsProcessingAlgorithm, QgsProcessingParameterVectorLayer

from .algorithm_parameters import (
    EVALUATION_HELP,
    add_evaluation_outputs,
    add_evaluation_parameters,
    add_workers_parameter,
    evaluation_options,
    evaluation_results,
)
from .errors import PluginError
from .processing_support import EVALUATION_PACKAGES, as_processing_error, load_outputs_on_completion, require_packages

__all__ = ["EvaluateAlgorithm"]


class EvaluateAlgorithm(QgsProcessingAlgorithm):
    """Evaluate polygons (with holes) against reference polygons; see :func:`.evaluation.evaluate_layers`."""

    def name(self):
        return "evaluate"

    def displayName(self):  # noqa: N802 - QGIS API name.
        return "Evaluate polygons against reference"

    def group(self):
        return "Evaluation"

    def groupId(self):  # noqa: N802 - QGIS API name.
        return "evaluation"

    def shortHelpString(self):  # noqa: N802 - QGIS API name.
        return ("<p>Scores each predicted polygon against the reference polygons with the PolyTopoBench "
                "metrics: instance IoU, exterior and hole boundary IoU, Hole-F1, Topo-EM, POLIS (px) and MTA "
                "(degrees), and gives every feature an error class. The predictions are reprojected to the "
                "reference CRS.</p><p><b>Prediction polygons</b>: any polygon layer (MultiPolygons are split "
                "into parts).</p>" + EVALUATION_HELP)

    def createInstance(self):  # noqa: N802 - QGIS API name.
        return EvaluateAlgorithm()

    def initAlgorithm(self, config=None):  # noqa: N802 - QGIS API name.
        self.addParameter(QgsProcessingParameterVectorLayer("INPUT", "Prediction polygons",
                                                            [QgsProcessing.TypeVectorPolygon]))
        add_evaluation_parameters(self, prediction_parameter="INPUT")
        add_workers_parameter(self)
        add_evaluation_outputs(self)

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 - QGIS API name.
        require_packages(EVALUATION_PACKAGES)
        from .runs import evaluate_layers, export_run  # needs shapely: imported once it is known to be there

        prediction = self.parameterAsVectorLayer(parameters, "INPUT", context)
        reference = self.parameterAsVectorLayer(parameters, "REFERENCE", context)
        try:
            options = evaluation_options(self, parameters, context, reference_crs=reference.crs())
            run = evaluate_layers(prediction, reference, feedback=feedback, **options)
            files = export_run(run, self.parameterAsFileOutput(parameters, "OUTPUT_GPKG", context),
                               self.parameterAsString(parameters, "OUTPUT_REPORT", context), overwrite=True,
                               feedback=feedback)
        except PluginError as exc:
            raise as_processing_error(exc) from exc
        load_outputs_on_completion(context, files["geopackage"], "Evaluation")
        return evaluation_results(run, files)
