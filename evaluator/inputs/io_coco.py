"""Read PolyTopoBench / HiSup COCO-style JSON into :class:`InstanceSet` objects.

Ground truth is a COCO object with ``images`` and ``annotations``; each annotation's
``segmentation`` is a list of flat rings ``[x0, y0, x1, y1, ...]`` in pixels, ring 0 the
exterior and the rest holes. Predictions are a list of
``{image_id, category_id, segmentation, score}`` records in the same ring format.
Annotations with ``iscrowd`` = 1 are skipped and counted (``"crowd"``).
"""

import contextlib
import json
import math
import warnings
from array import array

import numpy as np

from ...core.errors import InputFormatError
from ...core.json_files import read_json
from .instances import Instance, InstanceSet, flat_ring_table, ring_from_flat

__all__ = ["InstanceColumns", "RingPacker", "annotation_columns", "check_default_score", "compact_values",
           "ground_truth_columns",
           "listed_images", "load_coco_ground_truth", "load_coco_predictions", "prediction_columns", "prediction_rows",
           "read_coco_json", "read_coco_records", "warn_without_segmentation", "with_unlisted_images"]


class RingPacker:
    """Moves each record's rings into numeric columns, a batch of records at a time.

    Used as the ``object_hook`` of the JSON parser (:func:`read_coco_json`), it sees each
    record as soon as it is parsed; every :attr:`BATCH` records it parses their rings
    with :func:`.instances.flat_ring_table` and, when it owns the parsed objects
    (``clear=True``), empties the ring lists of each record whose rings all parsed, so
    that their coordinates never all exist as Python floats at once: a file's rings take
    16 bytes per vertex instead of about 64. A record with any ring that did not parse
    keeps its lists for :func:`.instances.ring_from_flat` (which gives the error, or
    drops a degenerate ring). ``clear=False`` leaves the records as they are (JSON a
    caller passed in).
    """

    BATCH = 2048
    """Records parsed together (one :func:`.instances.flat_ring_table` call)."""

    def __init__(self, clear):
        self._clear = clear
        self._pending = []
        self._chunks, self._ring_chunk, self._starts, self._sizes, self._ok = [], [], [], [], []
        self._ids, self._first, self._count = array("q"), array("q"), array("q")
        self._rings = 0

    def __call__(self, obj):
        """Object hook: note ``obj`` when it has a ``segmentation`` list of rings; returns it unchanged."""
        segmentation = obj.get("segmentation") if isinstance(obj, dict) else None
        if isinstance(segmentation, list) and segmentation and all(isinstance(ring, list) for ring in segmentation):
            self._pending.append(obj)
            if len(self._pending) == self.BATCH:
                self._pack()
        return obj

    def _pack(self):
        pending, self._pending = self._pending, []
        if not pending:
            return
        ring_lists = [ring for record in pending for ring in record["segmentation"]]
        coords, starts, sizes, ok = flat_ring_table(ring_lists)
        del ring_lists
        chunk = len(self._chunks)
        self._chunks.append(coords)
        self._ring_chunk.append(np.full(len(ok), chunk, np.int64))
        self._starts.append(starts)
        self._sizes.append(sizes)
        self._ok.append(ok)
        counts = [len(record["segmentation"]) for record in pending]  # each at least 1 (see __call__)
        firsts = np.cumsum(counts, dtype=np.int64) - counts
        self._ids.extend(map(id, pending))
        self._first.extend((firsts + self._rings).tolist())
        self._count.extend(counts)
        if self._clear:  # a record's lists are emptied when all its rings parsed
            for record, parsed in zip(pending, np.logical_and.reduceat(ok, firsts).tolist()):
                if parsed:
                    for ring in record["segmentation"]:
                        ring.clear()
        self._rings += len(ok)

    def table(self, records):
        """The :class:`_SegmentationTable` of ``records`` (each record seen by the hook, or by :meth:`__call__`)."""
        self._pack()
        return _SegmentationTable(self, records)


