"""The bundled models: they load in the engine, carry complete cards, stay small and yield valid polygons.

Runs without PyTorch. The real-imagery checks need the shared data folder
(``$POLYTOPO_SHARED/data`` or ``<repository>/../shared/data``) and are
skipped, with that reason, without it; the synthetic-raster checks always run.
"""

import json

import numpy as np
import pytest
import shapely
from osgeo import gdal, osr

from polytopo.models import PreparedRun, RunParams, SessionParams, load_model
from polytopo.models.card.onnx_metadata import read_metadata_props
from polytopo.training.cards import required_keys
from polytopo.training.shared_data import find_shared_data, shared_data_available
from polytopo.models.zoo.pack import file_sha256
from polytopo.models.zoo import ZooError, zoo_model, zoo_models

CPU = SessionParams(provider="cpu", intra_op_threads=2)
# The default model of the README's main job must be bundled; the others are listed when exported.
REQUIRED = {"unet_buildings_rgb", "unet_buildings_pan"}
RECIPE_NAMES = {"unet_buildings_rgb", "unet_holes_rgb", "vertexmask_buildings_rgb", "unet_buildings_pan"}
MODELS = zoo_models()
NO_SHARED_DATA = "the shared data folder (imagery with labels) is absent, so there is no real imagery to run on"
REAL_CROPS = {
    # A held-out Kampala zoom-20 chip (east third, never seen in training) with several buildings.
    "kampala_rgb": "imagery/fair_oam/chips/OAM-619228-523265-20.tif",
    "atlanta_pan": "imagery/spacenet_atlanta/sample_geotiff.tif",
}


def ids(model):
    return model.name


@pytest.fixture(scope="module")
def loaded():
    return {model.name: load_model(model.path, CPU) for model in MODELS}


def source_of(model):
    return "atlanta_pan" if "16-bit" in model.input else "kampala_rgb"


def synthetic_raster(path, source):
    """A georeferenced raster the model accepts: textured ground with block 'buildings', one with a courtyard."""
    rng = np.random.default_rng(5)
    if source == "kampala_rgb":
        size, pixel_m, epsg, bands, dtype, top = 224, 0.15, 32636, 3, gdal.GDT_Byte, 255
    else:
        size, pixel_m, epsg, bands, dtype, top = 160, 0.5, 32616, 1, gdal.GDT_UInt16, 1500
    base = rng.normal(0.35, 0.05, (size, size))
    base[40:120, 30:110] = 0.85
    base[65:95, 55:85] = 0.3
    base[140:200, 130:200] = 0.8
    values = np.clip(base, 0, 1) * top
    dataset = gdal.GetDriverByName("GTiff").Create(str(path), size, size, bands, dtype)
    dataset.SetGeoTransform((500000.0, pixel_m, 0.0, 100000.0, 0.0, -pixel_m))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    dataset.SetProjection(srs.ExportToWkt())
    for band in range(bands):
        dataset.GetRasterBand(band + 1).WriteArray((values * (1.0 - 0.1 * band)).astype(np.uint16 if bands == 1 else np.uint8))
    dataset = None
    return path


def run(model, raster, extent=None):
    prediction = PreparedRun(model, raster, RunParams(extent=extent, batch_size=2))
    polygons = [p.geometry for p in prediction]
    return prediction.report, polygons


def test_the_zoo_lists_every_bundled_model():
    """The index names only trained recipes, includes the required ones, and a wrong name fails naming them."""
    names = {model.name for model in MODELS}
    assert REQUIRED <= names <= RECIPE_NAMES
    with pytest.raises(ZooError, match="unet_buildings_rgb"):
        zoo_model("no_such_model")


@pytest.mark.parametrize("model", MODELS, ids=ids)
def test_file_is_under_25_mb_and_matches_the_index(model):
    """Each file exists, is smaller than 25 MB (float32) and has the size and checksum the index records."""
    assert model.path.stat().st_size == model.size_bytes < 25_000_000
    assert file_sha256(model.path) == model.sha256


@pytest.mark.parametrize("model", MODELS, ids=ids)
def test_card_validates_against_the_graph_and_has_every_key(model, loaded):
    """The engine accepts the card, and every Deepness and polytopo key of the zoo is present."""
    card = loaded[model.name].card
    props = read_metadata_props(model.path)
    assert card.family == model.family
    assert set(required_keys(model.family)) <= set(props), sorted(set(required_keys(model.family)) - set(props))
    assert card.resolution_cm_per_px == model.resolution_cm_per_px
    assert card.simplify_tolerance_px == 1.0
    scores = json.loads(props["polytopo.scores"])
    assert scores["results"] and all("AP50" in row and "Topo-EM" in row for row in scores["results"])
    assert "not stated" in card.licence


@pytest.mark.parametrize("model", MODELS, ids=ids)
def test_the_index_scores_are_the_cards_headline_scores(model):
    """The held-out scores the index lists (and the dock shows) are those of the card's headline raster."""
    scores = json.loads(read_metadata_props(model.path)["polytopo.scores"])
    rows = {row["key"]: row for row in scores["results"]}
    assert model.scores["heldout"] == scores["headline"] and scores["headline"] in rows
    headline = rows[scores["headline"]]
    assert headline["split"] == "held-out" and not headline["synthetic"]
    listed = {name: value for name, value in model.scores.items() if name != "heldout"}
    assert listed and listed == {name: headline[name] for name in listed}


@pytest.mark.parametrize("model", MODELS, ids=ids)
def test_synthetic_raster_gives_only_valid_polygons(model, loaded, tmp_path):
    """On a synthetic raster every tile runs, nothing is dropped as invalid and every polygon is valid."""
    raster = synthetic_raster(tmp_path / "synthetic.tif", source_of(model))
    report, polygons = run(loaded[model.name], raster)
    assert report.tiles_run == report.tiles_total >= 1
    assert report.invalid_dropped == 0
    assert all(shapely.is_valid(polygons))


@pytest.mark.parametrize("model", MODELS, ids=ids)
def test_real_held_out_crop_gives_buildings_as_valid_polygons(model, loaded):
    """On held-out real imagery the model finds buildings, and every polygon is valid."""
    if not shared_data_available():
        pytest.skip(NO_SHARED_DATA)
    source = source_of(model)
    raster = find_shared_data().root / REAL_CROPS[source]
    extent = None
    if source == "atlanta_pan":
        from polytopo.training.data import atlanta_extent

        xmin, ymin, xmax, ymax = atlanta_extent(raster, "test")
        extent = (xmin, ymax - 150.0, xmax, ymax)
    report, polygons = run(loaded[model.name], raster, extent)
    assert report.invalid_dropped == 0
    assert len(polygons) >= 1
    assert all(shapely.is_valid(polygons))


def test_the_command_line_lists_the_zoo_and_prints_one_card(capsys):
    """``python -m polytopo.models zoo`` names every bundled model with its held-out AP50; ``zoo NAME`` its card."""
    from polytopo.models.cli import main

    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    for model in zoo_models():
        (line,) = [line for line in out.splitlines() if line.startswith(model.name + " ")]
        assert model.family in line and f"{model.scores['AP50']:.3f}" in line and f"{model.size_bytes / 1e6:.1f}" in line
    name = zoo_models()[0].name
    assert main(["zoo", name]) == 0
    card = capsys.readouterr().out
    assert f"{name}.onnx" in card and "polytopo.family" in card
    assert main(["zoo", "no-such-model"]) == 1
    assert "Expected a bundled model among" in capsys.readouterr().err
