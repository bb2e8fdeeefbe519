"""Write evaluation records and summaries: CSV, GeoPackage layers and JSON.

Every writer goes through :func:`polytopo.core.atomic_output.atomic_output` and so follows
the rules of :mod:`polytopo.core.output_safety`: the file is written under a temporary name in the target's folder
and renamed into place (``os.replace``) only once complete, so a reader never sees half
a file and a failure leaves nothing behind. An existing target is replaced only with
``overwrite=True``, and an input (``protect``) is never written to. A full disk is named
as such (:class:`~polytopo.core.output_safety.OutputWriteError`).

Records are lists of flat dicts with the same keys. Values may be ``int``, ``float``,
``str``, ``bool``, None or their NumPy scalar types; NaN and None are written as empty
(CSV), NULL (GeoPackage) or ``null`` (JSON). A :class:`RecordTable` holds records as
columns, built once and shared by the CSV table and the GeoPackage layers of the same
records. A record's ``"geometry"`` is a shapely
geometry in pixels; the GeoPackage writer converts it to map units with a
:class:`~polytopo.core.vector_files.PixelFrame`.
"""

import contextlib
import csv
import json
import math
import operator
import re
import secrets
import sqlite3
import struct
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely

from ..tables.error_classes import ERROR_LAYERS, RECORD_TABLES
from ...core.atomic_output import atomic_output
from ...core.errors import InvalidParameterError
from ...core.vector_files import ogr_exceptions
from ...core.geopackage_publish import check_layer_names
from ...core.output_safety import write_failure

__all__ = [
    "GEOMETRY_TYPES",
    "LayerSchema",
    "RecordTable",
    "check_int64",
    "error_layers",
    "field_kind",
    "geometry_srs_id",
    "gpkg_blobs",
    "table_columns",
    "write_csv",
    "write_geopackage",
    "write_geopackage_layers",
    "write_summary_json",
]

GEOMETRY_TYPES = ("Polygon", "MultiPolygon", "Point", "MultiPoint", "LineString", "MultiLineString")
_GEOMETRY_KEY = "geometry"
_RESERVED_GPKG_FIELDS = ("fid",)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_GPKG_HEADER = struct.Struct("<2sBBi")  # magic, version, flags, srs_id (GeoPackage 1.2, clause 2.1.3)
_ENVELOPE = struct.Struct("<4d")  # min_x, max_x, min_y, max_y
_FLAG_LITTLE_ENDIAN, _FLAG_XY_ENVELOPE, _FLAG_EMPTY = 0x01, 0x02, 0x10


class RecordTable:
    """Records held as columns: each field's values once, in plain Python types, and the geometries.

    Built once per record list (:meth:`from_records`) and shared by the CSV table and the
    GeoPackage layers written from it, so no value is converted twice. Values are None
    (for None and NaN), ``bool``, ``int``, ``float`` or ``str`` (NumPy scalars become
    the Python type).

    Parameters
    ----------
    fields : tuple of str
        Field names in order (``"geometry"`` is not a field).
    columns : tuple of list
        One list of plain values per field, all as long as ``geometries``.
    geometries : numpy.ndarray
        One object per record: a shapely geometry in pixels, None, or whatever the
        record held (checked by the GeoPackage writer).

    Examples
    --------
    >>> table = RecordTable.from_records([{"id": np.int64(1), "ok": np.True_, "iou": float("nan")}])
    >>> table.fields, table.columns, [sorted(table.kinds(field)) for field in table.fields]
    (('id', 'ok', 'iou'), ([1], [True], [None]), [['int'], ['bool'], []])
    """

    def __init__(self, fields, columns, geometries):
        self.fields, self.columns, self.geometries = tuple(fields), tuple(columns), geometries

    @classmethod
    def from_records(cls, records, fields=None):
        """The table of a list of flat dicts with the same keys.

        Parameters
        ----------
        records : list of dict
        fields : sequence of str, optional
            Field order; defaults to the first record's keys (needed for an empty table's fields).

        Raises
        ------
        InvalidParameterError
            Records with different keys, or a value that is not a number, string, bool or None.
        """
        records = list(records)
        names = _columns(records, fields)
        columns = [_plain_column(list(values), name) for values, name in zip(_transposed(records, names), names)]
        geometries = np.fromiter((record.get(_GEOMETRY_KEY) for record in records), dtype=object, count=len(records))
        return cls(names, columns, geometries)

    def __len__(self):
        return len(self.geometries)

    def kinds(self, field):
        """The kinds of the field's non-null values, a subset of {"bool", "int", "float", "str"}."""
        return frozenset(_KIND_OF_TYPE[kind] for kind in set(map(type, self.columns[self.fields.index(field)]))) - {
            "none"}

    def where(self, field, value):
        """The table of the records whose ``field`` equals ``value`` (empty when there is no such field)."""
        if field not in self.fields:
            return self.take([])
        column = self.columns[self.fields.index(field)]
        return self.take([index for index, item in enumerate(column) if item == value])

    def take(self, indices):
        """The table of the records at ``indices`` (a sequence of int), in that order."""
        indices = list(indices)
        columns = [[column[index] for index in indices] for column in self.columns]
        return RecordTable(self.fields, columns, self.geometries[np.asarray(indices, dtype=np.intp)])