class _SegmentationTable:
    """Every record's rings parsed (:class:`RingPacker`), as offsets into a few coordinate arrays.

    No object is made per ring or per record: the instances are built from it after the
    JSON is freed (:class:`InstanceColumns`), so they do not sit scattered among the freed
    JSON objects in the heap.
    """

    def __init__(self, packer, records):
        def joined(parts, dtype):
            return np.concatenate(parts) if parts else np.zeros(0, dtype)

        self.chunks = packer._chunks
        self.ring_chunk = joined(packer._ring_chunk, np.int64)
        self.starts, self.sizes = joined(packer._starts, np.int64), joined(packer._sizes, np.int64)
        ok = joined(packer._ok, bool)
        ids = np.frombuffer(packer._ids, np.int64) if len(packer._ids) else np.zeros(0, np.int64)
        order = np.argsort(ids, kind="stable")
        wanted = np.fromiter(map(id, records), np.int64, len(records))
        found = np.minimum(np.searchsorted(ids[order], wanted), max(len(ids) - 1, 0))
        hit = (ids[order][found] == wanted) if len(ids) else np.zeros(len(records), bool)
        packed_first = np.frombuffer(packer._first, np.int64) if len(ids) else np.zeros(0, np.int64)
        packed_count = np.frombuffer(packer._count, np.int64) if len(ids) else np.zeros(0, np.int64)
        first, count = np.full(len(records), -1, np.int64), np.zeros(len(records), np.int64)
        first[hit], count[hit] = packed_first[order[found[hit]]], packed_count[order[found[hit]]]
        # a record is whole when every one of its rings parsed in the table
        bad_before = np.concatenate([[0], np.cumsum(~ok)])
        self.first, self.count = first, count
        self.whole = (first >= 0) & (bad_before[np.maximum(first, 0) + count] == bad_before[np.maximum(first, 0)])
        self.ok = ok

    def view(self, position):
        """Ring ``position`` of the table (a view of its chunk)."""
        start = self.starts[position]
        return self.chunks[self.ring_chunk[position]][start:start + self.sizes[position]]

    def ring(self, record_index, ring_index):
        """The parsed ring ``ring_index`` of record ``record_index``, or None when it needs :func:`ring_from_flat`."""
        position = self.first[record_index] + ring_index
        if self.first[record_index] < 0 or not self.ok[position]:
            return None
        return self.view(position)


def _segmentation_table(records, packer):
    """The table of ``records``: from the ``packer`` that saw them parsed, else packed here without changing them."""
    if packer is None:
        packer = RingPacker(clear=False)
        for record in records:
            packer(record)
    return packer.table(records)


def read_coco_json(path):
    """Parse a COCO-style JSON file with a :class:`RingPacker` as the object hook.

    Returns
    -------
    data : object
        The parsed JSON; the ring lists of records whose rings all parsed are emptied
        (their coordinates are in the packer).
    packer : RingPacker
        Pass it with ``data`` to :func:`ground_truth_columns` / :func:`prediction_columns`.
    """
    packer = RingPacker(clear=True)
    return read_json(path, object_hook=packer), packer


def _checked_segmentation(record, where):
    """The record's segmentation (a list of lists), or None when it has none; refuses another shape."""
    segmentation = record.get("segmentation")
    if segmentation is None or segmentation == []:
        return None
    if isinstance(segmentation, dict):
        raise InputFormatError(
            f"{where} field 'segmentation': expected a list of flat polygon rings but got an RLE "
            "mask; convert masks to polygons first"
        )
    if not isinstance(segmentation, list) or not all(isinstance(ring, list) for ring in segmentation):
        raise InputFormatError(
            f"{where} field 'segmentation': expected a list of rings [[x0, y0, x1, y1, ...], ...] "
            f"but got {str(segmentation)[:60]}"
        )
    return segmentation


def _rings_alone(segmentation, where, skipped, drop_degenerate, table, record_index):
    """A record's rings when not all of them parsed in the table: each missing one by :func:`ring_from_flat`.

    Returns the list of ring arrays, or None when the record is skipped (a degenerate
    exterior with ``drop_degenerate``); a degenerate hole is then dropped and counted.
    """
    rings = []
    for index, ring in enumerate(segmentation):
        parsed = table.ring(record_index, index)
        if parsed is not None:
            rings.append(parsed)
            continue
        try:
            rings.append(ring_from_flat(ring, f"{where} field 'segmentation' ring {index}"))
        except InputFormatError as exc:
            if not drop_degenerate or "distinct points" not in str(exc):
                raise
            if index == 0:
                _count(skipped, "degenerate_exterior")
                return None
            _count(skipped, "degenerate_hole")
    return rings


