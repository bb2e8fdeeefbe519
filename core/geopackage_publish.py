"""Publish a finished GeoPackage into an existing one: PolyTopo's layers in, every other layer kept.

A GeoPackage is a container that users fill with their own layers; replacing the whole
file to write PolyTopo's outputs would delete them. So when the target of a GeoPackage
output already exists, the finished temporary file is not moved over it: its layers are
copied **into** it, in one SQLite transaction (all of them or none, whatever happens to
the process), with their rows, indexes, spatial index, triggers, styles (``layer_styles``)
and metadata (``gpkg_metadata``). A layer of the target with the name of one of the new
layers is replaced only when PolyTopo wrote it; a user's layer of that name stops the run
before anything is written (:func:`check_layer_names`), and again at the copy, in case it
appeared meanwhile.

Every layer PolyTopo writes carries a marker: a ``gpkg_metadata`` entry of the GeoPackage
metadata extension with the standard URI :data:`PRODUCER_URI`, referenced by the layer
(:func:`mark_layers`). GDAL and QGIS ignore metadata of a standard they do not know.

The copy uses Python's ``sqlite3`` (SQLite locks the file, so QGIS may keep it open; a
writer holding it longer than :data:`LOCK_TIMEOUT_S` is reported). Spatial reference ids
are mapped: a CRS the target already has under the same id is shared, one it lacks is
added, and one whose id the target uses for another CRS gets a free id (and the geometry
blobs the new id in their header).

The SQL built with f-strings (marked ``# nosec B608``) interpolates only table and column
names, fixed ones or names read from the files' own ``sqlite_master`` and quoted as
identifiers (:func:`_quote`); every value is bound as a parameter.
"""

import contextlib
import json
import os
import sqlite3
import struct
import time
from pathlib import Path

from .output_safety import OutputExistsError, write_failure

__all__ = ["LOCK_TIMEOUT_S", "PRODUCER_URI", "check_layer_names", "is_geopackage", "layer_owners", "mark_layers",
           "merge_into", "publish_file"]

PRODUCER_URI = "urn:polytopo:producer"
"""``md_standard_uri`` of the metadata entry that marks a layer as written by PolyTopo."""
LOCK_TIMEOUT_S = 30.0
"""Seconds to wait for another program's write lock on the target GeoPackage."""
_SIGNATURE = b"SQLite format 3\x00"
_GPKG_APPLICATION_ID = 0x47504B47  # "GPKG"
_STYLES = "layer_styles"
_METADATA_EXTENSION = ("gpkg_metadata", "gpkg_metadata_reference")
_METADATA_DEFINITION = "http://www.geopackage.org/spec120/#extension_metadata"
_FEATURE_COUNT_TABLE = "gpkg_ogr_contents"


