"""Write evaluation records and summaries: CSV, GeoPackage layers and JSON.

Every writer goes through :func:`atomic_output` and so follows the rules of
:mod:`.output_safety`: the file is written under a temporary name in the target's folder
and renamed into place (``os.replace``) only once complete, so a reader never sees half
a file and a failure leaves nothing behind. An existing target is replaced only with
``overwrite=True``, and an input (``protect``) is never written to. A full disk is named
as such (:class:`~.output_safety.OutputWriteError`).

Records are lists of flat dicts with the same keys. Values may be ``int``, ``float``,
``str``, ``bool``, None or their NumPy scalar types; NaN and None are written as empty
(CSV), NULL (GeoPackage) or ``null`` (JSON). A record's ``"geometry"`` is a shapely
geometry in pixels; the GeoPackage writer converts it to map units with a
:class:`~.io_vector.PixelFrame`.
"""

import contextlib
import csv
import json
import math
import os
import traceback
from pathlib import Path

import numpy as np
import shapely

from .errors import EvaluatorError, InvalidParameterError
from .io_vector import ogr_exceptions
from .output_safety import check_file_output, partial_name, write_failure

__all__ = [
    "GEOMETRY_TYPES",
    "atomic_output",
    "write_csv",
    "write_geopackage",
    "write_summary_json",
    "error_layers",
]

GEOMETRY_TYPES = ("Polygon", "MultiPolygon", "Point", "MultiPoint", "LineString", "MultiLineString")
_GEOMETRY_KEY = "geometry"
_RESERVED_GPKG_FIELDS = ("fid",)
_SIDE_SUFFIXES = ("", "-journal", "-wal", "-shm")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@contextlib.contextmanager
def atomic_output(path, *, overwrite=False, protect=()):
    """Write a file under a temporary name and move it to ``path`` when the block succeeds.

    The rules are those of :mod:`.output_safety`: inputs are never written, an existing
    file only with ``overwrite``, and the temporary name is one a later run recognises
    and removes if this process dies.

    Parameters
    ----------
    path : str or Path
        The final file; its folder must exist.
    overwrite : bool
        Replace an existing ``path``; without it an existing file is an error.
    protect : iterable of str or Path
        Input dataset names that must never be written (see
        :func:`.output_safety.input_files`: sidecars and ``/vsizip/`` archives count).

    Yields
    ------
    Path
        The temporary file to write, in the same folder and with the same suffix as
        ``path``; it does not exist yet.

    Raises
    ------
    OutputExistsError
        ``path`` exists and ``overwrite`` is False (also a FileExistsError).
    FileNotFoundError
        The folder of ``path`` does not exist.
    UnsafeOutputError
        ``path`` is one of the ``protect`` inputs.
    OutputWriteError
        Writing failed: read-only folder, disk full (named as such).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with atomic_output(Path(folder) / "notes.txt") as temporary:
    ...         _ = temporary.write_text("done")
    ...     sorted(p.name for p in Path(folder).iterdir())
    ['notes.txt']
    """
    target = Path(path)
    check_file_output(target, inputs=protect, overwrite=overwrite, option="overwrite=True (--overwrite)")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"Expected an existing folder for {target} but {target.parent} does not exist")
    temporary = target.with_name(partial_name(target.name))
    try:
        yield temporary
        os.replace(temporary, target)
    except OSError as exc:
        if isinstance(exc, EvaluatorError):
            raise
        raise write_failure(exc, target) from exc
    finally:
        for suffix in _SIDE_SUFFIXES:
            side = temporary.with_name(temporary.name + suffix)
            if side.exists():
                side.unlink()


