"""The pure parts of ``benchmarks/bench_polytopobench_scale.py``: set size, the methods' simulations, the projection sum.

The benchmark scripts turn GDAL's exceptions on for their whole process when imported
(``osm_benchmark_set``); the fixture puts GDAL's error mode back as it was, so the other
tests of the session see GDAL as they expect.
"""

import importlib
import sys

import pytest


@pytest.fixture
def bench(repo_root, monkeypatch):
    from osgeo import gdal, ogr, osr

    modules = (gdal, ogr, osr)
    before = [module.GetUseExceptions() for module in modules]
    monkeypatch.syspath_prepend(str(repo_root / "benchmarks"))
    imported = importlib.import_module("bench_polytopobench_scale")
    for module, enabled in reversed(list(zip(modules, before))):  # GDAL keeps the error handlers on a stack
        if module.GetUseExceptions() and not enabled:
            module.DontUseExceptions()
    return imported


def test_the_scale_is_the_fewest_copies_that_reach_the_references(bench):
    assert bench.scale_for(300_000, 8_502) == 36  # 35 copies hold 297,570, 36 hold 306,072
    assert bench.scale_for(8_502 * 4, 8_502) == 4
    assert bench.scale_for(1, 8_502) == 1
    with pytest.raises(ValueError):
        bench.scale_for(300_000, 0)


def test_factor_one_is_the_generators_own_simulation_and_rates_are_capped(bench):
    from osm_benchmark_set import SimulationParameters

    default = SimulationParameters()
    assert bench.method_simulation(1.0) == default  # the same cache key: the ordinary benchmark set
    doubled = bench.method_simulation(2.0)
    assert doubled.direct_jitter_sigma_px == (2.0, 4.0)
    assert doubled.seg_small_hole_loss_rate == 1.0 and doubled.miss_rate == 2 * default.miss_rate
    assert doubled.forced_invalid_patch_rate == default.forced_invalid_patch_rate
    assert bench.method_simulation(0.5).hole_drop_rate == default.hole_drop_rate / 2
    with pytest.raises(ValueError):
        bench.method_simulation(-1.0)


def test_the_comparison_is_the_sum_of_its_evaluations_with_one_cluster_start(bench):
    from bench_evaluator_scale_out import project

    costs = {"serial": {"load": 1.0, "merge": 0.5}, "partitions": [2.0] * 8, "bootstrap_resamples": 500,
             "bootstrap_fixed_s": 0.01, "bootstrap_row_s": 0.001}
    per_partition = {"client_s": 0.004, "scheduler_s": 0.006}
    low, high = bench.project_compare([costs, costs], 0.001, 3.0, 2, per_partition)
    first, later = project(costs, 0.001, 2, per_partition, 3.0), project(costs, 0.001, 2, per_partition, 0.0)
    assert low == pytest.approx(first[0] + later[0]) and high == pytest.approx(first[1] + later[1])
    assert first[0] - later[0] == pytest.approx(2.0)  # start-up 3 s less the 1 s of loading it overlaps
    # where the workers read the files: the ground truth is indexed with the first method only
    sides = {"gt": {"counts": [0.3], "marks": [0.3], "join": 0.1},
             "pred": {"counts": [0.1], "marks": [0.05], "join": 0.05}}
    indexed = {**costs, "index": {"2": sides}}
    low_indexed, _ = bench.project_compare([indexed, indexed], 0.001, 3.0, 2, per_partition)
    # first: both files side by side on the 2 workers, 3 tasks a round; second: the predictions alone
    assert low_indexed - low == pytest.approx((0.3 + 0.3 + 0.1 + 3 * 2 * 0.001) + (0.1 + 0.05 + 0.05 + 3 * 0.001))


def test_the_bootstrap_is_projected_in_one_chunk_per_worker(bench):
    """One process: chunks of 64 one after another; N workers: one round of chunks of ceil(R / N) (16 to 64), each
    chunk also costing the scheduler a task."""
    from bench_evaluator_scale_out import bootstrap_s

    costs = {"bootstrap_resamples": 500, "bootstrap_fixed_s": 0.01, "bootstrap_row_s": 0.001}
    assert bootstrap_s(costs, 1) == pytest.approx(8 * 0.01 + 500 * 0.001)
    assert bootstrap_s(costs, 2, 0.002) == pytest.approx(4 * (0.01 + 64 * 0.001) + 8 * 0.002)
    # at least 16 resamples a task: 31 chunks of 16 and one of 4 in one round on 64 workers
    assert bootstrap_s(costs, 64, 0.002) == pytest.approx(0.01 + 16 * 0.001 + 32 * 0.002)
    assert bootstrap_s({**costs, "bootstrap_resamples": 0}, 64, 0.002) == 0.0


