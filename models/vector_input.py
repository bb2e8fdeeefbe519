"""Read geometries (areas of interest, prompts) from vector files into the raster's CRS.

The reading is :func:`polytopo.core.vector_files.read_map_geometries`, the one OGR
reader of the project; its errors come back as :class:`.errors.VectorInputError`.
"""

import os

import shapely

from ..core.errors import PolytopoError
from ..core.vector_files import read_map_geometries
from .errors import VectorInputError

__all__ = ["read_aoi", "read_geometries"]


def read_geometries(path, crs_wkt="", purpose="vector"):
    """Shapely geometries of every feature of the first layer of a vector file.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector format OGR reads.
    crs_wkt : str
        Target CRS; features are reprojected into it when their layer has
        another CRS. Empty keeps the coordinates as they are.
    purpose : str
        What the file is for (``"AOI"``, ``"prompts"``), named in error messages.

    Returns
    -------
    list of shapely geometries
        NULL and empty geometries left out.

    Raises
    ------
    VectorInputError
        OGR cannot open the file, it has no layer, or its coordinates are not finite or
        cannot be reprojected; the message names the file and the fix.
    """
    try:
        return read_map_geometries(os.fspath(path), crs_wkt=crs_wkt or None, purpose=purpose)
    except PolytopoError as exc:
        raise VectorInputError(str(exc)) from exc


def read_aoi(path, crs_wkt=""):
    """Union of the polygons of a vector file, in ``crs_wkt``: an area of interest.

    Raises
    ------
    VectorInputError
        The file cannot be read or holds no polygon.
    """
    polygons = [g for g in read_geometries(path, crs_wkt, "AOI") if g.geom_type in ("Polygon", "MultiPolygon")]
    if not polygons:
        raise VectorInputError(f"Expected polygons in the AOI file {os.fspath(path)} but found none; "
                               "pass a polygon layer with --aoi.")
    return shapely.make_valid(shapely.union_all(polygons))
