"""Where each record of a COCO-style JSON file lies, found without parsing the records.

A cluster run whose workers read their own partitions (:mod:`.read_on_workers`) needs,
before anything is parsed, the byte range and the image id of every record of a file
(the ``annotations`` of a ground-truth object, the list of a prediction file), and the
rest of the file (``images``, ``info``): :func:`coco_index` finds them with a few array
passes over the file's bytes. The records themselves are parsed later, each range by
the worker that scores its image, with the code that reads a whole file
(:func:`.io_coco.read_coco_records`).

The index is exact or absent: :func:`coco_index` returns None for any file it cannot
place every record of with certainty (a backslash anywhere, so no string escapes; a
record that is not an object; an ``image_id`` that is missing, repeated or not a
whole number or plain text; anything between records but commas and white space; a
file that is not one JSON object or list). The caller then reads the file whole, as one
process does, which also gives the error a broken file deserves. Syntax inside the
records is checked where they are parsed: a record range that does not parse sends the
run back to the whole-file reading too.
"""

import contextlib
import json
import mmap
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CocoIndex", "coco_index", "record_bytes"]

_OPEN, _CLOSE, _QUOTE = 1, -1, 2
_CODES = np.zeros(256, np.int8)
for _char, _code in ((b"{", _OPEN), (b"[", _OPEN), (b"}", _CLOSE), (b"]", _CLOSE), (b'"', _QUOTE)):
    _CODES[_char[0]] = _code
_IS_CODE = bytes(int(code != 0) for code in _CODES)
"""Translation table: 1 for the bytes of :data:`_CODES`, 0 for every other byte."""
_SCAN_BYTES = 1 << 22
"""Bytes of the file translated at a time by :func:`_special_positions` (bounds the memory it adds)."""
_SPACE = np.zeros(256, bool)
_SPACE[[ord(c) for c in " \t\n\r"]] = True
_KEY = b'"image_id"'
_MAX_DIGITS = 18
_ANNOTATIONS_KEY = b'"annotations"'
_ANNOTATIONS = re.compile(re.escape(_ANNOTATIONS_KEY) + rb"[ \t\n\r]*:[ \t\n\r]*\[")


@dataclass(frozen=True)
class CocoIndex:
    """The records of one COCO-style JSON file and the rest of it.

    Attributes
    ----------
    path : Path
    start, end : numpy.ndarray
        int64, byte range ``[start, end)`` of each record, in file order.
    image_ids : numpy.ndarray or list
        The ``image_id`` of each record: int64 when every one is a whole number, else a
        list of ints and strings.
    skeleton : object
        The file parsed with its records left out: the object with ``"annotations": []``,
        or ``[]`` for a plain list of predictions.
    """

    path: Path
    start: np.ndarray
    end: np.ndarray
    image_ids: object
    skeleton: object

    def __len__(self):
        return len(self.start)


@contextlib.contextmanager
def _mapped(path):
    """The bytes of the file ``path`` (not empty) mapped read-only for the block.

    The mapping is closed at the block's end unless an array still views it: a frame
    of the block's code that outlives its return (a sampling profiler's reference, as a
    Dask worker's, or a traceback passing through) keeps its arrays; the mapping then
    goes with the last of them, and never fails the block (``BufferError``).
    """
    with open(path, "rb") as handle:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        yield data
    finally:
        with contextlib.suppress(BufferError):
            data.close()


def record_bytes(path, start, end):
    """The records at byte ranges ``[start, end)`` of ``path`` as the bytes of one JSON list."""
    with _mapped(path) as data:
        return b"[" + b",".join(data[lo:hi] for lo, hi in zip(start.tolist(), end.tolist())) + b"]"


def coco_index(path):
    """The :class:`CocoIndex` of a COCO-style JSON file, or None where it cannot be made with certainty.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    CocoIndex or None
        None: read the file whole instead (see the module).
    """
    path = Path(path)
    try:
        if path.stat().st_size == 0:
            return None
        with _mapped(path) as data:
            return _indexed(path, data)
    except OSError:
        return None


