"""Vector files read through GDAL/OGR, and the pixel frame that puts map units into pixels.

What the evaluator's layer reader and the engine's AOI and prompt inputs share: opening any
OGR dataset with errors raised as Python exceptions, reading its features as shapely
geometries (curves linearized, NULL and empty ones counted), reprojecting between CRSs, and
:class:`PixelFrame`, the evaluation grid of a map layer: its origin is the top-left corner
(min x, max y) of the reference extent, its pixel size is given by the caller, and ``y``
grows downwards as in image pixels. GDAL's Python bindings (``osgeo``) are imported only
when a file is read.
"""

import contextlib
import math
import os
from dataclasses import dataclass

import numpy as np
import shapely

from .errors import InputFormatError, InvalidParameterError, MissingDependencyError

__all__ = [
    "PixelFrame",
    "describe_srs",
    "frame_for_bounds",
    "spatial_reference",
    "map_geometries",
    "ogr_exceptions",
    "open_dataset",
    "read_features",
    "read_map_geometries",
    "reprojected",
    "require_osgeo",
    "same_srs",
    "srs_from_wkt",
    "validate_patch_size",
    "validate_pixel_size",
]


_UNDEFINED_SRS_NAMES = ("Undefined geographic SRS", "Undefined Cartesian SRS")


@dataclass(frozen=True)
class PixelFrame:
    """The evaluation grid of a map layer: where pixel (0, 0) is and how large a pixel is.

    Parameters
    ----------
    crs_wkt : str or None
        CRS of the map coordinates as WKT; None when the layers have no CRS.
    origin_x, origin_y : float
        Map coordinates of the grid's top-left corner (map units).
    pixel_size : float
        Size of one pixel in map units (metres, degrees, ...) per pixel.
    patch_size_px : int or None
        Side of the square patches that group features into images, pixels; None when
        images come from an attribute or the layer is one image.

    Examples
    --------
    >>> frame = PixelFrame(None, origin_x=100.0, origin_y=50.0, pixel_size=0.5)
    >>> frame.to_pixels(shapely.Point(101.0, 49.0)).wkt
    'POINT (2 2)'
    >>> frame.to_map(shapely.Point(2.0, 2.0)).wkt
    'POINT (101 49)'
    """

    crs_wkt: object
    origin_x: float
    origin_y: float
    pixel_size: float
    patch_size_px: object = None

    def __post_init__(self):
        for name in ("origin_x", "origin_y"):
            if not math.isfinite(getattr(self, name)):
                raise InvalidParameterError(f"Expected a finite {name} (map units) but got {getattr(self, name)}")
        validate_pixel_size(self.pixel_size)
        validate_patch_size(self.patch_size_px)

    def to_pixels(self, geometry):
        """Map coordinates to pixels: ``((x - origin_x) / pixel_size, (origin_y - y) / pixel_size)``.

        Parameters
        ----------
        geometry : shapely.Geometry or array_like of shapely.Geometry
            Geometry in map units; None and empty geometries pass through.

        Returns
        -------
        shapely.Geometry or numpy.ndarray
            The same geometry (or array) in pixels, ``y`` pointing down.
        """
        return shapely.transform(geometry, self._coordinates_to_pixels)

    def to_map(self, geometry):
        """Pixels to map coordinates, the exact inverse of :meth:`to_pixels`.

        Parameters
        ----------
        geometry : shapely.Geometry or array_like of shapely.Geometry
            Geometry in pixels of this frame.

        Returns
        -------
        shapely.Geometry or numpy.ndarray
            The same geometry (or array) in map units.
        """
        return shapely.transform(geometry, self._coordinates_to_map)

    def _coordinates_to_pixels(self, coords):
        pixels = np.empty_like(coords)
        pixels[:, 0] = (coords[:, 0] - self.origin_x) / self.pixel_size
        pixels[:, 1] = (self.origin_y - coords[:, 1]) / self.pixel_size
        return pixels

    def _coordinates_to_map(self, pixels):
        coords = np.empty_like(pixels)
        coords[:, 0] = self.origin_x + pixels[:, 0] * self.pixel_size
        coords[:, 1] = self.origin_y - pixels[:, 1] * self.pixel_size
        return coords


