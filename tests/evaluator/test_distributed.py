"""Evaluation on a real 2-process Dask LocalCluster gives the numbers and records of one process.

The inputs are the bundled PolyTopoBench fixture (12 images) with the instances of both
sides shuffled across images and scores rounded to one decimal, so that partitions are
not contiguous in the input order and equal scores fall in different partitions: the
merge must restore the single-process order for AP, records and ties to agree.
"""

import json
import os
import signal
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
import shapely

from polytopo.evaluator import evaluate, load_inputs
from polytopo.core.cluster import map_partitions, open_client
from polytopo.evaluator.run import distributed
from polytopo.evaluator.run.distributed import (BOUNDARY_PX_PER_INSTANCE, _for_transport, _partition_match,
                                                instance_costs, merge_matches, partition_images)
from polytopo.core.errors import ClusterError, InvalidParameterError
from polytopo.evaluator.inputs.instances import InstanceSet, instances_from_geometry
from polytopo.evaluator.profiles.paper import image_detection, match_paper, prepare
from polytopo.evaluator.tables.params import params_for
from polytopo.evaluator.tables.profiles import PROFILE_NAMES, profile_named

from evaluation_equality import assert_same, assert_same_evaluation


def _shuffled(instance_set, seed, round_scores=False):
    order = np.random.default_rng(seed).permutation(len(instance_set))
    instances = [instance_set.instances[i] for i in order]
    if round_scores:
        instances = [replace(i, score=round(i.score, 1)) for i in instances]
    return replace(instance_set, instances=tuple(instances))


