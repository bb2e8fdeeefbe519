"""The pixel size of a raster, in map units of the reference CRS."""

import math

import pytest

from polytopo.plugin.errors import LayerInputError
from polytopo.plugin.runs.raster_pixel import raster_pixel_size


def test_same_crs_gives_the_raster_resolution(vectorize_inputs):
    from qgis.core import QgsCoordinateReferenceSystem, QgsCoordinateTransformContext, QgsRasterLayer

    raster = QgsRasterLayer(str(vectorize_inputs.raster), "image")
    crs = QgsCoordinateReferenceSystem("EPSG:32616")
    assert raster_pixel_size(raster, crs, QgsCoordinateTransformContext()) == pytest.approx(0.5)


def test_another_crs_gives_the_reprojected_centre_pixel(vectorize_inputs):
    """0.5 m UTM pixels at latitude 41.9° span 0.5 / cos(41.9°) Web Mercator metres (scale factor 0.9996 aside)."""
    from qgis.core import QgsCoordinateReferenceSystem, QgsCoordinateTransformContext, QgsRasterLayer

    raster = QgsRasterLayer(str(vectorize_inputs.raster), "image")
    mercator = raster_pixel_size(raster, QgsCoordinateReferenceSystem("EPSG:3857"), QgsCoordinateTransformContext())
    latitude = math.radians(41.9)
    assert mercator == pytest.approx(0.5 / 0.9996 / math.cos(latitude), rel=0.01)


def test_a_vector_layer_is_not_a_raster(scene):
    from qgis.core import QgsCoordinateReferenceSystem, QgsCoordinateTransformContext

    prediction, _ = scene.layers()
    with pytest.raises(LayerInputError, match="Expected a valid raster layer"):
        raster_pixel_size(prediction, QgsCoordinateReferenceSystem("EPSG:32616"), QgsCoordinateTransformContext())