def test_the_partitions_cost_the_client_and_the_scheduler_in_the_projection(bench):
    """The upper bound adds the client's and the scheduler's whole CPU for the 4N partitions; the lower bound takes
    the busier of the two handing them out as a floor under the workers' time (they overlap it)."""
    from bench_evaluator_scale_out import project

    costs = {"serial": {"merge": 0.5}, "partitions": [1.0] * 8, "bootstrap_resamples": 0, "bootstrap_fixed_s": 0.0,
             "bootstrap_row_s": 0.0}
    free_low, free_high = project(costs, 0.0, 64, {"client_s": 0.0, "scheduler_s": 0.0})
    assert free_low == pytest.approx(0.5 + 8 / 64) and free_high == pytest.approx(0.5 + 8 / 64 + (63 / 64) * 8 / 256)
    low, high = project(costs, 0.0, 64, {"client_s": 0.002, "scheduler_s": 0.003})
    assert high - free_high == pytest.approx(256 * 0.005)
    assert low == pytest.approx(0.5 + 256 * 0.003)  # the scheduler's 0.77 s outlast the workers' 0.125 s
    assert project(costs, 0.0, 2, {"client_s": 0.002, "scheduler_s": 0.003})[0] == pytest.approx(0.5 + 8 / 2)  # the workers' time dominates


def test_the_cost_per_partition_is_measured_on_a_scheduler_and_workers_of_one_and_more_threads(bench, fixtures_dir):
    """The command line runs against ``dask scheduler`` + 2 ``dask worker`` processes of 1 and of 2 threads: the
    scheduler counts up to 8 partitions, then more (at most one per image: 12), and both costs per partition come out."""
    import math

    from bench_evaluator_scale_out import per_partition_cpu_s

    folder = fixtures_dir / "ptb_small"
    measured = per_partition_cpu_s(sys.executable, lambda address, out: [
        "--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--out", str(out), "--no-plots",
        "--no-gpkg", "--quiet", "--scheduler", address], threads=(1, 2))
    first, second = (run["partitions"] for run in measured["runs"])
    # 8 and 16 groups asked, at most one per image; the last, smallest groups of the plan may find no image
    assert 4 < first <= 8 and first < second <= 12
    assert all(run["client_cpu_s"] > 0 and run["scheduler_cpu_s"] > 0 for run in measured["runs"])
    assert math.isfinite(measured["client_s"]) and math.isfinite(measured["scheduler_s"])


