"""The evaluator's entry points: :func:`evaluate` on instance sets, :func:`load_inputs` for files.

An evaluation runs in phases: ``load`` (files to pixel-unit instances) → profile
(``match`` and metrics, the code :mod:`.profiles` registers for it) →
analyses (breakdowns, WrongTopo, bootstrap, optional sweeps) → records. Inputs are never
modified; every phase returns new objects.
"""

import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..metrics.analysis import bootstrap_intervals, simple_to_complex, wrong_topo
from ...core.cancel import checked_phases
from ...core.errors import EvaluationCanceled, InputFormatError
from ...core.gc_pause import paused_gc
from ...core.kernel_threads import checked_thread_count, kernel_threads
from ...core.machine import usable_cores
from ..inputs.input_checks import (
    check_categories,
    check_sampling_cost,
    reference_flags,
    warn_no_overlap,
    warn_questionable_run,
)
from ...core.heap import return_freed_heap
from ..inputs.io_coco import ground_truth_columns, prediction_columns, read_coco_json
from ..tables.metric_table import SWEPT
from ..inputs.ordering import in_input_order
from ..tables.pair_rules import invalid_count
from ..tables.params import EvaluationParams, params_for
from ..tables.profiles import DEFAULT_PROFILE, profile_named, run_profile, sweep_point
from ..outputs.records import build_records

__all__ = ["Evaluation", "evaluate", "evaluate_files", "load_inputs", "run_profile", "sweep_point", "MIN_HOLE_AREA_SWEEP",
           "RING_THRESHOLD_SWEEP", "versions"]

