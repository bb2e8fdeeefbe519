"""Reading inputs holds the cyclic garbage collector off and gives it back as it was."""

import gc

import pytest
from polytopo_testing import COCO_GT

from polytopo.evaluator import load_inputs
from polytopo.evaluator.errors import InputFormatError
from polytopo.evaluator.gc_pause import paused_gc


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
    import polytopo.evaluator.api as api

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