def test_the_part_costs_follow_the_cluster_path_and_the_figure_is_drawn(bench, fixtures_dir, tmp_path):
    """Records are made with the partitions, the client writes their CSV text; the speed-up figure is a PNG."""
    from bench_evaluator_scale_out import index_s as scale_out_index_s

    folder = fixtures_dir / "ptb_small"
    costs = bench.part_costs(str(folder / "gt.json"), str(folder / "pred.json"), "paper", 4, workers_read=False)
    assert set(costs["serial"]) == {"load", "partitioning", "pickle partitions", "unpickle results", "merge",
                                    "summary", "analyses", "write CSVs"}
    assert len(costs["partitions"]) == len(costs["result_mib"]) > 1 and costs["bootstrap_resamples"] > 0
    assert costs["bootstrap_fixed_s"] >= 0 and costs["bootstrap_row_s"] > 0
    # the command line's evaluation: the workers read their partitions, one process reads them in its loading
    read = bench.part_costs(str(folder / "gt.json"), str(folder / "pred.json"), "paper", 4)
    assert set(read["serial"]) == {"plan (images[], partitions)", "sets from the digests", "merge", "summary",
                                   "analyses", "write CSVs"}
    assert set(read["single"]) == {"load", "summary", "analyses", "write CSVs"}
    # the fixture's files are under a chunk's bytes: one chunk each for any number of workers
    assert set(read["index"]) == {"2", "4", "8", "16", "32", "64"}
    assert all(len(steps["counts"]) == len(steps["marks"]) == 1 and steps["join"] > 0
               for sides in read["index"].values() for steps in sides.values())
    assert scale_out_index_s(read, 64, 0.002) == pytest.approx(scale_out_index_s(read, 2, 0.002))
    assert scale_out_index_s(read, 2, 0.002) > 6 * 0.002  # three rounds of two tasks
    assert len(read["partitions"]) == len(read["reads"]) > 1
    assert all(0 < r < p for r, p in zip(read["reads"], read["partitions"]))
    scale_out = sys.modules["bench_evaluator_scale_out"]
    report = {"scale": 1, "profile": "paper", "costs": costs, "single_process_s": bench.single_process_s(costs),
              "task_overhead_s": 0.002, "startup_s": 1.0, "end_to_end": {"speedup": 1.3},
              "per_partition": {"client_s": 0.004, "scheduler_s": 0.006}}
    scale_out.draw_speedups(tmp_path / "speedup.png", report)
    assert (tmp_path / "speedup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plans_partitions_are_measured_region_by_region(bench, fixtures_dir):
    """Every partition of each plan is measured once, in plan order; the plans hold the same images."""
    from bench_evaluator_scale_out import interleaved_partitions

    folder = fixtures_dir / "ptb_small"
    measured = interleaved_partitions(str(folder / "gt.json"), str(folder / "pred.json"), "paper", (2, 4, 8))
    assert set(measured) == {2, 4, 8}
    assert [len(measured[n]) for n in (2, 4)] == [2, 4] and 4 < len(measured[8]) <= 8
    assert all(seconds is not None and seconds > 0 for times in measured.values() for seconds in times)


def test_the_simulated_schedule_is_list_scheduling_with_a_serial_scheduler_and_client(bench):
    """Equal partitions and free hand-outs: the work spread evenly; the scheduler's hand-outs delay the starts one
    after another, the client takes the results in one after another; a late large partition is the tail."""
    from bench_evaluator_scale_out import scheduled_s

    assert scheduled_s([1.0] * 8, 2, 0.0, 0.0) == pytest.approx(4.0)
    assert scheduled_s([1.0] * 8, 8, 0.0, 0.0) == pytest.approx(1.0)
    # 4 workers, 4 partitions: started at 0.1, 0.2, 0.3, 0.4 s, each ends 1 s later; the client adds 0.05 s at the end
    assert scheduled_s([1.0] * 4, 4, 0.05, 0.1) == pytest.approx(1.4 + 0.05)
    # a client slower than the partitions finish: it takes in all four one after another from the first end
    assert scheduled_s([1.0] * 4, 4, 0.5, 0.1) == pytest.approx(1.1 + 4 * 0.5)
    # the large partition last: one worker runs it alone after the others (list order, not the largest first)
    assert scheduled_s([1.0, 1.0, 1.0, 1.0, 3.0], 2, 0.0, 0.0) == pytest.approx(5.0)
    assert scheduled_s([3.0, 1.0, 1.0, 1.0, 1.0], 2, 0.0, 0.0) == pytest.approx(4.0)


def test_the_simulated_schedule_lies_between_the_bounds_of_list_scheduling(bench):
    """For any partitions: at least the largest, the even spread and the serial hand-outs; at most Graham's bound plus
    every hand-out and take-in counted whole."""
    import random

    from bench_evaluator_scale_out import bootstrap_s, scheduled_s, simulate

    rng = random.Random(7)
    for _ in range(200):
        workers = rng.choice([2, 3, 16, 64])
        parts = [rng.uniform(0.05, 2.0) for _ in range(4 * workers + rng.randrange(5))]
        c, s = rng.uniform(0, 0.01), rng.uniform(0, 0.01)
        h = scheduled_s(parts, workers, c, s)
        work, largest, n = sum(parts), max(parts), len(parts)
        assert h >= max(largest, work / workers, n * s, n * c) - 1e-9
        assert h <= work / workers + (1 - 1 / workers) * largest + n * (c + s) + 1e-9
    costs = {"serial": {"index": 0.3, "merge": 0.2}, "bootstrap_resamples": 500, "bootstrap_fixed_s": 0.01,
             "bootstrap_row_s": 0.001}
    per_partition = {"client_s": 0.004, "scheduler_s": 0.003}
    got = simulate(costs, [0.5] * 64, 0.002, 16, per_partition)
    assert got == pytest.approx(0.5 + bootstrap_s(costs, 16, 0.002) + scheduled_s([0.5] * 64, 16, 0.004, 0.003))


def test_the_taper_study_simulates_plans_that_shrink_along_them(bench):
    """Equal groups without spread, fixed cost or hand-out cost: the even share; with the measured spread a tapered
    plan finishes sooner than an even one on 16 workers."""
    from bench_evaluator_scale_out import taper_study

    even = taper_study(tapers=(0.0,), workers=(4,), per_thread=(4,), draws=3, work_s=16.0, spread=0.0, fixed_s=0.0,
                       per_partition=(0.0, 0.0))
    assert even == {(4, 4, 0.0): pytest.approx(4.0)}
    spread = taper_study(tapers=(0.0, 0.7), workers=(16,), per_thread=(4,), draws=50)
    assert spread[16, 4, 0.7] < spread[16, 4, 0.0]
