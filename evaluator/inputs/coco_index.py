"""Where each record of a COCO-style JSON file lies, found without parsing the records.

A cluster run whose workers read their own partitions (:mod:`.read_on_workers`) needs,
before anything is parsed, the byte range and the image id of every record of a file
(the ``annotations`` of a ground-truth object, the list of a prediction file), and the
rest of the file (``images``, ``info``): :func:`coco_indexes` finds them with a few array
passes over the file's bytes. The records themselves are parsed later, each range by
the worker that scores its image, with the code that reads a whole file
(:func:`.io_coco.read_coco_records`).

The passes split each file into chunks of bytes that can run side by side on a
cluster's workers, in two rounds (``mapped``, see :func:`coco_indexes`):

1. :func:`chunk_counts` counts what a chunk holds without knowing what comes before it:
   its quotes, and its brackets' net depth and lowest depth both where the chunk starts
   outside a string and where it starts inside one;
2. from those counts the client knows, for each chunk, whether it starts inside a string
   and at what depth (:func:`chunk_entries`), and :func:`chunk_marks` then finds in each
   chunk the brackets that open and close records, the ``annotations`` key of a
   ground-truth object and the ``image_id`` keys at the records' depth.

The client joins the marks of a file (:func:`joined_index`): the records inside the one
annotations list, their image ids, and the rest of the file parsed. One chunk in one
process (:func:`coco_index`) gives the same index as any number of chunks.

The index is exact or absent: it is None for any file it cannot place every record of
with certainty (a backslash anywhere, so no string escapes; a record that is not an
object; an ``image_id`` that is missing, repeated or not a whole number or plain text;
anything between records but commas and white space; a file that is not one JSON object
or list). The caller then reads the file whole, as one process does, which also gives
the error a broken file deserves. Syntax inside the records is checked where they are
parsed: a record range that does not parse sends the run back to the whole-file reading
too.
"""

import contextlib
import json
import math
import mmap
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["INDEX_CHUNK_BYTES", "CocoIndex", "ChunkCounts", "ChunkMarks", "coco_index", "coco_indexes",
           "chunk_plan", "chunks_for", "chunk_counts", "chunk_entries", "chunk_marks", "joined_index", "record_bytes"]

INDEX_CHUNK_BYTES = 1 << 22
"""Fewest bytes of a file a chunk of the index holds where a file is split for several workers (4 MiB).

A chunk costs a worker about 10 ms a MiB over both rounds and the scheduler a few
milliseconds a task: smaller chunks would cost the cluster more than they save."""



def chunks_for(size, slots):
    """Chunks a file of ``size`` bytes is indexed in on ``slots`` worker threads.

    One a thread, each of at least :data:`INDEX_CHUNK_BYTES`, at least one.

    Examples
    --------
    >>> chunks_for(38_000_000, 64), chunks_for(38_000_000, 2), chunks_for(10, 64)
    (10, 2, 1)
    """
    return max(1, min(int(slots), math.ceil(size / INDEX_CHUNK_BYTES)))


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
_EDGE_BYTES = 1 << 16
"""Bytes looked at a time for the first and the last byte of a file that is not white space."""


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


@dataclass(frozen=True)
class ChunkCounts:
    """What a chunk of a file holds, whatever comes before it (round 1 of the index).

    Attributes
    ----------
    escaped : bool
        A backslash in the chunk (the index then gives up).
    quotes : int
        Quote bytes in the chunk.
    net, low, at_low : tuple
        Each a pair, for a chunk that starts outside a string and for one that starts
        inside: the depth change over the chunk's brackets outside strings, the lowest
        depth after one of them relative to the chunk's start (None when it has none)
        and how many of them reach that depth.
    """

    escaped: bool
    quotes: int
    net: tuple
    low: tuple
    at_low: tuple


