"""Evaluation on a Dask cluster: work partitioned by image, merged on the client.

Every profile matches instances inside an image only, so the per-image work of an
evaluation (ring bands, validity, IoU, matching, pair and hole metrics, corners) of a
set of images is the concatenation of the work of its parts. :func:`run_profile_on`
splits the inputs into groups of consecutive images of about equal instance
counts (:func:`partition_images`), runs the filters and :func:`.paper.match_paper` on
each group on a worker, and merges the partial matches on the client back into the order
of a single-process run (:func:`merge_matches`); the dataset-wide phase (AP/AR over the global
score ranking, means, Topo-EM, the ``p3`` tile averages) then runs on the client with
the same code as in one process, so the numbers are the same.

Sweep points are whole evaluations and run one per task; bootstrap resamples run in
chunks of :func:`.analysis.resample_weights` rows, drawn from the same random stream as
in one process. The profiles of :data:`WHOLE_RUN_PROFILES` are not partitioned: their
evaluation runs as one task on a worker.
"""

from dataclasses import fields, replace

import numpy as np

from .analysis import percentile_intervals, per_image_statistics, resample_metrics, resample_weights
from .cluster import map_partitions
from .instances import InstanceSet
from .matching import Candidates
from .ordering import image_sort_key, instance_sort_key
from .paper import PaperMatch, image_codes, match_paper, prepare_rings, select_instances, summarize_paper
from .rings import RingTable

__all__ = ["PARTITIONS_PER_WORKER", "WHOLE_RUN_PROFILES", "Partition", "partition_images", "merge_matches", "run_profile_on",
           "sweep_on", "bootstrap_on", "resample_metrics_on"]

PARTITIONS_PER_WORKER = 4
"""Image groups per worker: enough for the scheduler to balance uneven images."""


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
    n_parts : int
        Wanted number of groups; groups hold about equal numbers of instances (each
        image counts one more, so images without instances spread too).

    Returns
    -------
    list of Partition
        Non-empty groups, in image order (the order of :func:`.paper.image_codes`).
    """
    gt, pred = gt_set.instances, pred_set.instances
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    weight = 1 + np.bincount(gt_image, minlength=len(ids)) + np.bincount(pred_image, minlength=len(ids))
    before = np.cumsum(weight) - weight
    group = np.minimum(before * max(1, int(n_parts)) // max(1, int(weight.sum())), max(1, int(n_parts)) - 1)
    parts = []
    for k in np.unique(group):
        images = np.flatnonzero(group == k)
        gi = np.flatnonzero(group[gt_image] == k)
        pi = np.flatnonzero(group[pred_image] == k)
        parts.append(Partition(
            InstanceSet(tuple(gt[i] for i in gi), tuple(ids[c] for c in images), {}, gt_set.source),
            InstanceSet(tuple(pred[i] for i in pi), (), {}, pred_set.source), gi, pi))
    return parts


def _take(record, order):
    """A dataclass of equally long arrays with every array reordered."""
    return replace(record, **{f.name: getattr(record, f.name)[order] for f in fields(record)
                              if isinstance(getattr(record, f.name), np.ndarray)})


def _merge_pairs(matches, parts, gt_holes, pred_holes):
    """Pair metrics of the whole set: pairs sorted by prediction, hole matches by pair."""
    pairs = [m.pairs for m in matches]
    arrays = {f.name: np.concatenate([getattr(p, f.name) for p in pairs]) for f in fields(pairs[0])
              if f.name != "holes"}
    arrays["gt_index"] = np.concatenate([part.gt_index[p.gt_index] for part, p in zip(parts, pairs)])
    arrays["pred_index"] = np.concatenate([part.pred_index[p.pred_index] for part, p in zip(parts, pairs)])
    order = np.argsort(arrays["pred_index"], kind="stable")
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


def _by_position(parts, values, index, size):
    """An object array of ``size`` holding each part's values at its ``gt_index`` / ``pred_index``."""
    out = np.empty(size, dtype=object)
    for part, value in zip(parts, values):
        out[getattr(part, index)] = value
    return out


