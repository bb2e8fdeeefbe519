"""The Processing algorithms, run by id through ``processing.run`` and once through ``qgis_process``."""

import json
import math
import sysconfig

import pytest
from polytopo_testing import qgis_process
from reliability import case

from polytopo.evaluator import evaluate, load_inputs

METRIC_OUTPUTS = {"AP50": "AP50", "E_BIOU": "E-BIoU", "HOLE_F1": "Hole-F1", "TOPO_EM": "Topo-EM"}
LAYER_OUTPUTS = {"SCORED_PREDICTIONS": "predictions", "SCORED_REFERENCES": "references",
                 "MISSED_HOLES": "missed_holes", "HALLUCINATED_HOLES": "hallucinated_holes",
                 "UNMATCHED_PREDICTIONS": "unmatched_predictions", "MISSED_REFERENCES": "missed_references"}


def run_algorithm(name, parameters):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback

    return processing.run(f"polytopo:{name}", parameters, context=QgsProcessingContext(),
                          feedback=QgsProcessingFeedback())


def expected_metrics(reference, prediction, pixel_size, **options):
    gt, pred, _ = load_inputs(str(reference), str(prediction), pixel_size=pixel_size, **options)
    return evaluate(gt, pred).summary["metrics"]


def assert_outputs_match(results, metrics, gpkg):
    for output, metric in METRIC_OUTPUTS.items():
        assert results[output] == pytest.approx(metrics[metric], rel=1e-9), output
    for output, layer in LAYER_OUTPUTS.items():
        assert results[output] == f"{gpkg}|layername={layer}"


def test_the_provider_offers_the_three_algorithms(qgis_processing):
    assert sorted(a.id() for a in qgis_processing.algorithms()) == [
        "polytopo:evaluate", "polytopo:vectorize", "polytopo:vectorize_evaluate"]
    for algorithm in qgis_processing.algorithms():
        help_text = algorithm.shortHelpString()
        assert "pixel" in help_text and len(help_text) > 400, algorithm.id()
    evaluate_alg = qgis_processing.algorithm("evaluate")
    assert evaluate_alg.parameterDefinition("PROFILE").options() == ["paper", "reference-code", "coco", "p3", "p3-code"]


def test_evaluate_outputs_equal_the_evaluators_numbers(qgis_processing, scene, tmp_path):
    from qgis.core import QgsVectorLayer

    gpkg = tmp_path / "evaluation.gpkg"
    results = run_algorithm("evaluate", {
        "INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
        "PIXEL_SIZE": scene.pixel_size, "OUTPUT_GPKG": str(gpkg), "OUTPUT_REPORT": str(tmp_path / "report")})
    metrics = expected_metrics(scene.reference, scene.prediction, scene.pixel_size, score_field="score")
    assert_outputs_match(results, metrics, gpkg)
    predictions = QgsVectorLayer(results["SCORED_PREDICTIONS"], "p", "ogr")
    assert [f["error_class"] for f in predictions.getFeatures()] == list(scene.expected_classes.values())
    assert results["OUTPUT_REPORT"] == str(tmp_path / "report")
    assert results["OUTPUT_HTML"] == str(tmp_path / "report" / "report.html")
    assert (tmp_path / "report" / "report.html").is_file()


def test_evaluate_thresholds_and_profile_reach_the_evaluator(qgis_processing, scene, tmp_path):
    """PROFILE, RING_THRESHOLD, MIN_HOLE_AREA and IOU_THRESHOLD are the evaluator's parameters."""
    results = run_algorithm("evaluate", {
        "INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
        "PIXEL_SIZE": scene.pixel_size, "PROFILE": 1, "RING_THRESHOLD": 0.3, "MIN_HOLE_AREA": 300.0,
        "IOU_THRESHOLD": 0.6, "OUTPUT_GPKG": str(tmp_path / "e.gpkg"), "OUTPUT_REPORT": str(tmp_path / "r")})
    gt, pred, _ = load_inputs(str(scene.reference), str(scene.prediction), pixel_size=0.5, score_field="score")
    metrics = evaluate(gt, pred, profile="reference-code", ring_match_threshold=0.3, min_hole_area_px2=300.0,
                       iou_threshold=0.6).summary["metrics"]
    assert_outputs_match(results, metrics, tmp_path / "e.gpkg")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert (summary["profile"], summary["parameters"]["min_hole_area_px2"]) == ("reference-code", 300.0)


