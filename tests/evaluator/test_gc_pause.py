"""Reading inputs holds the cyclic garbage collector off and gives it back as it was."""

import gc

import pytest
from polytopo_testing import COCO_GT

from polytopo.evaluator import load_inputs
from polytopo.core.errors import InputFormatError
from polytopo.core.gc_pause import paused_gc


@pytest.fixture
def collections():
    """Generations of the automatic collections made while the test runs."""
    seen = []

    def record(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(record)
    yield seen
    gc.callbacks.remove(record)


def test_no_automatic_collection_while_reading(coco_files, monkeypatch):
    """While the files are read (here: while each one is parsed) the collector is off;
    afterwards it is on again."""
    import polytopo.evaluator.run.api as api

    states = []
    parse = api._coco_data

    def parse_and_look(path):
        states.append(gc.isenabled())
        return parse(path)

    monkeypatch.setattr(api, "_coco_data", parse_and_look)
    assert gc.isenabled()
    gt, pred, frame = load_inputs(*coco_files)
    assert states == [False, False]
    assert gc.isenabled()
    assert len(gt) == len(COCO_GT["annotations"]) and frame is None


def test_the_collector_comes_back_after_an_error(coco_files, tmp_path):
    """A refused input leaves the collector enabled."""
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InputFormatError):
        load_inputs(coco_files[0], broken)
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled(coco_files):
    """A caller that had switched the collector off finds it off after reading."""
    gc.disable()
    try:
        load_inputs(*coco_files)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_gc_holds_off_collections_that_would_run(collections):
    """Allocations that cross the collector's threshold trigger no collection inside the block."""
    with paused_gc():
        garbage = [[] for _ in range(5 * gc.get_threshold()[0])]
        assert collections == []
    del garbage
    assert gc.isenabled()


def test_evaluation_and_writing_run_with_the_collector_off(coco_files, tmp_path, monkeypatch):
    """Every phase of ``evaluate`` and the writing of the report see the collector off; it is
    on again after each."""
    import polytopo.evaluator.outputs.report as report
    from polytopo.evaluator import evaluate, write_report

    gt, pred, frame = load_inputs(*coco_files)
    phases = []
    evaluation = evaluate(gt, pred, progress=lambda name: phases.append(gc.isenabled()))
    assert len(phases) > 5 and not any(phases)
    assert gc.isenabled()
    seen = []
    drawing = report.plot_pngs
    monkeypatch.setattr(report, "plot_pngs", lambda *args: (seen.append(gc.isenabled()), drawing(*args))[1])
    write_report(evaluation, tmp_path / "out", frame=frame)
    assert seen == [False]
    assert gc.isenabled()


def gc_state(_):
    """A partition's worker function: whether the collector is on while it runs."""
    return gc.isenabled()


def test_worker_tasks_run_with_the_collector_off():
    """On real Dask workers a packed partition runs with the collector off; the workers get
    it back on afterwards."""
    from polytopo.core.cluster import client_starting, map_partitions

    with client_starting(workers=2) as started:
        client = started()
        assert map_partitions(client, gc_state, [0, 1, 2], packed=True) == [False, False, False]
        assert set(client.run(gc.isenabled).values()) == {True}


def test_overlapping_pauses_in_two_threads_keep_the_collector_off_until_both_end():
    """The collector's state is process-wide: when the first of two overlapping blocks ends,
    the other still runs with it off, and it comes back on only when that one ends too."""
    import threading

    entered, first_done, second_may_end = threading.Barrier(2), threading.Event(), threading.Event()
    seen = {}

    def first():
        with paused_gc():
            entered.wait()
        first_done.set()

    def second():
        with paused_gc():
            entered.wait()
            first_done.wait()
            seen["after the first ended"] = gc.isenabled()
            second_may_end.wait()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_done.wait()
    try:
        seen["while the second runs"] = gc.isenabled()
    finally:
        second_may_end.set()
        for thread in threads:
            thread.join()
    assert seen == {"after the first ended": False, "while the second runs": False}
    assert gc.isenabled()


def test_many_threads_pausing_at_random_leave_the_collector_as_it_was():
    """However the blocks of many threads interleave, the state afterwards is the one before."""
    import random
    import threading
    import time

    def pause(seed):
        rng = random.Random(seed)
        for _ in range(200):
            with paused_gc():
                time.sleep(rng.random() * 1e-4)

    for before in (True, False):
        (gc.enable if before else gc.disable)()
        try:
            threads = [threading.Thread(target=pause, args=(seed,)) for seed in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert gc.isenabled() is before
        finally:
            gc.enable()