def merge_matches(gt_set, pred_set, parts, matches):
    """The :class:`.paper.PaperMatch` of the whole sets from the matches of their partitions.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        The whole filtered sets (:func:`.paper.prepare`).
    parts : list of Partition
        ``gt_index`` / ``pred_index``: positions in ``gt_set`` / ``pred_set`` of each
        partition's instances.
    matches : list of PaperMatch
        ``match_paper`` of each partition's instances, in the order of ``parts``.

    Returns
    -------
    PaperMatch
        Equal to ``match_paper(gt_set, pred_set, params)``: instances, rings, holes, pairs and
        candidates in the same order.
    """
    gt, pred = list(gt_set.instances), list(pred_set.instances)
    gt_image, pred_image, ids = image_codes(gt, pred, list(gt_set.image_ids) + list(pred_set.image_ids))
    gt_table, gt_holes = RingTable.merged(gt, [m.gt_table for m in matches], [p.gt_index for p in parts])
    pred_table, pred_holes = RingTable.merged(pred, [m.pred_table for m in matches], [p.pred_index for p in parts])
    cand_gt = np.concatenate([p.gt_index[m.cand.gt_index] for p, m in zip(parts, matches)])
    cand_pred = np.concatenate([p.pred_index[m.cand.pred_index] for p, m in zip(parts, matches)])
    order = np.lexsort((cand_gt, cand_pred))
    cand = Candidates(cand_gt[order], cand_pred[order],
                      np.concatenate([m.cand.iou for m in matches])[order],
                      np.concatenate([m.cand.intersection for m in matches])[order], len(gt))
    return PaperMatch(
        gt, pred, ids, gt_image, pred_image, gt_table, pred_table,
        list(_by_position(parts, [m.gt_reasons for m in matches], "gt_index", len(gt))),
        list(_by_position(parts, [m.pred_reasons for m in matches], "pred_index", len(pred))),
        _by_position(parts, [m.gt_regions for m in matches], "gt_index", len(gt)),
        _by_position(parts, [m.pred_regions for m in matches], "pred_index", len(pred)),
        cand, _merge_pairs(matches, parts, gt_holes, pred_holes),
        np.sum([m.corner_counts for m in matches], axis=0))


def _worker_count(client):
    return max(1, len(client.scheduler_info()["workers"]))


def _match_task(task):
    """Worker side: filters and per-image work of one partition of the unfiltered sets.

    Returns the :class:`.paper.PaperMatch` of the filtered instances, in the canonical
    order of :mod:`.ordering` within the partition.
    """
    gt_raw, pred_raw, params = task
    gt_set, pred_set, _ = prepare_rings(*select_instances(gt_raw, pred_raw, params), params)
    return match_paper(gt_set, pred_set, params)


def _filtered(whole, matches, side):
    """The filtered whole set, in canonical order, from the partitions' filtered instances.

    Each partition's instances are already in canonical order; one sort by the same key
    (:func:`.ordering.instance_sort_key`) over all of them gives the order of one process.
    Returns the set and, per partition, the positions of its instances in it.
    """
    local = [list(getattr(match, side)) for match in matches]
    flat = [(k, j) for k, instances in enumerate(local) for j in range(len(instances))]
    by_score = side == "pred"
    order = sorted(range(len(flat)), key=lambda n: instance_sort_key(local[flat[n][0]][flat[n][1]], by_score))
    positions = [np.empty(len(instances), dtype=np.int64) for instances in local]
    for rank, n in enumerate(order):
        k, j = flat[n]
        positions[k][j] = rank
    instances = tuple(local[flat[n][0]][flat[n][1]] for n in order)
    image_ids = tuple(sorted(whole.image_ids, key=image_sort_key))
    return InstanceSet(instances, image_ids, whole.skipped, whole.source), positions


def _profile_task(task):
    """Worker side: one whole evaluation (``reference-code``), as in one process."""
    from .api import run_profile

    gt_set, pred_set, params = task
    return run_profile(gt_set, pred_set, params)


WHOLE_RUN_PROFILES = ("reference-code", "p3-code")
"""Profiles run as one task on one worker: ``reference-code`` pools rings per image inside
its own model, ``p3-code`` adds dataset-level metrics to the ``coco`` outcome that the
per-image merge does not rebuild (their sweeps are still parallel)."""