def test_evaluate_takes_the_pixel_size_from_a_raster(qgis_processing, scene, vectorize_inputs, tmp_path):
    """PIXEL_SIZE_FROM: the 0.5 m GeoTIFF gives the same numbers as PIXEL_SIZE = 0.5."""
    results = run_algorithm("evaluate", {
        "INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
        "PIXEL_SIZE_FROM": str(vectorize_inputs.raster), "OUTPUT_GPKG": str(tmp_path / "e.gpkg"),
        "OUTPUT_REPORT": str(tmp_path / "r")})
    assert_outputs_match(results, expected_metrics(scene.reference, scene.prediction, 0.5, score_field="score"),
                         tmp_path / "e.gpkg")


def test_evaluate_reports_bad_input_as_a_processing_error(qgis_processing, scene, vectorize_inputs, tmp_path):
    from qgis.core import QgsProcessingException

    base = {"INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "OUTPUT_GPKG": str(tmp_path / "e.gpkg"),
            "OUTPUT_REPORT": str(tmp_path / "r")}
    with pytest.raises(QgsProcessingException, match="Expected a pixel size in m per pixel"):
        run_algorithm("evaluate", base)
    with pytest.raises(QgsProcessingException, match="either a pixel size or a raster"):
        run_algorithm("evaluate", {**base, "PIXEL_SIZE": 0.5, "PIXEL_SIZE_FROM": str(vectorize_inputs.raster)})
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_vectorize_writes_polygons_with_holes_and_provenance(qgis_processing, vectorize_inputs, tmp_path):
    from qgis.core import QgsVectorLayer

    out = tmp_path / "buildings.gpkg"
    results = run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model),
                                          "PROVIDER": 2, "OUTPUT": str(out)})
    assert results == {"OUTPUT": f"{out}|layername=buildings", "FEATURES": 2,
                       "PROVIDER_USED": "CPUExecutionProvider"}
    layer = QgsVectorLayer(str(out), "buildings", "ogr")
    holes = sorted(f.geometry().constGet().numInteriorRings() for f in layer.getFeatures())
    assert holes == [0, 1] and layer.crs().authid() == "EPSG:32616"
    assert "band.onnx (semantic family) on CPUExecutionProvider" in layer.metadata().abstract()
    provenance = json.loads(layer.metadata().history()[-1].removeprefix("provenance: "))
    assert provenance["card"]["family"] == "semantic" and provenance["provider_used"] == "CPUExecutionProvider"


def test_vectorize_takes_threshold_and_minimum_areas(qgis_processing, vectorize_inputs, tmp_path):
    """A smallest hole above the 900 px² courtyard fills it, a smallest polygon above the holed block's 5500 px² drops it."""
    from qgis.core import QgsProcessingException, QgsVectorLayer

    base = {"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2}
    out = tmp_path / "filled.gpkg"
    results = run_algorithm("vectorize", {**base, "SEG_THRESHOLD": 0.75, "POLYGON_MIN_HOLE_AREA_PX": 901, "OUTPUT": str(out)})
    layer = QgsVectorLayer(str(out), "filled", "ogr")
    assert results["FEATURES"] == 2
    assert sorted(f.geometry().constGet().numInteriorRings() for f in layer.getFeatures()) == [0, 0]
    provenance = json.loads(layer.metadata().history()[-1].removeprefix("provenance: "))["run_parameters"]
    assert (provenance["threshold"], provenance["min_area_px"], provenance["min_hole_area_px"]) == (0.75, 0.0, 901.0)
    results = run_algorithm("vectorize", {**base, "POLYGON_MIN_AREA_PX": 5550, "OUTPUT": str(tmp_path / "large.gpkg")})
    assert results["FEATURES"] == 1
    with pytest.raises(QgsProcessingException, match="SEG_THRESHOLD"):
        run_algorithm("vectorize", {**base, "SEG_THRESHOLD": 1.5, "OUTPUT": str(tmp_path / "bad.gpkg")})
    assert not (tmp_path / "bad.gpkg").exists()


def test_vectorize_evaluate_scores_the_polygons_of_its_minimum_hole_area(qgis_processing, vectorize_inputs,
                                                                         tmp_path):
    polygons, gpkg = tmp_path / "polygons.gpkg", tmp_path / "evaluation.gpkg"
    results = run_algorithm("vectorize_evaluate", {
        "INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2,
        "POLYGON_MIN_HOLE_AREA_PX": 901, "REFERENCE": str(vectorize_inputs.reference), "OUTPUT": str(polygons),
        "OUTPUT_GPKG": str(gpkg), "OUTPUT_REPORT": str(tmp_path / "report")})
    from osgeo import ogr

    source = ogr.Open(str(polygons))
    rings = [feature.GetGeometryRef().GetGeometryCount() for feature in source.GetLayer(0)]
    del source
    assert rings == [1, 1]  # exteriors only: the 900 px² courtyard is filled
    metrics = expected_metrics(vectorize_inputs.reference, polygons, 0.5, score_field="score")
    assert (results["FEATURES"], results["AP50"], metrics["AP50"]) == (2, 1.0, 1.0)
    assert results["HOLE_F1"] == metrics["Hole-F1"] == 0.0  # the reference's courtyard is now missed
    provenance = json.loads((tmp_path / "report" / "provenance.json").read_text())
    assert provenance["vectorization"]["run_parameters"]["min_hole_area_px"] == 901.0


def test_vectorize_honours_the_extent(qgis_processing, vectorize_inputs, tmp_path):
    """An extent around the first building only yields that building."""
    results = run_algorithm("vectorize", {
        "INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2,
        "EXTENT": "440000,440050,4640040,4640100 [EPSG:32616]", "OUTPUT": str(tmp_path / "one.gpkg")})
    assert results["FEATURES"] == 1


def test_vectorize_refuses_a_file_that_is_not_a_model(qgis_processing, vectorize_inputs, tmp_path):
    from qgis.core import QgsProcessingException

    junk = tmp_path / "notes.onnx"
    junk.write_bytes(b"this is not a model")
    with pytest.raises(QgsProcessingException, match="ONNX"):
        run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(junk), "PROVIDER": 2,
                                    "OUTPUT": str(tmp_path / "out.gpkg")})
    assert not (tmp_path / "out.gpkg").exists()


