"""``export_run`` writes one styled GeoPackage and a report folder, atomically, never over inputs."""

import json
import os

import pytest
import shapely

from polytopo.plugin.errors import OutputExistsError, RunCanceled, RunParameterError
from polytopo.plugin.runs import add_run_to_project, evaluate_layers, export_run
from polytopo.plugin.runs.styles import ERROR_LAYERS, FIELD_ALIASES

LAYERS = (*ERROR_LAYERS, "summary")


@pytest.fixture(scope="module")
def run(scene):
    """The scene evaluated with the paper profile."""
    prediction, reference = scene.layers()
    return evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score")


@pytest.fixture(scope="module")
def exported(run, tmp_path_factory):
    """The files of one export of :func:`run`."""
    folder = tmp_path_factory.mktemp("export")
    return export_run(run, folder / "evaluation.gpkg", folder / "report")


def python_value(value):
    """A QGIS attribute as Python: NULL becomes None."""
    return None if value is None or (hasattr(value, "isNull") and value.isNull()) else value


def open_layer(gpkg, name):
    from qgis.core import QgsVectorLayer

    layer = QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    return layer


def test_the_geopackage_has_every_layer_with_the_evaluators_values(run, exported):
    records = run.evaluation.records
    expected_counts = {"predictions": 7, "references": 7, "missed_holes": 3, "hallucinated_holes": 4,
                       "unmatched_predictions": 1, "missed_references": 1, "summary": None}
    for name in LAYERS:
        layer = open_layer(exported["geopackage"], name)
        if expected_counts[name] is not None:
            assert layer.featureCount() == expected_counts[name], name
    predictions = list(open_layer(exported["geopackage"], "predictions").getFeatures())
    for feature, record in zip(predictions, records["predictions"], strict=True):
        for field in ("pred_id", "iou", "hole_f1", "topo_em", "e_biou", "error_class", "pred_holes", "ref_holes"):
            expected, actual = record[field], python_value(feature[field])
            if isinstance(expected, float):
                assert actual == pytest.approx(expected), field
            else:
                assert actual == expected, field


def test_geometry_is_in_map_units_of_the_reference_crs(run, exported, tools):
    """The ok prediction comes back where it was drawn: the 40 m square with its 10 m hole, in EPSG:32616."""
    layer = open_layer(exported["geopackage"], "predictions")
    assert layer.crs().authid() == "EPSG:32616"
    first = shapely.from_wkb(bytes(next(layer.getFeatures()).geometry().asWkb()))
    drawn = shapely.from_wkt(tools.square(0, 0.2, 0.0, [(15, 15, 10)]))
    assert shapely.symmetric_difference(first, drawn).area < 1e-6
    assert first.area == pytest.approx(1600 - 100)


def test_the_summary_table_holds_every_headline_metric(run, exported):
    rows = {f["metric"]: f["value"] for f in open_layer(exported["geopackage"], "summary").getFeatures()}
    metrics = run.evaluation.summary["metrics"]
    for name in ("AP50", "AP", "E-BIoU", "H-BIoU", "Hole-F1", "Topo-EM", "E-POLIS"):
        assert rows[name] == pytest.approx(metrics[name]), name


def test_styles_aliases_and_provenance_travel_inside_the_geopackage(run, exported):
    for name in LAYERS:
        layer = open_layer(exported["geopackage"], name)
        count, _, names, *_ = layer.listStylesInDatabase()
        assert count >= 1 and names[0] == name, name
        if name != "summary":
            assert layer.renderer().type() == "RuleRenderer", name
        aliases = {f.name(): layer.attributeAlias(i) for i, f in enumerate(layer.fields()) if f.name() != "fid"}
        assert aliases == {field: FIELD_ALIASES[field] for field in aliases}, name
        metadata = layer.metadata()
        assert "reference" in metadata.abstract() and "paper profile" in metadata.abstract(), name
        assert any('"plugin_version"' in entry for entry in metadata.history()), name
        provenance = json.loads(layer.customProperty("polytopo/provenance"))
        assert provenance["pixel_size"] == 0.5 and provenance["profile"] == "paper"
    predictions = open_layer(exported["geopackage"], "predictions")
    assert predictions.attributeAlias(predictions.fields().indexOf("hole_f1")) == "Hole F1"
    assert predictions.attributeAlias(predictions.fields().indexOf("topo_em")) == "Topology exact"
    from qgis.core import QgsApplication

    index = predictions.fields().indexOf("iou")
    setup = predictions.editorWidgetSetup(index)
    formatter = QgsApplication.fieldFormatterRegistry().fieldFormatter(setup.type())
    assert (setup.type(), setup.config()["Precision"]) == ("Range", 3)
    assert formatter.representValue(predictions, index, setup.config(), None, 0.123456) == "0.123"


def test_the_report_folder_has_html_json_csv_and_figures(run, exported):
    folder = exported["report_html"].parent
    assert sorted(p.name for p in folder.iterdir()) == [
        ".polytopo-output.json", "hallucinated_holes.csv", "missed_holes.csv", "precision_recall.png", "predictions.csv",
        "provenance.json", "references.csv", "report.html", "simple_to_complex.png", "summary.json",
        "wrong_topo.png"]
    page = exported["report_html"].read_text(encoding="utf-8")
    hole_f1 = run.evaluation.summary["metrics"]["Hole-F1"]
    assert f"<td>Hole-F1</td><td class=\"number\">{hole_f1:.4f}</td>" in page
    for figure in ("precision_recall.png", "simple_to_complex.png", "wrong_topo.png"):
        assert f'<img src="{figure}"' in page
    summary = json.loads(exported["summary"].read_text(encoding="utf-8"))
    assert summary["metrics"]["Hole-F1"] == pytest.approx(hole_f1)
    assert json.loads(exported["provenance"].read_text(encoding="utf-8"))["crs"] == "EPSG:32616"
    assert all(os.path.exists(path) for path in exported.values())


