"""Fixtures of the plugin-core tests: a scene of known errors (Processing: ``qgis_processing`` of tests/conftest.py).

The scene is one row of 40 m buildings in UTM zone 16N (EPSG:32616), evaluated at
0.5 m per pixel. Each position shows one error class; the prediction layer is stored
in Web Mercator (EPSG:3857) so every run exercises reprojection.
"""

import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from polytopo_testing import semantic_band_model
from stand_ins import RecordingFeedback

__all__ = [
    "RecordingFeedback",
    "Scene",
    "VectorizeInputs",
    "block_wkt",
    "recording_feedback",
    "release_failed_test_frames",
    "scene",
    "square",
    "tools",
    "vectorize_inputs",
    "write_band_model",
    "write_building_raster",
    "write_polygon_layer",
]

#: Lower-left corner of the first building, EPSG:32616 metres.
SCENE_ORIGIN = (440000.0, 4640000.0)
#: Distance between the lower-left corners of neighbouring buildings, metres.
SPACING_M = 60.0
BUILDING_M = 40.0
PIXEL_SIZE_M = 0.5


def square(index, dx=0.0, dy=0.0, holes=(), size=BUILDING_M):
    """WKT of a square building at scene position ``index`` with square holes.

    ``holes`` are ``(x, y, side)`` in metres from the building's lower-left corner.
    """
    x0, y0 = SCENE_ORIGIN[0] + index * SPACING_M + dx, SCENE_ORIGIN[1] + dy

    def ring(x, y, side):
        return f"({x} {y}, {x + side} {y}, {x + side} {y + side}, {x} {y + side}, {x} {y})"

    rings = [ring(x0, y0, size)] + [ring(x0 + hx, y0 + hy, side) for hx, hy, side in holes]
    return f"POLYGON ({', '.join(rings)})"


#: Reference buildings: (position, holes).
REFERENCES = {
    0: [(15, 15, 10)],  # ok
    1: [(15, 15, 10)],  # missing hole
    2: [],  # extra hole
    3: [(5, 15, 8)],  # misplaced hole
    4: [],  # invalid prediction
    5: [],  # exterior mismatch
    6: [(15, 15, 10)],  # missed reference
}
#: Predictions: (position, dx, dy, holes, score).
PREDICTIONS = [
    (0, 0.2, 0.0, [(15, 15, 10)], 0.9),
    (1, 0.0, 0.2, [], 0.8),
    (2, 0.0, 0.0, [(15, 15, 10)], 0.85),
    (3, 0.0, 0.0, [(27, 15, 8)], 0.7),
    (4, 0.0, 0.0, [(35, 15, 10)], 0.75),  # the hole crosses the exterior
    (5, 3.0, 3.0, [], 0.65),
    (7, 0.0, 0.0, [(15, 15, 10)], 0.6),  # nothing to match
]
EXPECTED_CLASSES = {0: "ok", 1: "missing hole", 2: "extra hole", 3: "misplaced hole", 4: "invalid",
                    5: "exterior mismatch", 7: "unmatched"}


def write_polygon_layer(path, crs, wkts, fields=(), values=(), source_crs="EPSG:32616", geometry="Polygon"):
    """Write a GeoPackage layer of ``wkts`` (in ``source_crs``) stored in ``crs``; return its path."""
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsCoordinateTransform,
        QgsFeature,
        QgsGeometry,
        QgsProject,
        QgsVectorFileWriter,
        QgsVectorLayer,
    )

    spec = "&".join(f"field={name}:{kind}" for name, kind in fields)
    layer = QgsVectorLayer(f"{geometry}?crs={crs}&{spec}", Path(path).stem, "memory")
    transform = QgsCoordinateTransform(QgsCoordinateReferenceSystem(source_crs),
                                       QgsCoordinateReferenceSystem(crs), QgsProject.instance())
    features = []
    for index, wkt in enumerate(wkts):
        feature = QgsFeature(layer.fields())
        geometry_ = QgsGeometry.fromWkt(wkt)
        geometry_.transform(transform)
        feature.setGeometry(geometry_)
        if values:
            feature.setAttributes(list(values[index]))
        features.append(feature)
    layer.dataProvider().addFeatures(features)
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = Path(path).stem
    error = QgsVectorFileWriter.writeAsVectorFormatV3(layer, str(path), QgsProject.instance().transformContext(),
                                                     options)
    assert error[0] == QgsVectorFileWriter.NoError, error
    return Path(path)


@dataclass(frozen=True)
class Scene:
    """Paths of the scene's layers and what each position is expected to show."""

    reference: Path
    prediction: Path
    pixel_size: float
    expected_classes: dict

    def layers(self):
        """Open both GeoPackages as QGIS layers: (prediction, reference)."""
        from qgis.core import QgsVectorLayer

        prediction = QgsVectorLayer(str(self.prediction), "predictions", "ogr")
        reference = QgsVectorLayer(str(self.reference), "references", "ogr")
        assert prediction.isValid() and reference.isValid()
        return prediction, reference


