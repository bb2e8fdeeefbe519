"""Speed of the evaluator's per-instance glue: each vectorized step against the loop it replaced.

On the 1x set of ``osm_benchmark_set.py`` it

1. times, in this process and interleaved ``--repeats`` times, every step the glue work
   changed, the old way against the new, and checks that both give equal results:

   * canonical ring order (``filters.canonical_rings``): one ring at a time vs one pass
     over all rings;
   * the ``reference-code`` repair (``reference_code.normalize_like_reference``, without
     and with a hole filter) and the hole filter of the other profiles
     (``filters.drop_small_holes``): one instance at a time vs shapely's array functions;
   * per-feature records (``records.build_records``): one dict and one polygon rebuilt per
     feature vs columns from the pair arrays and the ring tables' polygons;
   * Corner-F1 counts of matched pairs (``corners.matched_corner_counts``): one distance
     matrix and one threshold loop per pair vs all distance matrices in one pass;
   * the input checks (``input_checks.check_sampling_cost``, ``reference_flags``): one
     ring and one polygon at a time vs one pass over all rings;
   * COCO loading (``api.load_inputs``): both files parsed twice (once to tell COCO from
     GeoJSON, once to load) vs once;

   and prints the median wall and CPU time of each and their ratio (old / new);
2. with ``--before-python`` (an interpreter whose ``polytopo`` is the code before the
   change), runs the whole command line ``python -m polytopo.evaluator --gt --pred --out``
   (``paper`` profile unless ``--evaluator-arg`` says otherwise, every output written) with that interpreter and with ``--python``,
   interleaved ``--repeats`` times (order reversed every other round), checks that both
   ``summary.json`` agree apart from timings and that the CSV tables are identical, and
   prints the median wall and CPU times and their ratios.

The ``_baseline_*`` functions below are the evaluator's code before the change, kept here
only as the yardstick; the evaluator itself does not use them. Exits 0 after a message
when the shared data folder is absent, 1 when an old and a new result differ.

Run ``python benchmarks/bench_evaluator_glue.py --help``.
"""

import argparse
import json
import operator
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import shapely

import osm_benchmark_set
from bench_evaluator import EVALUATOR_MODULE, run_measured

__all__ = ["SWEPT_HOLE_AREA_PX2", "main", "step_timings", "cli_timings"]

SWEPT_HOLE_AREA_PX2 = 16.0
"""A_min of the hole-filter steps, px² (one point of the evaluator's minimum-hole-area sweep)."""

_NOT_TIMED = ("timings", "versions", "inputs")
"""Summary keys that differ between two runs of the same evaluation (times, paths, versions)."""


# --- Baseline: the evaluator's code before the glue work (yardstick only) -----------------------

def _baseline_canonical(ring, counter_clockwise):
    x, y = ring[:, 0], ring[:, 1]
    signed = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))
    if (signed < 0) == counter_clockwise:
        ring = ring[::-1]
    start = np.lexsort((ring[:, 1], ring[:, 0]))[0]
    return np.ascontiguousarray(np.roll(ring, -start, axis=0))


def _baseline_canonical_rings(instance_set):
    from polytopo.evaluator.inputs.instances import Instance

    instances = [Instance(i.image_id, i.source_id, _baseline_canonical(i.exterior, True),
                          tuple(_baseline_canonical(h, False) for h in i.holes), i.score, i.category_id, i.part)
                 for i in instance_set.instances]
    return instance_set.replaced(instances)


