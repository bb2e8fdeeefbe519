"""Processing algorithm ``polytopo:evaluate``: score a polygon layer against a reference layer."""

from qgis.core import QgsProcessing, QgsProcessingAlgorithm, QgsProcessingParameterVectorLayer, QgsProject

from .evaluation_parameters import (
    active_layer,
    EVALUATION_HELP,
    add_evaluation_outputs,
    add_evaluation_parameters,
    add_workers_parameter,
    evaluation_options,
    evaluation_results,
)
from ..errors import PluginError
from ..runs.layer_choice import check_distinct_layers, default_evaluation_layers, source_raster
from .support import (
    EVALUATION_PACKAGES,
    ExplainedRanges,
    QuietReport,
    as_processing_error,
    load_outputs_on_completion,
    require_packages,
)
from ..runs.feedback import work_and_write
from ..runs.project_layers import run_group_name

__all__ = ["EvaluateAlgorithm"]


class EvaluateAlgorithm(QuietReport, ExplainedRanges, QgsProcessingAlgorithm):
    """Evaluate polygons (with holes) against reference polygons; see :func:`polytopo.plugin.runs.evaluation.evaluate_layers`."""

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
        self._set_dialog_defaults()

    def _set_dialog_defaults(self):
        """Preselect two different polygon layers in the dialog (never the active layer twice)."""
        project = QgsProject.instance()
        prediction, reference = default_evaluation_layers(project, active_layer())
        for name, layer in (("INPUT", prediction), ("REFERENCE", reference),
                            ("PIXEL_SIZE_FROM", source_raster(prediction, project))):
            if layer is not None:
                self.parameterDefinition(name).setGuiDefaultValueOverride(layer.id())

    def checkParameterValues(self, parameters, context):  # noqa: N802 - QGIS API name.
        ok, message = super().checkParameterValues(parameters, context)
        if not ok:
            return ok, message
        try:
            check_distinct_layers(self.parameterAsVectorLayer(parameters, "INPUT", context),
                                  self.parameterAsVectorLayer(parameters, "REFERENCE", context))
        except PluginError as exc:
            return False, str(exc)
        return True, ""

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 - QGIS API name.
        require_packages(EVALUATION_PACKAGES)
        from ..runs import evaluate_layers, export_run  # needs shapely: imported once it is known to be there

        prediction = self.parameterAsVectorLayer(parameters, "INPUT", context)
        reference = self.parameterAsVectorLayer(parameters, "REFERENCE", context)
        try:
            check_distinct_layers(prediction, reference)
            raster = source_raster(prediction, context.project()) if context.project() is not None else None
            options = evaluation_options(self, parameters, context, reference_crs=reference.crs(),
                                         pixel_size_raster=raster)
            work, write = work_and_write(feedback)
            run = evaluate_layers(prediction, reference, feedback=work, **options)
            files = export_run(run, self.parameterAsFileOutput(parameters, "OUTPUT_GPKG", context),
                               self.parameterAsString(parameters, "OUTPUT_REPORT", context), overwrite=True,
                               feedback=write)
        except PluginError as exc:
            raise as_processing_error(exc) from exc
        load_outputs_on_completion(context, files["geopackage"], run_group_name(prediction.name(), reference.name()),
                                   hidden=(prediction.id(), reference.id()))
        return evaluation_results(run, files)


