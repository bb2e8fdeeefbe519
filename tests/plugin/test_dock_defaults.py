"""The dock never proposes one layer as both prediction and reference, and prefers the layer a vectorization wrote."""

import json

import pytest
from dock_testing import PREDICTION, REFERENCE, make_dock
from polytopo_testing import polygon_layer
from stand_ins import StandInCore


@pytest.fixture
def empty_project(qgis_app):
    from qgis.core import QgsProject

    instance = QgsProject.instance()
    instance.clear()
    yield instance
    instance.clear()


def _geopackage(path, layers):
    """A GeoPackage with one polygon layer per name."""
    from osgeo import ogr

    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    for index, name in enumerate(layers):
        layer = dataset.CreateLayer(name, None, ogr.wkbPolygon)
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(ogr.CreateGeometryFromWkt(f"POLYGON(({index} 0,{index + 1} 0,{index + 1} 1,{index} 0))"))
        layer.CreateFeature(feature)
    dataset = None
    return path


def test_one_polygon_layer_fills_the_prediction_only_and_a_second_one_the_reference(empty_project):
    dock, _ = make_dock(StandInCore())
    first = polygon_layer("first", PREDICTION)
    empty_project.addMapLayer(first)
    assert dock.prediction_combo.currentLayer() is first and dock.reference_combo.currentLayer() is None
    second = polygon_layer("second", REFERENCE)
    empty_project.addMapLayer(second)
    assert {dock.prediction_combo.currentLayer().id(), dock.reference_combo.currentLayer().id()} == {
        first.id(), second.id()}
    dock.deleteLater()


def test_the_layer_the_last_vectorization_wrote_is_the_prediction(empty_project):
    from qgis.core import QgsLayerMetadata

    labels = polygon_layer("labels", REFERENCE)
    vectorized = polygon_layer("vectorized", PREDICTION)
    metadata = QgsLayerMetadata()
    metadata.setHistory(["provenance: " + json.dumps({"created_utc": "2026-12-05T10:00:00Z"})])
    vectorized.setMetadata(metadata)
    empty_project.addMapLayers([labels, vectorized])
    dock, _ = make_dock(StandInCore())
    assert dock.prediction_combo.currentLayer() is vectorized and dock.reference_combo.currentLayer() is labels
    dock.deleteLater()


def test_a_reopened_project_gets_two_different_layers(empty_project, tmp_path):
    from qgis.core import QgsVectorLayer

    path = _geopackage(tmp_path / "city.gpkg", ["predicted", "labels"])
    for name in ("predicted", "labels"):
        empty_project.addMapLayer(QgsVectorLayer(f"{path}|layername={name}", name, "ogr"))
    empty_project.write(str(tmp_path / "city.qgz"))
    dock, _ = make_dock(StandInCore())
    empty_project.clear()
    empty_project.read(str(tmp_path / "city.qgz"))
    prediction, reference = dock.prediction_combo.currentLayer(), dock.reference_combo.currentLayer()
    assert prediction is not None and reference is not None and prediction.id() != reference.id()
    dock.deleteLater()


def test_two_tables_of_one_file_are_two_layers_but_one_table_opened_twice_is_one(qgis_app, tmp_path):
    from qgis.core import QgsVectorLayer

    from polytopo.plugin.errors import LayerInputError
    from polytopo.plugin.runs.layer_choice import check_distinct_layers

    path = _geopackage(tmp_path / "both.gpkg", ["predicted", "labels"])
    predicted = QgsVectorLayer(f"{path}|layername=predicted", "predicted", "ogr")
    labels = QgsVectorLayer(f"{path}|layername=labels", "labels", "ogr")
    check_distinct_layers(predicted, labels)  # two layers of one file: accepted
    first_by_path = QgsVectorLayer(str(path), "first layer", "ogr")
    with pytest.raises(LayerInputError, match="is also the reference layer"):
        check_distinct_layers(first_by_path, predicted)  # the same table, named two ways


def test_repeated_vectorizations_get_numbered_layer_names(empty_project):
    from polytopo.plugin.runs.layer_choice import unique_layer_name

    first = polygon_layer("image — unet", PREDICTION)
    empty_project.addMapLayer(first)
    assert unique_layer_name(empty_project, "image — unet") == "image — unet (2)"
    empty_project.addMapLayer(polygon_layer("image — unet (2)", PREDICTION))
    assert unique_layer_name(empty_project, "image — unet") == "image — unet (3)"
    assert unique_layer_name(empty_project, "other") == "other"


def test_selected_features_default_to_the_layer_with_a_selection(empty_project):
    plain, chosen = polygon_layer("plain", PREDICTION), polygon_layer("chosen", REFERENCE)
    empty_project.addMapLayers([plain, chosen])
    chosen.selectByIds([next(chosen.getFeatures()).id()])
    dock, _ = make_dock(StandInCore())
    dock.extent_combo.setCurrentIndex(dock.extent_combo.findText("Selected features"))
    assert dock.mask_combo.currentLayer() is chosen
    dock.deleteLater()
