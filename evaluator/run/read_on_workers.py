"""Cluster evaluation whose workers read their own partitions of COCO-style JSON inputs.

In a cluster run of :mod:`.distributed` the client reads both files, builds every
instance and sends each partition's instances to its worker. Here the workers find where
each record lies (:func:`.coco_index.coco_indexes`: byte ranges and image ids, from a few
array passes over chunks of the files, side by side) and the files' other parts; the
client reads only the ground truth's ``images[]`` and splits the images into groups of
about equal bytes of records, and each worker parses the records of its group from the
files, with the code that reads a whole file (:func:`.io_coco.read_coco_records`), then
scores them and encodes their per-feature records as :mod:`.distributed` does. It sends
back what the client's merge and summary read: the instances' fields without their rings, as columns
(:class:`.instances.FieldRows`), where each lies in the files, the skip counts, and the
few values the input checks take from the rings (:data:`.instances.LEARNABLE`: the
longest ring, the bounds, the invalid references).

Everything a one-process run says about its inputs is said the same way: the same errors
(the first wrong record in the ground truth, then in the predictions, named by its number
in the file), the same warnings, the same counts and numbers (the merge and the summary
are :mod:`.distributed`'s). Where that cannot be guaranteed, :func:`evaluate_files_on`
returns None and the caller reads the files whole: a file the index cannot place every
record of (or the workers cannot read), a record range that does not parse (the
whole-file reading gives the error), a profile whose dataset-wide phase reads rings on
the client (every one but ``paper``).
"""

import contextlib
import contextvars
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ...core.cluster import map_partitions, task_slots
from ...core.errors import InputFormatError, InvalidParameterError
from ..inputs.coco_index import chunks_for, coco_index, coco_indexes
from ..inputs.input_checks import check_categories, check_sampling_cost
from ..inputs.instances import FIELD_NAMES, FieldRows, InstanceSet
from ..inputs.io_coco import (check_default_score, compact_values, listed_images, read_coco_records,
                               warn_without_segmentation, with_unlisted_images)
from ..inputs.ordering import image_sort_key
from ..outputs.record_parts import RecordParts, record_part
from ..profiles.paper import pair_outcome
from ..tables.profiles import profile_named
from .distributed import (PARTITIONS_PER_THREAD, Partition, _counting, _for_transport, _match_task,
                          _partition_match, _rings_needed_for, merge_partitions, partition_task, planned_groups)

__all__ = ["BYTES_PER_IMAGE", "FilePart", "ground_truth_indexed_once", "indexed_inputs", "plan_file_parts",
           "evaluate_files_on", "applies_to"]

BYTES_PER_IMAGE = 2000.0
"""Bytes of records that cost as much per-image work as one more image: each image's weight is
``1 + record bytes / BYTES_PER_IMAGE``. It only balances the groups; the numbers do not depend on it."""


@dataclass(frozen=True)
class FilePart:
    """Which records of the two files one partition reads, and its images.

    Attributes
    ----------
    gt_path, pred_path : str
        The files as the user named them (for messages and the sets' ``source``).
    gt_file, pred_file : str
        Their absolute paths (where the workers read them).
    gt_start, gt_end, gt_numbers, pred_start, pred_end, pred_numbers : numpy.ndarray
        int64, byte range and number in the file of each record, in file order.
    image_ids : tuple
        The partition's images (every image of the evaluation is in one partition).
    image_sizes : dict
        ``images[]`` width and height of those of its images the ground truth lists.
    """

    gt_path: str
    pred_path: str
    gt_file: str
    pred_file: str
    gt_start: np.ndarray
    gt_end: np.ndarray
    gt_numbers: np.ndarray
    pred_start: np.ndarray
    pred_end: np.ndarray
    pred_numbers: np.ndarray
    image_ids: tuple
    image_sizes: dict


