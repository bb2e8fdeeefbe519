"""Evaluation on a Dask cluster: work partitioned by image, merged on the client.

Every profile matches instances inside an image only, so the per-image work of an
evaluation (ring bands, validity, IoU, matching, pair and hole metrics, corners) of a
set of images is the concatenation of the work of its parts. :func:`run_profile_on`
splits the inputs into groups of consecutive images of about equal estimated
work (:func:`partition_images`: instances and outline lengths), runs the filters and
:func:`.paper.match_paper` on each group on a worker, and merges the partial matches on the
client back into the order of a single-process run (:func:`merge_matches`); the dataset-wide phase (AP/AR over the global
score ranking, means, Topo-EM, the ``p3`` tile averages) then runs on the client with
the same code as in one process, so the numbers are the same. Each profile's entry in
:data:`.profiles.REGISTRY` names its per-image phase and its dataset-wide phase.
``reference-code`` runs its own per-image phase (:func:`.reference_code.match_reference_code`)
on the groups, merged by :func:`merge_reference_matches`; ``p3-code`` adds its per-image values
(:func:`.p3_code.p3_code_parts`), merged by :func:`.p3_code.merge_p3_code_parts`.

When the run writes per-feature outputs, each ``paper``-phase partition's worker also
builds and encodes its records (:mod:`.record_parts`) and keeps them until they are
written, so the client handles no Python object per output feature and holds none of
their text or geometry.

Sweep points are whole evaluations and run one per task; bootstrap resamples run in
chunks of :func:`.analysis.resample_weights` rows (one chunk per worker thread, at most
64 resamples each, at least 16: :func:`resample_rows`), drawn from the same random stream as in one
process.
"""

import math
from dataclasses import fields, replace
from itertools import chain

import numpy as np

from ..metrics.analysis import (RESAMPLE_CHUNK, percentile_intervals, per_image_statistics, resample_metrics,
                                resample_weights)
from ...core.cluster import map_partitions, task_slots
from ...core.gc_pause import paused_gc
from ..inputs.instances import FieldRows, InstanceSet, PackedInstances, field_values
from ..metrics.matching import Candidates
from ..inputs.ordering import image_rank, image_sort_key, instance_sort_key
from ..outputs.record_parts import RecordParts, record_part
from ..metrics.detection import ImageMatches
from ..profiles.paper import (PaperMatch, image_codes, image_detection, match_paper, pair_outcome, prepare_rings,
                              select_instances)
from ..tables.profiles import PER_IMAGE_PHASES, profile_named, sweep_point
from ..profiles.reference_code import ReferenceMatch, RoleMatches, image_grouped_order, match_reference_code
from ..geometry.rings import RingTable

__all__ = ["PARTITIONS_PER_THREAD", "PARTITION_TAPER", "BOUNDARY_PX_PER_INSTANCE", "Partition", "partition_images",
           "planned_groups", "planned_shares", "instance_costs",
           "merge_matches", "merge_reference_matches", "run_profile_on", "partition_task", "merge_partitions",
           "sweep_on", "bootstrap_on", "RESAMPLE_CHUNK_MIN", "resample_rows", "resample_chunk",
           "resample_metrics_on"]

PARTITIONS_PER_THREAD = 4
"""Image groups per worker thread of the cluster: enough for the scheduler to balance uneven images.

A worker runs as many partitions at once as it has threads (``dask worker`` starts one
thread per core unless told ``--nthreads``), so the groups are counted per thread."""

PARTITION_TAPER = 0.7
"""How much the groups of a plan shrink along it: the first holds ``1 + PARTITION_TAPER`` times
the mean estimated work, the last ``1 - PARTITION_TAPER`` times, linearly in between.

Workers take the groups in plan order (:func:`.cluster.map_partitions` keeps it), so the
last groups handed out are small and the workers finish close together: the work a group
really takes differs from its estimate by about 17 % whatever its size (measured on the
scale-out benchmark set, ``benchmarks/bench_evaluator_scale_out.py``), and that spread then
falls on small groups only. Chosen with that benchmark's schedule simulation on synthetic
groups (that spread, 4 groups a thread, 16 and 64 workers), not on its measured partitions;
the numbers never depend on it."""