@pytest.fixture(scope="session")
def scene(qgis_app, tmp_path_factory):
    """Write the scene's reference (EPSG:32616) and prediction (EPSG:3857) GeoPackages."""
    folder = tmp_path_factory.mktemp("scene")
    reference = write_polygon_layer(
        folder / "reference.gpkg", "EPSG:32616", [square(i, holes=h) for i, h in REFERENCES.items()],
        fields=[("name", "string")], values=[(f"building {i}",) for i in REFERENCES])
    prediction = write_polygon_layer(
        folder / "prediction.gpkg", "EPSG:3857",
        [square(i, dx, dy, holes) for i, dx, dy, holes, _ in PREDICTIONS],
        fields=[("score", "double")], values=[(score,) for *_, score in PREDICTIONS])
    return Scene(reference, prediction, PIXEL_SIZE_M, EXPECTED_CLASSES)


RASTER_ORIGIN = (440000.0, 4640100.0)  # top-left corner of the test raster, EPSG:32616 metres
RASTER_SIZE_PX = (200, 120)  # columns, rows at PIXEL_SIZE_M
#: Buildings painted into the raster as (col0, row0, col1, row1) blocks with courtyards.
RASTER_BUILDINGS = [((10, 10, 90, 90), [(30, 30, 60, 60)]), ((110, 20, 180, 100), [])]


def block_wkt(block, holes=()):
    """WKT (EPSG:32616) of a raster block ``(col0, row0, col1, row1)`` with block-shaped holes."""

    def ring(col0, row0, col1, row1):
        x0, x1 = RASTER_ORIGIN[0] + col0 * PIXEL_SIZE_M, RASTER_ORIGIN[0] + col1 * PIXEL_SIZE_M
        y0, y1 = RASTER_ORIGIN[1] - row0 * PIXEL_SIZE_M, RASTER_ORIGIN[1] - row1 * PIXEL_SIZE_M
        return f"({x0} {y0}, {x1} {y0}, {x1} {y1}, {x0} {y1}, {x0} {y0})"

    return f"POLYGON ({', '.join([ring(*block)] + [ring(*hole) for hole in holes])})"


def write_building_raster(path, bands=1):
    """A Byte GeoTIFF (EPSG:32616, 0.5 m) with the buildings of RASTER_BUILDINGS at 255 on 0."""
    import numpy as np
    from osgeo import gdal, osr

    columns, rows = RASTER_SIZE_PX
    image = np.zeros((rows, columns), np.uint8)
    for (c0, r0, c1, r1), holes in RASTER_BUILDINGS:
        image[r0:r1, c0:c1] = 255
        for hc0, hr0, hc1, hr1 in holes:
            image[hr0:hr1, hc0:hc1] = 0
    dataset = gdal.GetDriverByName("GTiff").Create(str(path), columns, rows, bands, gdal.GDT_Byte)
    dataset.SetGeoTransform((RASTER_ORIGIN[0], PIXEL_SIZE_M, 0.0, RASTER_ORIGIN[1], 0.0, -PIXEL_SIZE_M))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32616)
    dataset.SetProjection(srs.ExportToWkt())
    for band in range(1, bands + 1):
        dataset.GetRasterBand(band).WriteArray(image)
    dataset.FlushCache()
    del dataset
    return Path(path)


def write_band_model(path, channels=1, tile=64):
    """A tiny semantic ONNX model: building probability = input channel 0 (8-bit input scaled to 0–1)."""
    card = {"polytopo.family": "semantic", "seg_thresh": 0.5, "tile_size": tile, "tiles_overlap": 25,
            "class_names": {"0": "building"}, "polytopo.input_range": [0, 255]}
    return Path(semantic_band_model(path, channels, tile=tile, card=card))


@dataclass(frozen=True)
class VectorizeInputs:
    """A building raster, a model that reads it, and the buildings as reference polygons."""

    raster: Path
    model: Path
    reference: Path


@pytest.fixture(scope="session")
def vectorize_inputs(qgis_app, tmp_path_factory):
    """Write the raster, the tiny model and the reference GeoPackage of RASTER_BUILDINGS."""
    folder = tmp_path_factory.mktemp("vectorize")
    reference = write_polygon_layer(folder / "buildings.gpkg", "EPSG:32616",
                                    [block_wkt(block, holes) for block, holes in RASTER_BUILDINGS])
    return VectorizeInputs(write_building_raster(folder / "image.tif"), write_band_model(folder / "band.onnx"),
                           reference)


@pytest.fixture
def recording_feedback():
    """Return a factory of :class:`RecordingFeedback` objects."""
    return RecordingFeedback


@pytest.fixture(scope="session")
def tools():
    """The layer and model writers and the scene constants, for tests that build their own inputs."""
    import types

    return types.SimpleNamespace(
        square=square, write_polygon_layer=write_polygon_layer, block_wkt=block_wkt,
        write_band_model=write_band_model, write_building_raster=write_building_raster,
        scene_origin=SCENE_ORIGIN, spacing_m=SPACING_M, building_m=BUILDING_M, pixel_size_m=PIXEL_SIZE_M,
        references=REFERENCES, predictions=PREDICTIONS)


@pytest.fixture(autouse=True)
def release_failed_test_frames():
    """Free the locals of a failed test before QGIS exits.

    pytest keeps the last failure's traceback in ``sys.last_traceback`` (for post-mortem
    debugging); its frames hold the test's QGIS layers, which would then be destroyed after
    ``QgsApplication.exitQgis()`` and crash the interpreter instead of reporting the failure.
    """
    yield
    failure = getattr(sys, "last_traceback", None)
    if failure is not None:
        traceback.clear_frames(failure)
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            if hasattr(sys, name):
                delattr(sys, name)