class InstanceColumns:
    """The instances of a COCO file, kept as columns while its JSON is alive; :meth:`instance_set` builds them.

    Ids are kept as int64 arrays when every one is an integer (the usual case), so that
    no object made while reading survives the JSON; the instances, their ring views and
    their ids are made afterwards, packed together in the heap.
    """

    def __init__(self, table):
        self._table = table
        self._records = array("q")
        self._scores = array("d")
        self._image_ids, self._source_ids, self._categories = [], [], []
        self._alone = {}
        self.skipped = {}
        self.image_ids = []
        self.image_sizes = {}
        self.source = ""

    def add(self, record_index, image_id, source_id, category_id, score, rings=None):
        """Keep one instance: record ``record_index`` of the table (its own ``rings`` when not all parsed there)."""
        if rings is not None:
            self._alone[len(self._records)] = rings
        self._records.append(record_index)
        self._scores.append(score)
        self._image_ids.append(image_id)
        self._source_ids.append(source_id)
        self._categories.append(category_id)

    def kept_records(self):
        """int64, the position in the read records of each kept instance's record, in order."""
        return np.frombuffer(self._records, np.int64).copy() if len(self._records) else np.zeros(0, np.int64)

    def kept_image_ids(self):
        """The image ids of the kept instances, each once, in the order they first occur."""
        return list(dict.fromkeys(self._image_ids))

    def detach(self):
        """Turn the ids into arrays where they allow it and drop every reference into the JSON."""
        self._image_ids, self._source_ids, self._categories = (
            compact_values(values) for values in (self._image_ids, self._source_ids, self._categories))
        self.image_ids = compact_values(self.image_ids)
        return self

    def instance_set(self):
        """The :class:`InstanceSet` (call after the JSON is dropped)."""
        table = self._table
        records = np.frombuffer(self._records, np.int64) if len(self._records) else np.zeros(0, np.int64)
        first, count = table.first[records].tolist(), table.count[records].tolist()
        starts, sizes, chunk_of = table.starts.tolist(), table.sizes.tolist(), table.ring_chunk.tolist()
        chunks, alone = table.chunks, self._alone
        instances = []
        for position, (image_id, source_id, category_id, score, start, rings) in enumerate(zip(
                _expanded(self._image_ids), _expanded(self._source_ids), _expanded(self._categories),
                self._scores.tolist(), first, count)):
            if position in alone:
                ring_arrays = alone[position]
            else:
                ring_arrays = [chunks[chunk_of[k]][starts[k]:starts[k] + sizes[k]] for k in range(start, start + rings)]
            instances.append(Instance(image_id, source_id, ring_arrays[0], tuple(ring_arrays[1:]), score, category_id))
        return InstanceSet(tuple(instances), tuple(_expanded(self.image_ids)), self.skipped, self.source,
                           self.image_sizes)


def compact_values(values):
    """``values`` as one array where they allow it, else (or when empty) the list itself.

    int64 when every one is an int (not a bool) in range, float64 when every one is a
    float; :func:`_expanded` gives the same values back.
    """
    for kind, dtype in ((int, np.int64), (float, np.float64)):
        if values and all(type(value) is kind for value in values):
            try:
                return np.array(values, dtype=dtype)
            except OverflowError:
                return values
    return values


def _expanded(values):
    """The values :func:`compact_values` kept (Python numbers again for an array)."""
    return values.tolist() if isinstance(values, np.ndarray) else values


def _kept_rings(record, where, skipped, drop_degenerate, table, record_index):
    """``(keep, rings)`` of a record: keep False when it has no polygon or is skipped; rings None when all parsed."""
    segmentation = _checked_segmentation(record, where)
    if segmentation is None:
        return False, None
    if table.whole[record_index]:
        return True, None
    rings = _rings_alone(segmentation, where, skipped, drop_degenerate, table, record_index)
    return rings is not None, rings


def _image_id(record, where, key="image_id"):
    if key not in record:
        raise InputFormatError(f"{where}: expected an {key!r} field but the record has none")
    image_id = record[key]
    if not isinstance(image_id, (int, str)) or isinstance(image_id, bool):
        raise InputFormatError(f"{where} field {key!r}: expected an integer or string but got "
                               f"{type(image_id).__name__} {str(image_id)[:60]}")
    return image_id