def planned_shares(n_parts, taper=None):
    """Each group's share of a plan's work, in plan order, relative to the mean (they sum to ``n_parts``).

    Linear from ``1 + taper`` down to ``1 - taper`` (``taper``: default :data:`PARTITION_TAPER`).

    Examples
    --------
    >>> planned_shares(3, 0.5).tolist()
    [1.5, 1.0, 0.5]
    """
    taper = PARTITION_TAPER if taper is None else taper
    n_parts = int(n_parts)
    if n_parts <= 1:
        return np.ones(1)
    return 1.0 + taper * (1.0 - 2.0 * np.arange(n_parts) / (n_parts - 1))


def planned_groups(before, total, n_parts):
    """The group (0 .. ``n_parts`` - 1) of each item of a plan, groups shrinking along it.

    Parameters
    ----------
    before : numpy.ndarray
        Estimated work of the items before each one, in plan order (non-decreasing).
    total : float
        Estimated work of all items.
    n_parts : int
        Groups wanted; their shares of ``total`` are :func:`planned_shares`.

    Returns
    -------
    numpy.ndarray
        int64, one group per item, non-decreasing.

    Examples
    --------
    >>> planned_groups(np.arange(10.0), 10.0, 2).tolist()  # shares 8.5 and 1.5 of 10
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    """
    share = planned_shares(n_parts)
    starts = (np.cumsum(share) - share) * (total / share.sum())
    return np.clip(np.searchsorted(starts, before, side="right") - 1, 0, len(share) - 1).astype(np.int64)


BOUNDARY_PX_PER_INSTANCE = 100.0
"""Pixels of outline that cost as much per-image work as one more instance.

Measured on the 4x scale-out benchmark set (``benchmarks/bench_evaluator_scale_out.py``):
fitting each partition's work to ``a * instances + b * boundary pixels`` gives ``a / b``
of about 100 px; it only balances the partitions, the numbers do not depend on it.
"""


class Partition:
    """A group of consecutive images of an evaluation and the positions of its instances.

    Attributes
    ----------
    gt_set, pred_set : InstanceSet
        The group's instances, in their order in the whole sets.
    gt_index, pred_index : numpy.ndarray
        Position of each of them in the whole sets.
    """

    __slots__ = ("gt_set", "pred_set", "gt_index", "pred_index")

    def __init__(self, gt_set, pred_set, gt_index, pred_index):
        self.gt_set, self.pred_set = gt_set, pred_set
        self.gt_index, self.pred_index = gt_index, pred_index


def partition_images(gt_set, pred_set, n_parts):
    """Split both sets into at most ``n_parts`` groups of consecutive images.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        In pixels.
    n_parts : int
        Wanted number of groups; their estimated work (:func:`instance_costs`, each image
        counting one instance more, so images without instances spread too) shrinks along
        the plan (:func:`planned_groups`).

    Returns
    -------
    list of Partition
        Non-empty groups, in image order (the order of :func:`.paper.image_codes`).
    """
    gt, pred = gt_set.instances, pred_set.instances
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    weight = (1 + np.bincount(gt_image, weights=instance_costs(gt_set), minlength=len(ids))
              + np.bincount(pred_image, weights=instance_costs(pred_set), minlength=len(ids)))
    group = planned_groups(np.cumsum(weight) - weight, weight.sum(), n_parts)
    parts = []
    for k in np.unique(group):
        images = np.flatnonzero(group == k)
        gi = np.flatnonzero(group[gt_image] == k)
        pi = np.flatnonzero(group[pred_image] == k)
        parts.append(Partition(
            InstanceSet(tuple(gt[i] for i in gi), tuple(ids[c] for c in images), {}, gt_set.source,
                        {ids[c]: gt_set.image_sizes[ids[c]] for c in images if ids[c] in gt_set.image_sizes}),
            InstanceSet(tuple(pred[i] for i in pi), (), {}, pred_set.source), gi, pi))
    return parts


def instance_costs(instance_set):
    """Estimated per-image work of each instance, in instances of average outline.

    The pair metrics sample every boundary at 1 px steps, so their work grows with the
    length of the outlines; the rest of the per-image work grows with the number of
    instances. Each instance costs ``1 + boundary / BOUNDARY_PX_PER_INSTANCE``.

    Parameters
    ----------
    instance_set : InstanceSet
        In pixels; its :attr:`~.instances.InstanceSet.ring_perimeters` (computed once per
        set, and already by the sampling-cost check).

    Returns
    -------
    numpy.ndarray
        float64, one cost per instance.
    """
    n = len(instance_set.instances)
    if not n:
        return np.zeros(0)
    boundary = np.bincount(np.repeat(np.arange(n), instance_set.ring_counts), weights=instance_set.ring_perimeters,
                           minlength=n)
    return 1.0 + boundary / BOUNDARY_PX_PER_INSTANCE


