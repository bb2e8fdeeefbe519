"""``evaluate_layers`` gives the evaluator's own numbers on QGIS layers, and refuses bad input clearly."""

import math

import pytest

from polytopo.evaluator import evaluate, load_inputs
from polytopo.plugin.errors import LayerInputError, RunCanceled, RunParameterError
from polytopo.plugin.runs import evaluate_layers

RECORD_FIELDS = ("pred_id", "matched_ref_id", "iou", "hole_tp", "hole_fp", "hole_fn", "hole_f1", "topo_em",
                 "e_biou", "o_biou", "valid", "error_class")


def evaluator_on_files(scene, **options):
    """The evaluator run on the scene's GeoPackages through its own OGR reader."""
    gt, pred, frame = load_inputs(str(scene.reference), str(scene.prediction), score_field="score",
                                  pixel_size=scene.pixel_size, **options)
    return evaluate(gt, pred), frame


def assert_same_numbers(actual, expected, tolerance=1e-9):
    """Every number of two metric dicts agrees (NaN with NaN) to ``tolerance``."""
    assert actual.keys() == expected.keys()
    for name, value in expected.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(actual[name]), name
        else:
            assert actual[name] == pytest.approx(value, rel=tolerance, abs=tolerance), name


def test_metrics_and_records_equal_the_evaluators_on_the_same_files(scene):
    """Predictions stored in EPSG:3857 and reprojected by QGIS score exactly as the evaluator scores them."""
    prediction, reference = scene.layers()
    run = evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score")
    expected, frame = evaluator_on_files(scene)

    assert_same_numbers(run.evaluation.summary["metrics"], expected.summary["metrics"])
    assert (run.frame.origin_x, run.frame.origin_y, run.frame.pixel_size) == pytest.approx(
        (frame.origin_x, frame.origin_y, frame.pixel_size))
    for ours, theirs in zip(run.evaluation.records["predictions"], expected.records["predictions"], strict=True):
        assert_same_numbers({k: ours[k] for k in RECORD_FIELDS if ours[k] is not None},
                            {k: theirs[k] for k in RECORD_FIELDS if theirs[k] is not None})
    assert run.crs.authid() == "EPSG:32616"


def test_each_scene_position_gets_its_error_class(scene):
    """The scene holds one case per class: the per-feature classes and hole counts say which."""
    prediction, reference = scene.layers()
    run = evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score")
    records = run.evaluation.records
    classes = [record["error_class"] for record in records["predictions"]]
    assert classes == list(scene.expected_classes.values())
    assert [r["error_class"] for r in records["references"]][-1] == "missed"
    assert len(records["missed_holes"]) == 3  # missing hole, misplaced hole, missed reference
    assert len(records["hallucinated_holes"]) == 4  # extra, misplaced, crossing (invalid), unmatched
    ok = records["predictions"][0]
    assert (ok["hole_f1"], ok["topo_em"], ok["pred_holes"], ok["ref_holes"]) == (1.0, 1, 1, 1)


def test_provenance_names_inputs_profile_parameters_and_units(scene):
    prediction, reference = scene.layers()
    run = evaluate_layers(prediction, reference, pixel_size=0.5, score_field="score", profile="reference-code",
                          overrides={"min_hole_area_px2": 16.0})
    provenance = run.provenance
    assert provenance["profile"] == "reference-code"
    assert provenance["parameters"]["ring_match_threshold"] == 0.5
    assert provenance["parameters"]["min_hole_area_px2"] == 16.0
    assert (provenance["pixel_size"], provenance["pixel_size_unit"]) == (0.5, "meters per pixel")
    assert provenance["prediction"]["crs"] == "EPSG:3857" and provenance["reference"]["crs"] == "EPSG:32616"
    assert provenance["prediction"]["source"].startswith(str(scene.prediction))
    assert provenance["plugin_version"] and provenance["created_utc"].endswith("+00:00")
    assert provenance["warnings"] == []