MIN_HOLE_AREA_SWEEP = (0.0, 4.0, 8.0, 16.0, 32.0, 64.0)
RING_THRESHOLD_SWEEP = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
_SWEEPS = (("min_hole_area_sweep", "min_hole_area_px2", MIN_HOLE_AREA_SWEEP),
           ("ring_threshold_sweep", "ring_match_threshold", RING_THRESHOLD_SWEEP))


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation produced.

    Attributes
    ----------
    params : EvaluationParams
    summary : dict
        JSON-ready summary: profile, parameters, versions, counts, ``metrics`` under the
        paper's Table 3 names, breakdowns, WrongTopo, bootstrap, PR curve, timings.
    records : dict or RecordParts
        ``predictions``, ``references``, ``missed_holes``, ``hallucinated_holes``
        (see :mod:`.records`), geometry in pixels; a :class:`.record_parts.RecordParts`
        when a cluster run's workers encoded them (``evaluate(..., record_parts=...)``).
    outcome : Outcome
        The profile's full result, for further analysis.
    """

    params: EvaluationParams
    summary: dict
    records: dict
    outcome: object


def versions():
    """Versions of the evaluator and the libraries whose numerics it depends on."""
    import numpy
    import scipy
    import shapely

    from ...version import __version__

    return {"polytopo": __version__, "shapely": shapely.__version__,
            "geos": ".".join(str(v) for v in shapely.geos_version), "numpy": numpy.__version__,
            "scipy": scipy.__version__}


def _counts(gt_set, pred_set, outcome):
    gt_images = set(gt_set.column("image_id")) | set(gt_set.image_ids)
    pred_images = set(pred_set.column("image_id"))
    only_pred = sorted(map(str, pred_images - gt_images))
    if only_pred:
        warnings.warn(
            f"{len(only_pred)} image id(s) appear only in the predictions (e.g. {only_pred[:3]}); their "
            "predictions all count as false positives. Check that both files use the same image ids.",
            stacklevel=3)
    return {
        "images": len(outcome.image_ids),
        "images_only_in_predictions": len(only_pred),
        "images_without_predictions": len(gt_images - pred_images),
        "gt_instances": len(outcome.gt), "pred_instances": len(outcome.pred),
        "gt_holes": len(outcome.gt_table.hole_owner), "pred_holes": len(outcome.pred_table.hole_owner),
        "gt_input_instances": len(gt_set), "pred_input_instances": len(pred_set),
        "gt_input_holes": gt_set.hole_count, "pred_input_holes": pred_set.hole_count,
        "invalid_predictions": invalid_count(outcome.pred_reasons),
        "skipped": {"gt": dict(gt_set.skipped), "pred": dict(pred_set.skipped)},
    }


def _sweeps(gt_set, pred_set, params, client, step):
    """Both sweeps as ``{summary key: rows}``; with a client, every point is one task.

    ``step`` is called with ``"sweep point k of n"`` as each point finishes (as on a cluster).
    """
    points = [(key, field, value) for key, field, values in _SWEEPS for value in values]
    settings = [replace(params, **{field: value}) for _, field, value in points]
    if client is None:
        found = []
        for done, setting in enumerate(settings, 1):
            found.append(sweep_point(gt_set, pred_set, setting))
            step(f"sweep point {done} of {len(settings)}")
    else:
        from .distributed import sweep_on

        found = sweep_on(client, gt_set, pred_set, settings, SWEPT, step)
    rows = {key: [] for key, _, _ in _SWEEPS}
    for (key, field, value), metrics in zip(points, found):
        rows[key].append({field: value, **metrics})
    return rows


@paused_gc()
def evaluate(gt_set, pred_set, params=None, *, progress=None, cancel=None, sweeps=False, client=None,
             record_parts=None, threads=None, **overrides):
    """Evaluate predictions against ground truth.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Instances in pixels (see :mod:`.io_coco` and :mod:`.io_vector`).
    params : EvaluationParams, optional
        Defaults to the ``paper`` profile; ``overrides`` (``profile=...``, any field) are
        applied on top with :func:`.params.params_for` semantics.
    progress : callable, optional
        Called with a phase name as each phase starts (on a cluster also as each partition,
        sweep point or bootstrap chunk finishes).
    cancel : callable, optional
        The cancel check (:mod:`.cancel`), asked after each ``progress`` call: True stops
        the run with :class:`.errors.EvaluationCanceled` (on a cluster, the tasks still
        running are canceled).
    sweeps : bool
        Also run the minimum-hole-area sweep (A_min in :data:`MIN_HOLE_AREA_SWEEP` px²) and
        the ring-threshold sweep (γ in :data:`RING_THRESHOLD_SWEEP`); each point is a full
        re-evaluation.
    client : distributed.Client, optional
        Run on this Dask cluster (see :mod:`.distributed`): the per-image work partitioned
        by image and merged here, sweep points and bootstrap resamples as parallel tasks.
        The numbers are the same as without it; None (default) runs in this process.
    record_parts : PartsRequest, optional
        With ``client``: the workers build and encode the per-feature records of their
        partitions for writing (:mod:`.record_parts`, :func:`.record_parts.parts_request`),
        and ``records`` is a :class:`.record_parts.RecordParts` that
        :func:`.report.write_report` writes (the same files). For the profiles whose
        per-image phase is ``paper``; the others build their records here as without it.
    threads : int, optional
        Without ``client``: threads for the kernels that run without Python's global
        interpreter lock (GEOS overlays and buffers, KD-tree queries;
        :mod:`polytopo.core.kernel_threads`); None (default) uses every core this process
        may run on, 1 none (a whole number >= 1, else ``InvalidParameterError``). The
        numbers are the same for any count. With ``client`` the workers compute and this
        process uses none.

    Returns
    -------
    Evaluation

    Raises
    ------
    EvaluationCanceled
        ``cancel`` said stop.

    Notes
    -----
    The cyclic garbage collector is held off during the evaluation (:mod:`.gc_pause`);
    objects are still freed by reference counting.
    """
    count = 1 if client is not None else (usable_cores() if threads is None else checked_thread_count(threads))
    with kernel_threads(count):
        return _evaluated(gt_set, pred_set, params, progress, cancel, sweeps, client, record_parts, overrides)


def _resolved(params, overrides):
    """``params`` with ``overrides`` applied (:func:`.params.params_for` semantics); the ``paper`` profile by default."""
    if params is None or overrides:
        base = params.as_dict() if params is not None else {}
        base.update(overrides)
        profile = base.pop("profile", DEFAULT_PROFILE)
        base = {k: tuple(v) if isinstance(v, list) else v for k, v in base.items()}
        params = params_for(profile, **base)
    return params


def _evaluated(gt_set, pred_set, params, progress, cancel, sweeps, client, record_parts, overrides):
    """:func:`evaluate` within its kernel threads."""
    params = _resolved(params, overrides)
    step = checked_phases(progress, cancel, EvaluationCanceled, "evaluation")
    check_sampling_cost(gt_set, pred_set, params)
    warn_questionable_run(gt_set, pred_set, params)
    started = time.perf_counter()
    if client is None:
        flags = reference_flags(gt_set)
        outcome = run_profile(gt_set, pred_set, params, step)
    else:
        from .distributed import run_profile_on

        outcome = run_profile_on(client, gt_set, pred_set, params, step, record_parts)
        flags = reference_flags(gt_set)  # its invalid references found by the workers
    return _summarized(gt_set, pred_set, params, outcome, flags, started, step, sweeps, client)


@paused_gc()
def evaluate_files(gt_path, pred_path, params=None, *, client, record_parts, progress=None, cancel=None,
                   categories=None, default_score=None, drop_degenerate=False, **overrides):
    """Evaluate two COCO-style JSON files on a cluster whose workers read their own partitions of them.

    The workers find where each record lies and read their partitions' records
    (:mod:`.read_on_workers`); the client reads only the files' ``images[]``. The numbers, records, errors and warnings are those of :func:`load_inputs` followed by
    :func:`evaluate` with ``client`` and ``record_parts``.

    Parameters
    ----------
    gt_path, pred_path : str or Path
    params, progress, cancel, overrides
        As for :func:`evaluate`.
    client : distributed.Client
    record_parts : PartsRequest
        As for :func:`evaluate`.
    categories, default_score, drop_degenerate
        As for :func:`load_inputs`.

    Returns
    -------
    Evaluation or None
        None when the run needs the files read here: not COCO JSON the index can place (or
        not readable by the workers), a record range that does not parse, or a profile whose dataset-wide phase reads
        rings (every one but ``paper``). Then call :func:`load_inputs` and :func:`evaluate`.
    """
    from .read_on_workers import applies_to, evaluate_files_on

    params = _resolved(params, overrides)
    if not applies_to(params):
        return None
    step = checked_phases(progress, cancel, EvaluationCanceled, "evaluation")
    started = time.perf_counter()
    options = {"categories": categories, "default_score": default_score, "drop_degenerate": drop_degenerate}
    with kernel_threads(1):
        found = evaluate_files_on(client, gt_path, pred_path, params, step, record_parts, options)
        if found is None:
            return None
        gt_set, pred_set, outcome = found
        warn_questionable_run(gt_set, pred_set, params)
        return _summarized(gt_set, pred_set, params, outcome, reference_flags(gt_set), started, step, False, client)


def _summarized(gt_set, pred_set, params, outcome, flags, started, step, sweeps, client):
    """The :class:`Evaluation` of a profile's ``outcome``: summary, analyses, sweeps and records."""
    timings = {"profile_s": time.perf_counter() - started}
    if outcome.gt and outcome.pred and not np.any(outcome.ranking.tp):
        warn_no_overlap(gt_set, pred_set)
    step("analyses")
    summary = {
        "profile": params.profile,
        "parameters": params.as_dict(),
        "versions": versions(),
        "inputs": {"gt": gt_set.source, "pred": pred_set.source},
        "counts": {**_counts(gt_set, pred_set, outcome), **flags},
        "metrics": outcome.metrics,
        "simple_to_complex": simple_to_complex(outcome),
        "wrong_topo": wrong_topo(outcome),
        "pr_curve": _pr_curve(outcome),
    }
    profile = profile_named(params.profile)
    if params.bootstrap_resamples and profile.bootstrap:
        step("bootstrap")
        interval_args = (outcome, params.bootstrap_resamples, params.bootstrap_seed, params.bootstrap_level)
        if client is None:
            summary["bootstrap"] = bootstrap_intervals(*interval_args)
        else:
            from .distributed import bootstrap_on

            summary["bootstrap"] = bootstrap_on(client, *interval_args, progress=step)
    summary.update({key: value for key, value in outcome.details.items()})
    if sweeps:
        step("sweeps")
        summary.update(_sweeps(gt_set, pred_set, params, client, step))
    step("records")
    if outcome.record_parts is not None:
        records = outcome.record_parts
    else:
        records = build_records(outcome)
        if profile.canonical_order:
            records = in_input_order(records, gt_set, pred_set)
    timings["total_s"] = time.perf_counter() - started
    summary["timings"] = timings
    return Evaluation(params, summary, records, outcome)