@dataclass(frozen=True)
class ChunkMarks:
    """Byte positions found in a chunk whose start is known (round 2 of the index), int64 arrays.

    Attributes
    ----------
    opens, closes : numpy.ndarray
        Brackets outside strings that open a value at the records' depth, and those that
        close one back to the depth of their list.
    lists_closed : numpy.ndarray
        Brackets outside strings that close a list or object at the depth of the records' list.
    annotations : numpy.ndarray
        The ``[`` after each ``"annotations":`` key of the top-level object (ground truth).
    keys : numpy.ndarray
        Opening quotes of the ``"image_id"`` keys at the records' depth.
    """

    opens: np.ndarray
    closes: np.ndarray
    lists_closed: np.ndarray
    annotations: np.ndarray
    keys: np.ndarray


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


def coco_index(path, n_chunks=1):
    """The :class:`CocoIndex` of a COCO-style JSON file, made in this process, or None (see the module).

    ``n_chunks``: chunks the file is split into (the index is the same for any number).
    """
    return coco_indexes([path], lambda size: n_chunks)[0]


def coco_indexes(paths, chunks_of, submit=None, gather=None):
    """The :class:`CocoIndex` of each file (None where it cannot be made with certainty), chunks side by side.

    Parameters
    ----------
    paths : list of str or Path
    chunks_of : callable
        Chunks a file of so many bytes is split into.
    submit, gather : callable, optional
        ``submit(func, *args)`` starts ``func(*args)`` and returns a handle of its result
        (its arguments may hold handles); ``gather(handles)`` waits for a list of them
        and returns their results (on a cluster: ``Client.submit`` and ``Client.gather``:
        the marks then go from worker to worker). By default each call runs here.

    The chunks' counts of every file come back in one round, their marks in a second one,
    and each file's marks are joined where its join runs (a worker on a cluster).
    """
    submit = submit or (lambda func, *args: func(*args))
    gather = gather or list
    paths = [Path(path) for path in paths]
    plans = [chunk_plan(path, chunks_of) for path in paths]
    counted = iter(gather([submit(chunk_counts, path, lo, hi) for path, plan in zip(paths, plans) if plan
                           for lo, hi in plan[1]]))
    entries = [plan and chunk_entries([next(counted) for _ in plan[1]]) for plan in plans]
    placed = [k for k, found in enumerate(entries) if found]
    joined = gather([submit(joined_index, paths[k], [submit(chunk_marks, paths[k], lo, hi, *entry, plans[k][0])
                                                     for (lo, hi), entry in zip(plans[k][1], entries[k])])
                     for k in placed])
    indexes = [None] * len(paths)
    for k, index in zip(placed, joined):
        indexes[k] = index
    return indexes


