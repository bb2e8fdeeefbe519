"""Per-feature outputs made by the workers that scored the features, joined by the client as bytes.

On a cluster (:mod:`..run.distributed`), each partition's worker builds the records of its
images (:func:`.records.build_records` of the partition's outcome) and encodes them the
way :func:`.report.write_report` writes them: CSV rows as text, GeoPackage rows (geometry
blobs in map units, plain values) in an in-memory SQLite database sent as its bytes, and
each row's place in input order. The client (:meth:`RecordParts.write_csvs`) writes the CSV
text in that order and SQLite copies and sorts the GeoPackage rows
(:meth:`RecordParts.write_geopackage`, on a worker when a client is given), so it handles no
Python object per feature. The files are those one process writes from the same
evaluation: the same rows in the same order, the same field types, counts and extents.

Only the profiles whose per-image phase is ``paper`` make parts (their records depend on
the partition alone; ``reference-code`` keeps its records on the client).
"""

import contextlib
import csv
import io
import os
import shutil
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..inputs.ordering import input_positions
from ..tables.error_classes import ERROR_LAYERS, RECORD_TABLES, error_layer
from .writers import (
    LayerSchema,
    RecordTable,
    check_int64,
    field_kind,
    gpkg_blobs,
    table_columns,
    write_geopackage_layers,
    _check_geometry_types,
    _csv_column,
    _sql_name,
)

__all__ = ["FETCH_ROWS_IN_FLIGHT", "PartsRequest", "RecordPart", "RecordParts", "record_part", "parts_request"]

FETCH_ROWS_IN_FLIGHT = 20_000
"""Most CSV rows fetched from the workers at once while a table is written (a few MB of text).

Small parts then come several in one fetch; a part of more rows comes alone, so a table of
hundreds of thousands of rows never lies in this process at once."""

_GEOMETRY_TYPE = "Polygon"
"""Every record geometry is one polygon of a ring table (:func:`.construct.ring_polygons`)."""

_KEYS = ("k_pos", "k_hole", "k_row")


@dataclass(frozen=True)
class PartsRequest:
    """What a worker needs to encode its records as the client will write them.

    Attributes
    ----------
    frame : PixelFrame or None
        Maps pixels to map units for the GeoPackage (None: pixels, no CRS).
    geopackage : bool
        Also make the GeoPackage rows.
    srs_id : int
        The ``srs_id`` of the GeoPackage's geometry columns (:func:`.writers.geometry_srs_id`).
    """

    frame: object
    geopackage: bool
    srs_id: int


def parts_request(frame, geopackage, client=None):
    """The :class:`PartsRequest` of outputs in ``frame`` (GeoPackage rows only when ``geopackage``).

    With ``client`` it is made on one of its workers, so that this process never loads
    GDAL (where the workers also write the GeoPackage, :mod:`.read_on_workers`).
    """
    if client is not None and geopackage:
        from ...core.cluster import started_on_worker

        return started_on_worker(client, parts_request, frame, geopackage, name="the GeoPackage's SRS id")()
    from .writers import geometry_srs_id

    return PartsRequest(frame, bool(geopackage), geometry_srs_id(frame) if geopackage else 0)


@dataclass(frozen=True)
class _TablePart:
    """One record table of a partition: CSV rows and where each goes.

    ``text`` holds the CSV rows (no header), sorted into input order within the
    partition; row ``k`` ends at character ``ends[k]``.
    ``keys`` is ``(n, 2)`` int64: the input position of the row's feature and its hole
    index (0 for polygons), the order of :func:`.ordering.in_input_order`.
    """

    fields: tuple
    text: str
    ends: np.ndarray
    keys: np.ndarray


@dataclass(frozen=True)
class _LayerPart:
    """One GeoPackage layer of a partition: the kinds of its fields' values, its extent and its row count."""

    seen: tuple
    extent: object
    count: int


