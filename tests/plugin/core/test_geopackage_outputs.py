"""Processing and the dock write into a user's GeoPackage without losing a layer, with QGIS reading the file."""

import json
import sysconfig

import pytest
from polytopo_testing import qgis_process
from reliability import case

from polytopo.core.geopackage_publish import layer_owners
from polytopo.plugin.errors import OutputExistsError
from polytopo.plugin.runs import vectorize


def _user_file(source, path):
    """A copy of ``source`` with its layer named ``my_buildings``: a user's file with a user's layer."""
    from osgeo import gdal

    gdal.UseExceptions()
    gdal.VectorTranslate(str(path), str(source), layerName="my_buildings")
    return path


def _features(layer):
    return sorted(f.geometry().asWkt(3) for f in layer.getFeatures())


@case("Processing vectorize with OUTPUT = the user's GeoPackage, open in QGIS", "qgis_process",
      "the polygons are added as a layer of that file; the user's layer, open in a QGIS project meanwhile, keeps "
      "every feature and stays readable; a second run replaces only PolyTopo's layer")
def test_qgis_process_vectorize_adds_its_layer_to_a_users_geopackage(qgis_app, qgis_env, vectorize_inputs, tmp_path):
    from qgis.core import QgsProject, QgsVectorLayer

    path = _user_file(vectorize_inputs.reference, tmp_path / "city.gpkg")
    mine = QgsVectorLayer(f"{path}|layername=my_buildings", "my buildings", "ogr")
    assert mine.isValid()
    QgsProject.instance().addMapLayer(mine)
    try:
        expected = _features(mine)
        env = {**qgis_env, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
        assert qgis_process(env, "plugins", "enable", "polytopo").returncode == 0
        for _run in range(2):
            result = qgis_process(env, "--json", "run", "polytopo:vectorize", "--",
                                  f"INPUT={vectorize_inputs.raster}", f"MODEL={vectorize_inputs.model}",
                                  "PROVIDER=2", f"OUTPUT={path}")
            assert result.returncode == 0, result.stderr[-2000:]
            assert json.loads(result.stdout)["results"]["OUTPUT"] == f"{path}|layername=city"
        mine.reload()
        assert mine.isValid() and _features(mine) == expected
        assert layer_owners(path) == {"city": True, "my_buildings": False}
        polygons = QgsVectorLayer(f"{path}|layername=city", "polygons", "ogr")
        assert polygons.isValid() and polygons.featureCount() == 2
    finally:
        QgsProject.instance().removeMapLayer(mine.id())


@case("vectorize (dock, Processing) into a GeoPackage whose user layer has the output's layer name",
      "plugin vectorize (dock, Processing)", "OutputExistsError before the inference, naming the layer; the file "
      "is unchanged")
def test_vectorize_refuses_a_users_layer_of_its_name_before_the_work(qgis_app, vectorize_inputs, tmp_path):
    from qgis.core import QgsRasterLayer

    path = _user_file(vectorize_inputs.reference, tmp_path / "my_buildings.gpkg")
    data = path.read_bytes()
    raster = QgsRasterLayer(str(vectorize_inputs.raster), "image")
    with pytest.raises(OutputExistsError, match=r"\['my_buildings'\] .* PolyTopo did not write"):
        vectorize.vectorize_layer(raster, vectorize_inputs.model, provider="cpu", output_path=path, overwrite=True)
    assert path.read_bytes() == data


@case("Processing evaluate with OUTPUT_GPKG = the user's GeoPackage", "plugin evaluate (dock, Processing)",
      "the six scored and error layers and the summary are added with their styles; the user's layer kept")
def test_evaluate_adds_its_layers_to_a_users_geopackage(qgis_processing, scene, tmp_path):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback, QgsVectorLayer

    path = _user_file(scene.reference, tmp_path / "city.gpkg")
    expected = _features(QgsVectorLayer(f"{path}|layername=my_buildings", "mine", "ogr"))
    results = processing.run("polytopo:evaluate", {
        "INPUT": str(scene.prediction), "REFERENCE": str(scene.reference), "SCORE_FIELD": "score",
        "PIXEL_SIZE": scene.pixel_size, "OUTPUT_GPKG": str(path), "OUTPUT_REPORT": str(tmp_path / "report")},
        context=QgsProcessingContext(), feedback=QgsProcessingFeedback())
    assert results["SCORED_PREDICTIONS"] == f"{path}|layername=predictions"
    owners = layer_owners(path)
    assert owners.pop("my_buildings") is False and all(owners.values()) and len(owners) == 7
    assert _features(QgsVectorLayer(f"{path}|layername=my_buildings", "mine", "ogr")) == expected
    styled = QgsVectorLayer(f"{path}|layername=predictions", "predictions", "ogr")
    assert styled.isValid() and "predictions" in styled.listStylesInDatabase()[2]


def test_processing_loads_the_vectorized_layer_not_the_first_layer_of_the_file(qgis_processing, vectorize_inputs,
                                                                               tmp_path):
    """With the polygons added to a file that holds the user's layer, the project gets the polygons."""
    import processing
    from processing.gui.Postprocessing import handleAlgorithmResults
    from qgis.core import (
        QgsApplication,
        QgsProcessingContext,
        QgsProcessingFeedback,
        QgsProcessingOutputLayerDefinition,
        QgsProject,
    )

    path = _user_file(vectorize_inputs.reference, tmp_path / "city.gpkg")
    project = QgsProject.instance()
    context, feedback = QgsProcessingContext(), QgsProcessingFeedback()
    context.setProject(project)
    algorithm = QgsApplication.processingRegistry().createAlgorithmById("polytopo:vectorize")
    try:
        processing.run(algorithm, {"INPUT": str(vectorize_inputs.raster), "MODEL": str(vectorize_inputs.model),
                                   "PROVIDER": 2, "OUTPUT": QgsProcessingOutputLayerDefinition(str(path), project)},
                       context=context, feedback=feedback)
        handleAlgorithmResults(algorithm, context, feedback)
        (layer,) = project.mapLayers().values()
        assert layer.source() == f"{path}|layername=city" and layer.featureCount() == 2
    finally:
        project.clear()