def test_vectorize_refuses_a_raster_with_too_few_bands(qgis_processing, vectorize_inputs, tools, tmp_path):
    from qgis.core import QgsProcessingException

    three_bands = tools.write_band_model(tmp_path / "rgb.onnx", channels=3)
    with pytest.raises(QgsProcessingException, match=r"the raster has 1 band\(s\), so band\(s\) \[2, 3\] do not exist; "
                                                     r"choose existing bands under Bands"):
        run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(three_bands),
                                    "PROVIDER": 2, "OUTPUT": str(tmp_path / "out.gpkg")})
    results = run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(three_bands),
                                          "BAND_1": 1, "BAND_2": 1, "BAND_3": 1, "PROVIDER": 2,
                                          "OUTPUT": str(tmp_path / "out.gpkg")})
    assert results["FEATURES"] == 2  # one band feeding all three channels
    with pytest.raises(QgsProcessingException, match="Expected a band for every model channel from 1 to 3 but "
                                                     "BAND_2 is empty"):
        run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(three_bands),
                                    "BAND_1": 1, "BAND_3": 1, "PROVIDER": 2, "OUTPUT": str(tmp_path / "o2.gpkg")})


def test_vectorize_evaluate_scores_the_vectorized_polygons(qgis_processing, vectorize_inputs, tmp_path):
    """The chained run gives the evaluator's numbers on the polygons it wrote; the raster sets the pixel size."""
    polygons, gpkg = tmp_path / "polygons.gpkg", tmp_path / "evaluation.gpkg"
    results = run_algorithm("vectorize_evaluate", {
        "INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2,
        "REFERENCE": str(vectorize_inputs.reference), "OUTPUT": str(polygons), "OUTPUT_GPKG": str(gpkg),
        "OUTPUT_REPORT": str(tmp_path / "report")})
    metrics = expected_metrics(vectorize_inputs.reference, polygons, 0.5, score_field="score")
    assert_outputs_match(results, metrics, gpkg)
    assert (results["HOLE_F1"], results["TOPO_EM"], results["FEATURES"]) == (1.0, 1.0, 2)
    provenance = json.loads((tmp_path / "report" / "provenance.json").read_text())
    assert provenance["provider_used"] == "CPUExecutionProvider"
    assert provenance["card"]["family"] == "semantic" and provenance["pixel_size"] == pytest.approx(0.5)