def applies_to(params, sweeps=False):
    """Whether a run with ``params`` can have its workers read the inputs: ``paper``-like and no sweeps.

    The profile's per-image phase is ``paper`` and its dataset-wide phase reads no ring
    (:attr:`.profiles.Profile.client_rings`); the sweeps re-evaluate whole sets.
    """
    return not sweeps and partition_task(params) is _match_task and not profile_named(params.profile).client_rings


def indexed_inputs(gt_path, pred_path, client=None):
    """The :class:`.coco_index.CocoIndex` of both files, or None when either is not COCO JSON the index can place.

    The ground truth is an object with an ``annotations`` list (not GeoJSON); the
    predictions a list, or an object with an ``annotations`` list. With ``client`` the two
    files are indexed on its workers, at their absolute paths, each split into a chunk per
    worker thread of at least :data:`.coco_index.INDEX_CHUNK_BYTES`
    (:func:`.coco_index.chunks_for`; None too when the workers cannot read them there: the
    files are then read here). Inside
    :func:`ground_truth_indexed_once` a ground truth indexed before is not indexed again.
    """
    from pathlib import Path

    paths = [Path(path).resolve() for path in (gt_path, pred_path)]
    if any(path.suffix.lower() != ".json" for path in paths):
        return None
    remembered = _INDEXED_ONCE.get()
    known = remembered.get(paths[0]) if remembered is not None else None
    wanted = paths[1:] if known is not None else paths
    if client is None:
        found = [coco_index(path) for path in wanted]
    else:
        found = coco_indexes(wanted, partial(chunks_for, slots=task_slots(client)),
                             lambda func, *args: client.submit(func, *args, pure=False), client.gather)
    gt, pred = (known, *found) if known is not None else found
    if gt is None or not isinstance(gt.skeleton, dict) or gt.skeleton.get("type") == "FeatureCollection":
        return None
    if remembered is not None:
        remembered[paths[0]] = gt
    if pred is None or (isinstance(pred.skeleton, dict) and pred.skeleton.get("annotations") != []):
        return None
    return gt, pred


_INDEXED_ONCE = contextvars.ContextVar("polytopo_ground_truth_indexed_once", default=None)
"""Inside :func:`ground_truth_indexed_once`: the ground truths' indexes made so far, by absolute path."""


@contextlib.contextmanager
def ground_truth_indexed_once():
    """Inside the block :func:`indexed_inputs` indexes each ground-truth file once.

    A comparison's methods share one ground truth, which does not change while they are
    evaluated (where the client reads the files it reads the ground truth once too); its
    index is made with the first method's and taken again for the others.
    """
    token = _INDEXED_ONCE.set({})
    try:
        yield
    finally:
        _INDEXED_ONCE.reset(token)