def _baseline_match_corners(gt_corners, pred_corners, thresholds_px):
    from scipy.optimize import linear_sum_assignment

    counts = np.zeros((len(thresholds_px), 3), dtype=np.int64)
    if len(gt_corners) == 0 or len(pred_corners) == 0:
        counts[:, 1] = len(pred_corners)
        counts[:, 2] = len(gt_corners)
        return counts
    distances = np.linalg.norm(gt_corners[:, None, :] - pred_corners[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(distances)
    matched = distances[rows, cols]
    for index, threshold in enumerate(thresholds_px):
        tp = int(np.count_nonzero(matched <= threshold))
        counts[index] = (tp, len(pred_corners) - tp, len(gt_corners) - tp)
    return counts


def _baseline_matched_corner_counts(gt_corners, pred_corners, matched_gt, matched_pred, thresholds_px):
    counts = np.zeros((len(thresholds_px), 3), dtype=np.int64)
    for g, p in zip(matched_gt, matched_pred):
        counts += _baseline_match_corners(gt_corners[g], pred_corners[p], thresholds_px)
    counts[:, 2] += sum(len(gt_corners[i]) for i in np.setdiff1d(np.arange(len(gt_corners)), matched_gt))
    counts[:, 1] += sum(len(pred_corners[i]) for i in np.setdiff1d(np.arange(len(pred_corners)), matched_pred))
    return counts


def _baseline_value(array, index):
    value = float(array[index])
    return None if np.isnan(value) else value


def _baseline_error_class(valid, exterior_ok, tp, fp, fn):
    if not valid:
        return "invalid"
    if not exterior_ok:
        return "exterior mismatch"
    if fn and fp:
        return "misplaced hole"
    if fn:
        return "missing hole"
    if fp:
        return "extra hole"
    return "ok"


def _baseline_build_records(outcome):
    from polytopo.evaluator.metrics.stats import f1_score

    gt, pred, pairs = outcome.gt, outcome.pred, outcome.pairs
    pair_of_pred = {int(p): k for k, p in enumerate(pairs.pred_index)}
    pair_of_gt = {int(g): k for k, g in enumerate(pairs.gt_index)}
    pred_records, gt_records = [], []
    for index, instance in enumerate(pred):
        reason = outcome.pred_reasons[index]
        record = {
            "image_id": instance.image_id, "pred_id": instance.source_id, "part": instance.part,
            "score": instance.score, "category_id": instance.category_id,
            "matched_ref_id": None, "iou": None, "valid": reason == "", "invalid_reason": reason or None,
            "pred_holes": instance.hole_count, "ref_holes": None,
            "hole_tp": 0, "hole_fp": instance.hole_count, "hole_fn": None, "hole_f1": None, "topo_em": 0,
            "o_biou": None, "e_biou": None, "o_polis": None, "e_polis": None, "o_mta": None, "e_mta": None,
            "error_class": "unmatched", "geometry": instance.polygon(),
        }
        k = pair_of_pred.get(index)
        if k is not None:
            ref = gt[int(pairs.gt_index[k])]
            tp = int(pairs.hole_tp[k])
            fp, fn = instance.hole_count - tp, ref.hole_count - tp
            valid = reason == "" or not outcome.params.check_validity
            record.update(
                matched_ref_id=ref.source_id, iou=float(pairs.iou[k]), ref_holes=ref.hole_count,
                hole_tp=tp, hole_fp=fp, hole_fn=fn,
                hole_f1=f1_score(tp, fp, fn) if (tp + fp + fn) else None,
                topo_em=int(outcome.topo[k]),
                o_biou=_baseline_value(pairs.o_biou, k), e_biou=_baseline_value(pairs.e_biou, k),
                o_polis=_baseline_value(pairs.o_polis, k), e_polis=_baseline_value(pairs.e_polis, k),
                o_mta=_baseline_value(pairs.o_mta, k), e_mta=_baseline_value(pairs.e_mta, k),
                error_class=_baseline_error_class(valid, bool(outcome.exterior_matched[k]), tp, fp, fn),
            )
        pred_records.append(record)
    for index, instance in enumerate(gt):
        record = {
            "image_id": instance.image_id, "ref_id": instance.source_id, "part": instance.part,
            "category_id": instance.category_id, "matched_pred_id": None, "iou": None,
            "ref_holes": instance.hole_count, "pred_holes": None, "topo_em": 0, "error_class": "missed",
            "geometry": instance.polygon(),
        }
        k = pair_of_gt.get(index)
        if k is not None:
            p = int(pairs.pred_index[k])
            record.update(matched_pred_id=pred[p].source_id, iou=float(pairs.iou[k]),
                          pred_holes=pred[p].hole_count, topo_em=int(outcome.topo[k]),
                          error_class=pred_records[p]["error_class"])
        gt_records.append(record)
    return {
        "predictions": pred_records,
        "references": gt_records,
        "missed_holes": _baseline_hole_records(outcome.gt_table, gt, set(pairs.holes.gt_hole.tolist()), "ref_id"),
        "hallucinated_holes": _baseline_hole_records(outcome.pred_table, pred, set(pairs.holes.pred_hole.tolist()),
                                                     "pred_id"),
    }


def _baseline_hole_records(table, instances, matched, id_field):
    records = []
    for hole, owner in enumerate(table.hole_owner):
        if hole in matched:
            continue
        instance = instances[int(owner)]
        polygon = shapely.Polygon(table.holes[hole])
        records.append({
            "image_id": instance.image_id, id_field: instance.source_id, "part": instance.part,
            "hole_index": int(hole - table.hole_start[owner]), "area_px2": float(abs(polygon.area)),
            "geometry": polygon,
        })
    return records


def _baseline_from_polygon(instance, polygon):
    from polytopo.evaluator.inputs.instances import Instance

    exterior = shapely.get_coordinates(polygon.exterior)[:-1]
    holes = tuple(shapely.get_coordinates(ring)[:-1] for ring in polygon.interiors)
    return Instance(instance.image_id, instance.source_id, exterior, holes, instance.score,
                    instance.category_id, instance.part)


def _baseline_closed(ring):
    return np.vstack([ring, ring[:1]])


def _baseline_hole_area_px2(ring):
    from polytopo.evaluator.inputs.repair import largest_polygon

    polygon = largest_polygon(shapely.Polygon(ring))
    return float(polygon.area) if polygon is not None else 0.0


def _baseline_normalize_like_reference(instance_set, min_hole_area_px2=0.0):
    from polytopo.evaluator.inputs.repair import largest_polygon, largest_polygons

    raw = [instance.polygon() for instance in instance_set.instances]
    repaired = largest_polygons(raw)
    instances, regions, kept_index = [], [], []
    for index, (instance, polygon) in enumerate(zip(instance_set.instances, repaired)):
        if polygon is not None:
            instances.append(_baseline_from_polygon(instance, polygon))
            regions.append(polygon)
            kept_index.append(index)
    before = sum(instance.hole_count for instance in instances)
    counts = {"min_hole_area": float(min_hole_area_px2), "holes_before": before, "holes_after": before,
              "holes_removed": 0, "buildings_changed": 0}
    if min_hole_area_px2 > 0:
        filtered, filtered_regions, filtered_index, changed = [], [], [], 0
        for instance, region, source in zip(instances, regions, kept_index):
            kept = [hole for hole in instance.holes if _baseline_hole_area_px2(hole) >= min_hole_area_px2]
            if len(kept) != instance.hole_count:
                changed += 1
                region = largest_polygon(shapely.Polygon(_baseline_closed(instance.exterior),
                                                         [_baseline_closed(h) for h in kept]))
                if region is None:
                    region = largest_polygon(shapely.Polygon(_baseline_closed(instance.exterior)))
                if region is None:
                    continue
                instance = _baseline_from_polygon(instance, region)
            filtered.append(instance)
            filtered_regions.append(region)
            filtered_index.append(source)
        instances, regions, kept_index = filtered, filtered_regions, filtered_index
        after = sum(instance.hole_count for instance in instances)
        counts.update(holes_after=after, holes_removed=before - after, buildings_changed=changed)
    return instances, np.array(regions, dtype=object), counts, np.array(kept_index, dtype=np.int64)


def _baseline_drop_small_holes(instance_set, min_hole_area_px2):
    instances, changed = [], 0
    for instance in instance_set.instances:
        kept = [hole for hole in instance.holes if _baseline_hole_area_px2(hole) >= min_hole_area_px2]
        if len(kept) != instance.hole_count:
            changed += 1
            instance = instance.with_holes(kept)
        instances.append(instance)
    return instance_set.replaced(instances), changed


def _baseline_input_checks(gt_set, pred_set, params):
    from collections import Counter

    lengths = []
    for instance in (*gt_set.instances, *pred_set.instances):
        for ring in instance.rings:
            closed = np.vstack([ring, ring[:1]])
            lengths.append(float(np.hypot(*np.diff(closed, axis=0).T).sum()))
    longest = float(np.max(lengths))
    assert longest / params.sample_spacing_px <= 10_000_000
    polygons = np.array([instance.polygon() for instance in gt_set.instances], dtype=object)
    invalid = np.flatnonzero(~shapely.is_valid(polygons))
    keys = Counter((i.source_id, i.part) for i in gt_set.instances if i.source_id is not None)
    return {"gt_invalid": int(len(invalid)), "gt_duplicate_ids": int(sum(c - 1 for c in keys.values() if c > 1))}


def _baseline_load_inputs(gt_path, pred_path):
    from polytopo.core.json_files import read_json
    from polytopo.evaluator.inputs.io_coco import load_coco_ground_truth, load_coco_predictions

    for path in (gt_path, pred_path):  # the format probe, which parsed each file once more
        data = read_json(path)
        assert not (isinstance(data, dict) and data.get("type") == "FeatureCollection")
    return load_coco_ground_truth(gt_path), load_coco_predictions(pred_path), None


# --- Equality of old and new results ----------------------------------------------------------

def _same_value(a, b):
    if isinstance(a, shapely.Geometry) or isinstance(b, shapely.Geometry):
        return (isinstance(a, shapely.Geometry) and isinstance(b, shapely.Geometry)
                and shapely.to_wkb(a) == shapely.to_wkb(b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _same_instances(a, b):
    return len(a) == len(b) and all(
        x.image_id == y.image_id and x.source_id == y.source_id and x.part == y.part and x.score == y.score
        and x.category_id == y.category_id and np.array_equal(x.exterior, y.exterior)
        and len(x.holes) == len(y.holes) and all(np.array_equal(h, k) for h, k in zip(x.holes, y.holes))
        for x, y in zip(a, b))


def _same_sets(a, b):
    return _same_instances(a.instances, b.instances) and a.image_ids == b.image_ids and a.skipped == b.skipped


def _same_records(a, b):
    return a.keys() == b.keys() and all(
        len(a[name]) == len(b[name]) and all(
            list(x) == list(y) and all(_same_value(x[key], y[key]) for key in x) for x, y in zip(a[name], b[name]))
        for name in a)


def _same_repair(a, b):
    return (_same_instances(a[0], b[0]) and _same_value(np.array(shapely.to_wkb(a[1]).tolist(), dtype=object),
                                                        np.array(shapely.to_wkb(b[1]).tolist(), dtype=object))
            and a[2] == b[2] and np.array_equal(a[3], b[3]))


# --- Timing -----------------------------------------------------------------------------------

def _timed(function, *args):
    cpu, wall = time.process_time(), time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _steps(files):
    """``(name, old, new, arguments, equal)`` of every changed step, on the set ``files``."""
    from polytopo.evaluator import evaluate
    from polytopo.evaluator.geometry import corners
    from polytopo.evaluator.inputs import filters
    from polytopo.evaluator.outputs import records
    from polytopo.evaluator.profiles import reference_code
    from polytopo.evaluator.run.api import load_inputs
    from polytopo.evaluator.inputs.input_checks import check_sampling_cost, reference_flags
    from polytopo.evaluator.profiles.paper import select_instances
    from polytopo.evaluator.tables.params import params_for

    gt_set, pred_set, _ = load_inputs(files.gt_path, files.pred_path)
    paper = params_for("paper")
    selected_gt, selected_pred = select_instances(gt_set, pred_set, paper)
    outcome = evaluate(gt_set, pred_set, paper).outcome
    reference = evaluate(gt_set, pred_set, profile="reference-code").outcome
    exteriors = [[s[0] for s in table.exterior_sets] for table in (outcome.gt_table, outcome.pred_table)]
    corner_args = (*(corners.ring_corners(rings, paper.corner_simplify_px) for rings in exteriors),
                   outcome.pairs.gt_index, outcome.pairs.pred_index, paper.corner_thresholds_px)
    def input_checks(gt_set, pred_set, params):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_sampling_cost(gt_set, pred_set, params)
            return reference_flags(gt_set)

    def drop_small_holes(instance_set, min_hole_area_px2):
        result, counts = filters.drop_small_holes(instance_set, min_hole_area_px2)
        return result, counts["buildings_changed"]

    return [
        ("reference repair (gt)", _baseline_normalize_like_reference, reference_code.normalize_like_reference,
         (gt_set,), _same_repair),
        ("reference repair (pred)", _baseline_normalize_like_reference, reference_code.normalize_like_reference,
         (pred_set,), _same_repair),
        (f"reference repair (pred, A_min {SWEPT_HOLE_AREA_PX2:g})", _baseline_normalize_like_reference,
         reference_code.normalize_like_reference, (pred_set, SWEPT_HOLE_AREA_PX2), _same_repair),
        (f"hole filter (pred, A_min {SWEPT_HOLE_AREA_PX2:g})", _baseline_drop_small_holes, drop_small_holes,
         (selected_pred, SWEPT_HOLE_AREA_PX2), lambda a, b: _same_sets(a[0], b[0]) and a[1] == b[1]),
        ("canonical ring order (gt)", _baseline_canonical_rings, filters.canonical_rings, (selected_gt,),
         _same_sets),
        ("canonical ring order (pred)", _baseline_canonical_rings, filters.canonical_rings, (selected_pred,),
         _same_sets),
        ("records (paper)", _baseline_build_records, records.build_records, (outcome,), _same_records),
        ("records (reference-code)", _baseline_build_records, records.build_records, (reference,), _same_records),
        ("Corner-F1 pair counts", _baseline_matched_corner_counts, corners.matched_corner_counts, corner_args,
         np.array_equal),
        ("input checks", _baseline_input_checks, input_checks, (gt_set, pred_set, paper), operator.eq),
        ("COCO loading", _baseline_load_inputs, load_inputs, (files.gt_path, files.pred_path),
         lambda a, b: _same_sets(a[0], b[0]) and _same_sets(a[1], b[1])),
    ]


def step_timings(files, repeats):
    """Median wall and CPU seconds of each changed step, old and new, and whether they agree.

    Returns
    -------
    list of dict
        ``step``, ``old_wall_s``, ``new_wall_s``, ``old_cpu_s``, ``new_cpu_s``,
        ``wall_ratio``, ``cpu_ratio`` (old / new) and ``equal``.
    """
    rows = []
    for name, old, new, args, equal in _steps(files):
        times = {"old": [], "new": []}
        same = True
        for round_index in range(repeats):
            results = {}
            for kind in (("old", "new") if round_index % 2 == 0 else ("new", "old")):
                results[kind], wall, cpu = _timed(old if kind == "old" else new, *args)
                times[kind].append((wall, cpu))
            same = same and bool(equal(results["old"], results["new"]))
        medians = {f"{kind}_{what}_s": statistics.median(t[i] for t in times[kind])
                   for kind in times for i, what in enumerate(("wall", "cpu"))}
        rows.append({"step": name, **medians, "wall_ratio": medians["old_wall_s"] / medians["new_wall_s"],
                     "cpu_ratio": medians["old_cpu_s"] / max(medians["new_cpu_s"], 1e-9), "equal": same})
    return rows


def _comparable_outputs(folder):
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary = {key: value for key, value in summary.items() if key not in _NOT_TIMED}
    tables = {path.name: path.read_bytes() for path in sorted(folder.glob("*.csv"))}
    return summary, tables


def cli_timings(before_python, python, files, repeats, work_dir, extra_args=()):
    """The whole command line with the code before and after, interleaved.

    ``extra_args`` go to both command lines (e.g. ``--profile reference-code``).

    Returns
    -------
    dict
        Per side (``before``, ``after``) the wall and CPU seconds of each run and their
        medians, the ratios before / after, and ``equal`` (summaries apart from timings,
        paths and versions, and CSV tables).
    """
    runs = {"before": [], "after": []}
    outputs = {}
    for round_index in range(repeats):
        order = ("before", "after") if round_index % 2 == 0 else ("after", "before")
        for side in order:
            out = Path(work_dir) / f"{side}_{round_index}"
            args = ["--gt", files.gt_path, "--pred", files.pred_path, "--out", out, "--quiet", *extra_args]
            run = run_measured(before_python if side == "before" else python, "module", EVALUATOR_MODULE, args)
            if run.returncode != 0:
                raise SystemExit(f"the {side} evaluator failed:\n{run.stderr_tail}")
            runs[side].append({"wall_s": run.wall_s, "cpu_s": run.cpu_s, "load_average": run.load_average})
            outputs.setdefault(side, _comparable_outputs(out))
    result = {side: {"runs": values, "median_wall_s": statistics.median(v["wall_s"] for v in values),
                     "median_cpu_s": statistics.median(v["cpu_s"] for v in values)} for side, values in runs.items()}
    result["wall_ratio"] = result["before"]["median_wall_s"] / result["after"]["median_wall_s"]
    result["cpu_ratio"] = result["before"]["median_cpu_s"] / result["after"]["median_cpu_s"]
    result["equal"] = outputs["before"] == outputs["after"]
    return result


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="Interleaved rounds (medians are reported).")
    parser.add_argument("--before-python", help="Interpreter whose polytopo is the code before the change; "
                                                "without it the whole command line is not timed.")
    parser.add_argument("--python", default=sys.executable, help="Interpreter for the code after (default: this one).")
    parser.add_argument("--evaluator-arg", action="append", default=[],
                        help="Extra argument for both command lines; repeat for several (e.g. "
                             "--evaluator-arg=--profile --evaluator-arg=reference-code).")
    parser.add_argument("--skip-steps", action="store_true", help="Only time the whole command line.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the benchmark set.")
    parser.add_argument("--cache", type=Path, help="Cache of built sets (default: that of osm_benchmark_set.py).")
    parser.add_argument("--json-out", type=Path, help="Also write the results here.")
    return parser.parse_args(argv)


def main(argv=None):
    """Run the benchmark; see the module docstring."""
    args = _parse_args(argv)
    vectors = osm_benchmark_set.find_vectors_dir()
    if vectors is None:
        print("shared data folder not found (set POLYTOPO_SHARED); nothing to measure")
        return 0
    files = osm_benchmark_set.load_or_build(vectors, args.cache, scale=1, seed=args.seed)
    results, failed = {}, False
    if not args.skip_steps:
        results["steps"] = step_timings(files, args.repeats)
        print(f"{'step':30} {'old wall':>9} {'new wall':>9} {'ratio':>6} {'old cpu':>8} {'new cpu':>8} {'ratio':>6}")
        for row in results["steps"]:
            print(f"{row['step']:30} {row['old_wall_s']:9.3f} {row['new_wall_s']:9.3f} {row['wall_ratio']:6.1f} "
                  f"{row['old_cpu_s']:8.3f} {row['new_cpu_s']:8.3f} {row['cpu_ratio']:6.1f}"
                  f"{'' if row['equal'] else '  RESULTS DIFFER'}")
            failed = failed or not row["equal"]
    if args.before_python:
        with tempfile.TemporaryDirectory() as work_dir:
            results["cli"] = cli = cli_timings(args.before_python, args.python, files, args.repeats, work_dir,
                                                   args.evaluator_arg)
        for side in ("before", "after"):
            walls = ", ".join(f"{r['wall_s']:.2f}" for r in cli[side]["runs"])
            cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in cli[side]["runs"])
            print(f"whole CLI {side:6}: wall {walls} (median {cli[side]['median_wall_s']:.2f} s); "
                  f"CPU {cpus} (median {cli[side]['median_cpu_s']:.2f} s)")
        print(f"whole CLI before / after: wall {cli['wall_ratio']:.2f}x, CPU {cli['cpu_ratio']:.2f}x"
              f"{'' if cli['equal'] else '  OUTPUTS DIFFER'}")
        failed = failed or not cli["equal"]
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