def test_qgis_process_runs_evaluate_headless(qgis_env, scene, tmp_path):
    """The plugin found through QGIS_PLUGINPATH, with the venv's packages on PYTHONPATH, runs evaluate."""
    env = {**qgis_env, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    enabled = qgis_process(env, "plugins", "enable", "polytopo")
    assert enabled.returncode == 0, enabled.stderr
    gpkg = tmp_path / "cli.gpkg"
    result = qgis_process(env, "--json", "run", "polytopo:evaluate", "--",
                          f"INPUT={scene.prediction}", f"REFERENCE={scene.reference}", "SCORE_FIELD=score",
                          "PIXEL_SIZE=0.5", f"OUTPUT_GPKG={gpkg}", f"OUTPUT_REPORT={tmp_path / 'report'}")
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = json.loads(result.stdout)["results"]
    metrics = expected_metrics(scene.reference, scene.prediction, 0.5, score_field="score")
    for output, metric in METRIC_OUTPUTS.items():
        assert outputs[output] == pytest.approx(metrics[metric], rel=1e-9), output
    assert outputs["SCORED_PREDICTIONS"] == f"{gpkg}|layername=predictions"
    assert gpkg.is_file() and (tmp_path / "report" / "report.html").is_file()
    assert not math.isnan(outputs["TOPO_EM"])
    assert outputs["SUMMARY"].startswith(f"AP50 {metrics['AP50']:.4f}, E-BIoU ")


def test_vectorize_needs_exactly_one_model(qgis_processing, vectorize_inputs, tmp_path):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="either an ONNX model file or a bundled model but got neither"):
        run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "PROVIDER": 2,
                                    "OUTPUT": str(tmp_path / "out.gpkg")})


def test_evaluate_asks_processing_to_load_its_layers_styled(qgis_processing, scene, tmp_path):
    """In QGIS desktop the six layers load on completion; the post-processor gives each its style."""
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback, QgsProject, QgsVectorLayer

    project = QgsProject()
    context = QgsProcessingContext()
    context.setProject(project)
    processing.run("polytopo:evaluate", {
        "INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "PIXEL_SIZE": 0.5,
        "OUTPUT_GPKG": str(tmp_path / "e.gpkg"), "OUTPUT_REPORT": str(tmp_path / "r")},
        context=context, feedback=QgsProcessingFeedback())
    to_load = context.layersToLoadOnCompletion()
    assert sorted(uri.split("layername=")[1] for uri in to_load) == sorted(LAYER_OUTPUTS.values())
    uri, details = next((u, d) for u, d in to_load.items() if u.endswith("layername=missed_holes"))
    assert details.name == "Missed holes"
    options = QgsVectorLayer.LayerOptions()
    options.loadDefaultStyle = False
    layer = QgsVectorLayer(uri, "plain", "ogr", options)
    assert layer.renderer().type() == "singleSymbol"
    details.postProcessor().postProcessLayer(layer, context, QgsProcessingFeedback())
    assert layer.renderer().type() == "RuleRenderer"


def test_evaluate_refuses_one_layer_as_prediction_and_reference(qgis_processing, scene, tmp_path):
    """The same file given twice would score AP50 1.0: refused before any output is written."""
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="Expected two different layers but the prediction layer"):
        run_algorithm("evaluate", {"INPUT": str(scene.reference), "REFERENCE": str(scene.reference),
                                   "PIXEL_SIZE": 0.5, "OUTPUT_GPKG": str(tmp_path / "e.gpkg"),
                                   "OUTPUT_REPORT": str(tmp_path / "r")})
    assert list(tmp_path.iterdir()) == []


def test_the_evaluate_dialog_preselects_two_different_layers(qgis_processing, scene):
    """The dialog's defaults: the first polygon layer as prediction, another one as reference."""
    from qgis.core import QgsApplication, QgsProject

    project = QgsProject.instance()
    prediction, reference = scene.layers()
    project.addMapLayers([prediction, reference])
    try:
        algorithm = QgsApplication.processingRegistry().createAlgorithmById("polytopo:evaluate")
        defaults = [algorithm.parameterDefinition(name).guiDefaultValueOverride() for name in ("INPUT", "REFERENCE")]
        assert sorted(defaults) == sorted([prediction.id(), reference.id()])
        assert algorithm.parameterDefinition("REFERENCE").defaultValue() is None
    finally:
        project.removeAllMapLayers()