def is_geopackage(path):
    """True when ``path`` is an existing SQLite file with the GeoPackage application id."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(72)
    except OSError:
        return False
    return (len(header) == 72 and header[:16] == _SIGNATURE
            and struct.unpack(">I", header[68:72])[0] == _GPKG_APPLICATION_ID)


def publish_file(temporary, target):
    """Put the finished file ``temporary`` in place as ``target``.

    A GeoPackage is marked as PolyTopo's (:func:`mark_layers`); when ``target`` is an
    existing GeoPackage, the layers are copied into it (:func:`merge_into`) and
    ``temporary`` is removed, else ``temporary`` is renamed to ``target``.

    Raises
    ------
    OutputExistsError
        ``target`` has a user's layer named like a new one; ``target`` is unchanged.
    OutputWriteError
        SQLite could not write (full disk named as such, lock timeout); ``target`` is unchanged.
    """
    try:
        if Path(target).suffix.lower() == ".gpkg" and is_geopackage(temporary):
            mark_layers(temporary)
            if is_geopackage(target):
                merge_into(temporary, target)
                os.remove(temporary)
                return
    except sqlite3.Error as exc:
        raise write_failure(exc, Path(target)) from exc
    os.replace(temporary, target)


def _connect(path):
    connection = sqlite3.connect(str(path), timeout=LOCK_TIMEOUT_S, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = OFF")
    return connection


@contextlib.contextmanager
def _transaction(path, attach=None):
    """A connection to ``path`` inside one write transaction (``src``: the ``attach`` database), committed at the end.

    Any error (or interrupt) rolls every change back before it propagates.
    """
    connection = _connect(path)
    try:
        if attach is not None:
            connection.execute("ATTACH DATABASE ? AS src", (str(attach),))
        connection.execute("BEGIN IMMEDIATE")
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


def _quote(name):
    return '"' + str(name).replace('"', '""') + '"'


def _has_table(connection, table, schema="main"):
    return connection.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?",  # nosec B608
                              (table,)).fetchone() is not None


def _layers(connection, schema="main"):
    return [row[0] for row in connection.execute(f"SELECT table_name FROM {schema}.gpkg_contents ORDER BY table_name")  # nosec B608
            if row[0] != _STYLES]


def _marked(connection, schema="main"):
    if not _has_table(connection, "gpkg_metadata_reference", schema):
        return set()
    rows = connection.execute(
        f"SELECT r.table_name FROM {schema}.gpkg_metadata_reference r JOIN {schema}.gpkg_metadata m "  # nosec B608
        f"ON m.id = r.md_file_id WHERE m.md_standard_uri = ?", (PRODUCER_URI,))
    return {row[0] for row in rows}


def layer_owners(path):
    """Map every layer (``gpkg_contents`` table) of the GeoPackage at ``path`` to True when PolyTopo wrote it.

    ``layer_styles`` is no layer of its own and is left out.
    """
    connection = _connect(path)
    try:
        marked = _marked(connection)
        return {name: name in marked for name in _layers(connection)}
    finally:
        connection.close()


def check_layer_names(path, names):
    """Refuse to write layers ``names`` into the existing GeoPackage ``path`` where one is a user's layer.

    Nothing is checked when ``path`` does not exist or is no GeoPackage (the file rules
    of :mod:`.output_safety` apply then).

    Raises
    ------
    OutputExistsError
        ``path`` has a layer of one of these names that PolyTopo did not write.
    """
    if not is_geopackage(path):
        return
    _refuse_foreign(path, layer_owners(path), names)


def _refuse_foreign(path, owners, names):
    # SQLite table names ignore case: "Polygons" would replace "polygons".
    lowered = {name.lower(): mine for name, mine in owners.items()}
    foreign = sorted(name for name in names if lowered.get(name.lower()) is False)
    if foreign:
        raise OutputExistsError(
            f"Expected to write the layer(s) {foreign} into {path}, but that GeoPackage already has a layer of that "
            "name that PolyTopo did not write; it is never replaced. Choose another output file (PolyTopo adds its "
            "layers to a GeoPackage and keeps every other layer), or rename your layer"
        )


def mark_layers(path):
    """Mark every layer of the (PolyTopo-written) GeoPackage ``path`` as PolyTopo's.

    Adds one ``gpkg_metadata`` entry (:data:`PRODUCER_URI`, JSON ``{"producer":
    "PolyTopo", "layer": NAME}``) per layer, registering the metadata extension if the
    file lacks it.
    """
    with _transaction(path) as connection:
        _ensure_metadata_tables(connection)
        marked = _marked(connection)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        for name in _layers(connection):
            if name in marked:
                continue
            cursor = connection.execute(
                "INSERT INTO gpkg_metadata (md_scope, md_standard_uri, mime_type, metadata) "
                "VALUES ('dataset', ?, 'application/json', ?)",
                (PRODUCER_URI, json.dumps({"producer": "PolyTopo", "layer": name})))
            connection.execute(
                "INSERT INTO gpkg_metadata_reference (reference_scope, table_name, timestamp, md_file_id) "
                "VALUES ('table', ?, ?, ?)", (name, stamp, cursor.lastrowid))


_METADATA_SQL = {
    "gpkg_metadata": (
        "CREATE TABLE gpkg_metadata (id INTEGER CONSTRAINT m_pk PRIMARY KEY ASC NOT NULL, "
        "md_scope TEXT NOT NULL DEFAULT 'dataset', md_standard_uri TEXT NOT NULL, "
        "mime_type TEXT NOT NULL DEFAULT 'text/xml', metadata TEXT NOT NULL DEFAULT '')"),
    "gpkg_metadata_reference": (
        "CREATE TABLE gpkg_metadata_reference (reference_scope TEXT NOT NULL, table_name TEXT, column_name TEXT, "
        "row_id_value INTEGER, timestamp DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), "
        "md_file_id INTEGER NOT NULL, md_parent_id INTEGER, "
        "CONSTRAINT crmr_mfi_fk FOREIGN KEY (md_file_id) REFERENCES gpkg_metadata(id), "
        "CONSTRAINT crmr_mpi_fk FOREIGN KEY (md_parent_id) REFERENCES gpkg_metadata(id))"),
}
_EXTENSIONS_SQL = (
    "CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL, "
    "definition TEXT NOT NULL, scope TEXT NOT NULL, "
    "CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name))")


def _ensure_metadata_tables(connection):
    """Create the metadata extension's tables (GeoPackage 1.2 definitions) where the file lacks them."""
    if not _has_table(connection, "gpkg_extensions"):
        connection.execute(_EXTENSIONS_SQL)
    for table in _METADATA_EXTENSION:
        if not _has_table(connection, table):
            connection.execute(_METADATA_SQL[table])
        connection.execute(
            "INSERT OR IGNORE INTO gpkg_extensions (table_name, column_name, extension_name, definition, scope) "
            "VALUES (?, NULL, 'gpkg_metadata', ?, 'read-write')", (table, _METADATA_DEFINITION))