def load_coco_ground_truth(path, categories=None, drop_degenerate=False, *, data=None):
    """Load ground truth from a COCO-style JSON file: :func:`ground_truth_columns`, then its instance set.

    Parameters and returns as :func:`ground_truth_columns` and
    :meth:`InstanceColumns.instance_set`. A caller that holds the parsed JSON (``data``)
    and can drop it should call the two itself, dropping it between them: the instances
    are then packed together in the heap instead of among the freed JSON objects.
    """
    data, packer = read_coco_json(path) if data is None else (data, None)
    return ground_truth_columns(path, data, categories, drop_degenerate, packer=packer).instance_set()


def ground_truth_columns(path, data, categories=None, drop_degenerate=False, *, packer=None):
    """Read and check the ground truth of a COCO-style JSON file into :class:`InstanceColumns`.

    Parameters
    ----------
    path : str or Path
        The GT file.
    categories : collection of int, optional
        Keep only these ``category_id`` values.
    drop_degenerate : bool
        Skip records whose exterior has fewer than 3 distinct points and drop such holes
        (counted as ``degenerate_exterior`` / ``degenerate_hole``), as the public
        PolyTopoBench evaluator does silently; by default they are an error.
    data : object
        The file's parsed JSON.
    packer : RingPacker, optional
        The object hook ``data`` was parsed with (:func:`read_coco_json`); without it the
        rings are parsed from ``data``, which is left unchanged.

    Returns
    -------
    InstanceColumns
        Detached from ``data``; its :meth:`~InstanceColumns.instance_set` has instances with score 1.0; ``image_ids`` lists every image of ``images`` followed by
        image ids that only annotations mention; ``image_sizes`` the ``width`` and
        ``height`` of every image of ``images`` (None where it gives none); the ``coco``
        and ``p3-code`` raster masks are clipped to them, as pycocotools clips.
    """
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        raise InputFormatError(
            f"{path}: expected a COCO object with an 'annotations' list (and 'images') but got "
            f"{type(data).__name__}{' without annotations' if isinstance(data, dict) else ''}"
        )
    image_ids, sizes = listed_images(path, data)
    columns = annotation_columns(path, data["annotations"], range(len(data["annotations"])), categories,
                                 drop_degenerate, packer)
    image_ids = with_unlisted_images(path, image_ids, columns.kept_image_ids(), stacklevel=4)
    warn_without_segmentation(path, "annotation", len(data["annotations"]), columns.skipped, stacklevel=4)
    columns.image_ids, columns.image_sizes, columns.source = image_ids, sizes, str(path)
    return columns.detach()


def with_unlisted_images(path, listed, kept_image_ids, stacklevel=3):
    """Every image id of a ground truth: ``listed`` (``images[]``), then those only its kept annotations name.

    ``kept_image_ids``: the image ids of the kept annotations, each once, in the order they
    first occur. Warns when there are such unlisted ids and ``images[]`` is not empty.
    """
    image_ids, known = list(listed), set(listed)
    for image_id in kept_image_ids:
        if image_id not in known:
            known.add(image_id)
            image_ids.append(image_id)
    if listed and len(image_ids) > len(listed):
        unlisted = image_ids[len(listed):]
        warnings.warn(
            f"{path}: {len(unlisted)} image id(s) of annotations are not in images[] (e.g. "
            f"{[str(i) for i in unlisted[:3]]}); they are evaluated as images of their own, whereas pycocotools "
            "ignores their annotations. Add them to images[] or fix the annotations' image_id", stacklevel=stacklevel)
    return image_ids


def listed_images(path, data):
    """The ids of a ground-truth object's ``images[]`` in order and ``{id: (width, height) or None}``; checked."""
    image_ids, first_index, sizes = [], {}, {}
    for index, image in enumerate(data.get("images", [])):
        if not isinstance(image, dict) or "id" not in image:
            raise InputFormatError(f"{path} images[{index}]: expected an object with an 'id' field")
        image_id = _image_id(image, f"{path} images[{index}]", key="id")
        if image_id in first_index:
            raise InputFormatError(
                f"{path} images[{index}] field 'id': expected every image to have its own id but {image_id!r} is "
                f"also the id of images[{first_index[image_id]}]; give each image a unique id")
        first_index[image_id] = index
        image_ids.append(image_id)
        sizes[image_id] = _image_size(image, f"{path} images[{index}]")
    return image_ids, sizes