@dataclass(frozen=True)
class RecordPart:
    """The encoded records of one partition.

    Attributes
    ----------
    tables : dict
        Record table name → its CSV rows and keys.
    layers : dict
        Error layer name → field kinds seen, extent, count (empty without a GeoPackage).
    database : bytes or None
        An SQLite database (``sqlite3.Connection.serialize``; a numpy uint8 view of those bytes
        on its way to the worker that assembles the GeoPackage) with one table per error
        layer, in the order of :data:`.error_classes.ERROR_LAYERS` (``layer0`` ...):
        ``k_pos, k_hole, k_row``, the geometry blob, then the fields.
    """

    tables: dict
    layers: dict
    database: object

    def outline(self):
        """The part without its CSV text and database: what the client needs to place and count its rows."""
        return replace(self, tables={name: replace(table, text="") for name, table in self.tables.items()},
                       database=None)


def _table_texts(part, names, pieces):
    """The CSV rows of the record tables ``names`` of ``part``, one text per name (runs where the part is kept).

    ``pieces`` holds a path or None per name: where a path is given (in a folder the client
    made a marker in, :func:`_shared_folder`) and the marker is there, the table's rows go
    into that file and its text is empty.
    """
    texts = []
    for name, piece in zip(names, pieces):
        text = part.tables[name].text
        if piece is not None and text and _sees(piece):
            Path(piece).write_bytes(text.encode("utf-8"))
            text = ""
        texts.append(text)
    return tuple(texts)


def _sees(piece):
    """Whether this process sees the marker of the shared prefix of the file ``piece`` (:func:`_shared_folder`)."""
    path = Path(piece)
    return path.with_name(path.name.split("-@-")[0] + _HERE).is_file()


@contextlib.contextmanager
def _shared_folder(path, kept):
    """Yield a path prefix next to ``path`` whose marker file tells workers they see this folder; None without a cluster.

    Files for ``path`` that workers write are named ``PREFIX-...`` (:func:`_sees`); the
    prefix is a :func:`.output_safety.partial_name`, so a later run removes what a killed
    one left. The marker and every file whose name holds the prefix (the workers' files,
    and the temporary files a worker that died while writing one left) are removed when the
    block ends, so none of them is published with the folder.
    """
    from ...core.cluster import client_of
    from ...core.output_safety import partial_name

    if client_of(kept) is None:
        yield None
        return
    prefix = path.with_name(partial_name(path.name) + "-@")
    marker = prefix.with_name(prefix.name.split("-@")[0] + _HERE)
    marker.touch(exist_ok=False)
    try:
        yield str(prefix)
    finally:
        marker.unlink(missing_ok=True)
        for piece in prefix.parent.glob(f"*{prefix.name}*"):
            piece.unlink(missing_ok=True)


def _append_file(piece, handle):
    """Append the bytes of the file ``piece`` to the open text file ``handle``, then remove the file."""
    handle.flush()
    with open(piece, "rb") as source:
        shutil.copyfileobj(source, handle.buffer, 1 << 20)
    handle.buffer.flush()
    os.unlink(piece)


def _database(part):
    """The SQLite database of ``part`` as a numpy view of its bytes (runs where the part is kept)."""
    return np.frombuffer(part.database, np.uint8)


def _keys(table, positions, id_field):
    if not len(table):
        return np.zeros((0, 2), dtype=np.int64)
    columns = dict(zip(table.fields, table.columns))
    holes = columns.get("hole_index", [0] * len(table))
    return np.array([(positions.get(key, -1), hole) for key, hole in
                     zip(zip(columns["image_id"], columns[id_field], columns["part"]), holes)], dtype=np.int64)


def _csv_rows(table):
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    ends = np.empty(len(table), dtype=np.int64)
    columns = [_csv_column(column) for column in table.columns]
    for index, row in enumerate(zip(*columns) if columns else [()] * len(table)):
        writer.writerow(row)
        ends[index] = handle.tell()
    return handle.getvalue(), ends


