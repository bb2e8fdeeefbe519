"""Write polygons to GeoPackage or GeoJSON through OGR, atomically.

Features go to a temporary file in a private temporary folder next to the
destination (same file system, so the final move is a rename); the file is
moved into place only when every feature is written, the dataset is closed
and the ``finish`` callback (e.g. metadata) has run, and removed on any error
or cancellation. A reader therefore never sees a half-written output. The
rules of :mod:`polytopo.core.output_safety` apply: an input is never
written, an existing file only with ``overwrite``, a full disk is named, and
the temporary folder of a killed run is removed by the next run there.
"""

import contextlib
import os
import shutil

from osgeo import gdal, ogr, osr

from ..core.geopackage_publish import check_layer_names, publish_file
from ..core.output_safety import check_file_output, partial_name, write_failure
from .errors import OutputError

__all__ = ["FIELDS", "VectorWriter", "driver_for", "safety_errors"]

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
        construction, before any work). An existing GeoPackage is not replaced: the
        layer is added to it, replacing only a layer of the same name that PolyTopo
        wrote; a user's layer of that name is an error raised at construction
        (:mod:`polytopo.core.geopackage_publish`).
    extra_fields : sequence of (str, int)
        Fields (name, OGR field type) written before :data:`FIELDS`, whose
        values :meth:`write` takes as ``extra``.
    inputs : iterable of str
        Dataset names of the run's inputs (raster, AOI, prompts, model): the
        destination may be none of them, whatever ``overwrite`` says.
    finish : callable, optional
        ``finish(path)`` called with the complete temporary file, closed, before
        it moves into place (e.g. to write metadata into it).

    Examples
    --------
    >>> import shapely, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with VectorWriter(os.path.join(folder, "a.geojson"), "") as out:
    ...     out.write(shapely.box(0, 0, 1, 1), 0, "building", 0.9)
    >>> sorted(os.listdir(folder))
    ['a.geojson']
    """

    def __init__(self, path, crs_wkt, layer_name=None, overwrite=False, extra_fields=(), inputs=(), finish=None):
        self.path = os.path.abspath(os.fspath(path))
        self.driver = driver_for(self.path)
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise OutputError(f"Expected an existing folder for {self.path} but {folder} does not exist.")
        self.layer_name = layer_name or os.path.splitext(os.path.basename(self.path))[0]
        with safety_errors(self.path):
            check_file_output(self.path, inputs=inputs, overwrite=overwrite)
            check_layer_names(self.path, [self.layer_name])
        self.finish = finish
        self.crs_wkt = crs_wkt
        self.extra_fields = tuple(extra_fields)
        self.count = 0
        self._dataset = None
        self._layer = None
        self._folder = None
        self._tmp = None
        self._tmp_dir = None

    def __enter__(self):
        folder, name = os.path.split(self.path)
        self._tmp_dir = os.path.join(folder, partial_name(name))
        with safety_errors(self.path):
            os.mkdir(self._tmp_dir, 0o700)
        self._tmp = os.path.join(self._tmp_dir, name)
        gdal.PushErrorHandler("CPLQuietErrorHandler")
        try:
            self._dataset = ogr.GetDriverByName(self.driver).CreateDataSource(self._tmp)
            message = gdal.GetLastErrorMsg()
        finally:
            gdal.PopErrorHandler()
        if self._dataset is None:
            self._remove_temporary()
            raise _write_error(RuntimeError(message), self.path, f"Expected OGR to create {self._tmp} but got: {message}")
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
            message = gdal.GetLastErrorMsg()
            raise _write_error(RuntimeError(message), self.path, f"Expected OGR to write feature {self.count} to {self._tmp} but it failed: {message}")
        self.count += 1
        if self.count % _TRANSACTION_FEATURES == 0:
            self._layer.CommitTransaction()
            self._layer.StartTransaction()

    def __exit__(self, exc_type, exc, traceback):
        try:
            with safety_errors(self.path):
                if self._layer is not None and self._layer.CommitTransaction() != 0 and exc_type is None:
                    message = gdal.GetLastErrorMsg()
                    raise _write_error(RuntimeError(message), self.path, f"Expected OGR to finish {self._tmp} but got: {message}")
                self._layer = None
                self._dataset = None
                if exc_type is None:
                    if self.finish is not None:
                        self.finish(self._tmp)
                    publish_file(self._tmp, self.path)
        finally:
            self._remove_temporary()
        return False

    def _remove_temporary(self):
        self._layer = None
        self._dataset = None
        if self._tmp_dir is not None:
            shutil.rmtree(self._tmp_dir, ignore_errors=True)


def _write_error(exc, path, message):
    """An :class:`OutputError` that names a full disk, else ``message``."""
    failure = write_failure(exc, path)
    return OutputError(str(failure) if failure.disk_full else message)


@contextlib.contextmanager
def safety_errors(path):
    """Re-raise the output-safety rules' errors and OS errors while writing ``path`` as :class:`OutputError`."""
    from ..core.errors import PolytopoError

    try:
        yield
    except OutputError:
        raise
    except PolytopoError as exc:
        raise OutputError(str(exc)) from exc
    except OSError as exc:
        raise OutputError(str(write_failure(exc, path))) from exc