@contextlib.contextmanager
def _numbered_errors(numbers):
    """Give an :class:`InputFormatError` raised in the block the number of the record being read.

    Yields a one-element list the block sets to the index (in ``numbers``) of the record
    it reads; the error's ``record_number`` is then ``numbers[index]``, so that a reader of
    parts of a file can tell which part's error comes first in it.
    """
    at = [0]
    try:
        yield at
    except InputFormatError as exc:
        exc.record_number = numbers[at[0]]
        raise


def annotation_columns(path, records, numbers, categories=None, drop_degenerate=False, packer=None):
    """Check and keep ground-truth ``records`` (annotations ``numbers`` of the file) as :class:`InstanceColumns`.

    ``packer``: the :class:`RingPacker` the records were parsed with, if any. Messages
    name each record by its number in the file (as does the error's ``record_number``,
    :func:`_numbered_errors`); only ``skipped`` is set on the columns. Crowd annotations
    are skipped and counted; each instance's ``source_id`` is its annotation's ``id``.
    """
    def fields(record, number, where, skipped):
        if record.get("iscrowd", 0):
            _count(skipped, "crowd")
            return None
        return record.get("id", None), 1.0

    return _kept_columns(path, records, numbers, categories, drop_degenerate, packer, "annotations[{}]", fields)


def prediction_rows(path, records, numbers, categories=None, default_score=None, drop_degenerate=False,
                    packer=None):
    """Check and keep prediction ``records`` (records ``numbers`` of the file) as :class:`InstanceColumns`.

    As :func:`annotation_columns`; each instance's ``source_id`` is its record's number and
    its score the record's (``default_score`` where it has none).
    """
    def fields(record, number, where, skipped):
        return number, _score(record, where, default_score)

    return _kept_columns(path, records, numbers, categories, drop_degenerate, packer, "record [{}]", fields)


def _kept_columns(path, records, numbers, categories, drop_degenerate, packer, label, fields):
    """The records' instances as :class:`InstanceColumns`.

    Each record is checked for its category, then ``fields(record, number, where, skipped)``
    gives ``(source id, score)`` (None: skipped, counted by it), then its rings; messages name
    it ``label`` with its number, and an error carries that number (:func:`_numbered_errors`).
    """
    table = _segmentation_table(records, packer)
    columns = InstanceColumns(table)
    skipped = columns.skipped
    with _numbered_errors(numbers) as at:
        for index, (number, record) in enumerate(zip(numbers, records)):
            at[0] = index
            where = f"{path} {label.format(number)}"
            if not isinstance(record, dict):
                raise InputFormatError(f"{where}: expected an object but got {type(record).__name__}")
            if categories is not None and record.get("category_id") not in categories:
                _count(skipped, "other_category")
                continue
            found = fields(record, number, where, skipped)
            if found is None:
                continue
            keep, rings = _kept_rings(record, where, skipped, drop_degenerate, table, index)
            if not keep:
                if not record.get("segmentation"):
                    _count(skipped, "empty_geometry")
                continue
            columns.add(index, _image_id(record, where), found[0], record.get("category_id"), found[1], rings)
    return columns


def read_coco_records(path, start, end, numbers, role, categories=None, default_score=None, drop_degenerate=False,
                      name=None):
    """Parse and check the records at byte ranges ``[start, end)`` of ``path`` (records ``numbers`` of the file).

    ``role`` ``"gt"`` reads them as annotations, ``"pred"`` as predictions, each exactly as
    :func:`ground_truth_columns` / :func:`prediction_columns` read a whole file (the same
    messages, numbered as in the file, the file named ``name``: by default ``path``). Returns the detached :class:`InstanceColumns`
    (``skipped`` set; the caller sets the images and the source).

    Raises
    ------
    InputFormatError
        A record is wrong (as when the whole file is read).
    ValueError
        The ranges do not parse as JSON (the caller reads the whole file for the error).
    """
    from .coco_index import record_bytes

    packer = RingPacker(clear=True)
    records = json.loads(record_bytes(path, start, end).decode("utf-8"), object_hook=packer)
    name = path if name is None else name
    if role == "gt":
        columns = annotation_columns(name, records, numbers, categories, drop_degenerate, packer)
    else:
        columns = prediction_rows(name, records, numbers, categories, default_score, drop_degenerate, packer)
    del records, packer
    return columns.detach()