def record_part(outcome, gt_set, pred_set, gt_index, pred_index, request):
    """Worker side: the :class:`RecordPart` of one partition.

    Parameters
    ----------
    outcome : Outcome
        The partition's outcome (its metrics are not read): instances, ring tables, pairs,
        exterior matches and topology flags as :func:`.records.build_records` reads them.
    gt_set, pred_set : InstanceSet
        The partition's unfiltered inputs.
    gt_index, pred_index : numpy.ndarray
        Input position of each of their instances.
    request : PartsRequest
    """
    from .records import build_records

    records = build_records(outcome)
    # every instance of an image is in its partition: the first of a key here is the first in the input
    positions = {"reference": (input_positions(gt_set, gt_index), "ref_id"),
                 "prediction": (input_positions(pred_set, pred_index), "pred_id")}
    tables, keys = {}, {}
    for name in RECORD_TABLES:
        table = RecordTable.from_records(records[name])
        found, id_field = positions[error_layer(name).side]
        key = _keys(table, found, id_field)
        order = np.lexsort((np.arange(len(key)), key[:, 1], key[:, 0]))  # input order here, ties as evaluated
        table, keys[name] = table.take(order.tolist()), key[order]
        text, ends = _csv_rows(table)
        tables[name] = (table, _TablePart(table.fields, text, ends, keys[name]))
    layers, database = {}, None
    if request.geopackage:
        layers, database = _geopackage_rows({name: t for name, (t, _) in tables.items()}, keys, request)
    return RecordPart({name: part for name, (_, part) in tables.items()}, layers, database)


def _layer_rows(tables, keys, layer):
    """The table and keys of one error layer: its source table, or the rows of its error class."""
    table, key = tables[layer.source], keys[layer.source]
    if layer.source == layer.name:
        return table, key
    rows = [] if "error_class" not in table.fields else [
        index for index, value in enumerate(table.columns[table.fields.index("error_class")])
        if value == layer.error_class]
    return table.take(rows), key[rows]


def _geopackage_rows(tables, keys, request):
    connection = sqlite3.connect(":memory:")
    try:
        layers = {}
        for number, layer in enumerate(ERROR_LAYERS):
            table, key = _layer_rows(tables, keys, layer)
            seen = tuple(table.kinds(field) for field in table.fields)
            for field, found, column in zip(table.fields, seen, table.columns):
                if "int" in found:
                    check_int64(layer.name, field, column)
            geometries = table.geometries
            _check_geometry_types(geometries, _GEOMETRY_TYPE, layer.name)
            if request.frame is not None:
                geometries = request.frame.to_map(geometries)
            blobs, extent = gpkg_blobs(geometries, request.srs_id)
            names = [*_KEYS, "g", *(f"f{k}" for k in range(len(table.fields)))]
            connection.execute(f"CREATE TABLE layer{number} ({', '.join(names)})")
            connection.executemany(
                f"INSERT INTO layer{number} VALUES ({', '.join('?' * len(names))})",  # nosec B608: fixed names
                zip(key[:, 0].tolist(), key[:, 1].tolist(), range(len(table)), blobs, *table.columns))
            layers[layer.name] = _LayerPart(seen, extent, len(table))
        connection.commit()
        return layers, connection.serialize()
    finally:
        connection.close()