def frame_for_bounds(bounds, *, pixel_size, patch_size_px=None, crs_wkt=None):
    """The frame whose origin is the top-left corner of ``bounds``.

    With a patch grid, the origin is snapped outwards to a multiple of the patch side
    (``patch_size_px * pixel_size`` map units), so that patches of the same area get the
    same ids whatever the layer's extent.

    Parameters
    ----------
    bounds : sequence of float
        ``(min_x, min_y, max_x, max_y)`` in map units; NaN values (an empty layer) put
        the origin at (0, 0).
    pixel_size : float
        Map units per pixel.
    patch_size_px : int, optional
        Patch side in pixels.
    crs_wkt : str, optional
        CRS of the bounds.

    Returns
    -------
    PixelFrame

    Examples
    --------
    >>> frame = frame_for_bounds((10.0, 20.0, 30.0, 40.0), pixel_size=2.0)
    >>> frame.origin_x, frame.origin_y
    (10.0, 40.0)
    >>> frame = frame_for_bounds((10.0, 20.0, 30.0, 40.0), pixel_size=2.0, patch_size_px=8)
    >>> frame.origin_x, frame.origin_y
    (0.0, 48.0)
    """
    validate_pixel_size(pixel_size)
    validate_patch_size(patch_size_px)
    min_x, _, _, max_y = (float(value) for value in bounds)
    if not (math.isfinite(min_x) and math.isfinite(max_y)):
        min_x, max_y = 0.0, 0.0
    if patch_size_px is not None:
        side = patch_size_px * pixel_size
        min_x, max_y = math.floor(min_x / side) * side, math.ceil(max_y / side) * side
    return PixelFrame(crs_wkt, min_x, max_y, float(pixel_size), patch_size_px)


def require_osgeo():
    """Import GDAL's Python bindings, with an install hint when they are missing.

    Returns
    -------
    tuple
        The modules ``(gdal, ogr, osr)``.

    Raises
    ------
    MissingDependencyError
        When ``osgeo`` cannot be imported.
    """
    try:
        from osgeo import gdal, ogr, osr
    except ImportError as exc:
        raise MissingDependencyError(
            "Expected GDAL's Python bindings (module osgeo) to read and write vector layers but "
            f"they cannot be imported ({exc}); install them with the system packages "
            "(Debian/Ubuntu: apt-get install python3-gdal), with conda (conda install gdal) or "
            "with pip matching the system GDAL (pip install GDAL==$(gdal-config --version)), "
            "or run inside QGIS, which ships them"
        ) from exc
    return gdal, ogr, osr


@contextlib.contextmanager
def ogr_exceptions():
    """Turn GDAL, OGR and OSR errors into Python exceptions for the duration of a block.

    The previous setting of each module is restored on exit, so a host application
    (QGIS, a notebook) keeps the error mode it chose.

    Yields
    ------
    tuple
        The modules ``(gdal, ogr, osr)``.
    """
    modules = require_osgeo()
    enabled = [module for module in modules if not module.GetUseExceptions()]
    for module in enabled:
        module.UseExceptions()
    try:
        yield modules
    finally:
        for module in reversed(enabled):  # GDAL keeps the error handlers on a stack
            module.DontUseExceptions()


def read_map_geometries(path, *, crs_wkt=None, purpose="vector"):
    """Geometries of every feature of a vector file's first layer, in map units of ``crs_wkt``.

    The reader of vector inputs other than the evaluated layers (areas of interest,
    prompts): any geometry type, NULL and empty geometries left out, curves linearized.

    Parameters
    ----------
    path : str or Path
        Any dataset GDAL/OGR can open as vector data.
    crs_wkt : str, optional
        CRS (WKT) to reproject to when the layer has another CRS; None or empty keeps
        the coordinates as they are, as does a layer without CRS.
    purpose : str
        What the file is for (``"AOI"``, ``"prompts"``), named in error messages.

    Returns
    -------
    list of shapely.Geometry
        In layer order.

    Raises
    ------
    InputFormatError
        The file cannot be opened, has no layer, holds non-finite coordinates, or its
        coordinates cannot be reprojected.

    Examples
    --------
    >>> point = '{"type": "Point", "coordinates": [10, 50]}'
    >>> [geometry.wkt for geometry in read_map_geometries(point)]
    ['POINT (10 50)']
    """
    with ogr_exceptions() as (gdal, _ogr, osr):
        dataset = open_dataset(gdal, path)
        if dataset.GetLayerCount() == 0:
            raise InputFormatError(f"{path}: expected a {purpose} file with a layer but it has none; "
                                   "check the path and the format")
        source = dataset.GetLayerByIndex(0)
        where = f"{purpose} file {path} layer '{source.GetName()}'"
        fids, wkbs, _values, _skipped = read_features(source, [])
        geometries = map_geometries(wkbs, fids, where)
        layer_srs = spatial_reference(source)
        if layer_srs is not None and crs_wkt:
            target = srs_from_wkt(osr, crs_wkt)
            if not same_srs(layer_srs, target):
                geometries = reprojected(osr, geometries, layer_srs, target, where, "the target CRS")
    return [geometry for geometry in geometries if geometry is not None]


def validate_pixel_size(pixel_size):
    """Refuse a pixel size (map units per pixel) that is not a positive finite number."""
    if isinstance(pixel_size, bool) or not isinstance(pixel_size, (int, float)) or not (
        math.isfinite(pixel_size) and pixel_size > 0
    ):
        raise InvalidParameterError(
            f"Expected pixel_size to be a positive number of map units per pixel but got {pixel_size!r}"
        )


def validate_patch_size(patch_size_px):
    """Refuse a patch size (pixels) that is neither None nor a positive integer."""
    if patch_size_px is None:
        return
    if isinstance(patch_size_px, bool) or not isinstance(patch_size_px, int) or patch_size_px < 1:
        raise InvalidParameterError(f"Expected patch_size_px to be a positive integer but got {patch_size_px!r}")


