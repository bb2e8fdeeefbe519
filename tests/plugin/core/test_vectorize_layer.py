"""``vectorize_layer`` runs the inference engine on a QGIS raster layer and reports what it did."""

import pytest

from polytopo.models.writer import FIELDS
from polytopo.plugin.errors import (
    LayerInputError,
    ModelInputError,
    OutputExistsError,
    RunCanceled,
    RunParameterError,
)
from polytopo.plugin.runs import vectorize_and_evaluate, vectorize_layer
from polytopo.plugin.runs.vectorize import SCORE_FIELD


def open_raster(path):
    """The test raster as a QGIS layer (a local of each test: QGIS objects must die before QGIS exits)."""
    from qgis.core import QgsRasterLayer

    layer = QgsRasterLayer(str(path), "image")
    assert layer.isValid()
    return layer


def test_result_names_the_file_provider_card_and_count(vectorize_inputs, tmp_path, recording_feedback):
    raster = open_raster(vectorize_inputs.raster)
    feedback = recording_feedback()
    result = vectorize_layer(raster, vectorize_inputs.model, provider="cpu", output_path=tmp_path / "out.gpkg",
                             feedback=feedback)
    assert (result.path, result.features) == (tmp_path / "out.gpkg", 2)
    assert result.provider_used == "CPUExecutionProvider"
    assert result.provider_report == "CPUExecutionProvider (requested cpu)"
    assert result.card["family"] == "semantic" and result.card["tile_size_px"] == 64
    assert result.provenance["raster"]["crs"] == "EPSG:32616"
    assert feedback.progress[-1] == 100 and any("family semantic" in info for info in feedback.infos)
    assert SCORE_FIELD in [name for name, _ in FIELDS]


def test_an_area_of_interest_in_another_crs_limits_the_output(vectorize_inputs, tools, tmp_path):
    """An AOI drawn in Web Mercator around the second building keeps that building only."""
    from qgis.core import QgsVectorLayer

    aoi_path = tools.write_polygon_layer(tmp_path / "aoi.gpkg", "EPSG:3857",
                                         ["POLYGON ((440052 4640045, 440093 4640045, 440093 4640093, "
                                          "440052 4640093, 440052 4640045))"])
    result = vectorize_layer(open_raster(vectorize_inputs.raster), vectorize_inputs.model, provider="cpu",
                             output_path=tmp_path / "out.gpkg", aoi_layer=QgsVectorLayer(str(aoi_path), "aoi", "ogr"))
    assert result.features == 1 and result.provenance["run_parameters"]["aoi"] is True


def test_cancel_during_inference_writes_nothing(vectorize_inputs, tmp_path, recording_feedback):
    """Canceled after the first batch: the engine stops before the next one and removes its output."""
    raster = open_raster(vectorize_inputs.raster)
    feedback = recording_feedback(cancel_after_progress=1)
    with pytest.raises(RunCanceled, match="no output was written"):
        vectorize_layer(raster, vectorize_inputs.model, provider="cpu", output_path=tmp_path / "out.gpkg",
                        feedback=feedback)
    assert 0 < feedback.progress[-1] < 100
    assert list(tmp_path.iterdir()) == []


def test_bad_requests_fail_before_any_work(vectorize_inputs, tmp_path):
    raster = open_raster(vectorize_inputs.raster)
    with pytest.raises(RunParameterError, match=r"provider to be one of \['auto', 'cuda', 'cpu'\]"):
        vectorize_layer(raster, vectorize_inputs.model, provider="tpu", output_path=tmp_path / "out.gpkg")
    with pytest.raises(RunParameterError, match=r"ending in \['.gpkg', '.geojson'\]"):
        vectorize_layer(raster, vectorize_inputs.model, output_path=tmp_path / "out.shp")
    with pytest.raises(ModelInputError, match="does not exist"):
        vectorize_layer(raster, tmp_path / "missing.onnx", output_path=tmp_path / "out.gpkg")
    (tmp_path / "taken.gpkg").write_bytes(b"")
    with pytest.raises(OutputExistsError, match="Expected no file at"):
        vectorize_layer(raster, vectorize_inputs.model, output_path=tmp_path / "taken.gpkg")
    with pytest.raises(RunParameterError, match="different from every input"):
        vectorize_layer(raster, vectorize_inputs.model, output_path=vectorize_inputs.reference, overwrite=True,
                        aoi_layer=_layer(vectorize_inputs.reference))
    with pytest.raises(RunParameterError, match="min < max"):
        vectorize_layer(raster, vectorize_inputs.model, output_path=tmp_path / "out.gpkg", extent=(1, 1, 0, 0))
    with pytest.raises(RunParameterError, match="Expected min_hole_area_px to be an area >= 0 square model pixels "
                                                "but got -1"):
        vectorize_layer(raster, vectorize_inputs.model, output_path=tmp_path / "out.gpkg", min_hole_area_px=-1)


def _layer(path):
    from qgis.core import QgsVectorLayer

    return QgsVectorLayer(str(path), "layer", "ogr")


def test_a_raster_that_is_not_a_file_is_refused(vectorize_inputs, tmp_path):
    from qgis.core import QgsRasterLayer

    wms = QgsRasterLayer("crs=EPSG:3857&format=image/png&layers=a&styles=&url=http://127.0.0.1:9", "wms", "wms")
    with pytest.raises(LayerInputError, match="Expected a valid raster layer"):
        vectorize_layer(wms, vectorize_inputs.model, output_path=tmp_path / "out.gpkg")