def _take(record, order):
    """A dataclass of equally long arrays with every array reordered."""
    return replace(record, **{f.name: getattr(record, f.name)[order] for f in fields(record)
                              if isinstance(getattr(record, f.name), np.ndarray)})


def _merge_pairs(matches, parts, gt_holes, pred_holes, by="pred_index"):
    """Pair metrics of the whole set: pairs sorted by ``by`` (an index field), hole matches by pair."""
    pairs = [m.pairs for m in matches]
    arrays = {f.name: np.concatenate([getattr(p, f.name) for p in pairs]) for f in fields(pairs[0])
              if f.name != "holes"}
    arrays["gt_index"] = np.concatenate([part.gt_index[p.gt_index] for part, p in zip(parts, pairs)])
    arrays["pred_index"] = np.concatenate([part.pred_index[p.pred_index] for part, p in zip(parts, pairs)])
    order = np.argsort(arrays[by], kind="stable")
    new_pair = np.empty(len(order), dtype=np.int64)
    new_pair[order] = np.arange(len(order))
    offsets = np.cumsum([0] + [len(p.gt_index) for p in pairs])
    holes = [p.holes for p in pairs]
    hole_arrays = {f.name: np.concatenate([getattr(h, f.name) for h in holes]) for f in fields(holes[0])}
    hole_arrays["pair"] = new_pair[np.concatenate([h.pair + o for h, o in zip(holes, offsets)])]
    hole_arrays["gt_hole"] = np.concatenate([g[h.gt_hole] for h, g in zip(holes, gt_holes)])
    hole_arrays["pred_hole"] = np.concatenate([p[h.pred_hole] for h, p in zip(holes, pred_holes)])
    merged_holes = _take(replace(holes[0], **hole_arrays), np.argsort(hole_arrays["pair"], kind="stable"))
    return _take(replace(pairs[0], holes=merged_holes, **arrays), order)


def _merge_candidates(parts, matches, n_gt):
    """The candidates of the whole set, sorted by prediction then ground truth as :func:`.matching.iou_candidates`."""
    cand_gt = np.concatenate([p.gt_index[m.cand.gt_index] for p, m in zip(parts, matches)])
    cand_pred = np.concatenate([p.pred_index[m.cand.pred_index] for p, m in zip(parts, matches)])
    order = np.lexsort((cand_gt, cand_pred))
    return Candidates(cand_gt[order], cand_pred[order], np.concatenate([m.cand.iou for m in matches])[order],
                      np.concatenate([m.cand.intersection for m in matches])[order], n_gt)


def _by_position(parts, values, index, size):
    """An object array of ``size`` holding each part's values at its ``gt_index`` / ``pred_index``."""
    out = np.empty(size, dtype=object)
    for part, value in zip(parts, values):
        out[getattr(part, index)] = value
    return out


def _merged_regions(parts, matches, side, size):
    """The occupied regions of one side of the whole set; None when the parts did not send them."""
    regions = [getattr(m, f"{side}_regions") for m in matches]
    return None if any(r is None for r in regions) else _by_position(parts, regions, f"{side}_index", size)


def merge_matches(gt_set, pred_set, parts, matches, rings=True):
    """The :class:`.paper.PaperMatch` of the whole sets from the matches of their partitions.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        The whole filtered sets (:func:`.paper.prepare`).
    parts : list of Partition
        ``gt_index`` / ``pred_index``: positions in ``gt_set`` / ``pred_set`` of each
        partition's instances.
    matches : list of PaperMatch
        ``match_paper`` of each partition's instances, in the order of ``parts``; each with
        its predictions' AP/AR matching and without candidates where the profile's workers
        match them (:attr:`.profiles.Profile.image_detection`).
    rings : bool
        False when the instances came without their rings (:class:`.instances.FieldRows`,
        see :meth:`.rings.RingTable.merged`).

    Returns
    -------
    PaperMatch
        Equal to ``match_paper(gt_set, pred_set, params)``: instances, rings, holes, pairs and
        candidates in the same order; where the parts carry their AP/AR matching instead of
        candidates, that matching of the whole set (``detected``) and no candidates.
    """
    gt, pred = _as_list(gt_set.instances), _as_list(pred_set.instances)
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    gt_table, gt_holes = RingTable.merged(gt, [m.gt_table for m in matches], [p.gt_index for p in parts], rings)
    pred_table, pred_holes = RingTable.merged(pred, [m.pred_table for m in matches], [p.pred_index for p in parts],
                                              rings)
    detected = None
    if all(m.detected is not None for m in matches):
        cand = None
        detected = ImageMatches.placed([m.detected for m in matches], [p.pred_index for p in parts], len(pred))
    else:
        cand = _merge_candidates(parts, matches, len(gt))
    return PaperMatch(
        gt, pred, ids, gt_image, pred_image, gt_table, pred_table,
        list(_by_position(parts, [m.gt_reasons for m in matches], "gt_index", len(gt))),
        list(_by_position(parts, [m.pred_reasons for m in matches], "pred_index", len(pred))),
        _merged_regions(parts, matches, "gt", len(gt)), _merged_regions(parts, matches, "pred", len(pred)),
        cand, _merge_pairs(matches, parts, gt_holes, pred_holes),
        np.sum([m.corner_counts for m in matches], axis=0), detected)