def test_vectorize_evaluate_loads_one_named_group_per_run(qgis_processing, vectorize_inputs, tmp_path):
    """In a project, the outputs load as one group "PolyTopo — <raster> vs <reference>", polygons included."""
    import processing
    from processing.gui.Postprocessing import handleAlgorithmResults
    from qgis.core import (
        QgsApplication,
        QgsProcessingContext,
        QgsProcessingFeedback,
        QgsProcessingOutputLayerDefinition,
        QgsProject,
        QgsVectorLayer,
    )

    project = QgsProject.instance()
    context, feedback = QgsProcessingContext(), QgsProcessingFeedback()
    context.setProject(project)
    reference = QgsVectorLayer(str(vectorize_inputs.reference), "buildings", "ogr")
    project.addMapLayer(reference)
    algorithm = QgsApplication.processingRegistry().createAlgorithmById("polytopo:vectorize_evaluate")
    try:
        processing.run(algorithm, {
            "INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2,
            "REFERENCE": reference.id(),
            "OUTPUT": QgsProcessingOutputLayerDefinition(str(tmp_path / "polygons.gpkg"), project),
            "OUTPUT_GPKG": str(tmp_path / "e.gpkg"), "OUTPUT_REPORT": str(tmp_path / "r")},
            context=context, feedback=feedback)
        handleAlgorithmResults(algorithm, context, feedback)
        group, reference_node = project.layerTreeRoot().children()
        assert group.name() == "PolyTopo — image vs buildings"
        # As in the dock: the styled error classes on top, the raw polygons below them and hidden, the labels hidden.
        shown = [(node.name(), node.itemVisibilityChecked()) for node in group.children()]
        assert shown == [("Missed holes", True), ("Hallucinated holes", True), ("Unmatched predictions", True),
                         ("Missed references", True), ("Predictions", True), ("References", True),
                         ("image polygons", False)]
        assert reference_node.layerId() == reference.id() and not reference_node.itemVisibilityChecked()
        predictions = group.children()[4].layer()
        labels = [rule.label() for rule in predictions.renderer().rootRule().children()]
        assert labels and "other: error class not set" not in labels  # the legend lists only what is drawn
    finally:
        project.clear()


def test_only_the_essentials_are_outside_advanced(qgis_processing):
    from qgis.core import QgsApplication, QgsProcessingParameterDefinition

    def plain(name):
        algorithm = QgsApplication.processingRegistry().algorithmById(f"polytopo:{name}")
        return [p.name() for p in algorithm.parameterDefinitions()
                if not p.flags() & QgsProcessingParameterDefinition.FlagAdvanced]

    assert plain("evaluate") == ["INPUT", "SCORE_FIELD", "REFERENCE", "PIXEL_SIZE", "PIXEL_SIZE_FROM", "PROFILE",
                                 "OUTPUT_GPKG", "OUTPUT_REPORT"]
    assert plain("vectorize") == ["INPUT", "MODEL", "BUNDLED_MODEL", "PROVIDER", "EXTENT", "AOI", "OUTPUT"]


@pytest.mark.parametrize("module", ["gui.dock", "gui.model_choice", "gui.evaluation_text", "runs.vectorize",
                                    "runs.output_check", "runs.project_layers", "gui.restored_run"])
def test_the_examples_of_the_plugin_helpers_hold(qgis_app, module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"polytopo.plugin.{module}"))
    assert result.attempted > 0 and result.failed == 0