def test_vectorize_and_evaluate_records_the_model_in_the_provenance(vectorize_inputs, tmp_path,
                                                                   recording_feedback):
    feedback = recording_feedback()
    vectorized, run = vectorize_and_evaluate(
        open_raster(vectorize_inputs.raster), _layer(vectorize_inputs.reference), vectorize_inputs.model, output_path=tmp_path / "v.gpkg",
        vectorize_options={"provider": "cpu"}, evaluation_options={"pixel_size": 0.5}, feedback=feedback)
    assert run.evaluation.summary["metrics"]["Topo-EM"] == 1.0
    assert run.provenance["model"] == str(vectorize_inputs.model)
    assert run.provenance["provider_used"] == vectorized.provider_used == "CPUExecutionProvider"
    assert run.provenance["score_field"] == SCORE_FIELD
    assert max(p for p in feedback.progress) == 100 and min(feedback.progress) == 0


def test_a_bundled_model_is_found_by_name(vectorize_inputs, tmp_path, monkeypatch):
    """A name that is not a file is looked up in the zoo index (here a one-model zoo in tmp_path)."""
    import json
    import shutil

    from polytopo.models import zoo

    shutil.copy(vectorize_inputs.model, tmp_path / "band.onnx")
    entry = {"name": "band_test", "file": "band.onnx", "family": "semantic", "baseline": "U-Net + Poly.",
             "input": "1 band, 8-bit", "resolution_cm": 50, "size_bytes": 1, "sha256": "0"}
    (tmp_path / "index.json").write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    monkeypatch.setattr(zoo, "INDEX_FILE", tmp_path / "index.json")
    raster = open_raster(vectorize_inputs.raster)
    result = vectorize_layer(raster, "band_test", provider="cpu", output_path=tmp_path / "out.gpkg")
    assert (result.model, result.features) == (str(tmp_path / "band.onnx"), 2)
    with pytest.raises(ModelInputError, match=r"bundled model among \['band_test'\] but got 'unet'"):
        vectorize_layer(raster, "unet", output_path=tmp_path / "other.gpkg")


def test_bands_choose_what_feeds_the_model_and_the_log_says_so(vectorize_inputs, tools, tmp_path,
                                                                recording_feedback):
    """Buildings only in band 2 of three: band 2 finds them, the default band 1 finds nothing but warns."""
    import numpy as np
    from osgeo import gdal

    path = tools.write_building_raster(tmp_path / "rgb.tif", bands=3)
    dataset = gdal.Open(str(path), gdal.GA_Update)
    for band in (1, 3):
        dataset.GetRasterBand(band).WriteArray(np.zeros((dataset.RasterYSize, dataset.RasterXSize), np.uint8))
    del dataset
    chosen, default = recording_feedback(), recording_feedback()
    result = vectorize_layer(open_raster(path), vectorize_inputs.model, provider="cpu", bands=[2],
                             output_path=tmp_path / "band2.gpkg", feedback=chosen)
    assert result.features == 2
    assert "Bands: raster band 2 (Band 2) → model channel 1" in chosen.infos
    result = vectorize_layer(open_raster(path), vectorize_inputs.model, provider="cpu",
                             output_path=tmp_path / "band1.gpkg", feedback=default)
    assert result.features == 0
    assert "Bands: raster band 1 (Band 1) → model channel 1" in default.infos
    assert any("The raster has 3 bands and the model reads 1 (band(s) 1)" in w for w in default.warnings)
    with pytest.raises(LayerInputError, match=r"one raster band for each of the model's 1 input channels but got 2"):
        vectorize_layer(open_raster(path), vectorize_inputs.model, bands=[1, 2], output_path=tmp_path / "x.gpkg")
    with pytest.raises(LayerInputError, match=r"the raster has 3 band\(s\), so band\(s\) \[4\] do not exist"):
        vectorize_layer(open_raster(path), vectorize_inputs.model, bands=[4], output_path=tmp_path / "x.gpkg")
    assert not (tmp_path / "x.gpkg").exists()


def test_decoding_overrides_reach_the_polygons_the_log_and_the_provenance(vectorize_inputs, tmp_path,
                                                                         recording_feedback):
    """A minimum hole area above the 900 px² courtyard fills it; the values used are logged and recorded."""
    raster = open_raster(vectorize_inputs.raster)
    feedback = recording_feedback()
    result = vectorize_layer(raster, vectorize_inputs.model, provider="cpu", output_path=tmp_path / "out.gpkg",
                             threshold=0.9, min_hole_area_px=901, feedback=feedback)
    holes = sorted(f.geometry().constGet().numInteriorRings() for f in _layer(result.path).getFeatures())
    assert (result.features, holes) == (2, [0, 0])
    assert "Decoding: threshold 0.9, minimum area 0 px², minimum hole area 901 px²" in feedback.infos
    assert result.decoding == {"threshold": 0.9, "min_area_px": 0.0, "min_hole_area_px": 901.0}
    recorded = result.provenance["run_parameters"]
    assert (recorded["threshold"], recorded["min_area_px"], recorded["min_hole_area_px"]) == (0.9, 0.0, 901.0)
    assert result.card["seg_threshold"] == 0.5  # the model's card itself is recorded unchanged