def merge_into(source, target):
    """Copy every layer of the finished GeoPackage ``source`` into the existing GeoPackage ``target``.

    One SQLite transaction: the target has all the new layers or none of them. Layers
    of ``target`` named like a new one are replaced when PolyTopo wrote them; every
    other layer, table, style and metadata entry of ``target`` is kept as it is.

    Parameters
    ----------
    source : str or Path
        A complete GeoPackage written by PolyTopo (its layers marked, :func:`mark_layers`).
    target : str or Path
        The user's GeoPackage.

    Raises
    ------
    OutputExistsError
        ``target`` has a layer named like a new one that PolyTopo did not write.
    sqlite3.Error
        SQLite could not write (a full disk, a lock held longer than :data:`LOCK_TIMEOUT_S`);
        the target is unchanged.
    """
    with _transaction(target, attach=source) as connection:
        names = _layers(connection, "src")
        owners = {name: name in _marked(connection) for name in _layers(connection)}
        _refuse_foreign(Path(target), owners, names)
        existing = {name.lower(): name for name in owners}
        for name in names:
            if name.lower() in existing:
                _drop_layer(connection, existing[name.lower()])
        for name in names:
            _copy_layer(connection, name)
        _copy_styles(connection, names)
        _copy_metadata(connection, names)


def _rtree_tables(connection, name, schema):
    rows = connection.execute(
        f"SELECT column_name FROM {schema}.gpkg_extensions WHERE table_name = ? AND extension_name = 'gpkg_rtree_index'",  # nosec B608
        (name,)) if _has_table(connection, "gpkg_extensions", schema) else []
    return [f"rtree_{name}_{column}" for (column,) in rows]


def _drop_layer(connection, name):
    for rtree in _rtree_tables(connection, name, "main"):
        connection.execute(f"DROP TABLE IF EXISTS main.{_quote(rtree)}")
    connection.execute(f"DROP TABLE IF EXISTS main.{_quote(name)}")  # its triggers and indexes go with it
    for table in ("gpkg_contents", "gpkg_geometry_columns", "gpkg_extensions", _FEATURE_COUNT_TABLE,
                  "gpkg_data_columns"):
        if _has_table(connection, table):
            connection.execute(f"DELETE FROM main.{table} WHERE lower(table_name) = lower(?)", (name,))  # nosec B608


def _schema_sql(connection, kind, table):
    return [sql for (sql,) in connection.execute(
        "SELECT sql FROM src.sqlite_master WHERE type = ? AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
        (kind, table))]