def _image_codes(listed, *record_ids):
    """Codes of every image (listed first, then first appearance in the records) and the code of each record."""
    if all(isinstance(ids, np.ndarray) for ids in record_ids) and all(type(i) is int for i in listed):
        joined = np.concatenate([np.array(listed, dtype=np.int64), *record_ids])
        unique, first, inverse = np.unique(joined, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # codes in order of first appearance
        code_of_unique = np.empty(len(unique), np.int64)
        code_of_unique[order] = np.arange(len(unique))
        codes = code_of_unique[inverse]
        ids = unique[order].tolist()
        bounds = np.cumsum([len(listed)] + [len(r) for r in record_ids])
        return ids, [codes[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    code_of = {}
    for image in listed:
        code_of.setdefault(image, len(code_of))
    per_file = []
    for ids in record_ids:
        values = ids.tolist() if isinstance(ids, np.ndarray) else ids
        per_file.append(np.fromiter((code_of.setdefault(image, len(code_of)) for image in values), np.int64,
                                    len(values)))
    return list(code_of), per_file


def plan_file_parts(gt_path, pred_path, gt_index, pred_index, listed, sizes, n_parts):
    """Split the images of both indexed files into at most ``n_parts`` groups, shrinking along the plan.

    ``listed`` and ``sizes``: the ground truth's ``images[]`` (:func:`.io_coco.listed_images`).
    Images go in :func:`.ordering.image_sort_key` order; each weighs ``1 + record bytes /``
    :data:`BYTES_PER_IMAGE` (both files); the groups' weights shrink along the plan
    (:func:`.distributed.planned_groups`). Returns the non-empty groups as :class:`FilePart`.
    """
    ids, (gt_code, pred_code) = _image_codes(listed, gt_index.image_ids, pred_index.image_ids)
    weight = 1.0 + (np.bincount(gt_code, weights=gt_index.end - gt_index.start, minlength=len(ids))
                    + np.bincount(pred_code, weights=pred_index.end - pred_index.start,
                                  minlength=len(ids))) / BYTES_PER_IMAGE
    order = np.array(sorted(range(len(ids)), key=lambda k: image_sort_key(ids[k])), dtype=np.int64)
    group = np.empty(len(ids), np.int64)
    group[order] = planned_groups(np.cumsum(weight[order]) - weight[order], weight.sum(), n_parts)
    parts = []
    for k in np.unique(group):
        images = order[group[order] == k]
        gi, pi = np.flatnonzero(group[gt_code] == k), np.flatnonzero(group[pred_code] == k)
        image_ids = tuple(ids[c] for c in images.tolist())
        parts.append(FilePart(str(gt_path), str(pred_path), str(gt_index.path), str(pred_index.path),
                              gt_index.start[gi], gt_index.end[gi], gi, pred_index.start[pi], pred_index.end[pi], pi,
                              image_ids, {image: sizes[image] for image in image_ids if image in sizes}))
    return parts


@dataclass(frozen=True)
class _Side:
    """What a worker sends back about one side's records of its partition (positions within the partition)."""

    columns: dict
    numbers: np.ndarray
    skipped: dict
    longest_ring: object
    bounds: object
    invalid_positions: np.ndarray
    first_invalid_reason: object


def _read_side(part, role, options):
    """The partition's instance set of one side, and each instance's record number in the file."""
    name, path, start, end, numbers = (
        (part.gt_path, part.gt_file, part.gt_start, part.gt_end, part.gt_numbers) if role == "gt" else
        (part.pred_path, part.pred_file, part.pred_start, part.pred_end, part.pred_numbers))
    columns = read_coco_records(path, start, end, numbers, role, options["categories"],
                                options["default_score"] if role == "pred" else None, options["drop_degenerate"],
                                name=name)
    columns.source = name
    if role == "gt":
        columns.image_ids, columns.image_sizes = list(part.image_ids), part.image_sizes
    else:
        columns.image_ids = []
    return columns.instance_set(), numbers[columns.kept_records()]


def _side(instance_set, numbers, invalid=False):
    """The :class:`_Side` of one side's partition set (its invalid polygons only for the reference, ``invalid``)."""
    return _Side({name: compact_values(list(instance_set.column(name))) for name in FIELD_NAMES}, numbers,
                 dict(instance_set.skipped),
                 instance_set.longest_ring, instance_set.bounds,
                 instance_set.invalid_positions if invalid else np.zeros(0, np.int64),
                 instance_set.first_invalid_reason if invalid else None)


def _read_task(task):
    """Worker side: read, check, score and encode one partition (``(part, options, params, request, rings)``).

    Returns ``(reply, kept)`` for :func:`.cluster.map_partitions` with ``keep=True``;
    ``reply`` is ``("reread", None)`` when a record range does not parse as JSON;
    ``("error", (exception, gt))`` for a wrong record (its ``record_number`` and ``role``
    set; ``gt`` the reference's :class:`_Side` when the wrong record is a prediction);
    ``("refused", (None, gt, pred))`` when a ring needs too many samples (nothing scored);
    else ``("scored", ((match, extra, outline), gt, pred))`` with the two :class:`_Side`
    digests, the record part kept.
    """
    part, options, params, request, rings = task
    sets = {}
    for role in ("gt", "pred"):
        try:
            sets[role] = _read_side(part, role, options)
        except InputFormatError as exc:
            exc.role = role
            return ("error", (exc, _side(*sets["gt"]) if "gt" in sets else None)), None
        except ValueError:  # the JSON of the ranges (or its UTF-8) does not parse
            return ("reread", None), None
    (gt_set, gt_numbers), (pred_set, pred_numbers) = sets["gt"], sets["pred"]
    try:
        check_sampling_cost(gt_set, pred_set, params)
    except InvalidParameterError:
        return ("refused", (None, _side(gt_set, gt_numbers), _side(pred_set, pred_numbers))), None
    match, extra = _partition_match(gt_set, pred_set, params)
    made = record_part(pair_outcome(match, params), gt_set, pred_set, gt_numbers, pred_numbers, request)
    transported = _for_transport(match, profile_named(params.profile).client_regions, rings)
    return ("scored", ((transported, extra, made.outline()), _side(gt_set, gt_numbers, invalid=True),
                       _side(pred_set, pred_numbers))), made


def _whole(sides):
    """One side's instances in file order from the partitions' digests, its skip counts and learned values.

    Returns ``(instances, skipped, learned, positions)``: ``instances`` a
    :class:`.instances.FieldRows`; ``positions[k]`` are the places in it of partition ``k``'s.
    """
    numbers = np.concatenate([side.numbers for side in sides])
    order = np.argsort(numbers, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    columns = {name: _joined([side.columns[name] for side in sides], order) for name in FIELD_NAMES}
    ends = np.cumsum([0] + [len(side.numbers) for side in sides])
    skipped = {}
    for side in sides:
        for reason, count in side.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
    longest = [side.longest_ring for side in sides if side.longest_ring is not None]
    boxes = np.array([side.bounds for side in sides if side.bounds is not None], dtype=float).reshape(-1, 4)
    learned = {"longest_ring": max(longest) if longest else None,
               "bounds": (*boxes[:, :2].min(axis=0).tolist(), *boxes[:, 2:].max(axis=0).tolist()) if len(boxes)
               else None}
    return FieldRows(columns), skipped, learned, [rank[lo:hi] for lo, hi in zip(ends[:-1], ends[1:])]


def _joined(parts, order):
    """The values of one field of every partition (:func:`.io_coco.compact_values`), in ``order``, as a list."""
    if all(isinstance(part, np.ndarray) for part in parts) and len({part.dtype for part in parts}) == 1:
        return np.concatenate(parts)[order].tolist()
    values = [value for part in parts for value in (part.tolist() if isinstance(part, np.ndarray) else part)]
    return [values[k] for k in order.tolist()]


def _invalid_of(sides, positions):
    """The whole reference set's invalid positions and the first one's reason, from the workers' findings."""
    found = [(position[side.invalid_positions], side.first_invalid_reason)
             for side, position in zip(sides, positions) if len(side.invalid_positions)]
    invalid = np.sort(np.concatenate([np.zeros(0, np.int64)] + [where for where, _ in found]))
    first = min(found, key=lambda item: item[0][0])[1] if found else None
    return {"invalid_positions": invalid, "first_invalid_reason": first}


def _raise_first_error(errors, role):
    """Raise the error of the lowest record number among those of ``role``, if any."""
    own = [exc for exc in errors if exc.role == role]
    if own:
        raise min(own, key=lambda exc: int(exc.record_number))


def evaluate_files_on(client, gt_path, pred_path, params, step, record_parts, options, n_parts=None):
    """The sets and the outcome of an evaluation whose workers read their partitions, or None.

    Parameters
    ----------
    client : distributed.Client or None
        None runs the partitions one after the other in this process (as a benchmark
        measures them).
    gt_path, pred_path : str or Path
        COCO-style JSON files.
    params : EvaluationParams
        A profile :func:`applies_to`.
    step : callable
        The phase callback (it asks the cancel check).
    record_parts : PartsRequest
        What the workers encode for writing.
    options : dict
        ``categories``, ``default_score``, ``drop_degenerate`` as for :func:`.api.load_inputs`.
    n_parts : int, optional
        Partitions wanted; by default :data:`.distributed.PARTITIONS_PER_THREAD` per thread
        of the cluster.

    Returns
    -------
    tuple or None
        ``(gt_set, pred_set, outcome)``: the whole unfiltered sets, their instances as
        :class:`.instances.FieldRows` (their rings stayed on the workers;
        :data:`.instances.LEARNABLE` learned) and the outcome with its record parts; None
        when the files must be read here instead (see the module).

    Raises
    ------
    InputFormatError
        A wrong record or input, as reading the files whole raises it.
    InvalidParameterError
        A ring needs more boundary samples than allowed (:func:`.input_checks.check_sampling_cost`).
    """
    indexes = indexed_inputs(gt_path, pred_path, client)
    if indexes is None:
        return None
    gt_index, pred_index = indexes
    listed, sizes = listed_images(gt_path, gt_index.skeleton)
    parts = plan_file_parts(gt_path, pred_path, gt_index, pred_index, listed, sizes,
                            n_parts or PARTITIONS_PER_THREAD * task_slots(client))
    step("partitions")
    rings = _rings_needed_for(params, [image for part in parts for image in part.image_ids])
    tasks = [(part, options, params, record_parts, rings) for part in parts]
    names = [f"the partition of images {p.image_ids[0]!r}..{p.image_ids[-1]!r}" for p in parts]
    # the tasks are plans of what to read (about 25 bytes a record), so they all go at once
    replies, kept = map_partitions(client, _read_task, tasks, names=names, progress=_counting(step, "partition"),
                                   packed=True, keep=True, at_once=True)
    if any(kind == "reread" for kind, _ in replies):
        return None
    errors = [value[0] for kind, value in replies if kind == "error"]
    _raise_first_error(errors, "gt")
    gt_instances, gt_skipped, gt_learned, gt_positions = _whole([value[1] for _, value in replies])
    image_ids = with_unlisted_images(gt_path, listed, dict.fromkeys(gt_instances.columns["image_id"]), stacklevel=5)
    warn_without_segmentation(gt_path, "annotation", len(gt_index), gt_skipped, stacklevel=5)
    check_default_score(options["default_score"])
    _raise_first_error(errors, "pred")
    pred_instances, pred_skipped, pred_learned, pred_positions = _whole([value[2] for _, value in replies])
    warn_without_segmentation(pred_path, "prediction", len(pred_index), pred_skipped, stacklevel=5)
    gt_set = InstanceSet(gt_instances, tuple(image_ids), gt_skipped, str(gt_path), sizes)
    pred_set = InstanceSet(pred_instances, tuple(dict.fromkeys(pred_instances.columns["image_id"])), pred_skipped,
                           str(pred_path))
    gt_set.learn(**gt_learned)
    pred_set.learn(**pred_learned)
    check_categories(gt_set, pred_set, options["categories"])
    if any(kind == "refused" for kind, _ in replies):
        check_sampling_cost(gt_set, pred_set, params)  # raises, naming the longest ring of the whole sets
    gt_set.learn(**_invalid_of([value[1] for _, value in replies], gt_positions))
    results = [value[0] for _, value in replies]
    encoded = RecordParts([result[2] for result in results], record_parts, kept)
    del replies
    placed = [Partition(None, None, g, p) for g, p in zip(gt_positions, pred_positions)]
    outcome = merge_partitions(gt_set, pred_set, params, placed, results, step)  # empties results
    return gt_set, pred_set, replace(outcome, record_parts=encoded)