def open_dataset(gdal, path):
    """Open ``path`` read-only as a GDAL vector dataset; a missing or unreadable file is an InputFormatError."""
    try:
        return gdal.OpenEx(str(path), gdal.OF_VECTOR | gdal.OF_READONLY)
    except RuntimeError as exc:
        if not str(path).startswith("/vsi") and not os.path.exists(path):
            raise InputFormatError(f"{path}: file not found; check the path") from None
        raise InputFormatError(
            f"{path}: expected a vector dataset GDAL/OGR can open but got an error ({exc}); "
            "check the file and that this GDAL build has a driver for its format"
        ) from None


def read_features(source, wanted):
    """FIDs, ISO WKB (None for NULL/empty), wanted field values and skip counts, in layer order."""
    definition = source.GetLayerDefn()
    indices = [definition.GetFieldIndex(name) for name in wanted]
    fids, wkbs, skipped = [], [], {}
    values = {name: [] for name in wanted}
    source.ResetReading()
    for feature in source:
        fids.append(feature.GetFID())
        for name, index in zip(wanted, indices):
            values[name].append(feature.GetField(index))
        geometry = feature.GetGeometryRef()
        if geometry is None or geometry.IsEmpty():
            reason = "null_geometry" if geometry is None else "empty_geometry"
            skipped[reason] = skipped.get(reason, 0) + 1
            wkbs.append(None)
            continue
        if geometry.HasCurveGeometry():
            geometry = geometry.GetLinearGeometry()
        geometry.FlattenTo2D()
        wkbs.append(bytes(geometry.ExportToIsoWkb()))
    return fids, wkbs, values, skipped


def map_geometries(wkbs, fids, where):
    """Shapely geometries in map units; raises on the first feature with a non-finite coordinate."""
    encoded = np.array(wkbs, dtype=object)
    with np.errstate(invalid="ignore"):  # NaN coordinates are reported below, by feature
        geometries = shapely.from_wkb(encoded, on_invalid="ignore")
    unreadable = np.flatnonzero(shapely.is_missing(geometries) & np.array([w is not None for w in wkbs], dtype=bool))
    if len(unreadable):
        raise InputFormatError(
            f"{where} feature FID {fids[unreadable[0]]} field 'geometry': expected a polygon GEOS can read but "
            "got NaN or infinite coordinates or an unclosed ring; fix or remove the feature"
        )
    coords, owner = shapely.get_coordinates(geometries, return_index=True)
    bad = ~np.isfinite(coords).all(axis=1)
    if bad.any():
        fid = fids[owner[np.argmax(bad)]]
        raise InputFormatError(
            f"{where} feature FID {fid} field 'geometry': expected finite coordinates but got NaN or "
            "infinity; fix or remove the feature"
        )
    return geometries


def spatial_reference(source):
    """The layer's CRS, None when it has none (GeoPackage marks that with an "Undefined" SRS)."""
    srs = source.GetSpatialRef()
    if srs is None or (srs.GetName() in _UNDEFINED_SRS_NAMES and not srs.GetAuthorityName(None)):
        return None
    return srs


def describe_srs(srs):
    """Name and authority code of an OSR spatial reference, for messages."""
    name = srs.GetName() or "an unnamed CRS"
    authority = srs.GetAuthorityName(None)
    code = srs.GetAuthorityCode(None)
    return f"{name} ({authority}:{code})" if authority and code else name


def srs_from_wkt(osr, wkt):
    """An OSR spatial reference from WKT text."""
    srs = osr.SpatialReference()
    srs.ImportFromWkt(wkt)
    return srs


def _traditional(osr, srs):
    """A copy of ``srs`` whose axis order is x = easting/longitude, y = northing/latitude."""
    copy = srs.Clone()
    copy.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    return copy


def same_srs(first, second):
    """Tell whether two spatial references are the same CRS, whatever their axis-order mapping."""
    return bool(first.IsSame(second, ["IGNORE_DATA_AXIS_TO_SRS_AXIS_MAPPING=YES"]))


def reprojected(osr, geometries, layer_srs, target, where, target_name="the reference CRS"):
    """Shapely ``geometries`` from ``layer_srs`` to ``target`` (x = easting/longitude in both).

    A coordinate that cannot be transformed is an InputFormatError that names ``where``.
    """
    source_srs, target_srs = _traditional(osr, layer_srs), _traditional(osr, target)
    transformation = osr.CoordinateTransformation(source_srs, target_srs)

    def transform(coords):
        if len(coords) == 0:
            return coords
        return np.asarray(transformation.TransformPoints(np.ascontiguousarray(coords)), dtype=np.float64)[:, :2]

    try:
        return shapely.transform(geometries, transform)
    except RuntimeError as exc:
        raise InputFormatError(
            f"{where}: expected coordinates that can be reprojected from {describe_srs(layer_srs)} to "
            f"{target_name} {describe_srs(target)} but got an error ({exc}); check the layer's CRS"
        ) from None