def chunk_plan(path, chunks_of):
    """``(record_depth, [(lo, hi), ...])``: the depth inside a record and the chunks of a file; None: no index.

    ``chunks_of(bytes)``: chunks wanted (at most one a byte).

    The records open at depth 2 in a top-level list and at depth 3 in a top-level object
    (inside its ``annotations`` list); anything else is no COCO file the index can place.
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return None
        with _mapped(path) as data:
            top = data[_first_other(data)]
    except (OSError, IndexError):
        return None
    if top not in b"{[":
        return None
    n = max(1, min(int(chunks_of(size)), size))
    bounds = [size * k // n for k in range(n + 1)]
    return (2 if top == ord("[") else 3), list(zip(bounds[:-1], bounds[1:]))


def _first_other(data, last=False):
    """Position of the first (``last``: the last) byte of ``data`` that is not white space; IndexError if none."""
    size = len(data)
    for at in range(0, size, _EDGE_BYTES):
        lo, hi = (size - at - _EDGE_BYTES, size - at) if last else (at, at + _EDGE_BYTES)
        lo = max(lo, 0)
        found = np.flatnonzero(~_SPACE[np.frombuffer(data[lo:min(hi, size)], np.uint8)])
        if found.size:
            return lo + int(found[-1] if last else found[0])
    raise IndexError("only white space")


def _special_positions(data, lo, hi):
    """Positions of the bytes ``{ [ } ] "`` in ``data[lo:hi]``, ascending (int64, positions in ``data``).

    The bytes are translated to 0/1 a few MiB at a time and the ones found as booleans,
    which NumPy scans several times faster than a table lookup's int8 result.
    """
    found = [np.flatnonzero(np.frombuffer(data[at:min(at + _SCAN_BYTES, hi)].translate(_IS_CODE), np.bool_)) + at
             for at in range(lo, hi, _SCAN_BYTES)]
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _specials(data, lo, hi):
    """The special bytes of ``data[lo:hi]``: their positions, codes, which are quotes, which follow an even number.

    The last: each byte's quotes before it in the chunk, counted, is even (with no
    escapes, the byte is outside a string where the chunk starts outside one).
    """
    found = _special_positions(data, lo, hi)
    codes = _CODES[np.frombuffer(data, np.uint8)[found]]
    quote = codes == _QUOTE
    return found, codes, quote, (np.cumsum(quote) - quote) % 2 == 0


def _brackets(found, codes, quote, even, in_string):
    """The brackets outside strings of a chunk starting inside a string or not (:func:`_specials` of it).

    Returns their positions, their steps (+1 opens, -1 closes) and the positions of the
    quotes that open a string (with no escapes, every other quote does).
    """
    outside = ~even if in_string else even
    bracket = outside & ~quote
    return found[bracket], codes[bracket].astype(np.int64), found[quote & outside]


def chunk_counts(path, lo, hi):
    """:class:`ChunkCounts` of the bytes ``[lo, hi)`` of ``path``; None when it cannot be read (a worker's task)."""
    try:
        with _mapped(path) as data:
            if data.find(b"\\", lo, hi) != -1:
                return ChunkCounts(True, 0, (0, 0), (None, None), (0, 0))
            specials = _specials(data, lo, hi)
            net, low, at_low = [], [], []
            for in_string in (0, 1):
                _, step, _ = _brackets(*specials, in_string)
                depth = np.cumsum(step)
                net.append(int(depth[-1]) if depth.size else 0)
                low.append(int(depth.min()) if depth.size else None)
                at_low.append(int(np.count_nonzero(depth == depth.min())) if depth.size else 0)
            return ChunkCounts(False, int(np.count_nonzero(specials[2])), tuple(net), tuple(low), tuple(at_low))
    except (OSError, ValueError):
        return None


def chunk_entries(counts):
    """``(in_string, depth)`` where each chunk starts, from the counts of all of a file's chunks in order; or None.

    None where the file cannot be one JSON value without escapes: a chunk unread or with a
    backslash, a bracket that closes below the top level, the top level closed more than
    once or not at all, a string left open.
    """
    entries, in_string, depth, closed = [], 0, 0, 0
    for count in counts:
        if count is None or count.escaped:
            return None
        entries.append((in_string, depth))
        low = count.low[in_string]
        if low is not None:
            if depth + low < 0:
                return None
            if depth + low == 0:
                closed += count.at_low[in_string]
        depth += count.net[in_string]
        in_string = (in_string + count.quotes) % 2
    if in_string or depth or closed != 1:
        return None
    return entries


def chunk_marks(path, lo, hi, in_string, depth, record_depth):
    """:class:`ChunkMarks` of the bytes ``[lo, hi)`` of ``path`` starting ``in_string`` at ``depth``; None if unread.

    ``record_depth``: the depth inside a record (2 in a top-level list, 3 in a top-level
    object's ``annotations``). A worker's task of round 2.
    """
    try:
        with _mapped(path) as data:
            where, step, opening = _brackets(*_specials(data, lo, hi), in_string)
            after = depth + np.cumsum(step)  # depth after each bracket
            raw = np.frombuffer(data, np.uint8)
            annotations = _annotations_keys(data, lo, hi, opening, where, after, depth) if record_depth == 3 else []
            return ChunkMarks(where[(step == _OPEN) & (after == record_depth)],
                              where[(step == _CLOSE) & (after == record_depth - 1)],
                              where[(step == _CLOSE) & (after == record_depth - 2)],
                              np.asarray(annotations, np.int64), _image_id_keys(raw, opening, where, after, depth,
                                                                               record_depth))
    except (OSError, ValueError):
        return None


def _depth_at(positions, where, after, depth):
    """Depth at each of ``positions``: after the last bracket before it, or the chunk's start ``depth``."""
    last = np.searchsorted(where, positions) - 1
    return np.where(last >= 0, after[np.maximum(last, 0)] if after.size else depth, depth)


def _annotations_keys(data, lo, hi, opening, where, after, depth):
    """The ``[`` after each ``"annotations":`` key starting in the chunk inside the top-level object (depth 1)."""
    found = []
    key = data.find(_ANNOTATIONS_KEY, lo, min(len(data), hi + len(_ANNOTATIONS_KEY) - 1))
    while key != -1:
        match = _ANNOTATIONS.match(data, key)
        at = int(np.searchsorted(opening, key))
        if (match is not None and at < len(opening) and opening[at] == key
                and int(_depth_at(np.array([key]), where, after, depth)[0]) == 1):
            found.append(match.end() - 1)
        key = data.find(_ANNOTATIONS_KEY, key + 1, min(len(data), hi + len(_ANNOTATIONS_KEY) - 1))
    return found


def _image_id_keys(raw, opening, where, after, depth, record_depth):
    """Opening quotes of the chunk that start an ``"image_id"`` key at ``record_depth``."""
    key = np.frombuffer(_KEY, np.uint8)
    candidate = opening[opening + len(key) <= len(raw)]
    candidate = candidate[raw[candidate + 1] == key[1]]
    candidate = candidate[(raw[candidate[:, None] + np.arange(len(key))] == key).all(axis=1)]
    return candidate[_depth_at(candidate, where, after, depth) == record_depth]


def joined_index(path, marks):
    """The :class:`CocoIndex` of ``path`` from the :class:`ChunkMarks` of its chunks in order; or None.

    Checks what needs the whole file: one annotations list (a ground-truth object),
    records that are objects with nothing but commas between them, one ``image_id`` of
    each at its top level (a whole number or plain text), nothing before or after the
    top-level value but white space.
    """
    if any(mark is None for mark in marks):
        return None
    joined = {name: np.concatenate([getattr(mark, name) for mark in marks]).astype(np.int64)
              for name in ("opens", "closes", "lists_closed", "annotations", "keys")}
    try:
        with _mapped(path) as data:
            return _joined(path, data, joined)
    except (OSError, IndexError):
        return None


def _joined(path, data, marks):
    raw = np.frombuffer(data, np.uint8)
    first, last = _first_other(data), _first_other(data, last=True)
    if raw[last] not in b"}]":  # the top level is closed by the last bracket (chunk_entries)
        return None
    if raw[first] == ord("["):
        array = first
    elif len(marks["annotations"]) == 1:
        array = int(marks["annotations"][0])
    else:
        return None
    closing = int(marks["lists_closed"][np.searchsorted(marks["lists_closed"], array)])
    opens, closes = (marks[name][(marks[name] > array) & (marks[name] < closing)] for name in ("opens", "closes"))
    if not len(opens) or len(opens) != len(closes) or np.any(raw[opens] != ord("{")):
        return None
    start, end = opens, closes + 1
    if not _only_commas_between(raw, array + 1, start, end, closing):
        return None
    image_ids = _record_image_ids(data, raw, marks["keys"], start, end)
    if image_ids is None:
        return None
    skeleton_bytes = bytes(data[:array + 1]) + bytes(data[closing:])
    try:
        skeleton = json.loads(skeleton_bytes.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return CocoIndex(path, start, end, image_ids, skeleton)


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


def _record_image_ids(data, raw, keys, start, end):
    """The ``image_id`` of each record (array or list), or None when one is missing, repeated or of another kind.

    ``keys``: the ``"image_id"`` keys at the records' depth (some may lie outside the records).
    """
    record = np.searchsorted(start, keys, side="right") - 1
    inside = (record >= 0) & (keys < end[np.maximum(record, 0)])
    keys, record = keys[inside], record[inside]
    if len(keys) != len(start) or np.any(np.bincount(record, minlength=len(start)) != 1):
        return None
    colon = _past_space(raw, keys + len(_KEY))
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