def _copy_layer(connection, name):
    """Copy table ``name``, its registration, its spatial index and its triggers from ``src`` into ``main``."""
    srs_map = _map_srs(connection, name)
    connection.execute(_schema_sql(connection, "table", name)[0])
    columns = [row[1] for row in connection.execute(f"PRAGMA src.table_info({_quote(name)})")]
    geometry = {column for (column,) in connection.execute(
        "SELECT column_name FROM src.gpkg_geometry_columns WHERE table_name = ?", (name,))} \
        if _has_table(connection, "gpkg_geometry_columns", "src") else set()
    selected = ", ".join(f"polytopo_srs({_quote(c)})" if c in geometry and srs_map else _quote(c) for c in columns)
    if srs_map:
        (new_id,) = srs_map.values()
        connection.create_function("polytopo_srs", 1, lambda blob: _with_srs_id(blob, new_id), deterministic=True)
    quoted = ", ".join(_quote(c) for c in columns)
    connection.execute(f"INSERT INTO main.{_quote(name)} ({quoted}) SELECT {selected} FROM src.{_quote(name)}")  # nosec B608
    for sql in _schema_sql(connection, "index", name):
        connection.execute(sql)
    _copy_rows(connection, "gpkg_contents", name, srs_map)
    _copy_rows(connection, "gpkg_geometry_columns", name, srs_map)
    if _has_table(connection, "gpkg_extensions", "src"):
        if not _has_table(connection, "gpkg_extensions"):
            connection.execute(_EXTENSIONS_SQL)
        _copy_rows(connection, "gpkg_extensions", name)
    for rtree in _rtree_tables(connection, name, "src"):
        connection.execute(_schema_sql(connection, "table", rtree)[0])
        connection.execute(f"INSERT INTO main.{_quote(rtree)} SELECT * FROM src.{_quote(rtree)}")  # nosec B608
    counts = _has_table(connection, _FEATURE_COUNT_TABLE) and _has_table(connection, _FEATURE_COUNT_TABLE, "src")
    if counts:
        _copy_rows(connection, _FEATURE_COUNT_TABLE, name)
    for sql in _schema_sql(connection, "trigger", name):
        if counts or _FEATURE_COUNT_TABLE not in sql:
            connection.execute(sql)


def _copy_rows(connection, table, name, srs_map=None):
    if not _has_table(connection, table, "src"):
        return
    columns = [row[1] for row in connection.execute(f"PRAGMA src.table_info({table})")]
    rows = connection.execute(f"SELECT * FROM src.{table} WHERE table_name = ?", (name,)).fetchall()  # nosec B608
    if srs_map and "srs_id" in columns:
        where = columns.index("srs_id")
        rows = [tuple(srs_map.get(v, v) if i == where else v for i, v in enumerate(row)) for row in rows]
    marks = ", ".join("?" * len(columns))
    connection.executemany(f"INSERT INTO main.{table} ({', '.join(columns)}) VALUES ({marks})", rows)  # nosec B608


def _map_srs(connection, name):
    """The spatial reference of layer ``name`` in ``main``: ``{}`` when shared as it is, else ``{old id: new id}``."""
    row = connection.execute("SELECT srs_id FROM src.gpkg_contents WHERE table_name = ?", (name,)).fetchone()
    if row is None or row[0] is None:
        return {}
    srs_id = row[0]
    source = connection.execute("SELECT * FROM src.gpkg_spatial_ref_sys WHERE srs_id = ?", (srs_id,)).fetchone()
    if source is None:
        return {}
    columns = [r[1] for r in connection.execute("PRAGMA src.table_info(gpkg_spatial_ref_sys)")]
    target_columns = [r[1] for r in connection.execute("PRAGMA main.table_info(gpkg_spatial_ref_sys)")]
    shared = [c for c in columns if c in target_columns]
    values = dict(zip(columns, source))
    existing = connection.execute(
        "SELECT organization, organization_coordsys_id, definition FROM main.gpkg_spatial_ref_sys WHERE srs_id = ?",
        (srs_id,)).fetchone()
    if existing is not None:
        same = (str(existing[0]).lower(), existing[1]) == (str(values["organization"]).lower(),
                                                            values["organization_coordsys_id"])
        if same and (str(values["organization"]).upper() != "NONE" or existing[2] == values["definition"]):
            return {}
        new_id = max(100000, connection.execute("SELECT max(srs_id) FROM main.gpkg_spatial_ref_sys").fetchone()[0] + 1)
    else:
        new_id = srs_id
    values["srs_id"] = new_id
    if "srs_name" in values and existing is not None:
        values["srs_name"] = f"{values['srs_name']} ({new_id})"
    marks = ", ".join("?" * len(shared))
    connection.execute(f"INSERT INTO main.gpkg_spatial_ref_sys ({', '.join(shared)}) VALUES ({marks})",  # nosec B608
                       [values[c] for c in shared])
    return {} if new_id == srs_id else {srs_id: new_id}


