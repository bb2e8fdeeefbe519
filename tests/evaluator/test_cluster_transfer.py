"""How partitions reach the workers: packed transfers, a cluster started in the background, the merge order."""

import pickle
from dataclasses import replace
import time
import types
import warnings

import numpy as np
import pytest

from polytopo.evaluator.metrics.analysis import resample_weights
from polytopo.core.cluster import client_starting, map_partitions, write_worker_bytes
from polytopo.evaluator.run.distributed import _filtered, resample_metrics_on
from polytopo.core.errors import ClusterError
from polytopo.evaluator.inputs.instances import (FIELD_NAMES, FieldRows, Instance, InstanceSet, PackedInstances,
                                                 field_values)
from polytopo.evaluator.inputs.ordering import canonical_order, image_sort_key


def ring_count(rings):
    """A worker function over many small arrays (as an instance set is)."""
    return {"rings": len(rings), "first": rings[0] * 2}


def pattern_bytes(size):
    """A worker function returning ``size`` bytes that differ from one position to the next."""
    return bytes(k % 251 for k in range(size))


def fail_on_empty(rings):
    if not rings:
        raise ZeroDivisionError("no rings")
    return len(rings)


@pytest.fixture(scope="module")
def started_client():
    with client_starting(workers=2) as started:
        yield started()


def test_packed_partitions_give_the_results_of_unpacked_ones(started_client):
    partitions = [[np.full((4, 2), float(k + j)) for j in range(500)] for k in range(6)]
    packed = map_partitions(started_client, ring_count, partitions, packed=True)
    assert [r["rings"] for r in packed] == [500] * 6
    assert all(np.array_equal(r["first"], np.full((4, 2), 2.0 * k)) for k, r in enumerate(packed))
    assert len(started_client.scheduler_info()["workers"]) == 2


def test_a_failing_packed_partition_is_named(started_client):
    with pytest.raises(ClusterError, match=r"b to finish .* ZeroDivisionError: no rings"):
        map_partitions(started_client, fail_on_empty, [[np.zeros(2)], []], names=["a", "b"], packed=True)


@pytest.mark.parametrize("size", [0, 999, 1000, 4321])
def test_worker_bytes_come_back_in_pieces_and_whole(started_client, size, tmp_path):
    """The bytes a worker makes are written piece by piece (pieces of 1000 here), in order, nothing more."""
    path = tmp_path / "out.bin"
    with path.open("wb") as handle:
        written = write_worker_bytes(started_client, pattern_bytes, size, handle, name="the pattern", chunk_bytes=1000)
    assert written == size and path.read_bytes() == pattern_bytes(size)


def test_worker_bytes_that_fail_are_named(started_client, tmp_path):
    with (tmp_path / "out.bin").open("wb") as handle:
        with pytest.raises(ClusterError, match=r"the pattern to finish on its Dask worker but it failed: TypeError"):
            write_worker_bytes(started_client, pattern_bytes, "not a size", handle, name="the pattern")


def test_client_starting_without_workers_gives_none():
    with client_starting(0) as started:
        assert started() is None


def test_client_starting_reports_an_unanswering_scheduler_when_asked():
    with client_starting(scheduler="tcp://127.0.0.1:9", timeout_s=1) as started:
        with pytest.raises(ClusterError, match="Expected a Dask scheduler answering at tcp://127.0.0.1:9"):
            started()


def _square(x, y, size):
    return np.array([[x, y], [x + size, y], [x + size, y + size], [x, y + size]], dtype=float)


@pytest.mark.parametrize("images", [(2, "b", 10, "a"), (True, "True", 3)])
def test_merged_filtered_sets_follow_the_single_process_order(images):
    """Per partition in canonical order, merged: the canonical order of the whole set (ties of image keys too).

    Also the fields alone (:class:`FieldRows`, the instances of workers that keep the rings) where no two
    image ids share a sort key: the same order, every field kept.
    """
    rng = np.random.default_rng(0)
    instances = [Instance(image, n, _square(*rng.integers(0, 9, 2), 2 + n % 3), score=float(rng.random()))
                 for n, image in enumerate(images * 4)]
    whole = InstanceSet(tuple(instances), images)
    groups = [[i for i in instances if type(i.image_id) is type(image) and i.image_id == image] for image in images]
    matches = [types.SimpleNamespace(pred=canonical_order(InstanceSet(tuple(g), ()), by_score=True).instances)
               for g in groups]
    merged, positions = _filtered(whole, matches, "pred")
    expected = canonical_order(whole, by_score=True)
    assert [(i.image_id, i.source_id) for i in merged.instances] == [(i.image_id, i.source_id)
                                                                      for i in expected.instances]
    assert merged.image_ids == expected.image_ids
    assert all(merged.instances[p] is instance for match, ranks in zip(matches, positions)
               for p, instance in zip(ranks, match.pred))
    if len({image_sort_key(image) for image in images}) == len(images):
        fields_only = [types.SimpleNamespace(pred=PackedInstances.pack(m.pred, rings=False).unpack()) for m in matches]
        merged_fields, field_positions = _filtered(whole, fields_only, "pred")
        assert isinstance(merged_fields.instances, FieldRows)
        assert [(i.image_id, i.source_id, i.score, i.hole_count) for i in merged_fields.instances] == [
            (i.image_id, i.source_id, i.score, i.hole_count) for i in expected.instances]
        assert all(np.array_equal(a, b) for a, b in zip(field_positions, positions))


