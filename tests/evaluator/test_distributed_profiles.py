"""The ``reference-code`` and ``p3-code`` profiles partitioned by image give the numbers of one process.

The inputs are the bundled PolyTopoBench fixture with both sides shuffled across images,
scores rounded to one decimal (ties across partitions) and a few predictions the
reference loader has to repair (a bow tie, a polygon with a hole crossing its exterior)
or drops (a zero-area sliver), so that repairs, the grouping of predictions by image and
the per-image pooling of rings all cross partition boundaries. ``p3-code``'s per-image
values (mask-union IoU, box pairs, merged-prediction MTA) are merged from the same
partitions. (The cluster runs of ``p3-code`` with the whole record comparison are in
``test_distributed.py``.)
"""

from dataclasses import replace

import numpy as np
import pytest
import shapely

from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.run.distributed import merge_reference_matches, partition_images
from polytopo.evaluator.inputs.instances import Instance
from polytopo.evaluator.profiles.p3_code import merge_p3_code_parts, p3_code_parts
from polytopo.evaluator.profiles.paper import match_paper, prepare
from polytopo.evaluator.tables.params import params_for
from polytopo.evaluator.tables.profiles import profile_named
from polytopo.evaluator.profiles.reference_code import match_reference_code

from evaluation_equality import assert_same, assert_same_evaluation

#: Filters that drop predictions and holes on the workers; a γ at which many holes match.
FILTERS = {"score_threshold": 0.35, "min_hole_area_px2": 6.0, "ring_match_threshold": 0.1}


@pytest.fixture(scope="module")
def inputs(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    rng = np.random.default_rng(3)
    gt = replace(gt, instances=tuple(gt.instances[i] for i in rng.permutation(len(gt))))
    shuffled = [pred.instances[i] for i in rng.permutation(len(pred))]
    shuffled = [replace(i, score=round(i.score, 1)) for i in shuffled]
    image = shuffled[5].image_id
    box = np.array([[10.0, 10.0], [40.0, 10.0], [40.0, 40.0], [10.0, 40.0]])
    repaired = [
        Instance(image, 9001, np.array([[10.0, 10.0], [40.0, 40.0], [40.0, 10.0], [10.0, 40.0]]), (), 0.9),
        Instance(image, 9002, box, (np.array([[30.0, 20.0], [50.0, 20.0], [50.0, 30.0], [30.0, 30.0]]),), 0.8),
        Instance(image, 9003, np.array([[0.0, 0.0], [5.0, 0.0], [10.0, 0.0]]), (), 0.7),
    ]
    shuffled[7:7] = repaired
    return gt, replace(pred, instances=tuple(shuffled))


@pytest.mark.parametrize("filters", [{}, FILTERS])
def test_merged_partitions_equal_the_whole_reference_match(inputs, filters):
    """Every array of the merged per-image work equals the single-process one, in order."""
    params = params_for("reference-code", **filters)
    gt, pred = inputs
    parts = partition_images(gt, pred, 5)
    assert len(parts) == 5
    merged = merge_reference_matches(gt, pred, parts, [match_reference_code(p.gt_set, p.pred_set, params)
                                                       for p in parts])
    whole = match_reference_code(gt, pred, params)
    assert len(whole.pred) < len(pred) and 9003 not in [i.source_id for i in whole.pred]
    assert [(i.image_id, i.source_id) for i in merged.pred] == [(i.image_id, i.source_id) for i in whole.pred]
    assert [(i.image_id, i.source_id) for i in merged.gt] == [(i.image_id, i.source_id) for i in whole.gt]
    for side in ("gt", "pred"):
        for a, b in zip(getattr(merged, side), getattr(whole, side)):
            assert np.array_equal(a.exterior, b.exterior) and len(a.holes) == len(b.holes)
        assert shapely.equals_exact(getattr(merged, f"{side}_regions"), getattr(whole, f"{side}_regions"), 0.0).all()
    for name in ("gt_source", "pred_source", "gt_image", "pred_image"):
        assert np.array_equal(getattr(merged, name), getattr(whole, name)), name
    for name in ("image_ids", "gt_reasons", "pred_reasons", "input_counts", "hole_filter"):
        assert getattr(merged, name) == getattr(whole, name), name
    for a, b in zip(merged.cand, whole.cand):
        assert np.array_equal(a, b)
    for field in ("gt_index", "pred_index", "iou", "o_biou", "e_polis", "o_mta", "hole_tp"):
        assert np.array_equal(getattr(merged.pairs, field), getattr(whole.pairs, field), equal_nan=True), field
    for field in ("pair", "gt_hole", "pred_hole", "biou"):
        assert np.array_equal(getattr(merged.pairs.holes, field), getattr(whole.pairs.holes, field)), field
    for role in ("exterior", "hole"):
        m, w = getattr(merged, role), getattr(whole, role)
        assert (m.gt_rings, m.pred_rings) == (w.gt_rings, w.pred_rings)
        for name in ("image", "biou", "polis", "hd95", "mta"):
            assert np.array_equal(getattr(m, name), getattr(w, name), equal_nan=True), (role, name)
    assert np.array_equal(merged.exterior.corner_counts, whole.exterior.corner_counts)
    assert len(whole.exterior.biou) > 50 and len(whole.hole.biou) >= (5 if filters else 1)


@pytest.mark.parametrize("filters", [{}, FILTERS])
def test_reference_code_on_a_cluster_runs_in_partitions_with_the_numbers_of_one_process(client, inputs, filters):
    phases = []
    one = evaluate(*inputs, profile="reference-code", **filters)
    two = evaluate(*inputs, profile="reference-code", client=client, progress=phases.append, **filters)
    totals = {int(p.rsplit(" ", 1)[1]) for p in phases if p.startswith("partition ")}
    assert len(totals) == 1 and totals.pop() > 4 and "merge" in phases
    assert_same_evaluation(one, two)
    assert_same(one.summary["reference_metrics"], two.summary["reference_metrics"])
    metrics = one.summary["reference_metrics"]
    assert metrics["meta"]["matched_building_pairs"] > 50 and metrics["hole"]["tp"] >= 1


def _p3_code_parts(gt_set, pred_set, params):
    match = match_paper(*prepare(gt_set, pred_set, params, profile_named(params.profile).canonical_rings)[:2], params)
    return match, p3_code_parts(match.gt, match.pred, match.gt_image, match.pred_image, match.image_ids)


def test_merged_partitions_equal_the_whole_p3_code_values(inputs):
    params = params_for("p3-code")
    parts = partition_images(*inputs, 5)
    whole_match, whole = _p3_code_parts(*inputs, params)
    merged = merge_p3_code_parts([_p3_code_parts(p.gt_set, p.pred_set, params)[1] for p in parts],
                                 whole_match.image_ids)
    assert merged.image_ids == whole.image_ids
    for name in ("iou", "nr", "pair_image", "polis", "hd", "cd", "mta_image", "mta"):
        assert np.array_equal(getattr(merged, name), getattr(whole, name)), name
    assert len(whole.polis) > 50 and len(whole.mta) > 50 and len(set(whole.mta_image.tolist())) > 5