@pytest.fixture(scope="module")
def inputs(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    gt, pred = _shuffled(gt, 1), _shuffled(pred, 2, round_scores=True)
    # One image that only predictions have, one prediction-free image stays in the GT.
    extra = replace(pred.instances[0], image_id="only-in-predictions")
    return gt, replace(pred, instances=pred.instances + (extra,))


@pytest.fixture(scope="module")
def few_images(inputs):
    """The inputs on four images (the costlier runs: sweeps, p3)."""
    keep = {1, 2, 3, 4, "only-in-predictions"}
    return tuple(replace(s, instances=tuple(i for i in s.instances if i.image_id in keep),
                         image_ids=tuple(i for i in s.image_ids if i in keep)) for s in inputs)


@pytest.fixture(scope="module")
def swept_in_process(few_images):
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        return evaluate(*few_images, sweeps=True, bootstrap_resamples=130)


def test_partitions_cover_every_image_once(inputs):
    gt, pred = inputs
    parts = partition_images(gt, pred, 5)
    assert 1 < len(parts) <= 5
    assert sorted(np.concatenate([p.gt_index for p in parts]).tolist()) == list(range(len(gt)))
    assert sorted(np.concatenate([p.pred_index for p in parts]).tolist()) == list(range(len(pred)))
    images = [set(p.gt_set.image_ids) for p in parts]
    assert sum(len(i) for i in images) == len(set().union(*images))


def _square_instances(image_id, side, count):
    square = shapely.box(0, 0, side, side)
    return [i for k in range(count) for i in instances_from_geometry(square, image_id=image_id, source_id=k)]


def test_instance_cost_counts_every_ring_of_the_outline():
    ring = shapely.Polygon([(0, 0), (30, 0), (30, 40)], [[(10, 5), (20, 5), (20, 15), (10, 15)]])
    (instance,) = instances_from_geometry(ring, image_id=1, source_id=0)
    assert instance_costs(InstanceSet((instance,), (1,))) == pytest.approx(
        [1 + (30 + 40 + 50 + 40) / BOUNDARY_PX_PER_INSTANCE])


def test_partitions_balance_outline_length_not_only_instance_counts(monkeypatch):
    """Ten images of large buildings weigh as much as the many images of small ones (groups of equal shares)."""
    monkeypatch.setattr(distributed, "PARTITION_TAPER", 0.0)
    big = [i for image in range(10) for i in _square_instances(image, 1000, 1)]
    small = [i for image in range(10, 110) for i in _square_instances(image, 10, 2)]
    gt = InstanceSet(tuple(big + small), tuple(range(110)), {}, "gt")
    pred = InstanceSet((), (), {}, "pred")
    parts = partition_images(gt, pred, 2)
    costs = [instance_costs(p.gt_set).sum() + len(p.gt_set.image_ids) for p in parts]
    assert len(parts[0].gt_set.image_ids) <= 10  # by instance counts alone it would hold 57
    assert max(costs) < 0.6 * sum(costs)


def test_the_groups_of_a_plan_shrink_along_it():
    """The groups' shares of the work fall linearly from 1 + taper to 1 - taper times the mean, each within one item;
    one group holds everything; the groups are runs of the plan's items."""
    taper = distributed.PARTITION_TAPER
    assert 0.0 < taper < 1.0
    weight = np.random.default_rng(3).uniform(0.5, 1.5, 20_000)
    before = np.cumsum(weight) - weight
    for n in (4, 8, 64, 256):
        group = distributed.planned_groups(before, weight.sum(), n)
        assert np.all(np.diff(group) >= 0) and group[0] == 0 and group[-1] == n - 1
        held = np.bincount(group, weights=weight, minlength=n) / (weight.sum() / n)
        wanted = 1 + taper * (1 - 2 * np.arange(n) / (n - 1))
        assert np.abs(held - wanted).max() <= 2 * 1.5 * n / weight.sum()  # within about one item of the share
    assert distributed.planned_groups(before, weight.sum(), 1).tolist() == [0] * len(weight)
    assert distributed.planned_groups(np.zeros(0), 0.0, 8).tolist() == []


def test_merged_partition_matches_equal_the_whole_match(inputs):
    """Every array of the merged per-image work equals the single-process one, in order."""
    params = params_for("paper")
    gt, pred, _ = prepare(*inputs, params)
    parts = partition_images(gt, pred, 4)
    merged = merge_matches(gt, pred, parts, [match_paper(p.gt_set, p.pred_set, params) for p in parts])
    whole = match_paper(gt, pred, params)
    for name in ("image_ids", "gt_reasons", "pred_reasons", "corner_counts", "gt_image", "pred_image"):
        assert np.array_equal(np.asarray(getattr(merged, name), dtype=object),
                              np.asarray(getattr(whole, name), dtype=object)), name
    assert shapely.equals_exact(merged.gt_regions, whole.gt_regions, 0.0).all()
    for a, b in zip(merged.cand, whole.cand):
        assert np.array_equal(a, b)
    for table in ("gt_table", "pred_table"):
        m, w = getattr(merged, table), getattr(whole, table)
        assert np.array_equal(m.hole_start, w.hole_start)
        assert shapely.equals_exact(m.all_bands, w.all_bands, 0.0).all()
        assert shapely.equals_exact(m.hole_bands, w.hole_bands, 0.0).all()
    for field in ("gt_index", "pred_index", "o_biou", "e_polis", "hole_tp"):
        assert np.array_equal(getattr(merged.pairs, field), getattr(whole.pairs, field)), field
    for field in ("pair", "gt_hole", "pred_hole", "biou", "mta"):
        assert np.array_equal(getattr(merged.pairs.holes, field), getattr(whole.pairs.holes, field)), field


def test_the_parts_matching_for_ap_replaces_their_candidates_and_merges_to_the_whole_one(inputs):
    """``paper`` and ``p3`` workers match their images' predictions for AP/AR and keep the candidate pairs."""
    for profile in PROFILE_NAMES:
        params = params_for(profile)
        if profile_named(profile).per_image != "paper":
            continue
        gt, pred = inputs
        match, _ = _partition_match(gt, pred, params)
        sent = _for_transport(match)
        assert (sent.cand is None) is (sent.detected is not None) is profile_named(profile).image_detection, profile
    params = params_for("paper")
    gt, pred, _ = prepare(*inputs, params)
    parts = partition_images(gt, pred, 4)
    sent = [replace(m, cand=None, detected=image_detection(m, params))
            for m in (match_paper(p.gt_set, p.pred_set, params) for p in parts)]
    merged = merge_matches(gt, pred, parts, sent)
    whole = image_detection(match_paper(gt, pred, params), params)
    assert merged.cand is None and merged.detected.matched.any() and not merged.detected.matched.all()
    assert np.array_equal(merged.detected.kept, whole.kept)
    assert np.array_equal(merged.detected.matched, whole.matched)


#: Filters that drop predictions, instances and holes (they run on the workers).
FILTERS = {"score_threshold": 0.35, "min_instance_area_px2": 30.0, "min_hole_area_px2": 6.0}


@pytest.mark.parametrize("profile, filters", [("paper", {}), ("paper", FILTERS), ("reference-code", {}),
                                              ("coco", FILTERS), ("coco", {"iou_mode": "vector"}),
                                              ("p3", {}), ("p3-code", {})])
def test_every_profile_gives_the_numbers_of_one_process(client, inputs, few_images, profile, filters):
    gt, pred = few_images if profile.startswith("p3") else inputs
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        one = evaluate(gt, pred, profile=profile, bootstrap_resamples=40, **filters)
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        two = evaluate(gt, pred, profile=profile, bootstrap_resamples=40, client=client, **filters)
    if filters is FILTERS:
        counts = one.summary["counts"]
        assert counts["gt_instances"] < counts["gt_input_instances"]
        assert counts["pred_instances"] < counts["pred_input_instances"]
        assert counts["pred_holes"] < counts["pred_input_holes"]
    assert_same_evaluation(one, two)
    assert one.summary["metrics"]["matched_pairs"] > (20 if profile.startswith("p3") else 100)
    if profile != "reference-code":
        assert two.summary["bootstrap"]["resamples"] == 40


def test_partitions_out_of_image_order_merge_to_the_numbers_of_one_process(client, inputs):
    """Partitions are runs of the images as the ground truth lists them: listed last to first, they come back out
    of image order, and the merge puts their instances in the order of one process."""
    from polytopo.evaluator.inputs.ordering import image_sort_key

    gt, pred = inputs
    gt = replace(gt, image_ids=tuple(reversed(gt.image_ids)))
    firsts = [image_sort_key(part.gt_set.image_ids[0]) for part in partition_images(gt, pred, 8)]
    assert firsts != sorted(firsts)
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        one = evaluate(gt, pred, bootstrap_resamples=0)
    with pytest.warns(UserWarning, match="appear only in the predictions"):
        two = evaluate(gt, pred, bootstrap_resamples=0, client=client)
    assert_same_evaluation(one, two)


def test_sweeps_and_bootstrap_give_the_numbers_of_one_process(client, few_images, swept_in_process):
    with pytest.warns(UserWarning):
        two = evaluate(*few_images, sweeps=True, bootstrap_resamples=130, client=client)
    assert len(two.summary["min_hole_area_sweep"]) == 6 and len(two.summary["ring_threshold_sweep"]) == 9
    assert_same_evaluation(swept_in_process, two)


def test_a_worker_with_two_threads_gets_partitions_for_both_and_the_numbers_of_one_process(inputs):
    """``dask worker`` starts a thread per core by default: partitions and bootstrap chunks are counted per
    thread, two run at once in one worker process, and the numbers, the records and the worker's
    garbage collector afterwards are as they would be in one process."""
    import gc

    from distributed import Client, LocalCluster

    from polytopo.core.cluster import task_slots
    from polytopo.evaluator.run.distributed import PARTITIONS_PER_THREAD

    with pytest.warns(UserWarning, match="appear only in the predictions"):
        one = evaluate(*inputs, bootstrap_resamples=40)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        assert task_slots(client) == 2
        phases = []
        with pytest.warns(UserWarning, match="appear only in the predictions"):
            two = evaluate(*inputs, bootstrap_resamples=40, client=client, progress=phases.append)
        # groups for both threads (the last of the 8 asked, the smallest, may find no image of its own)
        (planned,) = {int(p.rsplit(" ", 1)[1]) for p in phases if p.startswith("partition 1 of ")}
        assert PARTITIONS_PER_THREAD < planned <= 2 * PARTITIONS_PER_THREAD
        # the bootstrap in one chunk per thread (20 resamples each), with the numbers of one process's one chunk
        assert "bootstrap chunk 2 of 2" in phases and "bootstrap chunk 1 of 3" not in phases
        assert list(client.run(gc.isenabled).values()) == [True]
    assert_same_evaluation(one, two)


def _worker_pids(client):
    return sorted(client.run(os.getpid).values())


def test_a_worker_killed_mid_run_is_replaced_and_the_numbers_stay(client, few_images, swept_in_process):
    victim = _worker_pids(client)[0]
    killed = threading.Event()

    def kill_once_busy():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(client.processing().values()):
            time.sleep(0.005)
        os.kill(victim, signal.SIGKILL)
        killed.set()

    killer = threading.Thread(target=kill_once_busy)
    killer.start()
    with pytest.warns(UserWarning):
        two = evaluate(*few_images, sweeps=True, bootstrap_resamples=130, client=client)
    killer.join()
    assert killed.is_set() and victim not in _worker_pids(client)
    assert_same_evaluation(swept_in_process, two)


def die(_):
    os._exit(3)


def test_a_partition_that_kills_every_worker_fails_by_name():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with open_client(workers=1) as client:
            with pytest.raises(ClusterError, match=r"images 'a'\.\.'b' to finish .*KilledWorker"):
                map_partitions(client, die, [None], names=["the partition of images 'a'..'b'"], retries=0)


def test_cli_with_workers_writes_the_single_process_summary(tmp_path, fixtures_dir, capsys):
    from polytopo.evaluator.cli.evaluate import main

    folder = fixtures_dir / "ptb_small"
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
              "--bootstrap", "20", "--no-plots", "--no-gpkg", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "one")]) == 0
    assert main([*common, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0, capsys.readouterr().err
    one, two = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("one", "two"))
    one.pop("timings"), two.pop("timings")
    assert_same(one, two)
    for name in ("predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv"):
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()


def test_cli_workers_auto_uses_every_core_only_where_the_inputs_are_large_enough(tmp_path, fixtures_dir, capsys,
                                                                                  monkeypatch):
    """``--workers auto`` (the default): this process for small inputs, a cluster of one worker per core above
    the size threshold, with the single process's numbers and records."""
    from polytopo.core import cluster
    from polytopo.evaluator.cli import shared
    from polytopo.evaluator.cli.evaluate import main

    started = []
    real = cluster.client_starting

    def recording(workers, scheduler):
        started.append(workers)
        return real(workers, scheduler)

    monkeypatch.setattr(cluster, "client_starting", recording)
    monkeypatch.setattr(shared, "usable_cores", lambda: 2)
    folder = fixtures_dir / "ptb_small"
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
              "--bootstrap", "20", "--no-plots", "--no-gpkg"]
    assert main([*common, "--out", str(tmp_path / "small")]) == 0
    assert started == [0] and "local cluster" not in capsys.readouterr().err
    monkeypatch.setattr(cluster, "AUTO_CLUSTER_MIN_BYTES", 1)
    assert main([*common, "--out", str(tmp_path / "large"), "--workers", "auto"]) == 0
    assert started == [0, 2]
    assert "running on a local cluster of 2 workers for the 2 cores here (--workers 0 runs in this process)" in (
        capsys.readouterr().err)
    assert main([*common, "--out", str(tmp_path / "zero"), "--workers", "0", "--quiet"]) == 0
    monkeypatch.setattr(shared, "usable_cores", lambda: 1)
    assert main([*common, "--out", str(tmp_path / "one-core"), "--quiet"]) == 0
    assert started == [0, 2, 0, 0]
    large, zero = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("large", "zero"))
    large.pop("timings"), zero.pop("timings")
    assert_same(large, zero)
    for name in ("predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv"):
        assert (tmp_path / "large" / name).read_text() == (tmp_path / "zero" / name).read_text()