def test_a_prediction_layer_in_the_reference_crs_gives_the_same_numbers(scene, tools, tmp_path):
    """Storing predictions in another CRS changes the numbers by reprojection round-off only (< 1e-6)."""
    same_crs = tools.write_polygon_layer(
        tmp_path / "prediction_utm.gpkg", "EPSG:32616",
        [tools.square(i, dx, dy, holes) for i, dx, dy, holes, _ in tools.predictions],
        fields=[("score", "double")], values=[(score,) for *_, score in tools.predictions])
    prediction, reference = scene.layers()
    from qgis.core import QgsVectorLayer

    reprojected = evaluate_layers(prediction, reference, pixel_size=0.5, score_field="score")
    direct = evaluate_layers(QgsVectorLayer(str(same_crs), "utm", "ogr"), reference, pixel_size=0.5,
                             score_field="score")
    assert_same_numbers(reprojected.evaluation.summary["metrics"], direct.evaluation.summary["metrics"], 1e-6)


def test_patch_grid_groups_features_as_the_evaluator_does(scene, recording_feedback):
    """Patch ids and the metrics agree; predictions in patches without references are reported."""
    prediction, reference = scene.layers()
    feedback = recording_feedback()
    run = evaluate_layers(prediction, reference, pixel_size=0.5, score_field="score", patch_size_px=100,
                          feedback=feedback)
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        expected, _ = evaluator_on_files(scene, patch_size_px=100)
    assert any("appear only in the predictions" in warning for warning in feedback.warnings)
    assert [r["image_id"] for r in run.evaluation.records["predictions"]] == [
        r["image_id"] for r in expected.records["predictions"]]
    assert_same_numbers(run.evaluation.summary["metrics"], expected.summary["metrics"])


def test_without_a_score_field_named_the_layers_score_field_is_read(scene, recording_feedback):
    prediction, reference = scene.layers()
    feedback = recording_feedback()
    run = evaluate_layers(prediction, reference, pixel_size=0.5, feedback=feedback)
    named = evaluate_layers(prediction, reference, pixel_size=0.5, score_field="score")
    scores = [r["score"] for r in run.evaluation.records["predictions"]]
    assert scores == [r["score"] for r in named.evaluation.records["predictions"]] and len(set(scores)) > 1
    assert any("Scores from the prediction field 'score'" in message for message in feedback.infos)


def test_a_layer_without_any_score_field_scores_one_per_prediction(scene, recording_feedback):
    _, reference = scene.layers()
    feedback = recording_feedback()
    run = evaluate_layers(reference, reference, pixel_size=0.5, feedback=feedback)
    assert {r["score"] for r in run.evaluation.records["predictions"]} == {1.0}
    assert any("every prediction scores 1.0" in message for message in feedback.infos)
    assert feedback.progress[0] == 0 and feedback.progress[-1] == 100
    assert feedback.progress == sorted(feedback.progress)


def test_a_point_layer_is_refused(scene, tools, tmp_path):
    from qgis.core import QgsVectorLayer

    points = tools.write_polygon_layer(tmp_path / "points.gpkg", "EPSG:32616", ["POINT (440010 4640010)"],
                                       geometry="Point")
    _, reference = scene.layers()
    with pytest.raises(LayerInputError, match="prediction layer 'points': expected a polygon layer but got "
                                              "geometry type Point"):
        evaluate_layers(QgsVectorLayer(str(points), "points", "ogr"), reference, pixel_size=0.5)


def test_layers_that_do_not_overlap_warn_in_feedback_and_provenance(scene, tools, tmp_path, recording_feedback):
    from qgis.core import QgsVectorLayer

    far = tools.write_polygon_layer(tmp_path / "far.gpkg", "EPSG:32616", [tools.square(100)])
    _, reference = scene.layers()
    feedback = recording_feedback()
    run = evaluate_layers(QgsVectorLayer(str(far), "far", "ogr"), reference, pixel_size=0.5, feedback=feedback)
    (warning,) = feedback.warnings
    assert "does not overlap the reference layer" in warning and "EPSG:32616" in warning
    assert run.provenance["warnings"] == [warning]
    assert run.evaluation.summary["metrics"]["AP50"] == 0.0


