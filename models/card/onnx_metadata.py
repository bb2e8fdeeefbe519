"""Read and write the ``metadata_props`` of an ONNX file, list its external data, without the onnx package.

An ONNX file is one protobuf ``ModelProto`` message. Its ``metadata_props``
(field 14) is a repeated ``StringStringEntryProto`` with ``key`` (field 1) and
``value`` (field 2). Protobuf allows the fields of a message in any order and
merges repeated fields, so the card can be read by walking the top-level
fields (skipping the graph by seeking over it) and written by copying every
other field unchanged and appending the new entries. This keeps the runtime
free of the ``onnx`` package (only onnxruntime is a runtime dependency) and
never loads the weights into memory. The same walk, one level deeper, finds the tensors
whose data lives in other files (``external_data`` ``location``) without reading weights.
"""

import os
import stat

from ...core.errors import PolytopoError
from ...core.output_safety import check_file_output, clean_stale_partials, partial_name, write_failure
from ..errors import ModelFileError, OutputError

__all__ = ["external_data_locations", "read_metadata_props", "write_metadata_props"]

_FIELD_GRAPH = 7
_FIELD_METADATA_PROPS = 14
_WIRE_VARINT = 0
_WIRE_FIXED64 = 1
_WIRE_LENGTH_DELIMITED = 2
_WIRE_FIXED32 = 5
_COPY_CHUNK_BYTES = 1 << 22
# Message fields (onnx.proto numbering) on every path from the model to a TensorProto.
_TENSOR_HOLDERS = {
    "model": {7: "graph", 20: "training", 25: "function"},
    "training": {1: "graph", 2: "graph"},
    "function": {7: "node"},
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
}
_TENSOR_NAME = 8
_TENSOR_EXTERNAL_DATA = 13


def _read_varint(stream, path):
    result = 0
    shift = 0
    while True:
        byte = stream.read(1)
        if not byte:
            return None if shift == 0 else _corrupt(path, "a varint is cut off by the end of the file")
        value = byte[0]
        result |= (value & 0x7F) << shift
        if not value & 0x80:
            return result
        shift += 7
        if shift > 63:
            _corrupt(path, "a varint is longer than 10 bytes")


def _corrupt(path, detail):
    raise ModelFileError(
        f"Expected an ONNX model (a protobuf ModelProto) in {path!s} but {detail}; "
        "re-export the model or check that the download is complete."
    )


def _decode_varint(data, pos, path):
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            _corrupt(path, "a metadata entry is cut off")
        value = data[pos]
        pos += 1
        result |= (value & 0x7F) << shift
        if not value & 0x80:
            return result, pos
        shift += 7


def _parse_entry(payload, path, errors="replace"):
    """The (key, value) of a ``StringStringEntryProto``; bytes that are not UTF-8 decoded with ``errors``."""
    key = ""
    value = ""
    pos = 0
    while pos < len(payload):
        tag, pos = _decode_varint(payload, pos, path)
        if tag & 7 != _WIRE_LENGTH_DELIMITED:
            _corrupt(path, "a metadata entry has a non-string field")
        length, pos = _decode_varint(payload, pos, path)
        text = payload[pos:pos + length].decode("utf-8", errors=errors)
        pos += length
        if tag >> 3 == 1:
            key = text
        elif tag >> 3 == 2:
            value = text
    return key, value


def _fields(stream, path, stop=None):
    """Yield (field_number, wire_type, start_offset, end_offset, payload_offset) of each field.

    Reads from the stream's position up to ``stop`` (the end of the file by default).
    """
    size = os.fstat(stream.fileno()).st_size
    stop = size if stop is None else stop
    while stream.tell() < stop:
        start = stream.tell()
        tag = _read_varint(stream, path)
        if tag is None:
            return
        field, wire = tag >> 3, tag & 7
        if field == 0:
            _corrupt(path, f"field number 0 appears at byte {start}")
        if wire == _WIRE_VARINT:
            if _read_varint(stream, path) is None:
                _corrupt(path, "a varint field is cut off")
            payload = stream.tell()
        elif wire == _WIRE_FIXED64:
            payload = stream.tell()
            stream.seek(8, os.SEEK_CUR)
        elif wire == _WIRE_FIXED32:
            payload = stream.tell()
            stream.seek(4, os.SEEK_CUR)
        elif wire == _WIRE_LENGTH_DELIMITED:
            length = _read_varint(stream, path)
            if length is None:
                _corrupt(path, "a length prefix is cut off")
            payload = stream.tell()
            stream.seek(length, os.SEEK_CUR)
        else:
            _corrupt(path, f"wire type {wire} appears at byte {start}")
        end = stream.tell()
        if end > stop:
            _corrupt(path, f"field {field} runs past the end of its message ({end} > {stop} bytes)")
        yield field, wire, start, end, payload


def _open_model(path):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise ModelFileError(
            f"Expected an ONNX model file at {path!s} but it does not exist; check the path."
        ) from None
    except OSError as exc:
        raise ModelFileError(f"Expected a readable ONNX model file at {path!s} but got: {exc}") from exc


def read_metadata_props(path):
    """Return the ``metadata_props`` of an ONNX file as a dict.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file.

    Returns
    -------
    dict of str to str
        Every key and value; a key repeated in the file keeps its last value,
        as protobuf and onnxruntime do.

    Raises
    ------
    ModelFileError
        The file is missing or is not a protobuf ModelProto with a graph.

    Notes
    -----
    Reads only the metadata entries and the field headers: the graph and the
    weights are skipped with seeks, so the cost does not grow with model size.
    """
    props = {}
    saw_graph = False
    with _open_model(path) as stream:
        for field, _wire, _start, end, payload in _fields(stream, path):
            if field == _FIELD_GRAPH:
                saw_graph = True
            elif field == _FIELD_METADATA_PROPS:
                stream.seek(payload)
                key, value = _parse_entry(stream.read(end - payload), path)
                props[key] = value
                stream.seek(end)
    if not saw_graph:
        _corrupt(path, "it has no graph (field 7)")
    return props