def test_input_bytes_counts_files_and_folders_and_skips_what_it_cannot_see(tmp_path):
    from polytopo.evaluator.cli.shared import input_bytes

    (tmp_path / "a.json").write_bytes(b"x" * 10)
    (tmp_path / "layer").mkdir()
    (tmp_path / "layer" / "part.shp").write_bytes(b"y" * 5)
    (tmp_path / "layer" / "part.dbf").write_bytes(b"z" * 7)
    assert input_bytes([tmp_path / "a.json", tmp_path / "layer", tmp_path / "missing.json", "/vsizip/x.zip/a"]) == 22


def test_cli_reports_an_unanswering_scheduler_in_one_line(tmp_path, fixtures_dir, capsys, monkeypatch):
    from functools import partial

    from polytopo.core import cluster
    from polytopo.evaluator.cli.evaluate import main

    monkeypatch.setattr(cluster, "open_client", partial(cluster.open_client, timeout_s=1))
    folder = fixtures_dir / "ptb_small"
    started = time.monotonic()
    status = main(["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
                   "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and time.monotonic() - started < 10
    assert "error: Expected a Dask scheduler answering at tcp://127.0.0.1:9" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _dask(*args, env=None):
    import subprocess
    import sys
    from pathlib import Path

    return subprocess.Popen([str(Path(sys.executable).with_name("dask")), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)


def _stop(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except Exception:  # noqa: BLE001 - a process that ignores SIGTERM is killed
            process.kill()
            process.wait()


def test_cli_against_dask_scheduler_and_worker_processes(tmp_path, fixtures_dir, capsys):
    """``dask scheduler`` + two ``dask worker`` processes: same summary; a worker of another version is refused."""
    import distributed

    from polytopo import __version__
    from polytopo.evaluator.cli.evaluate import main

    address = f"tcp://127.0.0.1:{_free_port()}"
    processes = [_dask("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard")]
    try:
        processes += [_dask("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"w{k}")
                      for k in range(2)]
        with distributed.Client(address, timeout=30) as probe:
            probe.wait_for_workers(2, timeout=60)
        folder = fixtures_dir / "ptb_small"
        common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
                  "--bootstrap", "20", "--no-plots", "--no-gpkg", "--quiet"]
        assert main([*common, "--out", str(tmp_path / "one")]) == 0
        assert main([*common, "--out", str(tmp_path / "two"), "--scheduler", address]) == 0, capsys.readouterr().err
        one, two = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("one", "two"))
        one.pop("timings"), two.pop("timings")
        assert_same(one, two)

        preload = tmp_path / "other_version.py"
        preload.write_text("import polytopo.version\npolytopo.version.__version__ = '0.0.0-other'\n")
        processes.append(_dask("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", "other",
                               "--preload", str(preload)))
        with distributed.Client(address, timeout=30) as probe:
            probe.wait_for_workers(3, timeout=60)
        capsys.readouterr()
        assert main([*common, "--out", str(tmp_path / "three"), "--scheduler", address]) == 2
        err = capsys.readouterr().err
        assert f"polytopo {__version__} (the client's version)" in err and "runs polytopo 0.0.0-other" in err
        assert not (tmp_path / "three").exists()
    finally:
        _stop(processes[::-1])


def test_the_single_process_path_never_imports_dask(tmp_path, fixtures_dir):
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    code = ("import sys\nfrom polytopo.evaluator.cli.evaluate import main\n"
            f"status = main(['--gt', {str(folder / 'gt.json')!r}, '--pred', {str(folder / 'pred.json')!r}, "
            f"'--drop-degenerate-rings', '--out', {str(tmp_path / 'out')!r}, '--no-plots', '--no-gpkg', '--quiet', "
            "'--bootstrap', '10'])\n"
            "assert status == 0, status\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_comparison_on_the_cluster_gives_the_same_numbers(client, few_images):
    from polytopo.evaluator.run.compare import compare_methods

    gt, pred = few_images
    no_holes = replace(pred, instances=tuple(i.with_holes(()) for i in pred.instances))
    sets = {"Full": pred, "NoHoles": no_holes}
    kept = {"one": {}, "two": {}}
    with pytest.warns(UserWarning):
        one = compare_methods(gt, sets, bootstrap_resamples=30, evaluated=kept["one"].__setitem__)
    with pytest.warns(UserWarning):
        two = compare_methods(gt, sets, bootstrap_resamples=30, client=client, evaluated=kept["two"].__setitem__)
    assert one.paired["Hole-F1"]["best"] == "Full"
    assert_same(one.paired, two.paired, "paired")
    for name in sets:
        assert_same_evaluation(kept["one"][name], kept["two"][name])


def test_each_set_sums_its_ring_perimeters_once(monkeypatch):
    """The sampling-cost check and the partitioning read one perimeter sum per set (a comparison's ground truth
    once for every method), and the longest ring is found in whichever set holds it."""
    from polytopo.evaluator.inputs import instances as instances_module
    from polytopo.evaluator.inputs.input_checks import check_sampling_cost

    calls = []
    real = instances_module.ring_perimeters
    monkeypatch.setattr(instances_module, "ring_perimeters", lambda rings: calls.append(len(rings)) or real(rings))
    holed = instances_from_geometry(shapely.Polygon([(0, 0), (30, 0), (30, 40)], [[(10, 5), (20, 5), (20, 15), (10, 15)]]),
                                    image_id=0, source_id=9)
    gt = InstanceSet(tuple(holed + _square_instances(0, 10, 3) + _square_instances(1, 500, 1)), (0, 1), {}, "gt")
    assert gt.ring_counts.tolist() == [2, 1, 1, 1, 1]
    assert np.array_equal(gt.ring_at(1), holed[0].holes[0]) and gt.ring_at(5) is gt.instances[4].exterior
    for method in range(2):
        pred = InstanceSet(tuple(_square_instances(1, 2000, 1)), (0, 1), {}, f"method {method}")
        check_sampling_cost(gt, pred, params_for("paper"))
        partition_images(gt, pred, 2)
        with pytest.raises(InvalidParameterError, match=r"on the longest ring \(8000 px\)"):
            check_sampling_cost(gt, pred, params_for("paper", sample_spacing_px=7e-4))
    assert calls == [6, 1, 1]  # the ground truth's 6 rings once, each method's ring once


def test_invalid_references_are_found_by_the_workers(client, inputs, monkeypatch):
    """On a cluster the workers count the invalid references of their partitions: the client builds no reference
    polygon for the check (only the first invalid one, for the warning's reason), and the counts and the warning are
    those of one process (every partition task kind)."""
    import warnings

    from polytopo.evaluator.inputs import instances as instances_module
    from polytopo.evaluator.outputs.record_parts import parts_request

    gt, pred = inputs
    bowtie = np.array([[0.0, 0], [40, 40], [40, 0], [0, 40]])
    late = len(gt.instances) - 3
    instances = list(gt.instances)
    for k in (late, 5):  # the first one in input order is the one the warning names
        instances[k] = replace(instances[k], exterior=bowtie + instances[k].exterior.min(axis=0), holes=())
    gt = replace(gt, instances=tuple(instances))
    built = []
    real = instances_module.polygons_of
    monkeypatch.setattr(instances_module, "polygons_of", lambda items: built.append(len(items)) or real(items))
    for profile, request in (("paper", None), ("paper", parts_request(None, False)), ("coco", None)):
        with warnings.catch_warnings(record=True) as alone_warned:
            warnings.simplefilter("always")
            alone = evaluate(replace(gt), pred, profile=profile, bootstrap_resamples=0)
        built.clear()
        with warnings.catch_warnings(record=True) as cluster_warned:
            warnings.simplefilter("always")
            two = evaluate(replace(gt), pred, profile=profile, bootstrap_resamples=0, client=client,
                           record_parts=request)
        assert sum(built) <= 1  # no reference polygon made on the client but the first invalid one, for the warning
        assert two.summary["counts"]["gt_invalid"] == alone.summary["counts"]["gt_invalid"] == 2
        message = [str(w.message) for w in alone_warned if "reference polygon(s) are invalid" in str(w.message)]
        assert message and message == [str(w.message) for w in cluster_warned
                                       if "reference polygon(s) are invalid" in str(w.message)]
        assert f"id {instances[5].source_id}:" in message[0]