def _as_list(instances):
    """``instances`` as a list; :class:`.instances.FieldRows` as they are (a list would make an object per row)."""
    return instances if isinstance(instances, FieldRows) else list(instances)


def _reference_order(parts, matches, side):
    """The kept instances of one side in the order of one process, and where they come from.

    Ground truth stays in input order; predictions are grouped by image in order of first
    appearance (:func:`.reference_code.image_grouped_order`), as one process groups them.
    Returns the instances, their indices in the whole input set, and each part's
    positions in that order.
    """
    source = np.concatenate([getattr(part, f"{side}_index")[getattr(m, f"{side}_source")]
                             for part, m in zip(parts, matches)])
    local = [instance for m in matches for instance in getattr(m, side)]
    order = np.argsort(source, kind="stable")
    if side == "pred":
        order = order[image_grouped_order([local[n] for n in order])]
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    bounds = np.cumsum([0] + [len(getattr(m, side)) for m in matches])
    return [local[n] for n in order], source[order], [rank[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _merge_roles(roles, codes):
    """One :class:`.reference_code.RoleMatches` from those of the parts, in the order of image codes.

    ``codes[k]`` maps part ``k``'s image codes to the whole set's.
    """
    image = np.concatenate([code[role.image] for role, code in zip(roles, codes)])
    order = np.argsort(image, kind="stable")
    corners = None if roles[0].corner_counts is None else np.sum([r.corner_counts for r in roles], axis=0)
    return RoleMatches(image[order], *(np.concatenate([getattr(r, name) for r in roles])[order]
                                       for name in ("biou", "polis", "hd95", "mta")),
                       sum(r.gt_rings for r in roles), sum(r.pred_rings for r in roles), corners)


def _summed_counts(dicts):
    """Hole-filter counts of the whole set: the parts' counts added, the filter's area kept."""
    return {key: dicts[0][key] if key == "min_hole_area" else sum(d[key] for d in dicts) for key in dicts[0]}


def merge_reference_matches(gt_set, pred_set, parts, matches):
    """The :class:`.reference_code.ReferenceMatch` of the whole sets from those of their partitions.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        The whole unfiltered sets.
    parts : list of Partition
        ``gt_index`` / ``pred_index``: positions in ``gt_set`` / ``pred_set`` of each
        partition's instances.
    matches : list of ReferenceMatch
        ``match_reference_code`` of each partition's instances, in the order of ``parts``.

    Returns
    -------
    ReferenceMatch
        Equal to ``match_reference_code(gt_set, pred_set, params)``: instances, rings,
        pairs, candidates and ring matches in the same order.
    """
    gt, gt_source, gt_at = _reference_order(parts, matches, "gt")
    pred, pred_source, pred_at = _reference_order(parts, matches, "pred")
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    code_of = {image: code for code, image in enumerate(ids)}
    codes = [np.array([code_of.get(image, -1) for image in m.image_ids], dtype=np.int64) for m in matches]
    placed = [Partition(None, None, g, p) for g, p in zip(gt_at, pred_at)]
    gt_table, gt_holes = RingTable.merged(gt, [m.gt_table for m in matches], gt_at)
    pred_table, pred_holes = RingTable.merged(pred, [m.pred_table for m in matches], pred_at)
    return ReferenceMatch(
        gt, pred, gt_source, pred_source,
        list(_by_position(placed, [m.gt_reasons for m in matches], "gt_index", len(gt))),
        list(_by_position(placed, [m.pred_reasons for m in matches], "pred_index", len(pred))),
        _by_position(placed, [m.gt_regions for m in matches], "gt_index", len(gt)),
        _by_position(placed, [m.pred_regions for m in matches], "pred_index", len(pred)),
        ids, gt_image, pred_image, _merge_candidates(placed, matches, len(gt)), gt_table, pred_table,
        _merge_pairs(matches, placed, gt_holes, pred_holes, by="gt_index"),
        _merge_roles([m.exterior for m in matches], codes), _merge_roles([m.hole for m in matches], codes),
        tuple(sum(m.input_counts[k] for m in matches) for k in range(2)),
        tuple(_summed_counts([m.hole_filter[k] for m in matches]) for k in range(2)))


def _match_task(task):
    """Worker side: filters and per-image work of one partition ``(gt_set, pred_set, params)`` of the unfiltered sets.

    Returns the :class:`.paper.PaperMatch` of the filtered instances, in the canonical
    order of :mod:`.ordering` within the partition, as :func:`_for_transport` sends it,
    the profile's :attr:`.profiles.Profile.image_parts` of the partition (None when it has
    none) and None (no records).
    """
    gt_raw, pred_raw, params = task
    match, extra = _partition_match(gt_raw, pred_raw, params)
    return _for_transport(match, profile_named(params.profile).client_regions), extra, None


def _match_records_task(task):
    """Worker side: :func:`_match_task` and the partition's records, which stay on the worker.

    ``task`` is ``(gt_set, pred_set, params, request, gt_index, pred_index, rings)``
    (:mod:`.record_parts`; ``rings``: send the instances' rings back, see :func:`_for_transport`).
    Returns ``(result, part)`` for :func:`.cluster.map_partitions` with ``keep=True``:
    ``result`` as :func:`_match_task` returns it, with the outline of the partition's
    :class:`.record_parts.RecordPart` last; ``part`` the whole part, kept on the worker.
    """
    gt_raw, pred_raw, params, request, gt_index, pred_index, rings = task
    match, extra = _partition_match(gt_raw, pred_raw, params)
    part = record_part(pair_outcome(match, params), gt_raw, pred_raw, gt_index, pred_index, request)
    return (_for_transport(match, profile_named(params.profile).client_regions, rings), extra, part.outline()), part


def _partition_match(gt_raw, pred_raw, params):
    """The filtered :class:`.paper.PaperMatch` of one partition and its :attr:`.profiles.Profile.image_parts`."""
    gt_set, pred_set, _ = prepare_rings(*select_instances(gt_raw, pred_raw, params), params,
                                        profile_named(params.profile).canonical_rings)
    match = match_paper(gt_set, pred_set, params)
    profile = profile_named(params.profile)
    if profile.image_detection:
        match = replace(match, detected=image_detection(match, params))
    return match, profile.image_parts(match, gt_set.image_sizes) if profile.image_parts is not None else None


def _for_transport(match, regions=True, rings=True):
    """A match as a worker sends it: instances packed, ring tables reduced to their hole index.

    The tables' geometry (bands, polygons, regions) costs more to send than the client
    spends making the little of it that it reads; their rings are the instances' own, sent
    once in :class:`.instances.PackedInstances`. :func:`_received` undoes the packing.
    The instances' occupied regions are sent only with ``regions`` (a profile whose
    dataset-wide phase reads them, :attr:`.profiles.Profile.client_regions`): shapely
    geometries cost the client a WKB parse each. The rings are sent only with ``rings``
    (False when the worker made the records and the profile's dataset-wide phase reads no
    ring, :attr:`.profiles.Profile.client_rings`). The candidate pairs stay when the
    match carries its predictions' AP/AR matching (:attr:`.profiles.Profile.image_detection`).
    """
    dropped = {} if regions else {"gt_regions": None, "pred_regions": None}
    if isinstance(match, PaperMatch) and match.detected is not None:
        dropped["cand"] = None
    return replace(match, gt=PackedInstances.pack(match.gt, rings), pred=PackedInstances.pack(match.pred, rings),
                   gt_table=match.gt_table.hole_index(), pred_table=match.pred_table.hole_index(), **dropped)


def _received(match):
    """A match from :func:`_for_transport` with its instances unpacked (the tables stay hole indexes)."""
    return replace(match, gt=match.gt.unpack(), pred=match.pred.unpack())


def _in_image_order(local, rank_of):
    """Whether the partitions' instances, one partition after another, are in image order (``rank_of``).

    Each partition's instances are in image order already, and an image lies in one
    partition: so each partition's first image must come after the one before's last, as
    where the partitions are runs of the sorted images.
    """
    last = -1
    for instances in local:
        image_ids = field_values(instances, "image_id")
        if image_ids:
            if rank_of[image_ids[0]] <= last:
                return False
            last = rank_of[image_ids[-1]]
    return True


def _filtered(whole, matches, side):
    """The filtered whole set, in canonical order, from the partitions' filtered instances.

    Each partition's instances are already in canonical order, which sorts by image first
    (:func:`.ordering.instance_sort_key`), and every image lies in one partition: sorting
    by image (:func:`.ordering.image_sort_key`) and then by position in the partition
    gives the order of one process without comparing geometry. Only when two distinct
    image ids share a sort key (``True`` and ``"True"``) does it sort by the whole key.
    Returns the set and, per partition, the positions of its instances in it.
    """
    local = [getattr(match, side) for match in matches]
    columnar = all(isinstance(instances, FieldRows) for instances in local)
    flat = None if columnar else [instance for instances in local for instance in instances]
    image_of = list(chain.from_iterable(field_values(instances, "image_id") for instances in local))
    images = list(dict.fromkeys(image_of))
    keys = [image_sort_key(image) for image in images]  # each image's once, for the check and the ranks
    order = None  # the partitions one after another are in order already
    if len(set(keys)) == len(images):
        rank_of = dict(zip(images, image_rank(images, keys).tolist()))
        if not _in_image_order(local, rank_of):
            image = np.fromiter(map(rank_of.__getitem__, image_of), np.int64, len(image_of))
            within = np.concatenate([np.arange(len(instances)) for instances in local] or [np.zeros(0, np.int64)])
            order = np.lexsort((within, image))
    else:  # never for fields alone: the rings come back then (:func:`_rings_needed`)
        by_score = side == "pred"
        order = sorted(range(len(flat)), key=lambda n: instance_sort_key(flat[n], by_score))
    bounds = np.cumsum([0] + [len(instances) for instances in local])
    if order is None:
        rank = np.arange(len(image_of))
        instances = FieldRows.joined(local) if columnar else tuple(flat)
    else:
        rank = np.empty(len(image_of), dtype=np.int64)
        rank[order] = np.arange(len(image_of))
        instances = FieldRows.joined(local).taken(order) if columnar else tuple(flat[n] for n in order)
    image_ids = tuple(sorted(whole.image_ids, key=image_sort_key))
    merged = InstanceSet(instances, image_ids, whole.skipped, whole.source, whole.image_sizes)
    return merged, [rank[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _reference_task(task):
    """Worker side: the per-image work of the ``reference-code`` profile on one partition."""
    gt_set, pred_set, params = task
    return _for_transport(match_reference_code(gt_set, pred_set, params))


def run_profile_on(client, gt_set, pred_set, params, progress=None, record_parts=None):
    """:func:`.profiles.run_profile` with the per-image work on the cluster of ``client``.

    Parameters
    ----------
    client : distributed.Client
    gt_set, pred_set : InstanceSet
        Unfiltered inputs in pixels.
    params : EvaluationParams
    progress : callable, optional
        Called with a phase name as each phase starts.
    record_parts : PartsRequest, optional
        Have each partition's worker also encode its per-feature records for writing
        (:mod:`.record_parts`), for the profiles whose per-image phase is ``paper``;
        the outcome then carries them as ``record_parts``.

    Returns
    -------
    Outcome
        The same outcome as in one process (with ``record_parts`` when asked and made).

    Raises
    ------
    ClusterError
        A partition failed on its worker; the message names its first image.
    """
    step = progress or (lambda name: None)
    parts = partition_images(gt_set, pred_set, PARTITIONS_PER_THREAD * task_slots(client))
    step("partitions")
    names = [_partition_name(p) for p in parts]
    if record_parts is not None and partition_task(params) is _match_task:
        rings = _rings_needed(params, parts)
        tasks = [(_match_records_task, p.gt_set, p.pred_set, params, record_parts, p.gt_index, p.pred_index, rings)
                 for p in parts]
        checked, kept = map_partitions(client, _reference_checked_records_task, tasks, names=names,
                                       progress=_counting(step, "partition"), packed=True, keep=True)
        results = [result for result, _ in checked]
        encoded = RecordParts([result[2] for result in results], record_parts, kept)
    else:
        tasks = [(partition_task(params), p.gt_set, p.pred_set, params) for p in parts]
        checked = map_partitions(client, _reference_checked_task, tasks, names=names,
                                 progress=_counting(step, "partition"), packed=True)
        results = [result for result, _ in checked]
        encoded = None
    gt_set.learn(invalid_positions=np.sort(np.concatenate(
        [np.zeros(0, np.int64)] + [p.gt_index[invalid] for p, (_, invalid) in zip(parts, checked)])))
    outcome = merge_partitions(gt_set, pred_set, params, parts, results, progress)
    return outcome if encoded is None else replace(outcome, record_parts=encoded)


def _reference_checked_task(task):
    """Worker side: ``(function, *rest)``: ``function(rest)`` and where its raw references are invalid.

    The second value is :attr:`.instances.InstanceSet.invalid_positions` of the partition's
    unfiltered references (positions within the partition): the client's reference check
    reads them instead of building every reference polygon itself.
    """
    function, *rest = task
    return function(tuple(rest)), rest[0].invalid_positions


def _reference_checked_records_task(task):
    """:func:`_reference_checked_task` of a function that returns ``(result, kept)`` (``keep=True``)."""
    function, *rest = task
    result, kept = function(tuple(rest))
    return (result, rest[0].invalid_positions), kept


def _rings_needed(params, parts):
    """Whether the client needs the filtered instances' rings once the workers have made the records.

    When the profile's dataset-wide phase reads them (:attr:`.profiles.Profile.client_rings`),
    or when two distinct image ids may share a sort key (``True`` and ``"True"``; any
    ``bool`` id, which also equals ``1`` or ``0``): the merge then orders those images'
    instances by their geometry (:func:`_filtered`).
    """
    return _rings_needed_for(params, [image for part in parts for image in part.gt_set.image_ids])


def _rings_needed_for(params, ids):
    """:func:`_rings_needed` of a run whose partitions hold the images ``ids``."""
    shared = len({image_sort_key(image) for image in ids}) != len(ids) or any(isinstance(i, bool) for i in ids)
    return profile_named(params.profile).client_rings or shared


def partition_task(params):
    """The worker function of one partition ``(gt_set, pred_set, params)`` for the profile of ``params``."""
    return _PER_IMAGE_PHASES[profile_named(params.profile).per_image][0]


def merge_partitions(gt_set, pred_set, params, parts, results, progress=None):
    """The client side of :func:`run_profile_on`: merge the partitions' results, then the dataset-wide phase.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        The whole unfiltered inputs.
    params : EvaluationParams
    parts : list of Partition
        From :func:`partition_images`.
    results : list
        :func:`partition_task` of each partition, in the order of ``parts``. Emptied
        once merged: the merged arrays are copies, so the parts' own would otherwise stay
        in memory through the dataset-wide phase.
    progress : callable, optional
        Called with ``"merge"`` and ``"summary"`` as those phases start.

    Returns
    -------
    Outcome
    """
    step = progress or (lambda name: None)
    step("merge")
    profile = profile_named(params.profile)
    merged = _PER_IMAGE_PHASES[profile.per_image][1](gt_set, pred_set, parts, results)
    results.clear()
    step("summary")
    return profile.finish(*merged, params, progress)


def _merge_paper_partitions(gt_set, pred_set, parts, results):
    """``(match, gt, pred, image parts)`` of the whole run from the results of :func:`_match_task`."""
    rings = all(result[0].gt.with_rings for result in results)
    matches = [_received(result[0]) for result in results]
    gt, gt_positions = _filtered(gt_set, matches, "gt")
    pred, pred_positions = _filtered(pred_set, matches, "pred")
    placed = [Partition(None, None, g, p) for g, p in zip(gt_positions, pred_positions)]
    return merge_matches(gt, pred, placed, matches, rings), gt, pred, [result[1] for result in results]


def _merge_reference_partitions(gt_set, pred_set, parts, results):
    """``(match, None, None, None)`` of the whole run from the results of :func:`_reference_task`."""
    return merge_reference_matches(gt_set, pred_set, parts, [_received(match) for match in results]), None, None, None


_PER_IMAGE_PHASES = dict(zip(PER_IMAGE_PHASES, ((_match_task, _merge_paper_partitions),
                                                 (_reference_task, _merge_reference_partitions)), strict=True))
"""The worker function and the client-side merge of each of :data:`.profiles.PER_IMAGE_PHASES`, in its order."""


def _counting(step, what):
    """A ``map_partitions`` progress callback that reports ``"<what> k of n"`` as a phase name.

    The phase callback asks the run's cancel check (:mod:`.cancel`); when it raises, the
    tasks still queued or running are canceled.
    """
    return lambda done, total: step(f"{what} {done} of {total}")


def _partition_name(part):
    images = part.gt_set.image_ids
    return f"the partition of images {images[0]!r}..{images[-1]!r}" if images else "a partition"


@paused_gc()
def _sweep_task(task):
    """Worker side: the metrics of one sweep point (cyclic garbage collector held off, :mod:`.gc_pause`)."""
    return sweep_point(*task)


def sweep_on(client, gt_set, pred_set, params_list, names, progress=None):
    """The metrics ``names`` of one whole evaluation per parameter set, one task each.

    The inputs are sent to the workers once; each task returns only its metrics.
    ``progress`` is called with a phase name as each point finishes; when it raises (a cancel
    check, :mod:`.cancel`), the points still running are canceled.
    """
    gt_future, pred_future = client.scatter([gt_set, pred_set], broadcast=True, hash=False)
    try:
        return map_partitions(client, _sweep_task, [(gt_future, pred_future, p, names) for p in params_list],
                              names=[f"the sweep point {p.as_dict()}" for p in params_list],
                              progress=_counting(progress or (lambda name: None), "sweep point"))
    finally:
        client.cancel([gt_future, pred_future])


def _bootstrap_task(task):
    weights, stats, ranking = task
    return resample_metrics(weights, stats, ranking)


RESAMPLE_CHUNK_MIN = 16
"""Fewest resamples of a bootstrap task on a cluster: a task costs the scheduler and the client a few
milliseconds, about as much as 16 resamples of a few thousand images take a worker (measured on
the scale-out benchmark's 16x set: 2.3 ms a task, 4.9 ms a resample of 5,632 images)."""


def resample_rows(resamples, slots):
    """Resamples per bootstrap task on ``slots`` worker threads.

    One chunk for each thread, at least :data:`RESAMPLE_CHUNK_MIN` and at most
    :data:`.analysis.RESAMPLE_CHUNK` resamples. A large cluster then runs the bootstrap in
    one round of small chunks instead of a few workers running 64 resamples each while the
    others wait, without a task for every few resamples; the resamples, and so the
    intervals, do not depend on the chunks (:func:`.analysis.resample_weights`).

    Examples
    --------
    >>> resample_rows(500, 2), resample_rows(500, 16), resample_rows(500, 64)
    (64, 32, 16)
    """
    return min(RESAMPLE_CHUNK, max(RESAMPLE_CHUNK_MIN, math.ceil(resamples / max(1, slots))))


def resample_chunk(client, resamples):
    """Resamples per bootstrap task on the cluster of ``client``: :func:`resample_rows` of its threads.

    ``client`` None (in this process): :data:`.analysis.RESAMPLE_CHUNK`.
    """
    if client is None:
        return RESAMPLE_CHUNK
    return resample_rows(resamples, task_slots(client))


def resample_metrics_on(client, stats, ranking, weight_chunks, progress=None):
    """:func:`.analysis.resample_metrics` of every chunk of weights, one task per chunk.

    ``client`` None computes them in this process. Returns the chunks' samples in order.
    ``progress`` is called with a phase name as each chunk finishes; when it raises (a cancel
    check, :mod:`.cancel`), the chunks still running are canceled.
    """
    weight_chunks = list(weight_chunks)
    if client is None:
        return [resample_metrics(weights, stats, ranking) for weights in weight_chunks]
    shared = client.scatter([stats, ranking], broadcast=True, hash=False)
    weights = []
    try:
        # The weights (a byte per image and resample, resample_weights) go to the workers as
        # data: inside the task graph they would make the graph as large.
        weights = client.scatter(weight_chunks, hash=False)
        return map_partitions(client, _bootstrap_task, [(w, *shared) for w in weights],
                              names=[f"bootstrap chunk {k}" for k in range(len(weight_chunks))],
                              progress=_counting(progress or (lambda name: None), "bootstrap chunk"))
    finally:
        client.cancel([*shared, *weights])


def bootstrap_on(client, outcome, resamples, seed, level, progress=None):
    """:func:`.analysis.bootstrap_intervals` with the resamples computed on the cluster."""
    n_images = len(outcome.image_ids)
    if n_images < 2:
        return percentile_intervals([], resamples, seed, level, n_images)
    chunks = resample_metrics_on(client, per_image_statistics(outcome), outcome.ranking,
                                 resample_weights(n_images, resamples, seed, resample_chunk(client, resamples)),
                                 progress)
    return percentile_intervals(chunks, resamples, seed, level, n_images)