def write_csv(records, path, *, fields=None, overwrite=False, protect=()):
    """Write records as a CSV table (UTF-8, header row, ``"geometry"`` dropped).

    Parameters
    ----------
    records : list of dict or RecordTable
        Rows with the same keys, or their :class:`RecordTable`.
    path : str or Path
        The CSV file.
    fields : sequence of str, optional
        Column order of a list of records; defaults to the first record's keys. Needed to
        write the header of an empty table. A :class:`RecordTable` has its own order.
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
    Booleans are written as 1/0 like in the GeoPackage; floats with full precision
    (their ``repr``), NaN and None as empty cells.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     rows = [{"id": 1, "iou": 0.5, "geometry": None}, {"id": 2, "iou": float("nan")}]
    ...     write_csv(rows, Path(folder) / "features.csv").read_text().splitlines()
    ['id,iou', '1,0.5', '2,']
    """
    table = _as_table(records, fields)
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with temporary.open("x", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(table.fields)
            columns = [_csv_column(column) for column in table.columns]
            writer.writerows(zip(*columns) if columns else [()] * len(table))
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
    text = _indented_json(_json_ready(summary, "summary"))
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with temporary.open("x", encoding="utf-8") as handle:
            handle.write(text)
            handle.write("\n")
    return Path(path)


_LONG_LIST = 64
"""Lists of at least this many floats are encoded by :func:`_indented_json` in one C call."""


def _indented_json(ready):
    """``json.dumps(ready, indent=2, ensure_ascii=False, allow_nan=False)``: the same text, made faster.

    With ``indent`` the standard library encodes in Python, one chain of calls per number,
    and a PR curve has a point per prediction. Each list of at least :data:`_LONG_LIST`
    floats (or None) is left out as a unique placeholder and encoded by the C encoder
    (no ``indent``), then laid out as the indenting encoder lays it out: one number per
    line, two spaces deeper than the line that opens the list. (No number or ``null``
    contains ``", "``, the C encoder's separator.)
    """
    token = secrets.token_hex(8)
    lists = []

    def placed(value):
        if isinstance(value, dict):
            return {key: placed(item) for key, item in value.items()}
        if isinstance(value, list):
            if len(value) >= _LONG_LIST and all(item is None or type(item) is float for item in value):
                lists.append(value)
                return f"{token}-{len(lists) - 1}"
            return [placed(item) for item in value]
        return value

    text = json.dumps(placed(ready), indent=2, ensure_ascii=False, allow_nan=False)
    out, at = [], 0
    for found in re.finditer(f'"{token}-([0-9]+)"', text):
        line = text[text.rfind("\n", 0, found.start()) + 1:found.start()]
        margin = " " * (len(line) - len(line.lstrip(" ")))
        items = json.dumps(lists[int(found.group(1))], allow_nan=False)[1:-1].replace(", ", ",\n" + margin + "  ")
        out += [text[at:found.start()], "[\n", margin, "  ", items, "\n", margin, "]"]
        at = found.end()
    return "".join(out + [text[at:]])


def write_geopackage(path, layers, frame=None, *, overwrite=False, protect=(), field_kinds=None):
    """Write one GeoPackage with one layer per ``(name, records, geometry_type)``.

    Parameters
    ----------
    path : str or Path
        The ``.gpkg`` file.
    layers : list of tuple
        ``(layer_name, records, geometry_type)``: a unique name, a list of records (or
        their :class:`RecordTable`) whose ``"geometry"`` is a shapely geometry in pixels
        (or None), and one of :data:`GEOMETRY_TYPES` (None for a table without
        geometry). A Polygon written to a MultiPolygon layer (likewise for points and
        lines) is promoted.
    frame : PixelFrame, optional
        Converts pixels to map units and gives the CRS; without it geometries are
        written as they are, without CRS.
    overwrite : bool
        Replace an existing file; an existing GeoPackage keeps every layer PolyTopo did
        not write and gets these layers added (:mod:`.geopackage_publish`).
    protect : iterable of str or Path
        Input paths that must not be written.
    field_kinds : dict, optional
        The declared schema: ``{field: "bool" | "int" | "float" | "str"}``. A declared
        field gets that type whatever its values (all None included); its values must be
        of that kind (integers are accepted for ``"float"``, booleans for ``"int"``).

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    InvalidParameterError
        A bad layer tuple, a field named ``fid``, a value that is not a number, string,
        bool or None, strings mixed with numbers, an integer beyond 64 bits, a value
        unlike its declared kind, or a geometry unlike the layer's type; raised before the
        file is created.
    OutputExistsError
        ``path`` exists and ``overwrite`` is False, or it is a GeoPackage with a layer of
        one of these names that PolyTopo did not write; raised before the work.

    Notes
    -----
    Undeclared fields take their type from their values: all-bool fields become Integer
    (boolean subtype), integer fields Integer64, fields with any float Real, strings
    String; a field with only None values is a String field. Field names are kept as
    given; ``fid`` is the feature-id column and cannot be a field. The geometry column
    is ``geometry``, with an R-tree spatial index.

    OGR creates the file, the layers and their fields; the features of all layers are
    then inserted in one SQLite transaction, each layer's columns bound at once
    (geometry as GeoPackage blobs built from shapely's WKB, the envelope and the
    header GDAL writes); OGR then builds each spatial index in bulk, and the file is
    reopened to check that every feature is there.
    """
    _check_layers(layers)
    check_layer_names(path, [layer[0] for layer in layers])
    plans = [_layer_plan(name, records, geometry_type, frame, field_kinds or {})
             for name, records, geometry_type in layers]

    def fill(connection, tables, srs_ids):
        connection.execute("BEGIN")
        extents = [_insert_layer(connection, path, plan, table, srs_ids, frame) for plan, table in zip(plans, tables)]
        connection.execute("COMMIT")
        return extents

    return write_geopackage_layers(path, [plan.schema() for plan in plans], frame, fill, overwrite=overwrite,
                                   protect=protect)


@dataclass(frozen=True)
class LayerSchema:
    """A GeoPackage layer to create.

    Attributes
    ----------
    name : str
    geometry_type : str or None
        One of :data:`GEOMETRY_TYPES`; None for a table without geometry.
    fields : tuple of str
    kinds : tuple of str
        OGR kind of each field: "bool", "int", "float" or "str" (:func:`field_kind`).
    count : int
        Features the layer holds once filled.
    """

    name: str
    geometry_type: object
    fields: tuple
    kinds: tuple
    count: int


def write_geopackage_layers(path, schemas, frame, fill, *, overwrite=False, protect=()):
    """Create a GeoPackage with the layers ``schemas``; ``fill`` inserts their features.

    The common part of :func:`write_geopackage` and of writers that insert features
    another way (:mod:`.record_parts`): OGR creates the layers and fields, then
    ``fill(connection, tables, srs_ids)`` inserts every feature on an SQLite connection
    in autocommit mode, in transactions of its own (``tables``: the layers' table names
    in the order of ``schemas``; ``srs_ids``: ``{table: srs_id}`` of the geometry
    columns), and returns each layer's extent ``(min_x, min_y, max_x, max_y)`` or None.
    The counts and extents are then recorded, OGR builds the spatial indexes, and the
    reopened file is checked to hold every feature. The rules of
    :func:`.atomic_output.atomic_output` apply.

    Returns
    -------
    Path
    """
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        with ogr_exceptions() as (gdal, ogr, osr):
            try:
                _write_gpkg_file(gdal, ogr, osr, temporary, schemas, frame, fill)
            except (RuntimeError, sqlite3.Error) as exc:  # GDAL and SQLite report a full disk this way
                failure = write_failure(exc, path)
                if failure.disk_full:
                    raise failure from exc
                raise
    return Path(path)


def error_layers(pred_records, gt_records, missed_holes, hallucinated_holes):
    """The layers of an error GeoPackage, ready for :func:`write_geopackage`.

    Parameters
    ----------
    pred_records, gt_records : list of dict or RecordTable
        Per-feature records of predictions and references, with ``"error_class"``.
    missed_holes, hallucinated_holes : list of dict or RecordTable
        Records of reference holes no prediction matched and predicted holes no
        reference matched, geometry in pixels.

    Returns
    -------
    list of tuple
        ``(name, table, geometry_type)`` with a :class:`RecordTable` for each layer of
        :data:`~.error_classes.ERROR_LAYERS`: ``predictions``, ``references``,
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
    tables = dict(zip(RECORD_TABLES, (_as_table(records, None) for records in
                                      (pred_records, gt_records, missed_holes, hallucinated_holes))))
    named = [(layer.name, tables[layer.name] if layer.source == layer.name
              else tables[layer.source].where("error_class", layer.error_class)) for layer in ERROR_LAYERS]
    return [(name, table, _polygon_type(table)) for name, table in named]


def _as_table(records, fields):
    if not isinstance(records, RecordTable):
        return RecordTable.from_records(records, fields)
    if fields is not None:
        raise InvalidParameterError("Expected fields=None with a RecordTable, which has its own field order; "
                                    "pass the records as a list of dicts to choose the columns")
    return records


def _transposed(records, names):
    """The values of each field ``names[k]`` over ``records``, as one tuple per field (read in C)."""
    if not names or not records:
        return [() for _ in names]
    getter = operator.itemgetter(*names)  # one name gives the value, several a tuple
    return list(zip(*(map(getter, records) if len(names) > 1 else ((getter(r),) for r in records))))


def _columns(records, fields):
    if fields is None:
        fields = [name for name in records[0] if name != _GEOMETRY_KEY] if records else []
    columns = [name for name in fields if name != _GEOMETRY_KEY]
    expected = set(columns)
    with_geometry = expected | {_GEOMETRY_KEY}
    for index, record in enumerate(records):
        if record.keys() == expected or record.keys() == with_geometry:
            continue
        keys = set(record) - {_GEOMETRY_KEY}
        if keys != expected:
            raise InvalidParameterError(
                f"Expected every record to have the fields {sorted(expected)} but record {index} has "
                f"{sorted(keys)}; give all records the same keys"
            )
    return columns


_KIND_OF_TYPE = {type(None): "none", bool: "bool", int: "int", float: "float", str: "str"}


def _value_kind(value_type):
    """The kind of values of one Python type: "none", "bool", "int", "float", "str", or None (unwritable)."""
    if value_type is type(None):
        return "none"
    if issubclass(value_type, (bool, np.bool_)):
        return "bool"
    if issubclass(value_type, (int, np.integer)):
        return "int"
    if issubclass(value_type, (float, np.floating)):
        return "float"
    return "str" if issubclass(value_type, str) else None


def _plain_column(values, name):
    """One field's values as None, bool, int, float or str (NaN as None)."""
    types = set(map(type, values))
    for value_type in types:
        if _value_kind(value_type) is None:
            index = next(i for i, value in enumerate(values) if type(value) is value_type)
            raise InvalidParameterError(
                f"record {index} field {name!r}: expected a number, string, bool or None but got "
                f"{value_type.__name__}; flatten the value before writing"
            )
    if types <= {type(None), bool, int, str}:
        return values
    if types <= {type(None), float}:
        return [None if value != value else value for value in values]  # NaN is the one value unequal to itself
    return [_plain(value) for value in values]


def _plain(value):
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    return None if math.isnan(value) else value


def _csv_column(column):
    """A column for the CSV writer: booleans as 1/0 (the writer prints floats with their repr)."""
    if bool in set(map(type, column)):
        return [int(value) if type(value) is bool else value for value in column]
    return column


def _json_ready(value, where):
    if isinstance(value, dict):
        return {str(key): _json_ready(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        if type(value) is list and all(type(item) is float for item in value):  # e.g. the PR curve: one pass, no names
            return [item if math.isfinite(item) else None for item in value]
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


def _polygon_type(table):
    multi = any(isinstance(geometry, shapely.MultiPolygon) for geometry in table.geometries)
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


@dataclass(frozen=True)
class _LayerPlan:
    """One layer checked and ready to write: its table, the OGR kind of each field, its geometries in pixels.

    The geometries are put in map units (and single parts promoted) only when their layer
    is written (:meth:`map_geometries`), one layer at a time, so the copies of all layers
    never exist together.
    """

    name: str
    geometry_type: str
    table: RecordTable
    kinds: list
    geometries: object

    def map_geometries(self, frame):
        """The layer's geometries in map units (as they are without ``frame``), single parts promoted."""
        return _promoted(frame.to_map(self.geometries) if frame is not None else self.geometries,
                         self.geometry_type)

    def schema(self):
        """The layer's :class:`LayerSchema`."""
        return LayerSchema(self.name, self.geometry_type, self.table.fields, tuple(self.kinds), len(self.table))


def _layer_plan(name, records, geometry_type, frame, declared):
    """Check one layer and prepare it (before any file is created)."""
    table = _as_table(records, None)
    seen = [table.kinds(field) for field in table.fields]
    kinds = [field_kind(name, field, found, declared.get(field)) for field, found in zip(table.fields, seen)]
    for field, kind, found, column in zip(table.fields, kinds, seen, table.columns):
        if kind == "int" and "int" in found:
            check_int64(name, field, column)
    geometries = None
    if geometry_type is not None:
        geometries = _geometry_array(table.geometries, name)
        _check_geometry_types(geometries, geometry_type, name)
    return _LayerPlan(name, geometry_type, table, kinds, geometries)


_ACCEPTED = {"bool": {"bool"}, "int": {"int", "bool"}, "float": {"float", "int"}, "str": {"str"}}


def field_kind(layer_name, name, seen, declared):
    """OGR field kind of one column: "bool", "int", "float" or "str".

    Parameters
    ----------
    layer_name, name : str
        The layer and the field, for messages.
    seen : frozenset of str
        The kinds of the column's non-null values (:meth:`RecordTable.kinds`).
    declared : str or None
        The kind the schema declares for the field.
    """
    if name.lower() in _RESERVED_GPKG_FIELDS:
        raise InvalidParameterError(
            f"layer {layer_name!r}: expected no field named {name!r}, the GeoPackage feature-id "
            "column; rename it (e.g. source_fid)"
        )
    if "str" in seen and len(seen) > 1:
        raise InvalidParameterError(
            f"layer {layer_name!r} field {name!r}: expected values of one kind but got strings mixed "
            "with numbers; convert them to one type"
        )
    if declared is not None:
        if declared not in _ACCEPTED:
            raise InvalidParameterError(f"field {name!r}: expected a declared kind of {sorted(_ACCEPTED)} but got "
                                        f"{declared!r}")
        if not seen <= _ACCEPTED[declared]:
            raise InvalidParameterError(
                f"layer {layer_name!r} field {name!r}: expected {declared} values as its schema declares but got "
                f"{'/'.join(sorted(seen))} values; fix the records or the declared kind"
            )
        kind = declared
    elif not seen or seen == {"str"}:
        kind = "str"
    elif "float" in seen:
        kind = "float"
    else:
        kind = "bool" if seen == {"bool"} else "int"
    return kind


def check_int64(layer_name, name, column):
    """Refuse an integer column with a value beyond 64 bits (GeoPackage Integer64)."""
    numbers = [value for value in column if value is not None]
    if numbers and not (_INT64_MIN <= min(numbers) and max(numbers) <= _INT64_MAX):
        index = next(i for i, value in enumerate(column)
                     if value is not None and not _INT64_MIN <= value <= _INT64_MAX)
        raise InvalidParameterError(
            f"layer {layer_name!r} record {index} field {name!r}: expected an integer that fits "
            f"in 64 bits but got {column[index]}; store it as a string or float"
        )


def _geometry_array(geometries, layer_name):
    """The geometries as an object array, checked to be shapely geometries or None."""
    bad = ~(shapely.is_geometry(geometries) | np.equal(geometries, None))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(
            f"layer {layer_name!r} record {index}: expected a shapely geometry or None under "
            f"'geometry' but got {type(geometries[index]).__name__}"
        )
    return geometries


_PROMOTED = {"Polygon": shapely.MultiPolygon, "Point": shapely.MultiPoint, "LineString": shapely.MultiLineString}
"""The Multi-type each single-part type is promoted to in a Multi-type layer."""


def _single_part_type(geometry_type):
    """``"Polygon"`` for ``"MultiPolygon"`` (likewise for points and lines), else None."""
    return geometry_type[len("Multi"):] if geometry_type.startswith("Multi") else None


def _check_geometry_types(geometries, geometry_type, layer_name):
    """Refuse geometries that do not fit the layer type (its single-part type fits a Multi-type)."""
    type_ids = shapely.get_type_id(geometries)
    single = _single_part_type(geometry_type)
    fits = (type_ids == shapely.GeometryType[geometry_type.upper()]) | (type_ids == -1)
    if single:
        fits |= type_ids == shapely.GeometryType[single.upper()]
    if not fits.all():
        index = int(np.flatnonzero(~fits)[0])
        raise InvalidParameterError(
            f"layer {layer_name!r} record {index}: expected a {geometry_type} geometry but got "
            f"{geometries[index].geom_type}; choose a matching geometry type for the layer"
        )


def _promoted(geometries, geometry_type):
    """Geometries of a checked layer with single parts promoted to its Multi-type."""
    result = geometries.copy()
    single = _single_part_type(geometry_type)
    if single:
        single_id = shapely.GeometryType[single.upper()]
        promote = _PROMOTED[single]
        for index in np.flatnonzero(shapely.get_type_id(geometries) == single_id):
            geometry = geometries[index]
            result[index] = promote([geometry]) if not geometry.is_empty else promote()
    return result


def gpkg_blobs(geometries, srs_id):
    """GeoPackage geometry blobs (header, envelope, WKB) as GDAL writes them, and the layer extent.

    Points and empty geometries carry no envelope; other geometries the x/y envelope.

    Returns
    -------
    blobs : list of bytes or None
    extent : tuple of float or None
        ``(min_x, min_y, max_x, max_y)`` of the non-empty geometries.
    """
    wkbs = shapely.to_wkb(geometries).tolist()
    bounds = _envelopes(geometries)
    points = (shapely.get_type_id(geometries) == shapely.GeometryType.POINT).tolist()
    empty = shapely.is_empty(geometries).tolist()
    with_envelope = _GPKG_HEADER.pack(b"GP", 0, _FLAG_LITTLE_ENDIAN | _FLAG_XY_ENVELOPE, srs_id)
    bare = _GPKG_HEADER.pack(b"GP", 0, _FLAG_LITTLE_ENDIAN, srs_id)
    empty_header = _GPKG_HEADER.pack(b"GP", 0, _FLAG_LITTLE_ENDIAN | _FLAG_EMPTY, srs_id)
    blobs = []
    for wkb, (min_x, min_y, max_x, max_y), is_point, is_empty in zip(wkbs, bounds.tolist(), points, empty):
        if wkb is None:
            blobs.append(None)
        elif is_empty:
            blobs.append(empty_header + wkb)
        elif is_point:
            blobs.append(bare + wkb)
        else:
            blobs.append(with_envelope + _ENVELOPE.pack(min_x, max_x, min_y, max_y) + wkb)
    known = bounds[np.isfinite(bounds).all(axis=1)]
    extent = None
    if len(known):
        extent = (float(known[:, 0].min()), float(known[:, 1].min()), float(known[:, 2].max()),
                  float(known[:, 3].max()))
    return blobs, extent


def _envelopes(geometries):
    """Per geometry ``(min_x, min_y, max_x, max_y)`` over every vertex, NaN when it has none.

    Unlike GEOS bounds, which take a polygon's exterior only, every ring counts, as in
    the envelopes GDAL writes (an invalid polygon's hole may reach outside its exterior).
    """
    coordinates, owners = shapely.get_coordinates(geometries, return_index=True)
    envelopes = np.full((len(geometries), 4), np.nan)
    if len(owners):
        counts = np.bincount(owners, minlength=len(geometries))
        present = np.flatnonzero(counts)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[present]
        envelopes[present, :2] = np.minimum.reduceat(coordinates, starts, axis=0)
        envelopes[present, 2:] = np.maximum.reduceat(coordinates, starts, axis=0)
    return envelopes


def _spatial_reference(osr, frame):
    """The OSR spatial reference of ``frame``'s CRS, or None."""
    if frame is None or not frame.crs_wkt:
        return None
    srs = osr.SpatialReference()
    srs.ImportFromWkt(frame.crs_wkt)
    srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    return srs


def geometry_srs_id(frame):
    """The ``srs_id`` a GeoPackage written by this module gives geometry columns in ``frame``'s CRS.

    GDAL chooses it when it creates the layer (the EPSG code when the CRS has one, else a
    number of its own); it is found by creating such a layer in memory. Geometry blobs
    carry it in their header, so writers that build blobs before the file exists ask
    for it here (:mod:`.record_parts`).
    """
    with ogr_exceptions() as (gdal, ogr, osr):
        name = f"/vsimem/polytopo-srs-{id(frame)}.gpkg"
        dataset = ogr.GetDriverByName("GPKG").CreateDataSource(name)
        try:
            dataset.CreateLayer("probe", _spatial_reference(osr, frame), ogr.wkbPolygon, options=["SPATIAL_INDEX=NO"])
            result = dataset.ExecuteSQL("SELECT srs_id FROM gpkg_geometry_columns")
            srs_id = int(result.GetNextFeature().GetField(0))
            dataset.ReleaseResultSet(result)
        finally:
            with _errors_quiet(gdal, ogr, osr):
                del dataset
                gdal.Unlink(name)
    return srs_id


def _write_gpkg_file(gdal, ogr, osr, temporary, schemas, frame, fill):
    srs = _spatial_reference(osr, frame)
    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(temporary))
    try:
        tables = [_create_layer(ogr, dataset, srs, schema) for schema in schemas]
        dataset.SyncToDisk()
    except BaseException as exc:
        # Drop the OGR objects the traceback holds so the file is closed before it is removed.
        traceback.clear_frames(exc.__traceback__)
        raise
    finally:
        with _errors_quiet(gdal, ogr, osr):
            del dataset
    _insert_features(temporary, schemas, tables, fill)
    dataset = ogr.Open(str(temporary), 1)
    try:
        for schema, table in zip(schemas, tables):
            if schema.geometry_type is not None:
                dataset.ReleaseResultSet(dataset.ExecuteSQL(
                    f"SELECT CreateSpatialIndex('{_sql_text(table)}', '{_GEOMETRY_KEY}')"))
    finally:
        with _errors_quiet(gdal, ogr, osr):
            del dataset
    _check_complete(ogr, temporary, schemas)


@contextlib.contextmanager
def _errors_quiet(gdal, ogr, osr):
    """GDAL errors neither raised nor printed inside the block, where a dataset is closed.

    Closing commits; a failure there (full disk) is found by :func:`_check_complete`, not
    raised from a destructor. Exceptions are switched off in the reverse order of
    ogr_exceptions, as GDAL's handler stack needs.
    """
    raising = [module for module in (osr, ogr, gdal) if module.GetUseExceptions()]
    for module in raising:
        module.DontUseExceptions()
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        yield
    finally:
        gdal.PopErrorHandler()
        for module in reversed(raising):
            module.UseExceptions()


def _create_layer(ogr, dataset, srs, schema):
    """Create the layer and its fields with OGR (no features yet); returns its table name."""
    options = ["FID=fid"] + ([f"GEOMETRY_NAME={_GEOMETRY_KEY}", "SPATIAL_INDEX=NO"]
                             if schema.geometry_type is not None else [])
    ogr_type = ogr.wkbNone if schema.geometry_type is None else getattr(ogr, f"wkb{schema.geometry_type}")
    layer = dataset.CreateLayer(schema.name, srs if schema.geometry_type is not None else None, ogr_type,
                                options=options)
    for field, kind in zip(schema.fields, schema.kinds):
        definition = ogr.FieldDefn(field, getattr(ogr, _OGR_FIELD_TYPES[kind]))
        if kind == "bool":
            definition.SetSubType(ogr.OFSTBoolean)
        layer.CreateField(definition)
    return layer.GetName()


def _insert_features(path, schemas, tables, fill):
    """Insert every layer's features with ``fill``, then record each layer's count and extent."""
    connection = sqlite3.connect(str(path), isolation_level=None)
    try:
        # the file is a temporary that is discarded on any failure: no rollback journal or fsync needed
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        srs_ids = dict(connection.execute("SELECT table_name, srs_id FROM gpkg_geometry_columns"))
        extents = fill(connection, tables, srs_ids)
        connection.execute("BEGIN")
        for schema, table, extent in zip(schemas, tables, extents, strict=True):
            _set_contents(connection, table, schema.count, extent)
        connection.execute("COMMIT")
    finally:
        connection.close()


def _insert_layer(connection, path, plan, table, srs_ids, frame):
    """Insert one layer's features (inside the caller's transaction); returns the layer's extent or None.

    Each layer's geometries are mapped and turned into blobs just before its insert and
    dropped after it, so only one layer's copies are held at a time.
    """
    names = table_columns(connection, table)
    columns = list(plan.table.columns)
    extent = None
    if plan.geometry_type is not None:
        blobs, extent = gpkg_blobs(plan.map_geometries(frame), srs_ids[table])
        columns.insert(0, blobs)
    if len(names) != len(columns):
        raise RuntimeError(f"Expected {len(columns)} columns in layer {plan.name!r} of {path} but OGR "
                           f"created {names}")
    if names:
        quoted = ", ".join(f'"{_sql_name(name)}"' for name in names)
        connection.executemany(
            f'INSERT INTO "{_sql_name(table)}" ({quoted}) VALUES ({", ".join("?" * len(names))})',  # nosec B608: quoted identifiers from OGR, values bound
            zip(*columns))
    else:
        connection.executemany(f'INSERT INTO "{_sql_name(table)}" DEFAULT VALUES', [()] * len(plan.table))  # nosec B608
    return extent


def table_columns(connection, table):
    """The columns of a layer's table after ``fid``: the geometry column first, then the fields."""
    return [row[1] for row in connection.execute(f'PRAGMA table_info("{_sql_name(table)}")')][1:]


def _set_contents(connection, table, count, extent):
    """Record a filled layer's feature count and extent as GDAL does."""
    if not count:
        return  # GDAL leaves an empty layer's count and extent NULL
    connection.execute("UPDATE gpkg_ogr_contents SET feature_count = ? WHERE table_name = ?", (count, table))
    # GDAL writes the extent through sqlite3_mprintf("%.18g"), whose text keeps 16 significant digits;
    # the same conversion here stores the same doubles
    side = "CAST(printf('%.18g', ?) AS REAL)" if extent else "?"
    connection.execute(
        f"UPDATE gpkg_contents SET min_x = {side}, min_y = {side}, max_x = {side}, max_y = {side}, "  # nosec B608: fixed placeholders
        "last_change = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE table_name = ?",
        (*(extent or (None,) * 4), table))


def _sql_name(name):
    """A name for inside double quotes in SQL."""
    return name.replace('"', '""')


def _sql_text(text):
    """A string for inside single quotes in SQL."""
    return text.replace("'", "''")


def _check_complete(ogr, path, schemas):
    """Reopen a written GeoPackage and check every layer and feature is there.

    Closing a dataset commits its last transaction; a failure there (a full disk) is
    only printed by GDAL, so the file is checked before it may move into place.
    """
    dataset = ogr.Open(str(path))
    try:
        for schema in schemas:
            layer = dataset.GetLayerByName(schema.name)
            count = layer.GetFeatureCount() if layer is not None else -1
            if count != schema.count:
                raise RuntimeError(f"Expected {schema.count} features in layer {schema.name!r} of {path} after "
                                   f"writing but found {max(count, 0)}: the file is incomplete")
    finally:
        del dataset


_OGR_FIELD_TYPES = {"bool": "OFTInteger", "int": "OFTInteger64", "float": "OFTReal", "str": "OFTString"}
