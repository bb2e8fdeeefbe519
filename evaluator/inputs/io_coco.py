"""Read PolyTopoBench / HiSup COCO-style JSON into :class:`InstanceSet` objects.

Ground truth is a COCO object with ``images`` and ``annotations``; each annotation's
``segmentation`` is a list of flat rings ``[x0, y0, x1, y1, ...]`` in pixels, ring 0 the
exterior and the rest holes. Predictions are a list of
``{image_id, category_id, segmentation, score}`` records in the same ring format.
Annotations with ``iscrowd`` = 1 are skipped and counted (``"crowd"``).
"""

import math
import warnings
from array import array

import numpy as np

from ...core.errors import InputFormatError
from ...core.json_files import read_json
from .instances import Instance, InstanceSet, flat_ring_table, ring_from_flat

__all__ = ["InstanceColumns", "ground_truth_columns", "load_coco_ground_truth", "load_coco_predictions",
           "prediction_columns"]


class _SegmentationTable:
    """Every record's rings parsed in one pass (:func:`.instances.flat_ring_table`), as offsets.

    No object is made per ring or per record: the instances are built from it after the
    JSON is freed (:class:`InstanceColumns`), so they do not sit scattered among the freed
    JSON objects in the heap.
    """

    def __init__(self, records):
        ring_lists, first, count = [], np.full(len(records), -1, np.int64), np.zeros(len(records), np.int64)
        for index, record in enumerate(records):
            segmentation = record.get("segmentation") if isinstance(record, dict) else None
            if isinstance(segmentation, list) and segmentation and all(isinstance(r, list) for r in segmentation):
                first[index], count[index] = len(ring_lists), len(segmentation)
                ring_lists.extend(segmentation)
        self.coords, self.starts, self.sizes, ok = flat_ring_table(ring_lists)
        del ring_lists
        # a record is whole when every one of its rings parsed in the table
        bad_before = np.concatenate([[0], np.cumsum(~ok)])
        self.first, self.count = first, count
        self.whole = (first >= 0) & (bad_before[np.maximum(first, 0) + count] == bad_before[np.maximum(first, 0)])
        self.ok = ok

    def ring(self, record_index, ring_index):
        """The parsed ring ``ring_index`` of record ``record_index``, or None when it needs :func:`ring_from_flat`."""
        position = self.first[record_index] + ring_index
        if self.first[record_index] < 0 or not self.ok[position]:
            return None
        start = self.starts[position]
        return self.coords[start:start + self.sizes[position]]


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

    def kept_image_ids(self):
        """The image ids of the kept instances, each once, in the order they first occur."""
        return list(dict.fromkeys(self._image_ids))

    def detach(self):
        """Turn the ids into arrays where they allow it and drop every reference into the JSON."""
        self._image_ids, self._source_ids, self._categories = (
            _compact(values) for values in (self._image_ids, self._source_ids, self._categories))
        self.image_ids = _compact(self.image_ids)
        return self

    def instance_set(self):
        """The :class:`InstanceSet` (call after the JSON is dropped)."""
        table = self._table
        records = np.frombuffer(self._records, np.int64) if len(self._records) else np.zeros(0, np.int64)
        first, count = table.first[records].tolist(), table.count[records].tolist()
        starts, sizes = table.starts.tolist(), table.sizes.tolist()
        coords, alone = table.coords, self._alone
        instances = []
        for position, (image_id, source_id, category_id, score, start, rings) in enumerate(zip(
                _expanded(self._image_ids), _expanded(self._source_ids), _expanded(self._categories),
                self._scores.tolist(), first, count)):
            if position in alone:
                ring_arrays = alone[position]
            else:
                ring_arrays = [coords[starts[k]:starts[k] + sizes[k]] for k in range(start, start + rings)]
            instances.append(Instance(image_id, source_id, ring_arrays[0], tuple(ring_arrays[1:]), score, category_id))
        return InstanceSet(tuple(instances), tuple(_expanded(self.image_ids)), self.skipped, self.source,
                           self.image_sizes)


def _compact(values):
    """``values`` as an int64 array when every one is an int (not a bool) in range, else the list itself."""
    if all(type(value) is int for value in values):
        try:
            return np.array(values, dtype=np.int64) if values else values
        except OverflowError:
            return values
    return values


def _expanded(values):
    """The values :func:`_compact` kept (Python ints again for an array)."""
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
    return ground_truth_columns(path, read_json(path) if data is None else data, categories,
                                drop_degenerate).instance_set()