def test_evaluate_takes_the_pixel_size_of_the_raster_the_predictions_came_from(qgis_processing, vectorize_inputs,
                                                                               tmp_path):
    """Without a pixel size, the vectorized layer's raster (found through its provenance) gives 0.5 m."""
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback, QgsProject, QgsRasterLayer

    polygons = tmp_path / "polygons.gpkg"
    run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model),
                                "PROVIDER": 2, "OUTPUT": str(polygons)})
    project = QgsProject()
    project.addMapLayer(QgsRasterLayer(str(vectorize_inputs.raster), "image"))
    context = QgsProcessingContext()
    context.setProject(project)
    results = processing.run("polytopo:evaluate", {
        "INPUT": str(polygons), "REFERENCE": str(vectorize_inputs.reference), "SCORE_FIELD": "score",
        "OUTPUT_GPKG": str(tmp_path / "e.gpkg"), "OUTPUT_REPORT": str(tmp_path / "r")},
        context=context, feedback=QgsProcessingFeedback())
    provenance = json.loads((tmp_path / "r" / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["pixel_size"] == 0.5 and results["AP50"] == 1.0


@case("Processing vectorize over more model pixels than MAX_PIXELS", "plugin vectorize (dock, Processing)",
      "QgsProcessingException before any tile is read: Expected at most N model pixels (the run's limit) but the "
      "processed area is W x H = P model pixels in T tiles, about ... on a 2-core CPU ...; Maximum model pixels")
def test_vectorize_refuses_more_model_pixels_than_its_limit(qgis_processing, vectorize_inputs, tmp_path):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match=r"Expected at most 100 model pixels .* tiles, about"):
        run_algorithm("vectorize", {"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model),
                                    "PROVIDER": 2, "MAX_PIXELS": 100, "OUTPUT": str(tmp_path / "o.gpkg")})
    assert not (tmp_path / "o.gpkg").exists()


@pytest.mark.parametrize("algorithm, parameter, value, expected", [
    pytest.param("vectorize", "SEG_THRESHOLD", 2.5, "Expected SEG_THRESHOLD (Segmentation threshold (0–1; default: the "
                 "card's)) to be a number from 0 to 1 but got 2.5", id="threshold", marks=case(
                     "Processing SEG_THRESHOLD 2.5", "plugin vectorize (dock, Processing)",
                     "Expected SEG_THRESHOLD (...) to be a number from 0 to 1 but got 2.5 (not QGIS's bare "
                     "'Incorrect parameter value')")),
    pytest.param("evaluate", "WORKERS", -3, "Expected WORKERS (Workers (local Dask worker processes, 0 to",
                 id="workers"),
])
def test_numbers_out_of_range_name_the_range(qgis_processing, scene, vectorize_inputs, tmp_path, algorithm, parameter,
                                             value, expected):
    from qgis.core import QgsProcessingException

    inputs = ({"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model), "PROVIDER": 2,
               "OUTPUT": str(tmp_path / "o.gpkg")} if algorithm == "vectorize" else
              {"INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "PIXEL_SIZE": 0.5,
               "OUTPUT_GPKG": str(tmp_path / "e.gpkg"), "OUTPUT_REPORT": str(tmp_path / "r")})
    with pytest.raises(QgsProcessingException) as info:
        run_algorithm(algorithm, {**inputs, parameter: value})
    assert expected in str(info.value) and "Incorrect parameter value" not in str(info.value)


def test_the_vectorize_evaluate_dialog_preselects_the_raster_and_the_labels(qgis_processing, vectorize_inputs):
    """One raster loaded, the active layer a vector: the raster is still the default; the labels the reference."""
    from qgis.core import QgsApplication, QgsProject, QgsRasterLayer, QgsVectorLayer

    project = QgsProject.instance()
    raster = QgsRasterLayer(str(vectorize_inputs.raster), "image")
    labels = QgsVectorLayer(str(vectorize_inputs.reference), "buildings", "ogr")
    project.addMapLayers([labels, raster])
    try:
        algorithm = QgsApplication.processingRegistry().createAlgorithmById("polytopo:vectorize_evaluate")
        assert algorithm.parameterDefinition("INPUT").guiDefaultValueOverride() == raster.id()
        assert algorithm.parameterDefinition("REFERENCE").guiDefaultValueOverride() == labels.id()
    finally:
        project.clear()


def test_an_undefined_metric_is_nan_in_its_number_and_undefined_in_words(qgis_processing, tools, tmp_path):
    """No hole on either side: HOLE_F1 is NaN (a number output cannot say more); SUMMARY says 'undefined'."""
    reference = tools.write_polygon_layer(tmp_path / "ref.gpkg", "EPSG:32616", [tools.square(0), tools.square(1)])
    prediction = tools.write_polygon_layer(tmp_path / "pred.gpkg", "EPSG:32616", [tools.square(0, 0.2)],
                                           fields=[("score", "double")], values=[(0.9,)])
    results = run_algorithm("evaluate", {"INPUT": str(prediction), "REFERENCE": str(reference), "SCORE_FIELD": "score",
                                         "PIXEL_SIZE": 0.5, "OUTPUT_GPKG": str(tmp_path / "e.gpkg"),
                                         "OUTPUT_REPORT": str(tmp_path / "r")})
    assert math.isnan(results["HOLE_F1"]) and "Hole-F1 undefined" in results["SUMMARY"]


def test_the_dialog_claims_no_html_output_after_a_failure(qgis_processing):
    """QGIS's dialog prints 'HTML output has been generated' when hasHtmlOutputs() is True, even after a failure."""
    from qgis.core import QgsApplication, QgsProcessingOutputHtml

    for name in ("evaluate", "vectorize_evaluate"):
        algorithm = QgsApplication.processingRegistry().algorithmById(f"polytopo:{name}")
        assert not algorithm.hasHtmlOutputs()
        assert isinstance(algorithm.outputDefinition("OUTPUT_HTML"), QgsProcessingOutputHtml)  # the viewer lists it
