"""Prefetching: the background thread reads and runs ahead in order, stops on close, and never changes the output."""

import os
import threading

import numpy as np
import pytest

from polytopo.models import InferenceCanceled, InferenceError, PreparedRun, RunParams, SessionParams, load_model, run_to_file
from polytopo.models import pipeline
from polytopo.models.prefetch import Prefetcher
from polytopo.models.session import ProviderReport

CPU = SessionParams(provider="cpu")


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "polytopo-prefetch"]


def test_results_come_in_order_and_the_worker_stays_within_depth():
    made = []
    consumed = []

    def work(item):
        made.append(item)
        return item * 10

    with Prefetcher((work(i) for i in range(50)), depth=3) as results:
        for value in results:
            consumed.append(value)
            assert len(made) <= len(consumed) + 3 + 1  # queue of 3 plus the one in progress
    assert consumed == [i * 10 for i in range(50)]
    assert not prefetch_threads()


def test_an_error_is_raised_where_it_happened_after_the_earlier_results():
    def work(item):
        if item == 4:
            raise ValueError("bad item 4")
        return item

    seen = []
    with pytest.raises(ValueError, match="bad item 4"):
        for value in Prefetcher((work(i) for i in range(10)), depth=2):
            seen.append(value)
    assert seen == [0, 1, 2, 3]
    assert not prefetch_threads()


def test_close_stops_the_worker_and_drops_pending_results():
    started = threading.Event()

    def work(item):
        started.set()
        return item

    results = Prefetcher((work(i) for i in range(10**9)), depth=2)
    assert next(results) == 0
    started.wait(5)
    results.close()
    assert not prefetch_threads()
    with pytest.raises(StopIteration):
        next(results)


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        Prefetcher([], depth=0)


def test_prefetch_depth_policy(monkeypatch):
    monkeypatch.setattr(pipeline, "_usable_cpus", lambda: 4)
    cpu = ("CPUExecutionProvider",)
    assert pipeline.prefetch_depth(None, ProviderReport("cpu", cpu, None, 0)) == 0  # onnxruntime takes every core
    assert pipeline.prefetch_depth(None, ProviderReport("cpu", cpu, None, 4)) == 0
    assert pipeline.prefetch_depth(None, ProviderReport("cpu", cpu, None, 2)) == pipeline.PREFETCH_BATCHES
    gpu = ("CUDAExecutionProvider", "CPUExecutionProvider")
    assert pipeline.prefetch_depth(None, ProviderReport("auto", gpu, None, 0)) == pipeline.PREFETCH_BATCHES
    assert pipeline.prefetch_depth(None, None) == 0
    assert pipeline.prefetch_depth(5, ProviderReport("cpu", cpu, None, 0)) == 5
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InferenceError, match="prefetch_batches"):
            pipeline.prefetch_depth(bad, None)


def ring_raster(tiny, path):
    band = np.zeros((150, 140), np.uint8)
    band[20:120, 15:125] = 255
    band[45:95, 40:100] = 0
    band[130:145, 5:30] = 255
    return tiny.write_raster(path, np.stack([band, band, band]))


@pytest.mark.parametrize("family", ["semantic", "instance", "vertex-mask"])
def test_prefetching_changes_no_polygon(tmp_path, tiny, family):
    builders = {"semantic": lambda p: tiny.deepness_model(p, tile=64), "instance": tiny.instance_model, "vertex-mask": tiny.vertex_mask_model}
    model = load_model(builders[family](tmp_path / "m.onnx"), CPU)
    raster = ring_raster(tiny, tmp_path / "r.tif")
    outputs = {}
    for depth in (0, 1, 3):
        prediction = PreparedRun(model, raster, RunParams(prefetch_batches=depth))
        outputs[depth] = [(p.geometry.wkb, p.class_id, round(p.score, 12)) for p in prediction]
        assert prediction.report.prefetch_batches == depth
    assert outputs[0] and outputs[1] == outputs[0] and outputs[3] == outputs[0]
    assert not prefetch_threads()


def test_cancel_while_prefetching_stops_the_thread_and_leaves_no_output(tmp_path, tiny):
    model = load_model(tiny.deepness_model(tmp_path / "m.onnx", tile=64), CPU)
    raster = ring_raster(tiny, tmp_path / "r.tif")
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(InferenceCanceled):
        run_to_file(model, raster, tmp_path / "out.gpkg", RunParams(prefetch_batches=2), cancel=cancel)
    assert len(calls) == 3
    assert not prefetch_threads()
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "r.tif"]


def test_nan_found_by_the_prefetch_thread_fails_the_run_without_output(tmp_path, tiny):
    model = load_model(tiny.nan_model(tmp_path / "nan.onnx"), CPU)
    raster = tiny.write_raster(tmp_path / "f.tif", np.linspace(0, 1, 64 * 64, dtype=np.float32).reshape(64, 64))
    with pytest.raises(InferenceError, match="NaN"):
        run_to_file(model, raster, tmp_path / "out.gpkg", RunParams(prefetch_batches=2))
    assert not prefetch_threads()
    assert sorted(os.listdir(tmp_path)) == ["f.tif", "nan.onnx"]


def test_schedule_aoi_tests_and_reading_happen_in_the_prefetch_thread_only(tmp_path, tiny, monkeypatch):
    """Prepared AOI geometries and the GDAL dataset are not thread-safe: one thread must do all of it."""
    import shapely

    model = load_model(tiny.deepness_model(tmp_path / "m.onnx", tile=64), CPU)
    raster = ring_raster(tiny, tmp_path / "r.tif")
    aoi = shapely.box(500003.0, 3999930.0, 500060.0, 3999996.0)
    threads = {"aoi": set(), "read": set()}
    tile_in_aoi, read_tile = PreparedRun._tile_in_aoi, PreparedRun._read_tile

    def recording_aoi(self, tile):
        threads["aoi"].add(threading.current_thread().name)
        return tile_in_aoi(self, tile)

    def recording_read(self, tile):
        threads["read"].add(threading.current_thread().name)
        return read_tile(self, tile)

    monkeypatch.setattr(PreparedRun, "_tile_in_aoi", recording_aoi)
    monkeypatch.setattr(PreparedRun, "_read_tile", recording_read)
    with_thread = [p.geometry.wkb for p in PreparedRun(model, raster, RunParams(aoi=aoi, prefetch_batches=2))]
    assert threads == {"aoi": {"polytopo-prefetch"}, "read": {"polytopo-prefetch"}}
    threads["aoi"].clear(), threads["read"].clear()
    without = [p.geometry.wkb for p in PreparedRun(model, raster, RunParams(aoi=aoi, prefetch_batches=0))]
    assert threads == {"aoi": {"MainThread"}, "read": {"MainThread"}}
    assert with_thread and with_thread == without