def _with_srs_id(blob, srs_id):
    """The GeoPackage geometry ``blob`` with ``srs_id`` in its header (bytes 4-7, byte order of flag bit 0)."""
    if blob is None or len(blob) < 8 or blob[:2] != b"GP":
        return blob
    order = "<" if blob[3] & 0x01 else ">"
    return blob[:4] + struct.pack(order + "i", srs_id) + blob[8:]


def _copy_styles(connection, names):
    """Replace the ``layer_styles`` rows of the new layers; keep every other row of the target."""
    if not _has_table(connection, _STYLES, "src"):
        return
    if not _has_table(connection, _STYLES):
        connection.execute(_schema_sql(connection, "table", _STYLES)[0])
        _copy_rows(connection, "gpkg_contents", _STYLES)
        counts = _has_table(connection, _FEATURE_COUNT_TABLE)
        if counts:
            connection.execute(f"INSERT OR IGNORE INTO main.{_FEATURE_COUNT_TABLE} (table_name, feature_count) "
                               f"VALUES ('{_STYLES}', 0)")
        for sql in _schema_sql(connection, "trigger", _STYLES):
            if counts or _FEATURE_COUNT_TABLE not in sql:
                connection.execute(sql)
    columns = [row[1] for row in connection.execute(f"PRAGMA src.table_info({_STYLES})") if row[1] != "id"]
    marks = ", ".join("?" * len(names))
    connection.execute(f"DELETE FROM main.{_STYLES} WHERE f_table_name IN ({marks})", names)  # nosec B608
    quoted = ", ".join(_quote(c) for c in columns)
    connection.execute(f"INSERT INTO main.{_STYLES} ({quoted}) SELECT {quoted} FROM src.{_STYLES} "  # nosec B608
                       f"WHERE f_table_name IN ({marks}) ORDER BY id", names)


def _copy_metadata(connection, names):
    """Replace the metadata of the new layers (the PolyTopo marker included); keep every other entry."""
    if not _has_table(connection, "gpkg_metadata_reference", "src"):
        return
    _ensure_metadata_tables(connection)
    marks = ", ".join("?" * len(names))
    old = [row[0] for row in connection.execute(
        f"SELECT md_file_id FROM main.gpkg_metadata_reference WHERE table_name IN ({marks})", names)]  # nosec B608
    connection.execute(f"DELETE FROM main.gpkg_metadata_reference WHERE table_name IN ({marks})", names)  # nosec B608
    for md_id in set(old):
        still = connection.execute("SELECT 1 FROM main.gpkg_metadata_reference WHERE md_file_id = ? OR md_parent_id = ?",
                                   (md_id, md_id)).fetchone()
        if still is None:
            connection.execute("DELETE FROM main.gpkg_metadata WHERE id = ?", (md_id,))
    references = connection.execute(
        "SELECT reference_scope, table_name, column_name, row_id_value, timestamp, md_file_id "  # nosec B608
        f"FROM src.gpkg_metadata_reference WHERE table_name IN ({marks}) ORDER BY rowid", names).fetchall()
    new_ids = {}
    for *reference, md_id in references:
        if md_id not in new_ids:
            entry = connection.execute("SELECT md_scope, md_standard_uri, mime_type, metadata FROM src.gpkg_metadata "
                                       "WHERE id = ?", (md_id,)).fetchone()
            new_ids[md_id] = connection.execute(
                "INSERT INTO main.gpkg_metadata (md_scope, md_standard_uri, mime_type, metadata) VALUES (?, ?, ?, ?)",
                entry).lastrowid
        connection.execute(
            "INSERT INTO main.gpkg_metadata_reference (reference_scope, table_name, column_name, row_id_value, "
            "timestamp, md_file_id) VALUES (?, ?, ?, ?, ?, ?)", (*reference, new_ids[md_id]))