def test_existing_outputs_are_kept_unless_overwrite_is_allowed(run, tmp_path):
    first = export_run(run, tmp_path / "e.gpkg", tmp_path / "report")
    before = first["geopackage"].stat().st_mtime_ns
    with pytest.raises(OutputExistsError, match="Expected no file at .*e.gpkg but one exists"):
        export_run(run, tmp_path / "e.gpkg", tmp_path / "other")
    with pytest.raises(OutputExistsError, match="Expected no previous output at .*report but one exists"):
        export_run(run, tmp_path / "f.gpkg", tmp_path / "report")
    assert first["geopackage"].stat().st_mtime_ns == before
    again = export_run(run, tmp_path / "e.gpkg", tmp_path / "report", overwrite=True)
    assert again["report_html"].is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.gpkg", "report"]


def test_a_folder_that_is_not_a_report_is_never_replaced(run, tmp_path):
    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "thesis.txt").write_text("keep me")
    with pytest.raises(OutputExistsError, match="never replaced"):
        export_run(run, tmp_path / "e.gpkg", tmp_path / "documents", overwrite=True)
    assert (tmp_path / "documents" / "thesis.txt").read_text() == "keep me"
    assert not (tmp_path / "e.gpkg").exists()


def test_an_input_is_never_an_output(run, scene, tmp_path):
    with pytest.raises(RunParameterError, match="prediction.gpkg is the input"):
        export_run(run, scene.prediction, tmp_path / "report", overwrite=True)
    with pytest.raises(RunParameterError, match="contains the input"):
        export_run(run, tmp_path / "e.gpkg", scene.reference.parent, overwrite=True)


def test_cancel_leaves_nothing_behind(run, tmp_path, recording_feedback):
    for after in (1, 2, 3):  # after the GeoPackage, after the styles, inside the report
        with pytest.raises(RunCanceled):
            export_run(run, tmp_path / "e.gpkg", tmp_path / "report", feedback=recording_feedback(after))
        assert list(tmp_path.iterdir()) == []


def test_add_run_to_project_adds_a_styled_group(exported):
    from qgis.core import QgsProject

    project = QgsProject()
    layers = add_run_to_project(exported["geopackage"], project, "Evaluation 1")
    group = project.layerTreeRoot().findGroup("Evaluation 1")
    assert [node.name() for node in group.children()] == [
        "Missed holes", "Hallucinated holes", "Unmatched predictions", "Missed references", "Predictions",
        "References", "Summary"]
    assert [layer.renderer().type() for layer in layers[:6]] == ["RuleRenderer"] * 6
    predictions = project.mapLayersByName("Predictions")[0]
    assert predictions.attributeAlias(predictions.fields().indexOf("e_biou")) == "Exterior BIoU"
    project.clear()


def test_the_legend_lists_only_the_classes_and_hole_rings_drawn(run, exported):
    """Issue 33: each layer's legend has the classes its features have (no class that cannot occur, no empty
    fallback) and, when a feature has a hole, the black-and-white dashed hole ring."""
    from qgis.core import QgsProject

    from polytopo.evaluator.tables.error_classes import ERROR_CLASSES
    from polytopo.evaluator.outputs.qml_styles import HOLE_RING_LABEL

    project = QgsProject()
    add_run_to_project(exported["geopackage"], project, "Evaluation 1")
    records = run.evaluation.records
    for title, side, holes_field in (("Predictions", "prediction", "pred_holes"),
                                     ("References", "reference", "ref_holes")):
        layer = project.mapLayersByName(title)[0]
        labels = [rule.label() for rule in layer.renderer().rootRule().children()]
        present = {record["error_class"] for record in records[f"{side}s"]}
        holes = any((record[holes_field] or 0) > 0 for record in records[f"{side}s"])
        assert labels == [f"{c.name}: {c.description}" for c in ERROR_CLASSES
                          if side in c.sides and c.name in present] + ([HOLE_RING_LABEL] if holes else []), title
    assert any(HOLE_RING_LABEL in [rule.label() for rule in layer.renderer().rootRule().children()]
               for layer in project.mapLayers().values() if layer.renderer() is not None)
    project.clear()


def test_add_run_to_project_styles_a_geopackage_without_saved_styles(run, tmp_path):
    """The evaluator's command line writes evaluation.gpkg without styles: the bundled QML is applied."""
    from qgis.core import QgsProject

    from polytopo.evaluator import write_report

    files = write_report(run.evaluation, tmp_path / "cli", frame=run.frame, plots=False)
    project = QgsProject()
    layers = add_run_to_project(files["geopackage"], project, "CLI")
    assert len(layers) == 6 and all(layer.renderer().type() == "RuleRenderer" for layer in layers)
    assert layers[4].attributeAlias(layers[4].fields().indexOf("error_class")) == "Error class"
    project.clear()