class RecordParts:
    """The per-feature records of an evaluation as its partitions encoded them (:func:`record_part`).

    ``Evaluation.records`` of a cluster run that asked for them; :func:`.report.write_report`
    writes them with :meth:`write_csvs` and :meth:`write_geopackage`. Holds no record as a
    Python object, and in a cluster run neither their text nor their geometry: those stay
    on the workers that made them until they are written.

    Parameters
    ----------
    parts : list of RecordPart
        In partition order; outlines (:meth:`RecordPart.outline`) where ``kept`` holds the
        whole parts.
    request : PartsRequest
    kept : list, optional
        Each whole part, in the same order: a future of the worker that keeps it
        (:func:`~polytopo.core.cluster.map_partitions` with ``keep=True``; read there while
        that cluster's client is open), or the part itself. Default: ``parts``.
    """

    def __init__(self, parts, request, kept=None):
        self.parts, self.request = list(parts), request
        self.kept = self.parts if kept is None else list(kept)
        self._orders = {}

    def count(self, name):
        """Rows of the record table ``name`` (one of :data:`.error_classes.RECORD_TABLES`)."""
        return sum(len(part.tables[name].ends) for part in self.parts)

    def _fields(self, name):
        """The fields of the record table ``name``; none when it has no row (as one process writes it)."""
        return next((part.tables[name].fields for part in self.parts if len(part.tables[name].ends)), ())

    def _order(self, name):
        """The rows of the record table ``name`` over all parts (concatenated) in input order."""
        if name not in self._orders:
            keys = [part.tables[name].keys for part in self.parts]
            self._orders[name] = np.lexsort(np.concatenate(keys).T[::-1]) if keys else np.zeros(0, np.int64)
        return self._orders[name]

    def in_order(self):
        """Whether every record table's rows are already in input order when the parts are concatenated.

        True when the input lists its images in evaluation order (partitions are runs of
        consecutive images); the rows are then copied as they come, without a sort.
        """
        return all(np.array_equal(order, np.arange(len(order))) for order in map(self._order, RECORD_TABLES))

    def _texts(self, names, shared=None):
        """Per part, in part order, a ``(text, piece)`` for each of the tables ``names``, from where the part is kept.

        ``text`` is the part's CSV rows of the table; or, when ``shared`` (a path prefix in
        a folder the workers see, :func:`_shared_folder`) is given and the part's worker
        wrote them to the file ``piece`` there, ``piece`` (and ``text`` empty). Each part's
        rows of every table come in one task; the parts come in groups whose rows add up to
        at most :data:`FETCH_ROWS_IN_FLIGHT` (:func:`~polytopo.core.cluster.fetched_kept`):
        small parts several in one fetch, large parts one at a time.
        """
        from ...core.cluster import fetched_kept

        rows = [sum(len(part.tables[name].ends) for name in names) for part in self.parts]
        filled = [index for index, count in enumerate(rows) if count]
        pieces = {index: tuple(None if shared is None or not len(self.parts[index].tables[name].ends)
                               else f"{shared}-{name}-{index}" for name in names) for index in filled}
        fetched = fetched_kept([self.kept[index] for index in filled], _table_texts, names,
                               names=[f"the {', '.join(names)} rows of partition {index}" for index in filled],
                               sizes=[rows[index] for index in filled], in_flight_size=FETCH_ROWS_IN_FLIGHT,
                               each=[(pieces[index],) for index in filled])
        for index in range(len(self.parts)):
            if not rows[index]:
                yield (("", None),) * len(names)
                continue
            texts = next(fetched)
            yield tuple((text, None) if text or piece is None else ("", piece)
                        for text, piece in zip(texts, pieces[index]))

    def write_csvs(self, paths):
        """Write each record table named in ``paths`` (name → path) as :func:`.writers.write_csv` writes its records.

        The tables whose rows are in input order are written part by part as they are
        fetched, every such table of a part in one task; the others' rows are fetched
        table by table, then written sorted. On a cluster whose workers see the folder of
        the paths (:func:`_shared_folder`; the tables go in one folder), each worker writes
        its part's rows of each table in order into a file there and this process appends
        the files instead of receiving the text. Returns ``paths``.
        """
        from ...core.atomic_output import atomic_output

        with contextlib.ExitStack() as files:
            handles = {}
            for name, path in paths.items():
                temporary = files.enter_context(atomic_output(path))
                handles[name] = files.enter_context(temporary.open("x", encoding="utf-8", newline=""))
                csv.writer(handles[name]).writerow(self._fields(name))
            in_order = [name for name in paths
                        if np.array_equal(self._order(name), np.arange(len(self._order(name))))]
            if in_order:
                with _shared_folder(Path(paths[in_order[0]]), self.kept) as shared:
                    for texts in self._texts(in_order, shared):
                        for name, (text, piece) in zip(in_order, texts):
                            if piece is None:
                                handles[name].write(text)
                            else:
                                _append_file(piece, handles[name])
            for name in paths:
                if name not in in_order:
                    texts = [each[0][0] for each in self._texts((name,))]  # this one table: its texts
                    handles[name].write(_ordered_rows(texts, [part.tables[name].ends for part in self.parts],
                                                      self._order(name)))
        return paths

    def write_geopackage(self, path, field_kinds, frame=None):
        """Write the error layers as :func:`.writers.write_geopackage` writes the same records' layers.

        :meth:`geopackage_started` and then its writer, at once.
        """
        return self.geopackage_started(path, field_kinds, frame)()

    def geopackage_started(self, path, field_kinds, frame=None, workers=None):
        """Start writing the error layers as :func:`.writers.write_geopackage` writes the same records' layers.

        ``field_kinds`` is the declared schema (:data:`.records.FIELD_KINDS`); ``frame``
        must be the one the parts were encoded in (their geometry is already in map units).
        Parts kept on a cluster's workers are assembled on one of them (loosely one of
        ``workers``, when given: the rows copied from every part, the spatial indexes
        built) while this process goes on; the returned function (call it once) waits for
        that file, which comes back in pieces, and writes it to ``path``: the same file,
        without the assembly's CPU or the parts' databases in this process. Parts in this
        process are written at once. The function returns ``path``.
        """
        from ...core.cluster import client_of

        if not self.request.geopackage:
            raise ValueError("Expected record parts made with geopackage=True to write a GeoPackage; ask "
                             "parts_request(frame, geopackage=True)")
        if frame != self.request.frame:
            raise ValueError("Expected the frame the record parts were encoded in; the workers mapped their "
                             "geometry with another")
        client = client_of(self.kept)
        if client is not None:
            return self._started_on_worker(path, field_kinds, client, workers)
        schemas = [self._schema(layer, field_kinds) for layer in ERROR_LAYERS]

        in_order = self.in_order()

        def fill(connection, tables, srs_ids):
            return [self._fill_layer(connection, number, table, schema, srs_ids.get(table), in_order)
                    for number, (table, schema) in enumerate(zip(tables, schemas))]

        written = write_geopackage_layers(path, schemas, self.request.frame, fill)
        return lambda: written

    def _started_on_worker(self, path, field_kinds, client, workers):
        """:meth:`geopackage_started` on a worker of ``client``; the writer puts the file at ``path`` atomically.

        A worker that sees the folder of ``path`` (:func:`_shared_folder`) writes the file
        there itself and this process only renames it; otherwise the file's bytes come
        back in pieces.
        """
        from ...core.atomic_output import atomic_output
        from ...core.cluster import require_open, worker_bytes_started

        require_open(client, "the GeoPackage")
        folder = contextlib.ExitStack()
        # a GeoPackage's own extension: GDAL warns about any other on every open
        piece = f"{folder.enter_context(_shared_folder(Path(path), self.kept))}-layers.gpkg"
        # only the databases go to the assembling worker (from the workers that keep them, each as a numpy
        # view that Dask sends as a frame of its own); the CSV text stays where it is
        databases = [client.submit(_database, kept, pure=False) for kept in self.kept]
        outlines = [part.outline() for part in self.parts]
        try:
            write = worker_bytes_started(client, _geopackage_here,
                                         (outlines, self.request, field_kinds, databases, piece),
                                         name="the GeoPackage", packed=False, workers=workers)
        except BaseException:
            client.cancel(databases)
            folder.close()
            raise

        def written():
            try:
                with atomic_output(path) as temporary:
                    with temporary.open("xb") as handle:
                        # the file comes back in pieces: this process never holds all of it
                        sent = write(handle)
                    if not sent:  # no GeoPackage is empty: the worker wrote it where this process sees it
                        os.replace(piece, temporary)
            finally:
                client.cancel(databases)
                folder.close()
            return path

        return written

    def _schema(self, layer, declared):
        count = sum(part.layers[layer.name].count for part in self.parts)
        fields = self._fields(layer.source)
        seen = [frozenset().union(*(part.layers[layer.name].seen[k] for part in self.parts
                                    if part.layers[layer.name].seen)) for k in range(len(fields))]
        kinds = tuple(field_kind(layer.name, field, found, declared.get(field)) for field, found in zip(fields, seen))
        return LayerSchema(layer.name, _GEOMETRY_TYPE, fields, kinds, count)

    def _fill_layer(self, connection, number, table, schema, srs_id, in_order):
        """Copy one layer's rows from every part into ``table`` in input order; returns its extent.

        Rows already in order (``in_order``) are copied part after part; otherwise they are
        gathered in a temporary table first and copied sorted by their keys.
        """
        if srs_id != self.request.srs_id:
            raise RuntimeError(f"Expected srs_id {self.request.srs_id} for layer {schema.name!r} as the workers "
                               f"encoded it, but the GeoPackage gave {srs_id}")
        values = ", ".join(["g", *(f"f{k}" for k in range(len(schema.fields)))])
        quoted = ", ".join(f'"{_sql_name(name)}"' for name in table_columns(connection, table))
        target = f'INSERT INTO "{_sql_name(table)}" ({quoted}) SELECT {values}'
        if not in_order:
            connection.execute(f"CREATE TEMP TABLE stage (k_part, {', '.join(_KEYS)}, {values})")  # nosec B608
        try:
            for index, part in enumerate(self.parts):
                if not part.layers[schema.name].count:
                    continue
                # attached and detached outside a transaction (SQLite keeps a database in a transaction attached)
                connection.execute("ATTACH DATABASE ':memory:' AS part")
                try:
                    connection.deserialize(self.kept[index].database, name="part")
                    connection.execute(f"{target} FROM part.layer{number} ORDER BY rowid" if in_order else  # nosec B608
                                       f"INSERT INTO temp.stage SELECT {index}, * FROM part.layer{number}")  # nosec B608
                finally:
                    connection.execute("DETACH DATABASE part")
            if not in_order:
                connection.execute("BEGIN")
                connection.execute(f"{target} FROM temp.stage ORDER BY k_pos, k_hole, k_part, k_row")  # nosec B608
                connection.execute("COMMIT")
        finally:
            if not in_order:
                connection.execute("DROP TABLE temp.stage")
        extents = [part.layers[schema.name].extent for part in self.parts if part.layers[schema.name].extent]
        if not extents:
            return None
        corners = np.array(extents, dtype=float)
        return (float(corners[:, 0].min()), float(corners[:, 1].min()), float(corners[:, 2].max()),
                float(corners[:, 3].max()))