def ground_truth_columns(path, data, categories=None, drop_degenerate=False):
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
    table = _SegmentationTable(data["annotations"])
    columns = InstanceColumns(table)
    skipped = columns.skipped
    for index, record in enumerate(data["annotations"]):
        where = f"{path} annotations[{index}]"
        if not isinstance(record, dict):
            raise InputFormatError(f"{where}: expected an object but got {type(record).__name__}")
        if categories is not None and record.get("category_id") not in categories:
            _count(skipped, "other_category")
            continue
        if record.get("iscrowd", 0):
            _count(skipped, "crowd")
            continue
        keep, rings = _kept_rings(record, where, skipped, drop_degenerate, table, index)
        if not keep:
            if not record.get("segmentation"):
                _count(skipped, "empty_geometry")
            continue
        columns.add(index, _image_id(record, where), record.get("id", None), record.get("category_id"), 1.0, rings)
    known = set(image_ids)
    listed = len(image_ids)
    for image_id in columns.kept_image_ids():
        if image_id not in known:
            known.add(image_id)
            image_ids.append(image_id)
    if listed and len(image_ids) > listed:
        unlisted = image_ids[listed:]
        warnings.warn(
            f"{path}: {len(unlisted)} image id(s) of annotations are not in images[] (e.g. "
            f"{[str(i) for i in unlisted[:3]]}); they are evaluated as images of their own, whereas pycocotools "
            "ignores their annotations. Add them to images[] or fix the annotations' image_id", stacklevel=3)
    _warn_without_segmentation(path, "annotation", len(data["annotations"]), skipped)
    columns.image_ids, columns.image_sizes, columns.source = image_ids, sizes, str(path)
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


def _warn_without_segmentation(path, what, total, skipped):
    """Refuse a file none of whose records has a polygon; warn when some lack one."""
    missing = skipped.get("empty_geometry", 0)
    if not missing:
        return
    found = (f"{missing} of {total} {what} record(s) have no polygon 'segmentation' (missing or empty, e.g. "
             "detection results with a 'bbox' only)")
    if missing == total:
        raise InputFormatError(f"{path}: expected polygon segmentations but {found}; PolyTopo scores polygons: "
                               f"export the {what}s with 'segmentation' rings [[x0, y0, x1, y1, ...], ...]")
    warnings.warn(f"{path}: {found}; PolyTopo scores polygons, so these were skipped "
                  "(counts.skipped.*.empty_geometry)", stacklevel=3)


def load_coco_predictions(path, categories=None, default_score=None, drop_degenerate=False, *, data=None):
    """Load predictions from a JSON file: :func:`prediction_columns`, then its instance set.

    See :func:`load_coco_ground_truth` for a caller that holds the parsed JSON.
    """
    return prediction_columns(path, read_json(path) if data is None else data, categories, default_score,
                              drop_degenerate).instance_set()


def prediction_columns(path, data, categories=None, default_score=None, drop_degenerate=False):
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

    Returns
    -------
    InstanceColumns
        Detached from ``data``; in its instance set ``source_id`` is the record's position in the list.
    """
    if default_score is not None and (isinstance(default_score, bool) or not isinstance(default_score, (int, float))
                                      or not math.isfinite(default_score)):
        raise InputFormatError(f"Expected default_score to be a finite number but got {default_score!r}")
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]
    if not isinstance(data, list):
        raise InputFormatError(
            f"{path}: expected a list of prediction records {{image_id, segmentation, score}} "
            f"but got {type(data).__name__}"
        )
    table = _SegmentationTable(data)
    columns = InstanceColumns(table)
    skipped = columns.skipped
    for index, record in enumerate(data):
        where = f"{path} record [{index}]"
        if not isinstance(record, dict):
            raise InputFormatError(f"{where}: expected an object but got {type(record).__name__}")
        if categories is not None and record.get("category_id") not in categories:
            _count(skipped, "other_category")
            continue
        score = _score(record, where, default_score)
        keep, rings = _kept_rings(record, where, skipped, drop_degenerate, table, index)
        if not keep:
            if not record.get("segmentation"):
                _count(skipped, "empty_geometry")
            continue
        columns.add(index, _image_id(record, where), index, record.get("category_id"), score, rings)
    columns.image_ids = columns.kept_image_ids()
    _warn_without_segmentation(path, "prediction", len(data), skipped)
    columns.source = str(path)
    return columns.detach()


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