def run_profile_on(client, gt_set, pred_set, params, progress=None):
    """:func:`.api.run_profile` with the per-image work on the cluster of ``client``.

    Parameters
    ----------
    client : distributed.Client
    gt_set, pred_set : InstanceSet
        Unfiltered inputs in pixels.
    params : EvaluationParams
    progress : callable, optional
        Called with a phase name as each phase starts.

    Returns
    -------
    Outcome
        The same outcome as in one process.

    Raises
    ------
    ClusterError
        A partition failed on its worker; the message names its first image.
    """
    step = progress or (lambda name: None)
    if params.profile in WHOLE_RUN_PROFILES:
        step("partitions")
        return map_partitions(client, _profile_task, [(gt_set, pred_set, params)], names=["the evaluation"],
                              progress=_counting(step, "partition"))[0]
    parts = partition_images(gt_set, pred_set, PARTITIONS_PER_WORKER * _worker_count(client))
    step("partitions")
    results = map_partitions(client, _match_task, [(p.gt_set, p.pred_set, params) for p in parts],
                             names=[_partition_name(p) for p in parts], progress=_counting(step, "partition"))
    step("merge")
    matches = results
    gt, gt_positions = _filtered(gt_set, matches, "gt")
    pred, pred_positions = _filtered(pred_set, matches, "pred")
    del results
    placed = [Partition(None, None, g, p) for g, p in zip(gt_positions, pred_positions)]
    match = merge_matches(gt, pred, placed, matches)
    del matches
    if params.profile == "coco":
        from .coco import coco_detection

        return summarize_paper(match, params, coco_detection(gt, pred, params))
    outcome = summarize_paper(match, params)
    if params.profile == "p3":
        from .p3 import add_p3_metrics

        return add_p3_metrics(outcome, params, progress)
    return outcome


def _counting(step, what):
    """A ``map_partitions`` progress callback that reports ``"<what> k of n"`` as a phase name.

    The phase callback may raise to cancel (the plugin's Cancel), which cancels the tasks
    still queued or running.
    """
    return lambda done, total: step(f"{what} {done} of {total}")


def _partition_name(part):
    images = part.gt_set.image_ids
    return f"the partition of images {images[0]!r}..{images[-1]!r}" if images else "a partition"


def _sweep_task(task):
    """Worker side: the metrics of one sweep point."""
    from .api import sweep_point

    return sweep_point(*task)


def sweep_on(client, gt_set, pred_set, params_list, names, progress=None):
    """The metrics ``names`` of one whole evaluation per parameter set, one task each.

    The inputs are sent to the workers once; each task returns only its metrics.
    ``progress`` is called with a phase name as each point finishes (it may raise to cancel).
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


def resample_metrics_on(client, stats, ranking, weight_chunks, progress=None):
    """:func:`.analysis.resample_metrics` of every chunk of weights, one task per chunk.

    ``client`` None computes them in this process. Returns the chunks' samples in order.
    ``progress`` is called with a phase name as each chunk finishes (it may raise to cancel).
    """
    weight_chunks = list(weight_chunks)
    if client is None:
        return [resample_metrics(weights, stats, ranking) for weights in weight_chunks]
    stats, ranking = client.scatter([stats, ranking], broadcast=True, hash=False)
    try:
        return map_partitions(client, _bootstrap_task, [(w, stats, ranking) for w in weight_chunks],
                              names=[f"bootstrap chunk {k}" for k in range(len(weight_chunks))],
                              progress=_counting(progress or (lambda name: None), "bootstrap chunk"))
    finally:
        client.cancel([stats, ranking])


def bootstrap_on(client, outcome, resamples, seed, level, progress=None):
    """:func:`.analysis.bootstrap_intervals` with the resamples computed on the cluster."""
    n_images = len(outcome.image_ids)
    if n_images < 2:
        return percentile_intervals([], resamples, seed, level, n_images)
    chunks = resample_metrics_on(client, per_image_statistics(outcome), outcome.ranking,
                                 resample_weights(n_images, resamples, seed), progress)
    return percentile_intervals(chunks, resamples, seed, level, n_images)
