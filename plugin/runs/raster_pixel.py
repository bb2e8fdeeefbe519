"""The evaluation pixel size: taken from a raster, expressed in metres, checked for plausibility.

The dock and the Processing algorithms share these functions, so a pixel size is
derived, shown and refused by one rule everywhere: :func:`raster_pixel_size` gives
the side of one raster pixel in map units of the reference CRS,
:func:`pixel_size_unit` names that unit, :func:`pixel_size_metres` measures it on
the ground and :func:`check_pixel_size` refuses a size outside
:data:`PLAUSIBLE_PIXEL_METRES` with the value that would be right.
"""

import math

from qgis.core import (
    QgsCoordinateTransform,
    QgsCsException,
    QgsDistanceArea,
    QgsPointXY,
    QgsRasterLayer,
    QgsRectangle,
    QgsUnitTypes,
)

from ..errors import LayerInputError, RunParameterError

__all__ = ["PLAUSIBLE_PIXEL_METRES", "check_pixel_size", "pixel_size_metres", "pixel_size_unit",
           "raster_pixel_size"]

#: Smallest and largest ground sampling distance accepted, metres per pixel (1 cm, 10 m).
PLAUSIBLE_PIXEL_METRES = (0.01, 10.0)

_UNIT_SYMBOLS = {QgsUnitTypes.DistanceMeters: "m", QgsUnitTypes.DistanceFeet: "ft",
                 QgsUnitTypes.DistanceDegrees: "°", QgsUnitTypes.DistanceKilometers: "km"}


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


def pixel_size_unit(crs):
    """The symbol of the map unit of ``crs`` (``m``, ``ft``, ``°``), or ``map units`` when unknown.

    Parameters
    ----------
    crs : QgsCoordinateReferenceSystem

    Returns
    -------
    str
    """
    if not crs.isValid():
        return "map units"
    return _UNIT_SYMBOLS.get(crs.mapUnits(), QgsUnitTypes.toAbbreviatedString(crs.mapUnits()) or "map units")


def pixel_size_metres(pixel_size, crs, location, transform_context):
    """Ground size of a pixel of ``pixel_size`` map units at ``location``, metres.

    Measured on the WGS 84 ellipsoid along both axes (geometric mean), so a size in
    degrees or in Web Mercator metres gives its true ground size there.

    Parameters
    ----------
    pixel_size : float
        Map units of ``crs`` per pixel.
    crs : QgsCoordinateReferenceSystem
    location : QgsPointXY
        Where to measure, in ``crs`` (the centre of the reference layer's extent).
    transform_context : QgsCoordinateTransformContext

    Returns
    -------
    float or None
        Metres per pixel; None when ``crs`` is invalid or the measure fails.
    """
    if not crs.isValid() or not (isinstance(pixel_size, (int, float)) and math.isfinite(pixel_size)):
        return None
    area = QgsDistanceArea()
    area.setSourceCrs(crs, transform_context)
    area.setEllipsoid("EPSG:7030")
    x, y = location.x(), location.y()
    try:
        along_x = area.measureLine(QgsPointXY(x, y), QgsPointXY(x + pixel_size, y))
        along_y = area.measureLine(QgsPointXY(x, y), QgsPointXY(x, y + pixel_size))
    except QgsCsException:
        return None
    metres = math.sqrt(along_x * along_y)
    return metres if math.isfinite(metres) and metres > 0 else None


def check_pixel_size(pixel_size, crs, location, transform_context):
    """Refuse a pixel size that is not a positive number or not 1 cm–10 m on the ground.

    Parameters
    ----------
    pixel_size : float
        Map units of ``crs`` per pixel.
    crs : QgsCoordinateReferenceSystem
        The reference layer's CRS; an invalid CRS skips the ground-size check.
    location : QgsPointXY
        Where the size is measured (centre of the reference layer's extent).
    transform_context : QgsCoordinateTransformContext

    Returns
    -------
    float or None
        The ground size, metres per pixel (None without a valid CRS).

    Raises
    ------
    RunParameterError
        Not a positive finite number, or outside :data:`PLAUSIBLE_PIXEL_METRES`; the
        message gives the accepted range in the CRS unit and the value for 30 cm imagery.
    """
    unit = pixel_size_unit(crs)
    valid = (not isinstance(pixel_size, bool) and isinstance(pixel_size, (int, float))
             and math.isfinite(pixel_size) and pixel_size > 0)
    if not valid:
        raise RunParameterError(
            f"Expected a pixel size in {unit} per pixel (the ground sampling distance of the imagery) but got "
            f"{pixel_size!r}; a vector layer has no resolution, so give the pixel size or take it from the "
            "raster the prediction came from"
        )
    metres = pixel_size_metres(pixel_size, crs, location, transform_context)
    low, high = PLAUSIBLE_PIXEL_METRES
    if metres is not None and not low <= metres <= high:
        per_metre = pixel_size / metres
        raise RunParameterError(
            f"Expected a pixel size of {low * 100:g} cm to {high:g} m on the ground ({low * per_metre:.3g} to "
            f"{high * per_metre:.3g} {unit} in {crs.authid() or 'the reference CRS'}) but got {pixel_size:g} "
            f"{unit}, about {_metres_text(metres)} per pixel; for 30 cm imagery give {0.3 * per_metre:.3g} "
            f"{unit}, or take the pixel size from the raster the prediction came from"
        )
    return metres


def _metres_text(metres):
    if metres >= 1000:
        return f"{metres / 1000:.3g} km"
    if metres < 0.01:
        return f"{metres * 1000:.3g} mm"
    return f"{metres:.3g} m"