def external_data_locations(path):
    """List the tensors of an ONNX file whose data is stored in other files.

    Every tensor is visited: graph initializers, sparse initializers, constants in node
    attributes, subgraphs (``If``, ``Loop``, ``Scan``), functions and training graphs.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file.

    Returns
    -------
    list of (str, str)
        ``(tensor name, location)`` in file order; the location is as written in the file
        (onnxruntime reads it relative to the model's folder), bytes that are not UTF-8
        kept as lone surrogates (``errors="surrogateescape"``), so ``os.fsencode(location)``
        gives back the exact bytes of the file.

    Raises
    ------
    ModelFileError
        The file is missing or is not a protobuf message.

    Notes
    -----
    Weights stored in the file are skipped with seeks, never read.
    """
    found = []
    with _open_model(path) as stream:
        pending = [("model", 0, None)]
        while pending:
            kind, start, stop = pending.pop()
            stream.seek(start)
            name, locations = "", []
            for field, wire, _start, end, payload in _fields(stream, path, stop):
                if wire != _WIRE_LENGTH_DELIMITED:
                    continue
                if kind == "tensor" and field in (_TENSOR_NAME, _TENSOR_EXTERNAL_DATA):
                    stream.seek(payload)
                    data = stream.read(end - payload)
                    if field == _TENSOR_NAME:
                        name = data.decode("utf-8", errors="replace")
                    else:
                        # surrogateescape: the str encodes back (os.fsencode) to the very bytes
                        # onnxruntime will open, so a check on it checks the real path.
                        key, value = _parse_entry(data, path, errors="surrogateescape")
                        if key == "location":
                            locations.append(value)
                    stream.seek(end)
                elif field in _TENSOR_HOLDERS.get(kind, {}):
                    pending.append((_TENSOR_HOLDERS[kind][field], payload, end))
            found.extend((start, name, location) for location in locations)
    return [(name, location) for _start, name, location in sorted(found, key=lambda item: item[0])]


def _encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _encode_string_field(field, text):
    data = text.encode("utf-8")
    return _encode_varint((field << 3) | _WIRE_LENGTH_DELIMITED) + _encode_varint(len(data)) + data


def _encode_entry(key, value):
    payload = _encode_string_field(1, key) + _encode_string_field(2, value)
    return (
        _encode_varint((_FIELD_METADATA_PROPS << 3) | _WIRE_LENGTH_DELIMITED)
        + _encode_varint(len(payload))
        + payload
    )


def write_metadata_props(path, props, out_path=None, *, overwrite=False, inputs=()):
    """Replace the ``metadata_props`` of an ONNX file.

    Parameters
    ----------
    path : str or os.PathLike
        Existing ONNX model file.
    props : dict of str to str
        The complete new set of entries; entries of the file that are not in
        ``props`` are removed.
    out_path : str or os.PathLike, optional
        Where to write the result; defaults to ``path`` (replaced in place).
    overwrite : bool
        Replace an existing ``out_path`` other than ``path``.
    inputs : iterable of str
        Other input files (e.g. the card JSON) that ``out_path`` must not be.

    Raises
    ------
    ModelFileError
        The input is not an ONNX model.
    OutputError
        ``out_path`` exists without ``overwrite``, is one of ``inputs``, or cannot be
        written (read-only folder, full disk: named as such).

    Notes
    -----
    Every other field is copied byte for byte in chunks of 4 MiB, then the new
    entries are appended. The result is written to a temporary file in the
    destination folder and moved into place, so a failure never leaves a
    half-written model; the temporary of a killed run is removed by the next
    write there (:mod:`polytopo.core.output_safety`).
    """
    for key, value in props.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ModelFileError(
                f"Expected string keys and values in metadata_props but got {key!r}: {value!r}; "
                "encode values as JSON strings."
            )
    in_place = out_path is None or os.path.realpath(out_path) == os.path.realpath(path)
    out_path = os.fspath(out_path if out_path is not None else path)
    folder = os.path.dirname(os.path.abspath(out_path))
    try:
        check_file_output(out_path, inputs=list(inputs) + ([] if in_place else [path]), overwrite=overwrite or in_place)
    except PolytopoError as exc:
        raise OutputError(str(exc)) from None
    clean_stale_partials(folder)
    with _open_model(path) as stream:
        fields = list(_fields(stream, path))
        if not any(field == _FIELD_GRAPH for field, *_rest in fields):
            _corrupt(path, "it has no graph (field 7)")
        spans = [(start, end) for field, _wire, start, end, _payload in fields if field != _FIELD_METADATA_PROPS]
        tmp_path = os.path.join(folder, partial_name(os.path.basename(out_path)))
        try:
            with open(tmp_path, "xb") as out:
                for start, end in spans:
                    stream.seek(start)
                    remaining = end - start
                    while remaining:
                        chunk = stream.read(min(remaining, _COPY_CHUNK_BYTES))
                        out.write(chunk)
                        remaining -= len(chunk)
                for key, value in props.items():
                    out.write(_encode_entry(key, value))
            # give the new file the permissions of the file it replaces
            os.chmod(tmp_path, stat.S_IMODE(os.stat(out_path if os.path.exists(out_path) else path).st_mode))
            os.replace(tmp_path, out_path)
        except BaseException as exc:
            if os.path.exists(tmp_path):
                os.unlink(tmp_path)
            if isinstance(exc, OSError) and not isinstance(exc, ModelFileError):
                raise OutputError(str(write_failure(exc, out_path))) from None
            raise