def _pr_curve(outcome):
    from ..metrics.average_precision import precision_recall

    ranking = outcome.ranking
    total = int(ranking.gt_per_image.sum())
    precision, recall = precision_recall(ranking.tp, 1.0 - ranking.tp, total)
    return {"iou_threshold": ranking.iou_threshold, "precision": precision.tolist(), "recall": recall.tolist()}


def _coco_data(path):
    """Whether ``path`` is COCO-style JSON (not GeoJSON, not another format), and its parsed JSON and ring packer if so."""
    if Path(path).suffix.lower() != ".json":
        return False, None, None
    data, packer = read_coco_json(path)
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        return False, None, None
    return True, data, packer


@paused_gc()
def load_inputs(gt_path, pred_path, *, categories=None, default_score=None, score_field=None,
                image_field=None, patch_size_px=None, pixel_size=None, gt_layer=None, pred_layer=None,
                category_field=None, drop_degenerate=False, check_pixel_size=True, reference=None):
    """Load ground truth and predictions from files.

    COCO-style JSON (pixel coordinates) is read by :mod:`.io_coco`; any other file, and
    GeoJSON, through OGR by :mod:`.io_vector` (map coordinates turned into pixels of size
    ``pixel_size`` map units; the prediction layer reprojected to the reference CRS).

    Returns
    -------
    gt_set, pred_set : InstanceSet
    frame : PixelFrame or None
        The pixel frame of vector inputs (None for COCO JSON).

    ``check_pixel_size=False`` accepts a pixel size outside 1 mm .. 10 km on the ground
    (see :func:`.io_vector.load_vector_layer`).

    ``reference=(gt_set, frame)``, as an earlier call with the same ``gt_path`` and
    options returned them, loads only the predictions (the ground truth is not read
    again: a method comparison reads it once for every method).

    The cyclic garbage collector is held off while the files are read (:mod:`.gc_pause`).
    """
    if reference is not None:
        gt_set, frame = reference
        gt_coco = frame is None
    else:
        gt_coco, gt_data, packer = _coco_data(gt_path)
        if gt_coco:
            columns = ground_truth_columns(gt_path, gt_data, categories, drop_degenerate, packer=packer)
            del gt_data, packer  # the JSON is freed before the instances are made (see load_coco_ground_truth)
            gt_set = columns.instance_set()
            del columns
    pred_coco, pred_data, packer = _coco_data(pred_path)
    if gt_coco != pred_coco:
        raise InputFormatError(
            f"Expected both inputs as COCO JSON or both as vector layers but got {gt_path} "
            f"({'COCO' if gt_coco else 'vector'}) and {pred_path} ({'COCO' if pred_coco else 'vector'})")
    if gt_coco:
        columns = prediction_columns(pred_path, pred_data, categories, default_score, drop_degenerate,
                                     packer=packer)
        del pred_data, packer
        pred_set = columns.instance_set()
        del columns
        return_freed_heap()  # the pages the JSON held
        check_categories(gt_set, pred_set, categories)
        return gt_set, pred_set, None
    from ..inputs.io_vector import load_vector_layer

    if reference is None:
        gt_set, frame = load_vector_layer(gt_path, layer=gt_layer, image_field=image_field, patch_size_px=patch_size_px,
                                          pixel_size=pixel_size, category_field=category_field,
                                          categories=categories, role="gt", check_pixel_size=check_pixel_size)
    pred_set, _ = load_vector_layer(pred_path, layer=pred_layer, score_field=score_field,
                                    default_score=default_score, image_field=image_field,
                                    patch_size_px=patch_size_px, pixel_size=pixel_size, category_field=category_field,
                                    categories=categories, frame=frame, role="pred")
    check_categories(gt_set, pred_set, categories)
    return gt_set, pred_set, frame