def _special_positions(data):
    """Positions of the bytes ``{ [ } ] "`` in ``data``, ascending (int64).

    The bytes are translated to 0/1 a few MiB at a time and the ones found as booleans,
    which NumPy scans several times faster than a table lookup's int8 result.
    """
    found = [np.flatnonzero(np.frombuffer(data[at:at + _SCAN_BYTES].translate(_IS_CODE), np.bool_)) + at
             for at in range(0, len(data), _SCAN_BYTES)]
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _indexed(path, data):
    raw = np.frombuffer(data, np.uint8)
    if data.find(b"\\") != -1:
        return None
    found = _special_positions(data)
    codes = _CODES[raw[found]]
    quote = codes == _QUOTE
    outside = (np.cumsum(quote) - quote) % 2 == 0  # an even number of quotes before: not in a string
    opening = found[quote][0::2]  # with no escapes, every other quote opens a string
    bracket = outside & ~quote
    where, step = found[bracket], codes[bracket].astype(np.int64)
    if not len(where):
        return None
    depth = np.cumsum(step)  # depth after each bracket
    if depth[-1] != 0 or depth.min() < 0 or np.count_nonzero(depth == 0) != 1:  # one top-level value
        return None
    if not (_SPACE[raw[:where[0]]].all() and _SPACE[raw[where[-1] + 1:]].all()):  # nothing but the one value
        return None
    if raw[where[0]] == ord("["):
        array = 0
    elif raw[where[0]] == ord("{"):
        array = _annotations_array(data, where, depth, opening)
        if array is None:
            return None
    else:
        return None
    array_depth = depth[array]  # inside the list: its records open at this depth
    closing = array + 1 + int(np.argmax(depth[array + 1:] == array_depth - 1))
    inner = slice(array + 1, closing)
    opens = np.flatnonzero((step[inner] == _OPEN) & (depth[inner] == array_depth + 1)) + array + 1
    closes = np.flatnonzero((step[inner] == _CLOSE) & (depth[inner] == array_depth)) + array + 1
    if not len(opens) or len(opens) != len(closes) or np.any(raw[where[opens]] != ord("{")):
        return None
    start, end = where[opens].astype(np.int64), where[closes].astype(np.int64) + 1
    if not _only_commas_between(raw, where[array] + 1, start, end, where[closing]):
        return None
    image_ids = _record_image_ids(data, raw, opening, where, depth, start, end, array_depth + 1)
    if image_ids is None:
        return None
    skeleton_bytes = bytes(data[:where[array] + 1]) + bytes(data[where[closing]:])
    try:
        skeleton = json.loads(skeleton_bytes.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return CocoIndex(path, start, end, image_ids, skeleton)


def _annotations_array(data, where, depth, opening):
    """Position in ``where`` of the ``[`` of the top-level object's ``annotations`` list, or None.

    ``opening``: the positions of the quotes that open a string (sorted).
    """
    hits = []
    key = data.find(_ANNOTATIONS_KEY)
    while key != -1:
        match = _ANNOTATIONS.match(data, key)
        key = data.find(_ANNOTATIONS_KEY, key + 1)
        if match is None:
            continue
        at = int(np.searchsorted(opening, match.start()))
        if at < len(opening) and opening[at] == match.start():  # the key's quote opens a string: not inside one
            bracket = int(np.searchsorted(where, match.end() - 1))
            if depth[bracket] == 2:  # the list opens inside the top-level object
                hits.append(bracket)
    return hits[0] if len(hits) == 1 else None


def _only_commas_between(raw, after_open, start, end, close):
    """Whether the bytes between the list's records are one comma each (and white space), and none before or after."""
    gap_start = np.concatenate([[after_open], end])
    gap_end = np.concatenate([start, [close]])
    lengths = gap_end - gap_start
    if np.any(lengths < 0):
        return False
    offsets = np.repeat(gap_start - (np.cumsum(lengths) - lengths), lengths) + np.arange(lengths.sum())
    gaps = raw[offsets]
    owner = np.repeat(np.arange(len(lengths)), lengths)
    commas = np.bincount(owner[gaps == ord(",")], minlength=len(lengths))
    other = np.bincount(owner[~_SPACE[gaps] & (gaps != ord(","))], minlength=len(lengths))
    wanted = np.ones(len(lengths), np.int64)
    wanted[[0, -1]] = 0
    return not other.any() and np.array_equal(commas, wanted)


def _record_image_ids(data, raw, opening, where, depth, start, end, record_depth):
    """The ``image_id`` of each record (array or list), or None when one is missing, repeated or of another kind."""
    key = np.frombuffer(_KEY, np.uint8)
    candidate = opening[opening + len(key) <= len(raw)]
    candidate = candidate[raw[candidate + 1] == key[1]]
    candidate = candidate[(raw[candidate[:, None] + np.arange(len(key))] == key).all(axis=1)]
    level = depth[np.searchsorted(where, candidate) - 1]  # depth after the last bracket before the key
    record = np.searchsorted(start, candidate, side="right") - 1
    inside = (record >= 0) & (candidate < end[np.maximum(record, 0)])
    own = inside & (level == record_depth)
    keys, record = candidate[own], record[own]
    if len(keys) != len(start) or np.any(np.bincount(record, minlength=len(start)) != 1):
        return None
    colon = _past_space(raw, keys + len(key))
    if np.any(raw[colon] != ord(":")):
        return None
    return _values_at(data, raw, _past_space(raw, colon + 1))


def _past_space(raw, at):
    """Each position of ``at`` moved past white space (to the first other byte, or the last byte)."""
    at = at.copy()
    while True:
        space = _SPACE[raw[at]] & (at < len(raw) - 1)
        if not space.any():
            return at
        at += space


def _values_at(data, raw, value):
    """The JSON value at each position of ``value``: a whole number or plain text; None when one is neither."""
    first = raw[value]
    text = first == ord('"')
    sign = np.where(first == ord("-"), -1, 1)
    digits_at = value + (first == ord("-"))
    number, length = np.zeros(len(value), np.int64), np.zeros(len(value), np.int64)
    active = ~text
    for k in range(_MAX_DIGITS + 1):
        byte = raw[np.minimum(digits_at + k, len(raw) - 1)]
        digit = active & (byte >= ord("0")) & (byte <= ord("9")) & (digits_at + k < len(raw))
        if not digit.any():
            break
        if k == _MAX_DIGITS:  # beyond what int64 holds for sure
            return None
        number = np.where(digit, number * 10 + (byte.astype(np.int64) - ord("0")), number)
        length += digit
        active = digit
    after = raw[np.minimum(digits_at + length, len(raw) - 1)]
    if np.any(~text & ((length == 0) | np.isin(after, np.frombuffer(b".eE", np.uint8)))):
        return None
    number *= sign
    if not text.any():
        return number
    ids = number.tolist()
    for k in np.flatnonzero(text).tolist():
        begin = int(value[k]) + 1
        ids[k] = data[begin:data.find(b'"', begin)].decode("utf-8")
    return ids