@pytest.mark.parametrize("listed, named", [((True, "True", 3), ("True", 3)), ((3, "b"), (3, "b", "a", 1)),
                                           ((1, 2), (True, 2))])
def test_merged_filtered_sets_where_the_listed_images_and_the_instances_images_differ(listed, named):
    """Listed images that share a sort key but hold no instance, instances of images not listed (``True`` where
    ``1`` is listed: equal as dict keys, not as images): the order of one process."""
    instances = [Instance(image, n, _square(n, 0, 2), score=0.1 * n) for n, image in enumerate(named * 2)]
    whole = InstanceSet(tuple(instances), listed)
    groups = [[i for i in instances if type(i.image_id) is type(image) and i.image_id == image] for image in named]
    matches = [types.SimpleNamespace(pred=canonical_order(InstanceSet(tuple(g), ()), by_score=True).instances)
               for g in groups[::-1]]  # the partitions out of image order
    merged, positions = _filtered(whole, matches, "pred")
    expected = canonical_order(whole, by_score=True)
    assert [(i.image_id, i.source_id) for i in merged.instances] == [(i.image_id, i.source_id)
                                                                      for i in expected.instances]
    assert merged.image_ids == tuple(sorted(listed, key=image_sort_key))
    assert all(merged.instances[p] is instance for match, ranks in zip(matches, positions)
               for p, instance in zip(ranks, match.pred))


def _mixed_instances():
    """Instances with and without holes, ids of several kinds, scores and parts."""
    hole = _square(3, 3, 2)[::-1]
    return [Instance("a", 0, _square(0, 0, 10), (hole, hole + 0.5), 0.25, 3, 1),
            Instance(7, "x", _square(20, 0, 4)),
            Instance(True, (1, 2), _square(0, 20, 6), (), 0.75, None, 0)]


def _same(a, b):
    return (len(a) == len(b) and all(
        (x.image_id, x.source_id, x.score, x.category_id, x.part, x.hole_count)
        == (y.image_id, y.source_id, y.score, y.category_id, y.part, y.hole_count)
        and type(x.image_id) is type(y.image_id)
        and all(r.dtype == q.dtype == np.float64 and np.array_equal(r, q) for r, q in zip(x.rings, y.rings))
        for x, y in zip(a, b)))


def test_packed_instances_unpack_to_equal_instances_whose_rings_share_one_read_only_array():
    instances = _mixed_instances()
    packed = pickle.loads(pickle.dumps(PackedInstances.pack(instances), protocol=pickle.HIGHEST_PROTOCOL))
    unpacked = packed.unpack()
    assert _same(unpacked, instances)
    rings = [ring for instance in unpacked for ring in instance.rings]
    assert all(np.shares_memory(ring, packed.coords) and not ring.flags.writeable for ring in rings)
    assert PackedInstances.pack([]).unpack() == []


def test_instances_packed_without_rings_unpack_to_their_fields_as_columns():
    """Each field of each instance, types kept (``True`` stays a bool, a tuple id a tuple); rows taken and joined."""
    instances = _mixed_instances()
    packed = pickle.loads(pickle.dumps(PackedInstances.pack(instances, rings=False), protocol=pickle.HIGHEST_PROTOCOL))
    rows = packed.unpack()
    assert isinstance(rows, FieldRows) and len(rows) == 3
    for name in FIELD_NAMES:
        assert rows.columns[name] == [getattr(i, name) for i in instances]
        assert [type(v) for v in field_values(rows, name)] == [type(getattr(i, name)) for i in instances]
    assert rows[2].source_id == (1, 2) and rows[2].image_id is True
    with pytest.raises(AttributeError, match="rings"):
        assert rows[0].exterior is None
    assert FieldRows.joined([rows, rows.taken([2, 0])]).columns["source_id"] == [0, "x", (1, 2), (1, 2), 0]
    assert len(PackedInstances.pack([], rings=False).unpack()) == 0