_HERE = ".here"
"""Suffix of the marker file that tells a worker it sees the client's output folder (:func:`_shared_folder`)."""


def _geopackage_here(task):
    """Worker side of :meth:`RecordParts.write_geopackage` of parts kept on workers.

    ``task`` is ``(outlines, request, field_kinds, databases, piece)``, each database its
    part's bytes (a numpy uint8 view). Where the marker of ``piece`` exists
    (:func:`_shared_folder`: the worker sees the client's folder), the file is written at
    ``piece`` and the result is empty bytes; elsewhere the result is the file's bytes.
    """
    import tempfile

    outlines, request, field_kinds, databases, piece = task
    parts = RecordParts([replace(part, database=database) for part, database in zip(outlines, databases)], request)
    if _sees(piece):
        parts.write_geopackage(Path(piece), field_kinds, request.frame)
        return b""
    with tempfile.TemporaryDirectory(prefix="polytopo-gpkg-") as folder:
        path = Path(folder) / "evaluation.gpkg"
        parts.write_geopackage(path, field_kinds, request.frame)
        return path.read_bytes()


def _ordered_rows(texts, ends, order):
    """The CSV rows of every part (``texts[k]``, row ``j`` ending at ``ends[k][j]``), concatenated, in ``order``."""
    starts = [np.concatenate(([0], end))[:-1] for end in ends]
    which = np.repeat(np.arange(len(texts)), [len(end) for end in ends])
    start, end = np.concatenate(starts), np.concatenate(ends)
    return "".join(texts[w][s:e] for w, s, e in zip(which[order].tolist(), start[order].tolist(),
                                                     end[order].tolist()))
