"""Windowed reading of any GDAL raster on the model's pixel grid.

:func:`open_raster` opens a raster (GeoTIFF, COG, VRT, JPEG2000, anything
GDAL reads) and describes it; :func:`make_grid` defines the *model grid*: the
processed area (whole raster, an extent, or an AOI's bounding box) resampled
to the model's ground sampling distance in both directions; a
:class:`GridReader` reads windows of that grid with their validity mask
(nodata values, mask or alpha bands, non-finite floats and pixels outside the
raster are invalid).

When the raster's pixel size already equals the model's (or the model states
none) windows are read directly; otherwise they come from a warped VRT, which
GDAL evaluates lazily window by window, so memory never depends on the raster
size.
"""

import math
import os
import warnings
from dataclasses import dataclass

import numpy as np
from osgeo import gdal, osr

from ..errors import RasterError

__all__ = [
    "GeoreferenceWarning",
    "GridReader",
    "ModelGrid",
    "RasterInfo",
    "gdal_type_name",
    "make_grid",
    "open_raster",
    "raster_crs_wkt",
]

_FLOAT_TYPES = frozenset(getattr(gdal, name) for name in ("GDT_Float16", "GDT_Float32", "GDT_Float64", "GDT_CFloat16", "GDT_CFloat32", "GDT_CFloat64")
                         if hasattr(gdal, name))
"""GDAL data types that can hold NaN or infinity."""
_METRES_PER_DEGREE_LAT = 110_574.0
_METRES_PER_DEGREE_LON_EQUATOR = 111_320.0
_SCALE_TOLERANCE = 1e-6


class GeoreferenceWarning(UserWarning):
    """The raster has no georeference: polygons are written in pixel coordinates."""


def gdal_type_name(gdal_type):
    """GDAL data type name, e.g. ``Byte``, ``UInt16``, ``Float32``."""
    return gdal.GetDataTypeName(gdal_type)


@dataclass(frozen=True)
class RasterInfo:
    """What the pipeline needs to know about a raster.

    Attributes
    ----------
    path : str
    width_px, height_px, band_count : int
    data_types : tuple of str
        GDAL type name of each band.
    nodata : tuple
        Nodata value of each band, or None.
    geotransform : tuple of 6 float
        GDAL geotransform; the identity with y down when not georeferenced.
    crs_wkt : str
        Empty when the raster has no CRS.
    georeferenced : bool
    """

    path: str
    width_px: int
    height_px: int
    band_count: int
    data_types: tuple
    nodata: tuple
    geotransform: tuple
    crs_wkt: str
    georeferenced: bool