def test_an_instance_set_pickles_with_its_rings_in_one_array():
    """What is sent to a worker: equal instances, every field kept, the rings as one array."""
    moved = [replace(i, exterior=i.exterior + k, holes=tuple(h + k for h in i.holes))
             for k in range(100) for i in _mixed_instances()]
    whole = InstanceSet(tuple(moved), ("a", 7, True, "empty"), {"null_geometry": 2}, "gt.json")
    blob = pickle.dumps(whole, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(blob)
    assert _same(back.instances, whole.instances) and isinstance(back.instances, tuple)
    assert (back.image_ids, back.skipped, back.source) == (whole.image_ids, whole.skipped, whole.source)
    bases = {id(ring.base) for instance in back.instances for ring in instance.rings}
    assert len(bases) == 1
    # one array: smaller than pickling the rings one by one (beyond a handful of instances)
    assert len(blob) < len(pickle.dumps(list(whole.instances), protocol=pickle.HIGHEST_PROTOCOL))


def test_bootstrap_weights_reach_the_workers_as_data_not_in_the_graph(started_client):
    # 1,500 images x 960 resamples of float weights: 11.5 MB, above Dask's 10 MB graph warning.
    rng = np.random.default_rng(3)
    n_images, n_preds = 1500, 4000
    stats = {key: rng.random(n_images) for key in
             ("e_biou_sum", "e_biou_n", "hole_tp", "holes_gt", "holes_pred", "topo", "k")}
    ranking = types.SimpleNamespace(gt_per_image=rng.integers(1, 4, n_images).astype(float),
                                    image=rng.integers(0, n_images, n_preds),
                                    scores=rng.random(n_preds), tp=rng.random(n_preds) < 0.6)
    # as floats (the function takes any numeric weights): the counts alone are 8 times smaller
    chunks = [counts.astype(float) for counts in resample_weights(n_images, 960, seed=5)]
    assert sum(c.nbytes for c in chunks) > 10 * 2 ** 20
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        on_cluster = resample_metrics_on(started_client, stats, ranking, chunks)
    assert not [w for w in caught if "large graph" in str(w.message)]
    assert on_cluster == resample_metrics_on(None, stats, ranking, chunks)
    assert len(on_cluster) == 15 and all(len(c["AP50"]) == 64 for c in on_cluster)


class _ScatterFailsOnce:
    """The real client, except that its second ``scatter`` call fails (the weights'), as a
    lost connection would; the first call's futures are kept to look them up afterwards."""

    def __init__(self, client):
        self.client, self.calls, self.first = client, 0, []

    def scatter(self, *args, **kwargs):
        self.calls += 1
        if self.calls == 2:
            raise OSError("connection lost while sending the weights")
        futures = self.client.scatter(*args, **kwargs)
        self.first.extend(futures)
        return futures

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_failed_weight_scatter_releases_what_was_already_scattered(started_client):
    """When sending the weights fails, the statistics and ranking already on the workers are
    released at once, even while the error (and with it the call's frame) is still held, as
    a caller that reports it holds it."""
    stats = {"k": np.ones(4)}
    ranking = types.SimpleNamespace(gt_per_image=np.ones(4))
    failing = _ScatterFailsOnce(started_client)
    with pytest.raises(OSError, match="connection lost") as caught:
        resample_metrics_on(failing, stats, ranking, resample_weights(4, 8, seed=1))
    keys = [future.key for future in failing.first]
    assert len(keys) == 2
    del failing
    deadline = time.monotonic() + 10.0
    held = keys
    while held and time.monotonic() < deadline:
        held = started_client.run_on_scheduler(lambda dask_scheduler, keys=keys: [
            key for key in keys if key in dask_scheduler.tasks])
        time.sleep(0.05)
    assert held == [], f"the scheduler still holds {held}"
    assert caught.value is not None


FIRST_STARTED = "polytopo-test-first-partition-started"


class _PacksAfterTheFirstStarts:
    """A partition whose pickling waits (at most 20 s) until the first partition runs on a worker."""

    def __init__(self, client):
        self.client = client

    def __reduce__(self):
        import distributed

        started = distributed.Event(FIRST_STARTED, client=self.client).wait(timeout=20)
        return (_packed_when, (started,))


def _packed_when(started):
    return {"first had started": started}


def signal_start(part):
    """Worker function: say that a partition runs, and give the partition back."""
    import distributed

    distributed.Event(FIRST_STARTED).set()
    return part


def test_the_first_partition_starts_while_the_others_are_still_packed(started_client):
    """Packed partitions go out one by one: the first runs on a worker before the last is
    even pickled, so the workers do not wait for the whole set to be sent."""
    partitions = [{"first": True}, {"second": True}, _PacksAfterTheFirstStarts(started_client)]
    results = map_partitions(started_client, signal_start, partitions, packed=True)
    assert results[:2] == [{"first": True}, {"second": True}]
    assert results[2] == {"first had started": True}
