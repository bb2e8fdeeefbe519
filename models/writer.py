"""Write polygons to GeoPackage or GeoJSON through OGR, atomically.

Features go to a file inside a private temporary folder (``mkdtemp``, mode
0700) next to the destination, so the final move is a rename on the same file
system and no other user can create or swap the name GDAL writes to; the file
is moved into place only when every feature is written and the dataset is
closed, and the folder is removed on any error or cancellation. A reader
therefore never sees a half-written output.
"""

import os
import shutil
import tempfile

from osgeo import gdal, ogr, osr

from .errors import OutputError

__all__ = ["FIELDS", "VectorWriter", "driver_for"]

_DRIVERS = {".gpkg": "GPKG", ".geojson": "GeoJSON", ".json": "GeoJSON"}
FIELDS = (("class_id", ogr.OFTInteger), ("class_name", ogr.OFTString), ("score", ogr.OFTReal))
"""Attribute fields of every output feature."""
_TRANSACTION_FEATURES = 10_000


def driver_for(path):
    """OGR driver name for an output path, from its extension.

    Examples
    --------
    >>> driver_for("out.gpkg"), driver_for("out.GeoJSON")
    ('GPKG', 'GeoJSON')
    """
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in _DRIVERS:
        raise OutputError(f"Expected an output ending in {sorted(_DRIVERS)} but got {os.fspath(path)!r}; use OUT.gpkg or OUT.geojson.")
    return _DRIVERS[extension]


class VectorWriter:
    """Context manager writing one polygon layer to a temporary file, then moving it into place.

    Parameters
    ----------
    path : str or os.PathLike
        Destination ``.gpkg`` or ``.geojson``.
    crs_wkt : str
        CRS of the geometries; empty for pixel coordinates (no CRS).
    layer_name : str, optional
        Defaults to the file name without extension.
    overwrite : bool
        Replace an existing destination (otherwise it is an error, raised at
        construction, before any work).

    Examples
    --------
    >>> import shapely, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with VectorWriter(os.path.join(folder, "a.geojson"), "") as out:
    ...     out.write(shapely.box(0, 0, 1, 1), 0, "building", 0.9)
    >>> sorted(os.listdir(folder))
    ['a.geojson']
    """

    def __init__(self, path, crs_wkt, layer_name=None, overwrite=False):
        self.path = os.path.abspath(os.fspath(path))
        self.driver = driver_for(self.path)
        if os.path.exists(self.path) and not overwrite:
            raise OutputError(f"Expected no file at {self.path} but one exists; pass --overwrite or choose another name.")
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise OutputError(f"Expected an existing folder for {self.path} but {folder} does not exist.")
        self.crs_wkt = crs_wkt
        self.layer_name = layer_name or os.path.splitext(os.path.basename(self.path))[0]
        self.count = 0
        self._dataset = None
        self._layer = None
        self._folder = None
        self._tmp = None

    def __enter__(self):
        # A private folder (mode 0700) beside the destination, so the rename stays on one file
        # system and no other process can create or swap the name GDAL writes to.
        name = os.path.basename(self.path)
        try:
            self._folder = tempfile.mkdtemp(prefix=f".{name}.partial-", dir=os.path.dirname(self.path))
        except OSError as exc:
            raise OutputError(f"Expected a writable folder for {self.path} but got: {exc}") from exc
        self._tmp = os.path.join(self._folder, name)
        gdal.PushErrorHandler("CPLQuietErrorHandler")
        try:
            self._dataset = ogr.GetDriverByName(self.driver).CreateDataSource(self._tmp)
            message = gdal.GetLastErrorMsg()
        finally:
            gdal.PopErrorHandler()
        if self._dataset is None:
            raise OutputError(f"Expected OGR to create {self._tmp} but got: {message}")
        srs = None
        if self.crs_wkt:
            srs = osr.SpatialReference()
            srs.ImportFromWkt(self.crs_wkt)
            srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        self._layer = self._dataset.CreateLayer(self.layer_name, srs, ogr.wkbPolygon)
        for name, kind in FIELDS:
            self._layer.CreateField(ogr.FieldDefn(name, kind))
        self._defn = self._layer.GetLayerDefn()
        self._class_id, self._class_name, self._score = (self._defn.GetFieldIndex(name) for name, _kind in FIELDS)
        self._layer.StartTransaction()
        return self

    def write(self, geometry, class_id, class_name, score):
        """Append one polygon (shapely, in the layer's CRS) with its class and score."""
        feature = ogr.Feature(self._defn)
        feature.SetFieldInteger64(self._class_id, int(class_id))
        feature.SetFieldString(self._class_name, str(class_name))
        feature.SetField(self._score, float(score))
        feature.SetGeometryDirectly(ogr.CreateGeometryFromWkb(geometry.wkb))
        if self._layer.CreateFeature(feature) != 0:
            raise OutputError(f"Expected OGR to write feature {self.count} to {self._tmp} but it failed: {gdal.GetLastErrorMsg()}")
        self.count += 1
        if self.count % _TRANSACTION_FEATURES == 0:
            self._layer.CommitTransaction()
            self._layer.StartTransaction()

    def __exit__(self, exc_type, exc, traceback):
        try:
            if self._layer is not None:
                self._layer.CommitTransaction()
            self._layer = None
            self._dataset = None
            if exc_type is None:
                os.replace(self._tmp, self.path)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
        return False
