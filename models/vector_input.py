"""Read geometries (areas of interest, prompts) from vector files into the raster's CRS."""

import os

import shapely
from osgeo import gdal, ogr, osr

from .errors import RasterError

__all__ = ["read_aoi", "read_geometries"]


def read_geometries(path, crs_wkt=""):
    """Shapely geometries of every feature of the first layer of a vector file.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector format OGR reads.
    crs_wkt : str
        Target CRS; features are reprojected into it when their layer has
        another CRS. Empty keeps the coordinates as they are.

    Returns
    -------
    list of shapely geometries

    Raises
    ------
    RasterError
        OGR cannot open the file or it has no layer.
    """
    path = os.fspath(path)
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        source = ogr.Open(path)
    finally:
        gdal.PopErrorHandler()
    if source is None or source.GetLayerCount() == 0:
        raise RasterError(f"Expected a vector file with a layer at {path} but OGR cannot read one; check the path and format.")
    layer = source.GetLayer(0)
    transform = None
    layer_srs = layer.GetSpatialRef()
    if layer_srs is not None and crs_wkt:
        target = osr.SpatialReference()
        target.ImportFromWkt(crs_wkt)
        layer_srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        target.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        if not layer_srs.IsSame(target):
            transform = osr.CoordinateTransformation(layer_srs, target)
    geometries = []
    for feature in layer:
        geometry = feature.GetGeometryRef()
        if geometry is None:
            continue
        geometry = geometry.Clone()
        if transform is not None:
            geometry.Transform(transform)
        geometries.append(shapely.from_wkb(bytes(geometry.ExportToWkb())))
    return geometries


def read_aoi(path, crs_wkt=""):
    """Union of the polygons of a vector file, in ``crs_wkt``: an area of interest.

    Raises
    ------
    RasterError
        The file holds no polygon.
    """
    polygons = [g for g in read_geometries(path, crs_wkt) if g.geom_type in ("Polygon", "MultiPolygon")]
    if not polygons:
        raise RasterError(f"Expected polygons in the AOI file {os.fspath(path)} but found none.")
    return shapely.make_valid(shapely.union_all(polygons))
