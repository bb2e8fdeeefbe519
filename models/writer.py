"""Write polygons to GeoPackage or GeoJSON through OGR, atomically.

Features go to a temporary file next to the destination (same folder, so
the final move is a rename on the same file system); the temporary file is
moved into place only when every feature is written and the dataset is
closed, and removed on any error or cancellation. A reader therefore never
sees a half-written output.
"""

import os
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
    extra_fields : sequence of (str, int)
        Fields (name, OGR field type) written before :data:`FIELDS`, whose
        values :meth:`write` takes as ``extra``.

    Examples
    --------
    >>> import shapely, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with VectorWriter(os.path.join(folder, "a.geojson"), "") as out:
    ...     out.write(shapely.box(0, 0, 1, 1), 0, "building", 0.9)
    >>> sorted(os.listdir(folder))
    ['a.geojson']
    """

    def __init__(self, path, crs_wkt, layer_name=None, overwrite=False, extra_fields=()):
        self.path = os.path.abspath(os.fspath(path))
        self.driver = driver_for(self.path)
        if os.path.exists(self.path) and not overwrite:
            raise OutputError(f"Expected no file at {self.path} but one exists; pass --overwrite or choose another name.")
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise OutputError(f"Expected an existing folder for {self.path} but {folder} does not exist.")
        self.crs_wkt = crs_wkt
        self.layer_name = layer_name or os.path.splitext(os.path.basename(self.path))[0]
        self.extra_fields = tuple(extra_fields)
        self.count = 0
        self._dataset = None
        self._layer = None
        self._tmp = None

    def __enter__(self):
        extension = os.path.splitext(self.path)[1]
        handle, self._tmp = tempfile.mkstemp(prefix=f".{os.path.basename(self.path)}.", suffix=f".partial{extension}", dir=os.path.dirname(self.path))
        os.close(handle)
        os.unlink(self._tmp)
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
        for name, kind in (*self.extra_fields, *FIELDS):
            self._layer.CreateField(ogr.FieldDefn(name, kind))
        self._defn = self._layer.GetLayerDefn()
        self._class_id, self._class_name, self._score = (self._defn.GetFieldIndex(name) for name, _kind in FIELDS)
        self._layer.StartTransaction()
        return self

    def write(self, geometry, class_id, class_name, score, extra=()):
        """Append one polygon (shapely, in the layer's CRS) with its class, score and ``extra`` field values."""
        feature = ogr.Feature(self._defn)
        for index, value in enumerate(extra):
            feature.SetField(index, value)
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
            if os.path.exists(self._tmp):
                os.unlink(self._tmp)
        return False