def test_a_geographic_reference_needs_a_pixel_size_in_degrees(scene, tools, tmp_path):
    from qgis.core import QgsVectorLayer

    geographic = QgsVectorLayer(str(tools.write_polygon_layer(
        tmp_path / "wgs84.gpkg", "EPSG:4326", [tools.square(0)])), "wgs84", "ogr")
    prediction, _ = scene.layers()
    with pytest.raises(RunParameterError, match=r"Expected a pixel size in ° per pixel .* but got None"):
        evaluate_layers(prediction, geographic, pixel_size=None)
    # at latitude 41.9°: sqrt(111.3 km · cos 41.9° × 111.0 km) / 2 is about 48 km
    with pytest.raises(RunParameterError, match=r"but got 0\.5 °, about 48 km per pixel; for 30 cm imagery "
                                                r"give 3\.13e-06 °"):
        evaluate_layers(prediction, geographic, pixel_size=0.5)
    with pytest.raises(RunParameterError, match=r"but got 0\.001 °, about 96 m per pixel"):
        evaluate_layers(prediction, geographic, pixel_size=0.001)
    run = evaluate_layers(prediction, geographic, pixel_size=4.5e-6, score_field="score")
    assert run.provenance["pixel_size_unit"] == "degrees per pixel"
    assert run.provenance["pixel_size_m"] == pytest.approx(4.5e-6 / 3.13e-6 * 0.3, rel=0.01)
    assert run.evaluation.summary["counts"]["gt_instances"] == 1


def test_a_projected_reference_without_pixel_size_names_its_unit(scene):
    prediction, reference = scene.layers()
    with pytest.raises(RunParameterError, match="Expected a pixel size in m per pixel"):
        evaluate_layers(prediction, reference, pixel_size=0)
    with pytest.raises(RunParameterError, match=r"Expected a pixel size of 1 cm to 10 m on the ground \(0\.01 to 10 m "
                                                r"in EPSG:32616\) but got 30 m, about 30 m per pixel; for 30 cm "
                                                r"imagery give 0\.3 m"):
        evaluate_layers(prediction, reference, pixel_size=30)


def test_field_problems_name_the_field_and_the_fix(scene, tools, tmp_path):
    from qgis.core import QgsVectorLayer

    prediction, reference = scene.layers()
    with pytest.raises(LayerInputError, match=r"expected a field 'confidence' but the layer has none; available "
                                              r"fields: \['fid', 'score'\]"):
        evaluate_layers(prediction, reference, pixel_size=0.5, score_field="confidence")
    with pytest.raises(LayerInputError, match="expected field 'name' to be numeric"):
        evaluate_layers(reference, reference, pixel_size=0.5, score_field="name")
    holes = tools.write_polygon_layer(tmp_path / "null_score.gpkg", "EPSG:32616", [tools.square(0)],
                                      fields=[("score", "double")], values=[(None,)])
    with pytest.raises(LayerInputError, match=r"feature 1 field 'score': expected a score but got NULL"):
        evaluate_layers(QgsVectorLayer(str(holes), "null_score", "ogr"), reference, pixel_size=0.5,
                        score_field="score")
    with pytest.raises(RunParameterError, match="either an image field or a patch size"):
        evaluate_layers(prediction, reference, pixel_size=0.5, image_field="score", patch_size_px=10)
    with pytest.raises(RunParameterError, match="Expected profile to be one of"):
        evaluate_layers(prediction, reference, pixel_size=0.5, profile="kaggle")


def test_cancel_stops_the_evaluation_between_phases(scene, recording_feedback):
    prediction, reference = scene.layers()
    for after in (0, 3):  # while reading, and inside the evaluator's phases
        with pytest.raises(RunCanceled, match="The evaluation was canceled"):
            evaluate_layers(prediction, reference, pixel_size=0.5, feedback=recording_feedback(after))