def open_raster(path):
    """Open ``path`` with GDAL and describe it.

    Parameters
    ----------
    path : str or os.PathLike
        Any raster GDAL opens (GeoTIFF, COG, VRT, JPEG2000, ``/vsi...`` paths).

    Returns
    -------
    dataset : osgeo.gdal.Dataset
    info : RasterInfo

    Raises
    ------
    RasterError
        GDAL cannot open it, it has no bands, or its geotransform is rotated.

    Warns
    -----
    GeoreferenceWarning
        The raster has no geotransform; pixel coordinates are used.
    """
    path = os.fspath(path)
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        dataset = gdal.Open(path, gdal.GA_ReadOnly)
        message = gdal.GetLastErrorMsg()
    finally:
        gdal.PopErrorHandler()
    if dataset is None:
        raise RasterError(f"Expected a raster GDAL can open at {path} but got: {message or 'no such file'}; check the path and format.")
    if dataset.RasterCount == 0:
        raise RasterError(f"Expected at least one band in {path} but it has none.")
    geotransform = dataset.GetGeoTransform(can_return_null=True)
    georeferenced = geotransform is not None and tuple(geotransform) != (0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    if not georeferenced:
        warnings.warn(
            f"{path} has no georeference; polygons will be in pixel coordinates (x right, y down) without a CRS.",
            GeoreferenceWarning,
            stacklevel=2,
        )
        geotransform = (0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    elif geotransform[2] != 0.0 or geotransform[4] != 0.0:
        raise RasterError(
            f"Expected a north-up raster (no rotation terms) but {path} has geotransform {tuple(geotransform)}; "
            "warp it first, e.g. gdalwarp -of VRT in.tif north_up.vrt."
        )
    bands = [dataset.GetRasterBand(index + 1) for index in range(dataset.RasterCount)]
    info = RasterInfo(
        path=path,
        width_px=dataset.RasterXSize,
        height_px=dataset.RasterYSize,
        band_count=dataset.RasterCount,
        data_types=tuple(gdal_type_name(band.DataType) for band in bands),
        nodata=tuple(band.GetNoDataValue() for band in bands),
        geotransform=tuple(float(v) for v in geotransform),
        crs_wkt=dataset.GetProjection() if georeferenced else "",
        georeferenced=georeferenced,
    )
    return dataset, info


def _metres_per_unit(info):
    """Ground metres per CRS unit in x and y (None when unknown)."""
    if not info.crs_wkt:
        return None
    srs = osr.SpatialReference()
    srs.ImportFromWkt(info.crs_wkt)
    if srs.IsGeographic():
        gt = info.geotransform
        lat = gt[3] + gt[5] * info.height_px / 2.0
        return _METRES_PER_DEGREE_LON_EQUATOR * math.cos(math.radians(lat)), _METRES_PER_DEGREE_LAT
    unit = srs.GetLinearUnits()
    return (unit, unit) if unit > 0 else None


@dataclass(frozen=True)
class ModelGrid:
    """The pixel grid the model sees.

    Attributes
    ----------
    width_px, height_px : int
        Size of the grid, model pixels.
    geotransform : tuple of 6 float
        Model pixel (column x, row y) to map coordinates.
    crs_wkt : str
    source_window : tuple of 4 float
        (x offset, y offset, width, height) of the processed area, raster pixels.
    scale : tuple of 2 float
        Raster pixels per model pixel in x and y (1, 1 when not resampled).
    resampled : bool
    """

    width_px: int
    height_px: int
    geotransform: tuple
    crs_wkt: str
    source_window: tuple
    scale: tuple
    resampled: bool

    def pixel_centres(self, col0, row0, cols, rows):
        """Map coordinates of the centres of a window of model pixels, as two (rows, cols) arrays."""
        gt = self.geotransform
        xs = gt[0] + (np.arange(col0, col0 + cols) + 0.5) * gt[1]
        ys = gt[3] + (np.arange(row0, row0 + rows) + 0.5) * gt[5]
        return np.meshgrid(xs, ys)


def _window_from_extent(info, extent):
    gt = info.geotransform
    xmin, ymin, xmax, ymax = extent
    cols = sorted(((xmin - gt[0]) / gt[1], (xmax - gt[0]) / gt[1]))
    rows = sorted(((ymin - gt[3]) / gt[5], (ymax - gt[3]) / gt[5]))
    x0, x1 = max(cols[0], 0.0), min(cols[1], float(info.width_px))
    y0, y1 = max(rows[0], 0.0), min(rows[1], float(info.height_px))
    if x1 <= x0 or y1 <= y0:
        bounds = _raster_bounds(info)
        raise RasterError(
            f"Expected an extent that overlaps the raster {bounds} (xmin, ymin, xmax, ymax in its CRS) "
            f"but got {tuple(extent)}; give the extent in the raster's CRS."
        )
    return x0, y0, x1 - x0, y1 - y0


def _raster_bounds(info):
    gt = info.geotransform
    xs = (gt[0], gt[0] + gt[1] * info.width_px)
    ys = (gt[3], gt[3] + gt[5] * info.height_px)
    return (min(xs), min(ys), max(xs), max(ys))


def make_grid(info, resolution_cm_per_px=None, extent=None):
    """Define the model grid of a raster.

    Parameters
    ----------
    info : RasterInfo
    resolution_cm_per_px : float, optional
        The model's ground sampling distance; None keeps the raster's pixels.
    extent : tuple of 4 float, optional
        (xmin, ymin, xmax, ymax) in the raster's CRS (pixel coordinates when
        not georeferenced); None processes the whole raster.

    Returns
    -------
    ModelGrid

    Raises
    ------
    RasterError
        The extent does not overlap the raster.

    Notes
    -----
    Without resampling the window is widened to whole raster pixels. With
    resampling the grid starts at the window's corner and has
    ``ceil(window size / scale)`` model pixels in each direction.
    """
    window = (0.0, 0.0, float(info.width_px), float(info.height_px))
    if extent is not None:
        window = _window_from_extent(info, extent)
    units = _metres_per_unit(info)
    scale = (1.0, 1.0)
    if resolution_cm_per_px is not None and units is not None:
        gt = info.geotransform
        target_m = resolution_cm_per_px / 100.0
        scale = (target_m / (abs(gt[1]) * units[0]), target_m / (abs(gt[5]) * units[1]))
    resampled = any(abs(s - 1.0) > _SCALE_TOLERANCE for s in scale)
    if not resampled:
        scale = (1.0, 1.0)
        x0, y0 = math.floor(window[0]), math.floor(window[1])
        x1 = math.ceil(window[0] + window[2] - _SCALE_TOLERANCE)
        y1 = math.ceil(window[1] + window[3] - _SCALE_TOLERANCE)
        window = (float(x0), float(y0), float(x1 - x0), float(y1 - y0))
        width, height = x1 - x0, y1 - y0
    else:
        width = max(1, math.ceil(window[2] / scale[0] - _SCALE_TOLERANCE))
        height = max(1, math.ceil(window[3] / scale[1] - _SCALE_TOLERANCE))
    gt = info.geotransform
    geotransform = (
        gt[0] + window[0] * gt[1],
        gt[1] * scale[0],
        0.0,
        gt[3] + window[1] * gt[5],
        0.0,
        gt[5] * scale[1],
    )
    return ModelGrid(int(width), int(height), geotransform, info.crs_wkt, window, scale, resampled)


class GridReader:
    """Read windows of the model grid with their validity mask.

    Parameters
    ----------
    dataset : osgeo.gdal.Dataset
    info : RasterInfo
    grid : ModelGrid
    bands : sequence of int
        1-based raster bands in model-channel order.
    resampling : str
        GDAL resampling used when the grid is resampled (default ``bilinear``).

    Raises
    ------
    RasterError
        A band number is outside the raster.
    """

    def __init__(self, dataset, info, grid, bands, resampling="bilinear"):
        bad = [b for b in bands if not 1 <= b <= info.band_count]
        if bad:
            raise RasterError(
                f"Expected bands between 1 and {info.band_count} for {info.path} but got {list(bands)}; "
                "set polytopo.bands in the card or pass --bands, e.g. --bands 1,2,3."
            )
        self.grid = grid
        self.bands = tuple(bands)
        self._info = info
        self._dataset = dataset
        self._alpha_band = None
        if grid.resampled:
            self._dataset = self._warped_vrt(dataset, info, grid, resampling)
            self._alpha_band = self._dataset.RasterCount
            self._offset = (0, 0)
        else:
            self._offset = (int(grid.source_window[0]), int(grid.source_window[1]))

    @staticmethod
    def _warped_vrt(dataset, info, grid, resampling):
        gt = grid.geotransform
        bounds = (gt[0], gt[3] + gt[5] * grid.height_px, gt[0] + gt[1] * grid.width_px, gt[3])
        options = gdal.WarpOptions(
            format="VRT",
            outputBounds=bounds,
            width=grid.width_px,
            height=grid.height_px,
            resampleAlg=resampling,
            dstAlpha=True,
            multithread=False,
        )
        vrt = gdal.Warp("", dataset, options=options)
        if vrt is None:
            raise RasterError(f"Expected GDAL to resample {info.path} to the model grid but it failed: {gdal.GetLastErrorMsg()}")
        return vrt

    @property
    def data_types(self):
        """GDAL type names of the selected bands of the source raster."""
        return tuple(self._info.data_types[b - 1] for b in self.bands)

    def read(self, col0, row0, cols, rows):
        """Read a window of the model grid.

        Parameters
        ----------
        col0, row0 : int
            Top-left model pixel; the window may extend past the grid.
        cols, rows : int
            Window size, model pixels.

        Returns
        -------
        data : numpy.ndarray of float32, shape (bands, rows, cols)
            Raw values (not normalized); 0 where invalid.
        valid : numpy.ndarray of bool, shape (rows, cols)
        """
        data = np.zeros((len(self.bands), rows, cols), np.float32)
        valid = np.zeros((rows, cols), bool)
        c0, r0 = max(col0, 0), max(row0, 0)
        c1, r1 = min(col0 + cols, self.grid.width_px), min(row0 + rows, self.grid.height_px)
        if c1 <= c0 or r1 <= r0:
            return data, valid
        xoff, yoff = self._offset[0] + c0, self._offset[1] + r0
        width, height = c1 - c0, r1 - r0
        inner = (slice(r0 - row0, r1 - row0), slice(c0 - col0, c1 - col0))
        ok = np.ones((height, width), bool)
        for index, band_number in enumerate(self.bands):
            band = self._dataset.GetRasterBand(band_number)
            target = data[(index, *inner)]
            # GDAL converts to float32 while it reads, straight into the tile
            if band.ReadAsArray(xoff, yoff, width, height, buf_obj=target) is None:
                raise RasterError(
                    f"Expected to read window ({xoff}, {yoff}, {width}, {height}) of band {band_number} of "
                    f"{self._info.path} but GDAL failed: {gdal.GetLastErrorMsg()}"
                )
            if band.DataType in _FLOAT_TYPES:  # integer bands are always finite
                ok &= np.isfinite(target)
            if self._alpha_band is None and band.GetMaskFlags() != gdal.GMF_ALL_VALID:
                ok &= band.GetMaskBand().ReadAsArray(xoff, yoff, width, height) > 0
        if self._alpha_band is not None:
            ok &= self._dataset.GetRasterBand(self._alpha_band).ReadAsArray(xoff, yoff, width, height) > 0
        valid[inner] = ok
        if not ok.all():
            data[:, ~valid] = 0.0
        return data, valid


def raster_crs_wkt(path):
    """CRS of a raster as WKT (empty when it has none), without the checks of :func:`open_raster`."""
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        dataset = gdal.Open(os.fspath(path), gdal.GA_ReadOnly)
    finally:
        gdal.PopErrorHandler()
    return dataset.GetProjection() if dataset is not None else ""
