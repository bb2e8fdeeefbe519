"""COCO rings parsed in one pass give exactly the rings, errors and skip counts of one ring at a time."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from polytopo.core.errors import InputFormatError
from polytopo.evaluator.inputs.instances import ring_from_flat, rings_from_flat_lists
from polytopo.evaluator.inputs.io_coco import load_coco_ground_truth, load_coco_predictions

coordinate = st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.sampled_from([0.0, 1e-7, 2.0**31, np.nan]))
flat_ring = st.lists(coordinate, min_size=0, max_size=6).flatmap(
    lambda xs: st.sampled_from([xs + xs[:2], xs, xs + [1.0]]))


def parsed_alone(ring):
    try:
        return ring_from_flat(ring, "ring")
    except InputFormatError:
        return None


@given(st.lists(flat_ring, min_size=1, max_size=8))
def test_rings_parsed_together_equal_rings_parsed_alone(rings):
    together = rings_from_flat_lists(rings)
    assert len(together) == len(rings)
    for ring, got in zip(rings, together):
        alone = parsed_alone(ring)
        if got is not None:  # None: the caller parses that ring alone
            assert alone is not None
            assert got.dtype == np.float64 and got.flags.c_contiguous
            assert np.array_equal(got, alone)


def test_good_rings_are_all_parsed_together():
    rings = [[0, 0, 4, 0, 4, 4, 0, 0], [0.5, 0.5, 1, 0.5, 1, 1], [1, 1, 2, 1, 2, 2, 1, 2]]
    assert all(r is not None for r in rings_from_flat_lists(rings))
    assert rings_from_flat_lists(rings)[0].tolist() == [[0, 0], [4, 0], [4, 4]]


@pytest.mark.parametrize("bad", [[0, 0, 1, 0, 1], [0, 0, "1", 0, 1, 1], [0, 0, True, 0, 1, 1]])
def test_a_malformed_ring_sends_every_ring_to_the_one_at_a_time_path(bad):
    assert rings_from_flat_lists([[0, 0, 4, 0, 4, 4], bad]) == [None, None]


def _gt(annotations):
    return {"images": [{"id": 1}], "annotations": [
        {"id": i, "image_id": 1, "category_id": 1, "segmentation": seg} for i, seg in enumerate(annotations)]}


SQUARE = [0, 0, 10, 0, 10, 10, 0, 10]


@pytest.mark.parametrize("bad, message", [
    ([0, 0, 1, 0, float("nan"), 1], "finite coordinates"),
    ([0, 0, 1, 0, 1e12, 1], "within"),
    ([0, 0, 1, 1, 0, 0], "3 distinct points"),
    ([0, 0, 1, 0, 1], "even number"),
    ([0, 0, "1", 0, 1, 1], "flat list of numbers"),
])
def test_the_first_bad_ring_is_named_as_before(tmp_path, bad, message):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(_gt([[SQUARE], [SQUARE, bad], [bad]])).replace("NaN", "NaN"))
    with pytest.raises(InputFormatError, match=message) as caught:
        load_coco_ground_truth(path)
    assert "annotations[1] field 'segmentation' ring 1" in str(caught.value)


def test_degenerate_rings_are_dropped_and_counted(tmp_path):
    path = tmp_path / "pred.json"
    records = [{"image_id": 1, "category_id": 1, "score": 0.5, "segmentation": seg}
               for seg in ([SQUARE, [2, 2, 3, 3, 2, 2]], [[0, 0, 1, 1, 0, 0]], [SQUARE])]
    path.write_text(json.dumps(records))
    loaded = load_coco_predictions(path, drop_degenerate=True)
    assert [i.source_id for i in loaded.instances] == [0, 2]
    assert [i.hole_count for i in loaded.instances] == [0, 0]
    assert loaded.skipped == {"degenerate_hole": 1, "degenerate_exterior": 1}
    assert loaded.instances[0].exterior.tolist() == [[0, 0], [10, 0], [10, 10], [0, 10]]


def test_predictions_loaded_against_an_already_loaded_reference_equal_a_fresh_load(fixtures_dir):
    from polytopo.evaluator import load_inputs

    folder = fixtures_dir / "ptb_small"
    gt, pred, frame = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    again_gt, again_pred, _ = load_inputs(folder / "missing.json", folder / "pred.json", drop_degenerate=True,
                                          reference=(gt, frame))
    assert again_gt is gt and frame is None
    assert [(i.image_id, i.source_id, i.score) for i in again_pred.instances] == \
        [(i.image_id, i.source_id, i.score) for i in pred.instances]
    assert all(np.array_equal(a.exterior, b.exterior) for a, b in zip(again_pred.instances, pred.instances))


def _square(x, y):
    return [x, y, x + 4, y, x + 4, y + 4, x, y + 4]


def test_instances_are_built_from_columns_that_keep_nothing_of_the_json():
    """The two-phase read: the JSON can be changed or dropped before the instances are made."""
    from polytopo.evaluator.inputs.io_coco import ground_truth_columns, prediction_columns

    big = 2**70  # an id beyond int64 stays a Python int
    data = {"images": [{"id": 1}, {"id": "b"}],
            "annotations": [{"id": 10, "image_id": 1, "category_id": 1, "segmentation": [_square(0, 0), [1, 1, 2, 1, 2, 2]]},
                            {"id": big, "image_id": "b", "category_id": None, "segmentation": [_square(5, 5)]},
                            {"id": 12, "image_id": 1, "category_id": 1, "segmentation": [[0, 0, 0, 0, 0, 0]]}]}
    columns = ground_truth_columns("gt.json", data, drop_degenerate=True)
    for record in data["annotations"]:
        record["segmentation"][0][:] = [99] * len(record["segmentation"][0])
        record["id"] = -1
    data.clear()
    gt = columns.instance_set()
    assert [i.source_id for i in gt.instances] == [10, big] and [i.image_id for i in gt.instances] == [1, "b"]
    assert [type(i.image_id) for i in gt.instances] == [int, str] and gt.image_ids == (1, "b")
    assert gt.instances[0].exterior.tolist() == [[0, 0], [4, 0], [4, 4], [0, 4]]
    assert gt.instances[0].holes[0].tolist() == [[1, 1], [2, 1], [2, 2]]
    assert [i.category_id for i in gt.instances] == [1, None] and gt.skipped == {"degenerate_exterior": 1}
    preds = [{"image_id": 3, "score": 0.5, "segmentation": [_square(0, 0)]},
             {"image_id": 2, "score": 1, "segmentation": [_square(1, 1)]}]
    columns = prediction_columns("pred.json", preds)
    preds.clear()
    pred = columns.instance_set()
    assert [(i.image_id, i.source_id, i.score) for i in pred.instances] == [(3, 0, 0.5), (2, 1, 1.0)]
    assert pred.image_ids == (3, 2) and type(pred.instances[1].score) is float


def _instances(loaded):
    return [(i.image_id, i.source_id, i.score, i.category_id, i.exterior.tolist(), [h.tolist() for h in i.holes])
            for i in loaded.instances], loaded.image_ids, loaded.skipped


@pytest.fixture()
def small_batches(monkeypatch):
    """Rings packed three records at a time, so that a few records span several batches."""
    from polytopo.evaluator.inputs.io_coco import RingPacker

    monkeypatch.setattr(RingPacker, "BATCH", 3)


@pytest.mark.parametrize("drop_degenerate", [False, True])
def test_rings_packed_while_parsing_equal_rings_parsed_from_the_json(tmp_path, small_batches, drop_degenerate):
    """Batches with malformed or degenerate rings take the one-at-a-time path; the others are packed."""
    segmentations = [[_square(k, k), [k + 1, k + 1, k + 2, k + 1, k + 2, k + 2]] for k in range(7)]
    segmentations[4] = [_square(0, 0), [2, 2, 3, 3, 2, 2]]  # a degenerate hole
    segmentations[5:5] = [[[0, 0, 1, 1, 0, 0]], [_square(1, 2)]]  # a degenerate exterior, a plain square
    records = [{"image_id": k % 3, "category_id": 1, "score": k / 10, "segmentation": seg,
                "attributes": {"segmentation": [[0, 0, 1, 0]]}} for k, seg in enumerate(segmentations)]
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(records))
    if not drop_degenerate:
        with pytest.raises(InputFormatError, match=r"record \[4\] field 'segmentation' ring 1"):
            load_coco_predictions(path)
        with pytest.raises(InputFormatError, match=r"record \[4\] field 'segmentation' ring 1"):
            load_coco_predictions(path, data=json.loads(path.read_text()))
        return
    parsed = json.loads(path.read_text())
    from_data = load_coco_predictions(path, drop_degenerate=True, data=parsed)
    assert parsed == records  # a caller's JSON is left as it was
    assert _instances(load_coco_predictions(path, drop_degenerate=True)) == _instances(from_data)
    assert from_data.skipped == {"degenerate_hole": 1, "degenerate_exterior": 1}
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(_gt(segmentations)))
    assert _instances(load_coco_ground_truth(gt_path, drop_degenerate=True)) == \
        _instances(load_coco_ground_truth(gt_path, drop_degenerate=True, data=json.loads(gt_path.read_text())))


@pytest.mark.parametrize("bad", [[0, 0, "1", 0, 1, 1], [0, 0, 1, 0, 1], [0, 0, 1, 0, float("nan"), 1]])
def test_a_bad_ring_in_a_later_batch_is_named(tmp_path, small_batches, bad):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(_gt([[SQUARE]] * 7 + [[SQUARE, bad]] + [[SQUARE]] * 2)))
    with pytest.raises(InputFormatError, match=r"annotations\[7\] field 'segmentation' ring 1"):
        load_coco_ground_truth(path)


def test_the_parse_keeps_no_coordinate_of_a_record_whose_rings_all_parsed(tmp_path, small_batches):
    from polytopo.evaluator.inputs.io_coco import read_coco_json

    path = tmp_path / "pred.json"
    segmentations = [[_square(k, 0)] for k in range(5)] + [[_square(0, 0), [0, 0, "x", 1, 1, 1]]]
    path.write_text(json.dumps([{"image_id": 1, "score": 1, "segmentation": s} for s in segmentations]))
    data, _packer = read_coco_json(path)
    assert [r["segmentation"] for r in data[:3]] == [[[]]] * 3  # packed: the lists are emptied
    assert [r["segmentation"] for r in data[3:]] == segmentations[3:]  # a batch with a string keeps its lists