def _image_size(image, where):
    """``(width, height)`` of an ``images[]`` entry in pixels, or None when it gives neither.

    Raises
    ------
    InputFormatError
        One of the two is given without the other, or is not a positive whole number.
    """
    given = [key for key in ("width", "height") if image.get(key) is not None]
    if not given:
        return None
    values = []
    for key in ("width", "height"):
        value = image.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1 or value != int(value) \
                or value > 2**31:
            raise InputFormatError(f"{where} field {key!r}: expected a whole number of pixels >= 1 (with both "
                                   f"'width' and 'height') but got {value!r}")
        values.append(int(value))
    return tuple(values)


def warn_without_segmentation(path, what, total, skipped, stacklevel=3):
    """Refuse a file none of whose ``total`` records has a polygon; warn when some lack one (``skipped`` counts)."""
    missing = skipped.get("empty_geometry", 0)
    if not missing:
        return
    found = (f"{missing} of {total} {what} record(s) have no polygon 'segmentation' (missing or empty, e.g. "
             "detection results with a 'bbox' only)")
    if missing == total:
        raise InputFormatError(f"{path}: expected polygon segmentations but {found}; PolyTopo scores polygons: "
                               f"export the {what}s with 'segmentation' rings [[x0, y0, x1, y1, ...], ...]")
    warnings.warn(f"{path}: {found}; PolyTopo scores polygons, so these were skipped "
                  "(counts.skipped.*.empty_geometry)", stacklevel=stacklevel)


def load_coco_predictions(path, categories=None, default_score=None, drop_degenerate=False, *, data=None):
    """Load predictions from a JSON file: :func:`prediction_columns`, then its instance set.

    See :func:`load_coco_ground_truth` for a caller that holds the parsed JSON.
    """
    data, packer = read_coco_json(path) if data is None else (data, None)
    return prediction_columns(path, data, categories, default_score, drop_degenerate, packer=packer).instance_set()


def prediction_columns(path, data, categories=None, default_score=None, drop_degenerate=False, *, packer=None):
    """Read and check a JSON list of ``{image_id, category_id, segmentation, score}`` into :class:`InstanceColumns`.

    Parameters
    ----------
    path : str or Path
        The prediction file.
    categories : collection of int, optional
        Keep only these ``category_id`` values.
    default_score : float, optional
        Score for records without one; without it a missing score is an error.
    drop_degenerate : bool
        As in :func:`load_coco_ground_truth`.
    data : object
        The file's parsed JSON.
    packer : RingPacker, optional
        As in :func:`ground_truth_columns`.

    Returns
    -------
    InstanceColumns
        Detached from ``data``; in its instance set ``source_id`` is the record's position in the list.
    """
    check_default_score(default_score)
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]
    if not isinstance(data, list):
        raise InputFormatError(
            f"{path}: expected a list of prediction records {{image_id, segmentation, score}} "
            f"but got {type(data).__name__}"
        )
    columns = prediction_rows(path, data, range(len(data)), categories, default_score, drop_degenerate, packer)
    columns.image_ids = columns.kept_image_ids()
    warn_without_segmentation(path, "prediction", len(data), columns.skipped, stacklevel=4)
    columns.source = str(path)
    return columns.detach()


def check_default_score(default_score):
    """Refuse a ``default_score`` that is given but is not a finite number."""
    if default_score is not None and (isinstance(default_score, bool) or not isinstance(default_score, (int, float))
                                      or not math.isfinite(default_score)):
        raise InputFormatError(f"Expected default_score to be a finite number but got {default_score!r}")


def _score(record, where, default_score):
    if "score" not in record or record["score"] is None:
        if default_score is None:
            raise InputFormatError(
                f"{where}: expected a 'score' field but the record has none; "
                "pass --default-score to give unscored predictions a score"
            )
        return float(default_score)
    score = record["score"]
    try:
        finite = not isinstance(score, bool) and isinstance(score, (int, float)) and math.isfinite(score)
    except OverflowError:  # an integer beyond float range
        finite = False
    if not finite:
        raise InputFormatError(f"{where} field 'score': expected a finite number but got {str(score)[:40]}")
    return float(score)


def _count(counts, reason):
    counts[reason] = counts.get(reason, 0) + 1