def write_csv(records, path, *, fields=None, overwrite=False, protect=()):
    """Write records as a CSV table (UTF-8, header row, ``"geometry"`` dropped).

    Parameters
    ----------
    records : list of dict
        Rows with the same keys.
    path : str or Path
        The CSV file.
    fields : sequence of str, optional
        Column order; defaults to the first record's keys. Needed to write the header of
        an empty table.
    overwrite : bool
        Replace an existing file.
    protect : iterable of str or Path
        Input paths that must not be written.

    Returns
    -------
    Path
        The written file.

    Notes
    -----
    Booleans are written as 1/0 like in the GeoPackage; floats with full precision.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     rows = [{"id": 1, "iou": 0.5, "geometry": None}, {"id": 2, "iou": float("nan")}]
    ...     write_csv(rows, Path(folder) / "features.csv").read_text().splitlines()
    ['id,iou', '1,0.5', '2,']
    """
    columns = _columns(records, fields)
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with temporary.open("x", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for index, record in enumerate(records):
                writer.writerow([_csv_value(record[name], name, index) for name in columns])
    return Path(path)


def write_summary_json(summary, path, *, overwrite=False, protect=()):
    """Write a summary dict as indented JSON (NaN and infinity as ``null``).

    Parameters
    ----------
    summary : dict
        Nested dicts, lists, tuples, NumPy arrays and scalars of the types above.
    path : str or Path
        The JSON file.
    overwrite : bool
        Replace an existing file.
    protect : iterable of str or Path
        Input paths that must not be written.

    Returns
    -------
    Path
        The written file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     summary = {"AP": np.float64(0.25), "MTA": float("nan"), "n": np.int64(3)}
    ...     json.loads(write_summary_json(summary, Path(folder) / "summary.json").read_text())
    {'AP': 0.25, 'MTA': None, 'n': 3}
    """
    ready = _json_ready(summary, "summary")
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with temporary.open("x", encoding="utf-8") as handle:
            json.dump(ready, handle, indent=2, ensure_ascii=False, allow_nan=False)
            handle.write("\n")
    return Path(path)


def write_geopackage(path, layers, frame=None, *, overwrite=False, protect=(), field_kinds=None):
    """Write one GeoPackage with one layer per ``(name, records, geometry_type)``.

    Parameters
    ----------
    path : str or Path
        The ``.gpkg`` file.
    layers : list of tuple
        ``(layer_name, records, geometry_type)``: a unique name, a list of records whose
        ``"geometry"`` is a shapely geometry in pixels (or None), and one of
        :data:`GEOMETRY_TYPES` (None for a table without geometry). A Polygon written
        to a MultiPolygon layer (likewise for points and lines) is promoted.
    frame : PixelFrame, optional
        Converts pixels to map units and gives the CRS; without it geometries are
        written as they are, without CRS.
    overwrite : bool
        Replace an existing file.
    protect : iterable of str or Path
        Input paths that must not be written.
    field_kinds : dict, optional
        ``{field: "bool" | "int" | "float" | "str"}`` for fields whose values are all None
        in a layer (otherwise they become String fields).

    Returns
    -------
    Path
        The written file.

    Notes
    -----
    Field types follow the values: all-bool fields become Integer (boolean subtype),
    integer fields Integer64, fields with any float Real, strings String; a field with
    only None values is a String field. Field names are kept as given; ``fid`` is the
    feature-id column and cannot be a field. The geometry column is ``geometry``.
    Each layer is written in one transaction; writing costs about 10 µs per feature.
    """
    _check_layers(layers)
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with ogr_exceptions() as (gdal, ogr, osr):
            try:
                _write_gpkg_file(gdal, ogr, osr, temporary, layers, frame, field_kinds)
            except RuntimeError as exc:  # GDAL and SQLite report a full disk as a RuntimeError
                failure = write_failure(exc, path)
                if failure.disk_full:
                    raise failure from exc
                raise
    return Path(path)


def error_layers(pred_records, gt_records, missed_holes, hallucinated_holes):
    """The layers of an error GeoPackage, ready for :func:`write_geopackage`.

    Parameters
    ----------
    pred_records, gt_records : list of dict
        Per-feature records of predictions and references, with ``"error_class"``.
    missed_holes, hallucinated_holes : list of dict
        Records of reference holes no prediction matched and predicted holes no
        reference matched, geometry in pixels.

    Returns
    -------
    list of tuple
        ``(name, records, geometry_type)`` for ``predictions``, ``references``,
        ``missed_holes``, ``hallucinated_holes``, ``unmatched_predictions`` (error class
        ``"unmatched"``) and ``missed_references`` (error class ``"missed"``); the type
        is MultiPolygon when any record of the layer is one, else Polygon.

    Examples
    --------
    >>> box = shapely.box(0, 0, 1, 1)
    >>> layers = error_layers([{"error_class": "unmatched", "geometry": box}], [], [], [])
    >>> [(name, len(records), kind) for name, records, kind in layers][-2:]
    [('unmatched_predictions', 1, 'Polygon'), ('missed_references', 0, 'Polygon')]
    """
    pred_records, gt_records = list(pred_records), list(gt_records)
    named = [
        ("predictions", pred_records),
        ("references", gt_records),
        ("missed_holes", list(missed_holes)),
        ("hallucinated_holes", list(hallucinated_holes)),
        ("unmatched_predictions", [r for r in pred_records if r.get("error_class") == "unmatched"]),
        ("missed_references", [r for r in gt_records if r.get("error_class") == "missed"]),
    ]
    return [(name, records, _polygon_type(records)) for name, records in named]


def _columns(records, fields):
    if fields is None:
        fields = [name for name in records[0] if name != _GEOMETRY_KEY] if records else []
    columns = [name for name in fields if name != _GEOMETRY_KEY]
    expected = set(columns)
    for index, record in enumerate(records):
        keys = set(record) - {_GEOMETRY_KEY}
        if keys != expected:
            raise InvalidParameterError(
                f"Expected every record to have the fields {sorted(expected)} but record {index} has "
                f"{sorted(keys)}; give all records the same keys"
            )
    return columns


def _scalar(value, name, index):
    """A value as None, bool, int, float or str; raises on any other type."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) else value
    raise InvalidParameterError(
        f"record {index} field {name!r}: expected a number, string, bool or None but got "
        f"{type(value).__name__}; flatten the value before writing"
    )


def _csv_value(value, name, index):
    value = _scalar(value, name, index)
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    return repr(value) if isinstance(value, float) else value


def _json_ready(value, where):
    if isinstance(value, dict):
        return {str(key): _json_ready(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_ready(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    raise InvalidParameterError(
        f"{where}: expected a number, string, bool, None, list or dict but got {type(value).__name__}"
    )


def _polygon_type(records):
    multi = any(isinstance(record.get(_GEOMETRY_KEY), shapely.MultiPolygon) for record in records)
    return "MultiPolygon" if multi else "Polygon"


def _check_layers(layers):
    names = []
    for entry in layers:
        if not (isinstance(entry, tuple) and len(entry) == 3):
            raise InvalidParameterError(
                f"Expected each layer as a (layer_name, records, geometry_type) tuple but got {str(entry)[:80]}"
            )
        name, _, geometry_type = entry
        if not isinstance(name, str) or not name:
            raise InvalidParameterError(f"Expected a non-empty layer name but got {name!r}")
        if name in names:
            raise InvalidParameterError(f"Expected unique layer names but {name!r} appears twice")
        if geometry_type is not None and geometry_type not in GEOMETRY_TYPES:
            raise InvalidParameterError(
                f"layer {name!r}: expected a geometry type of {list(GEOMETRY_TYPES)} or None but got {geometry_type!r}"
            )
        names.append(name)


def _field_kinds(records, columns, layer_name, hints):
    """OGR field kind per column: "bool", "int", "float" or "str"."""
    kinds = {}
    for name in columns:
        if name.lower() in _RESERVED_GPKG_FIELDS:
            raise InvalidParameterError(
                f"layer {layer_name!r}: expected no field named {name!r}, the GeoPackage feature-id "
                "column; rename it (e.g. source_fid)"
            )
        seen = set()
        for index, record in enumerate(records):
            value = _scalar(record[name], name, index)
            if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT64_MAX:
                raise InvalidParameterError(
                    f"layer {layer_name!r} record {index} field {name!r}: expected an integer that fits "
                    f"in 64 bits but got {value}; store it as a string or float"
                )
            if value is not None:
                seen.add("bool" if isinstance(value, bool) else type(value).__name__)
        if "str" in seen and len(seen) > 1:
            raise InvalidParameterError(
                f"layer {layer_name!r} field {name!r}: expected values of one kind but got strings mixed "
                "with numbers; convert them to one type"
            )
        kinds[name] = hints[name] if not seen and name in hints else _kind_of(seen)
    return kinds


def _kind_of(seen):
    """The field kind for the set of value kinds seen in a column."""
    if not seen or seen == {"str"}:
        return "str"
    if "float" in seen:
        return "float"
    return "bool" if seen == {"bool"} else "int"


def _map_geometries(records, frame, layer_name):
    geometries = np.empty(len(records), dtype=object)
    for index, record in enumerate(records):
        geometry = record.get(_GEOMETRY_KEY)
        if geometry is not None and not isinstance(geometry, shapely.Geometry):
            raise InvalidParameterError(
                f"layer {layer_name!r} record {index}: expected a shapely geometry or None under "
                f"'geometry' but got {type(geometry).__name__}"
            )
        geometries[index] = geometry
    return frame.to_map(geometries) if frame is not None else geometries


def _promoted(geometries, geometry_type, layer_name):
    """Geometries checked against the layer type, single parts promoted to Multi-types."""
    single = geometry_type[len("Multi"):] if geometry_type.startswith("Multi") else None
    promote = {"Polygon": shapely.MultiPolygon, "Point": shapely.MultiPoint, "LineString": shapely.MultiLineString}
    result = geometries.copy()
    for index, geometry in enumerate(geometries):
        if geometry is None or geometry.geom_type == geometry_type:
            continue
        if geometry.geom_type == single:
            result[index] = promote[single]([geometry]) if not geometry.is_empty else promote[single]()
            continue
        raise InvalidParameterError(
            f"layer {layer_name!r} record {index}: expected a {geometry_type} geometry but got "
            f"{geometry.geom_type}; choose a matching geometry type for the layer"
        )
    return result


def _write_gpkg_file(gdal, ogr, osr, temporary, layers, frame, field_kinds):
    srs = None
    if frame is not None and frame.crs_wkt:
        srs = osr.SpatialReference()
        srs.ImportFromWkt(frame.crs_wkt)
        srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(temporary))
    try:
        for name, records, geometry_type in layers:
            _write_layer(ogr, dataset, srs, name, list(records), geometry_type, frame, field_kinds or {})
        dataset.SyncToDisk()
    except BaseException as exc:
        # Drop the OGR objects the traceback holds so the file is closed before it is removed.
        traceback.clear_frames(exc.__traceback__)
        raise
    finally:
        # closing commits; a failure there (full disk) is found by _check_complete, not raised from a destructor
        # (exceptions are switched off in the reverse order of ogr_exceptions, as GDAL's handler stack needs)
        raising = [module for module in (osr, ogr, gdal) if module.GetUseExceptions()]
        for module in raising:
            module.DontUseExceptions()
        gdal.PushErrorHandler("CPLQuietErrorHandler")
        try:
            del dataset
        finally:
            gdal.PopErrorHandler()
            for module in reversed(raising):
                module.UseExceptions()
    _check_complete(ogr, temporary, layers)


def _check_complete(ogr, path, layers):
    """Reopen a written GeoPackage and check every layer and feature is there.

    Closing a dataset commits its last transaction; a failure there (a full disk) is
    only printed by GDAL, so the file is checked before it may move into place.
    """
    dataset = ogr.Open(str(path))
    try:
        for name, records, _ in layers:
            layer = dataset.GetLayerByName(name)
            count = layer.GetFeatureCount() if layer is not None else -1
            if count != len(records):
                raise RuntimeError(f"Expected {len(records)} features in layer {name!r} of {path} after writing "
                                   f"but found {max(count, 0)}: the file is incomplete")
    finally:
        del dataset


def _write_layer(ogr, dataset, srs, name, records, geometry_type, frame, hints):
    columns = _columns(records, None)
    kinds = _field_kinds(records, columns, name, hints)
    wkbs = [None] * len(records)
    if geometry_type is not None:
        geometries = _promoted(_map_geometries(records, frame, name), geometry_type, name)
        wkbs = shapely.to_wkb(geometries).tolist()
    options = ["FID=fid"] + (["GEOMETRY_NAME=geometry"] if geometry_type is not None else [])
    ogr_type = ogr.wkbNone if geometry_type is None else getattr(ogr, f"wkb{geometry_type}")
    layer = dataset.CreateLayer(name, srs if geometry_type is not None else None, ogr_type, options=options)
    for column in columns:
        definition = ogr.FieldDefn(column, _ogr_field_type(ogr, kinds[column]))
        if kinds[column] == "bool":
            definition.SetSubType(ogr.OFSTBoolean)
        layer.CreateField(definition)
    definition = layer.GetLayerDefn()
    setters = [_setter(kinds[column]) for column in columns]
    layer.StartTransaction()
    for index, (record, wkb) in enumerate(zip(records, wkbs)):
        feature = ogr.Feature(definition)
        for field_index, (column, setter) in enumerate(zip(columns, setters)):
            value = _scalar(record[column], column, index)
            if value is None:
                feature.SetFieldNull(field_index)
            else:
                setter(feature, field_index, value)
        if wkb is not None:
            feature.SetGeometryDirectly(ogr.CreateGeometryFromWkb(wkb))
        layer.CreateFeature(feature)
    layer.CommitTransaction()


def _ogr_field_type(ogr, kind):
    return {"bool": ogr.OFTInteger, "int": ogr.OFTInteger64, "float": ogr.OFTReal, "str": ogr.OFTString}[kind]


def _setter(kind):
    if kind in ("bool", "int"):
        return lambda feature, index, value: feature.SetFieldInteger64(index, int(value))
    if kind == "float":
        return lambda feature, index, value: feature.SetField(index, float(value))
    return lambda feature, index, value: feature.SetFieldString(index, value)
