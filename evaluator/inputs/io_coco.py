"""Read PolyTopoBench / HiSup COCO-style JSON into :class:`InstanceSet` objects.

Ground truth is a COCO object with ``images`` and ``annotations``; each annotation's
``segmentation`` is a list of flat rings ``[x0, y0, x1, y1, ...]`` in pixels, ring 0 the
exterior and the rest holes. Predictions are a list of
``{image_id, category_id, segmentation, score}`` records in the same ring format.
Annotations with ``iscrowd`` = 1 are skipped and counted (``"crowd"``).
"""

import math
import warnings

from ...core.errors import InputFormatError
from ...core.json_files import read_json
from .instances import Instance, InstanceSet, ring_from_flat, rings_from_flat_lists

__all__ = ["load_coco_ground_truth", "load_coco_predictions"]


def _parsed_segmentations(records):
    """Every record's rings parsed in one pass (:func:`.instances.rings_from_flat_lists`).

    Returns, per record, the list of its parsed rings (None for a ring to parse alone),
    or None for a record whose segmentation is not a non-empty list of lists.
    """
    ring_lists, owners = [], []
    for index, record in enumerate(records):
        segmentation = record.get("segmentation") if isinstance(record, dict) else None
        if isinstance(segmentation, list) and segmentation and all(isinstance(r, list) for r in segmentation):
            owners.append((index, len(ring_lists), len(ring_lists) + len(segmentation)))
            ring_lists.extend(segmentation)
    parsed = rings_from_flat_lists(ring_lists)
    per_record = [None] * len(records)
    for index, start, end in owners:
        per_record[index] = parsed[start:end]
    return per_record


def _instance(record, where, score, skipped, drop_degenerate, parsed=None):
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
    rings = []
    for index, ring in enumerate(segmentation):
        if parsed is not None and parsed[index] is not None:
            rings.append(parsed[index])
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
    return Instance(
        image_id=_image_id(record, where),
        source_id=record.get("id", None),
        exterior=rings[0],
        holes=tuple(rings[1:]),
        score=score,
        category_id=record.get("category_id"),
    )


def _image_id(record, where, key="image_id"):
    if key not in record:
        raise InputFormatError(f"{where}: expected an {key!r} field but the record has none")
    image_id = record[key]
    if not isinstance(image_id, (int, str)) or isinstance(image_id, bool):
        raise InputFormatError(f"{where} field {key!r}: expected an integer or string but got "
                               f"{type(image_id).__name__} {str(image_id)[:60]}")
    return image_id


def load_coco_ground_truth(path, categories=None, drop_degenerate=False, *, data=None):
    """Load ground truth from a COCO-style JSON file.

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
    data : object, optional
        The file's parsed JSON, when the caller has read it already (the file is not read again).

    Returns
    -------
    InstanceSet
        Instances with score 1.0; ``image_ids`` lists every image of ``images`` followed by
        image ids that only annotations mention; ``image_sizes`` the ``width`` and
        ``height`` of every image of ``images`` (None where it gives none); the ``coco``
        and ``p3-code`` raster masks are clipped to them, as pycocotools clips.
    """
    data = read_json(path) if data is None else data
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
    instances, skipped = [], {}
    parsed = _parsed_segmentations(data["annotations"])
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
        instance = _instance(record, where, 1.0, skipped, drop_degenerate, parsed[index])
        if instance is None:
            if not record.get("segmentation"):
                _count(skipped, "empty_geometry")
            continue
        instances.append(instance)
    known = set(image_ids)
    listed = len(image_ids)
    for instance in instances:
        if instance.image_id not in known:
            known.add(instance.image_id)
            image_ids.append(instance.image_id)
    if listed and len(image_ids) > listed:
        unlisted = image_ids[listed:]
        warnings.warn(
            f"{path}: {len(unlisted)} image id(s) of annotations are not in images[] (e.g. "
            f"{[str(i) for i in unlisted[:3]]}); they are evaluated as images of their own, whereas pycocotools "
            "ignores their annotations. Add them to images[] or fix the annotations' image_id", stacklevel=2)
    _warn_without_segmentation(path, "annotation", len(data["annotations"]), skipped)
    return InstanceSet(tuple(instances), tuple(image_ids), skipped, str(path), sizes)


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
    """Load predictions from a JSON list of ``{image_id, category_id, segmentation, score}``.

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
    data : object, optional
        As in :func:`load_coco_ground_truth`.

    Returns
    -------
    InstanceSet
        ``source_id`` is the record's position in the list.
    """
    if default_score is not None and (isinstance(default_score, bool) or not isinstance(default_score, (int, float))
                                      or not math.isfinite(default_score)):
        raise InputFormatError(f"Expected default_score to be a finite number but got {default_score!r}")
    data = read_json(path) if data is None else data
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]
    if not isinstance(data, list):
        raise InputFormatError(
            f"{path}: expected a list of prediction records {{image_id, segmentation, score}} "
            f"but got {type(data).__name__}"
        )
    instances, skipped, image_ids = [], {}, []
    parsed = _parsed_segmentations(data)
    for index, record in enumerate(data):
        where = f"{path} record [{index}]"
        if not isinstance(record, dict):
            raise InputFormatError(f"{where}: expected an object but got {type(record).__name__}")
        if categories is not None and record.get("category_id") not in categories:
            _count(skipped, "other_category")
            continue
        score = _score(record, where, default_score)
        instance = _instance(record, where, score, skipped, drop_degenerate, parsed[index])
        if instance is None:
            if not record.get("segmentation"):
                _count(skipped, "empty_geometry")
            continue
        instances.append(Instance(instance.image_id, index, instance.exterior, instance.holes,
                                  score, instance.category_id))
    seen = set()
    for instance in instances:
        if instance.image_id not in seen:
            seen.add(instance.image_id)
            image_ids.append(instance.image_id)
    _warn_without_segmentation(path, "prediction", len(data), skipped)
    return InstanceSet(tuple(instances), tuple(image_ids), skipped, str(path))


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
