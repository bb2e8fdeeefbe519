"""The pixel size of a raster layer, in map units of another CRS."""

import math

from qgis.core import QgsCoordinateTransform, QgsCsException, QgsRasterLayer, QgsRectangle

from .errors import LayerInputError

__all__ = ["raster_pixel_size"]


def raster_pixel_size(raster_layer, crs, transform_context):
    """Side of one pixel of ``raster_layer`` in map units of ``crs``.

    Parameters
    ----------
    raster_layer : QgsRasterLayer
        A georeferenced raster.
    crs : QgsCoordinateReferenceSystem
        The CRS the size is wanted in (the reference layer's).
    transform_context : QgsCoordinateTransformContext
        Datum transformations for a raster in another CRS.

    Returns
    -------
    float
        Map units of ``crs`` per pixel. For non-square pixels, or a raster in another
        CRS (one pixel at the raster's centre is reprojected), the geometric mean of
        the two sides.

    Raises
    ------
    LayerInputError
        The layer is not a valid raster, or its centre pixel cannot be reprojected.
    """
    if not isinstance(raster_layer, QgsRasterLayer) or not raster_layer.isValid():
        raise LayerInputError(f"Expected a valid raster layer to take the pixel size from but got {raster_layer!r}")
    width, height = raster_layer.rasterUnitsPerPixelX(), raster_layer.rasterUnitsPerPixelY()
    if raster_layer.crs() != crs and raster_layer.crs().isValid() and crs.isValid():
        centre = raster_layer.extent().center()
        pixel = QgsRectangle(centre.x(), centre.y(), centre.x() + width, centre.y() + height)
        try:
            box = QgsCoordinateTransform(raster_layer.crs(), crs, transform_context).transformBoundingBox(pixel)
        except QgsCsException as exc:
            raise LayerInputError(
                f"Expected the raster {raster_layer.name()!r} to be reprojectable to {crs.authid()} but got an "
                f"error ({exc}); give the pixel size directly"
            ) from None
        width, height = box.width(), box.height()
    return math.sqrt(width * height)
