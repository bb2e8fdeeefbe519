"""One process on several cores: the GIL-free kernels cut into pieces on threads give the numbers of one thread."""

import contextvars
import threading

import numpy as np
import pytest
import shapely

from polytopo.core.kernel_threads import MIN_CHUNK_ITEMS, chunked, kernel_threads, query_workers
from polytopo.evaluator import evaluate, load_inputs
from evaluation_equality import assert_same_evaluation


def test_pieces_run_on_the_blocks_threads_and_join_in_order():
    seen = set()
    pieces = []

    def tagged(values):
        seen.add(threading.get_ident())
        pieces.append(len(values))
        return values * 2

    values = np.arange(4 * MIN_CHUNK_ITEMS)
    assert query_workers() == 1
    assert np.array_equal(chunked(tagged, values), values * 2) and len(seen) == 1  # outside a block: this thread
    with kernel_threads(3):
        assert query_workers() == 3
        seen.clear()
        pieces.clear()
        assert np.array_equal(chunked(tagged, values), values * 2)
        # three pieces, the first in this thread, the others on the pool's (one may take both)
        assert sorted(pieces) == [682, 683, 683] and len(seen) >= 2 and threading.get_ident() in seen
        seen.clear()
        small = np.arange(2 * MIN_CHUNK_ITEMS - 1)
        assert np.array_equal(chunked(tagged, small), small * 2) and seen == {threading.get_ident()}
        with kernel_threads(1):
            assert query_workers() == 1
        assert query_workers() == 3
    assert query_workers() == 1


def test_a_failing_piece_raises_here_and_the_block_ends_its_threads():
    def failing_late(values):
        if values[0] > 0:
            raise ValueError(f"piece from {values[0]}")
        return values

    before = threading.active_count()
    with pytest.raises(ValueError, match="piece from"):
        with kernel_threads(2):
            chunked(failing_late, np.arange(2 * MIN_CHUNK_ITEMS))
    assert threading.active_count() == before


def test_batches_run_side_by_side_and_come_back_in_order():
    from polytopo.core.kernel_threads import ordered_map

    where = {}

    def slow_square(x):
        where[x] = threading.get_ident()
        return x * x

    assert list(ordered_map(slow_square, range(5))) == [0, 1, 4, 9, 16]
    assert set(where.values()) == {threading.get_ident()}
    with kernel_threads(2):
        where.clear()
        assert list(ordered_map(slow_square, range(9))) == [x * x for x in range(9)]
        assert threading.get_ident() not in where.values()
        assert list(ordered_map(slow_square, [7])) == [49] and where[7] == threading.get_ident()

        def failing(x):
            if x == 3:
                raise ValueError("batch 3")
            return x

        got = []
        with pytest.raises(ValueError, match="batch 3"):
            for value in ordered_map(failing, range(6)):
                got.append(value)
        assert got == [0, 1, 2]


def test_computations_run_side_by_side_each_on_one_thread_and_come_back_in_order():
    from polytopo.core.kernel_threads import side_by_side

    where, ended, seen_tag = {}, [], set()
    tag = contextvars.ContextVar("tag", default=None)

    def computation(name, fail=False):
        def run():
            where[name] = (threading.get_ident(), query_workers())
            seen_tag.add(tag.get())
            if fail:
                raise ValueError(f"{name} failed")
            ended.append(name)
            return name.upper()
        return run

    here = threading.get_ident()
    assert side_by_side(computation("a"), computation("b")) == ["A", "B"]
    assert where == {"a": (here, 1), "b": (here, 1)}  # outside a block: here, one after the other
    with kernel_threads(2):
        where.clear()
        tag.set("caller's")
        seen_tag.clear()
        assert side_by_side(*(computation(name) for name in "abcd")) == ["A", "B", "C", "D"]
        # on the block's threads, each computation on one thread (its own kernels in one piece), in the caller's context
        assert here not in {ident for ident, _ in where.values()} and {workers for _, workers in where.values()} == {1}
        assert seen_tag == {"caller's"} and query_workers() == 2
        where.clear()
        assert side_by_side(computation("x")) == ["X"]  # fewer computations than threads: here, kernels threaded
        assert where == {"x": (here, 2)}
        ended.clear()
        with pytest.raises(ValueError, match="b failed"):
            side_by_side(computation("a"), computation("b", fail=True), computation("c"))
        assert sorted(ended) == ["a", "c"]  # the others ran to their end before the failure was raised


def test_a_computation_beside_a_block_runs_on_its_own_thread_and_raises_at_its_result():
    from polytopo.core.kernel_threads import beside

    here, where, order = threading.get_ident(), {}, []

    def computation(fail=False):
        def run():
            where["ran"] = (threading.get_ident(), query_workers())
            order.append("beside")
            if fail:
                raise ValueError("beside failed")
            return 42
        return run

    with beside(computation()) as answer:  # outside a block: here, before the block's own work
        order.append("block")
    assert answer.result() == 42 and where["ran"] == (here, 1) and order == ["beside", "block"]
    with kernel_threads(2):
        started = threading.Event()
        with beside(lambda: started.wait(10) and 7) as answer:
            started.set()  # the computation waits for the block's work: it can only end if both run at once
            assert query_workers() == 2  # the block keeps its threads
        assert answer.result() == 7
        with beside(computation()) as answer:
            pass
        assert where["ran"][0] != here and where["ran"][1] == 1 and answer.result() == 42
        with beside(computation(fail=True)) as failed:
            pass
        with pytest.raises(ValueError, match="beside failed"):
            failed.result()
    with beside(computation(fail=True)) as failed:
        pass
    with pytest.raises(ValueError, match="beside failed"):
        failed.result()


def test_threads_making_the_first_scipy_imports_at_once_get_both_functions(tmp_path):
    """``scipy.optimize`` and ``scipy.spatial`` imported by two threads at once, in a fresh interpreter (each
    holds a module the other needs: without the shared lock one import can fail as a circular import)."""
    import subprocess
    import sys

    script = tmp_path / "first_imports.py"
    script.write_text(
        "import sys, threading\n"
        "from polytopo.core.scipy_imports import kd_tree, linear_sum_assignment\n"
        "assert 'scipy.spatial' not in sys.modules and 'scipy.optimize' not in sys.modules\n"
        "start, got = threading.Barrier(2), {}\n"
        "def first(name, function):\n"
        "    start.wait()\n"
        "    got[name] = function()\n"
        "threads = [threading.Thread(target=first, args=('tree', kd_tree)),\n"
        "           threading.Thread(target=first, args=('assignment', linear_sum_assignment))]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(got['tree'].__name__, got['assignment'].__name__)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cKDTree", "linear_sum_assignment"]


def test_geos_overlays_in_pieces_equal_one_call():
    rng = np.random.default_rng(4)
    boxes = shapely.box(*rng.uniform(0, 50, (2, 3000)), *rng.uniform(50, 100, (2, 3000)))
    other = shapely.buffer(shapely.points(rng.uniform(0, 100, (3000, 2))), 20.0)
    with kernel_threads(2):
        pieces = chunked(shapely.intersection, boxes, other)
    assert shapely.equals_exact(pieces, shapely.intersection(boxes, other), tolerance=0).all()


@pytest.mark.parametrize("profile", ["paper", "p3"])
@pytest.mark.parametrize("threads", [2, 3])  # 2: the corners' two sides side by side; 3: one after the other
def test_an_evaluation_on_threads_is_the_evaluation_on_one(fixtures_dir, profile, threads):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    one = evaluate(gt, pred, profile=profile, bootstrap_resamples=0, threads=1)
    several = evaluate(gt, pred, profile=profile, bootstrap_resamples=0, threads=threads)
    assert_same_evaluation(one, several)


def test_a_thread_count_below_one_is_refused_with_what_to_pass(fixtures_dir, tmp_path, capsys):
    from polytopo.core.errors import InvalidParameterError
    from polytopo.evaluator.cli.evaluate import main

    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InvalidParameterError, match="threads to be a whole number >= 1"):
            evaluate(gt, pred, bootstrap_resamples=0, threads=bad)
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
              "--no-plots", "--no-gpkg", "--quiet", "--bootstrap", "0"]
    with pytest.raises(SystemExit) as exited:
        main([*common, "--out", str(tmp_path / "zero"), "--threads", "0"])
    assert exited.value.code == 2 and "--threads: expected a whole number >= 1 but got '0'" in capsys.readouterr().err
    assert not (tmp_path / "zero").exists()
    assert main([*common, "--out", str(tmp_path / "one"), "--threads", "1", "--workers", "0"]) == 0


def test_a_threaded_evaluation_keeps_the_warning_filters_and_its_warnings(fixtures_dir):
    """No ``catch_warnings`` block runs on two threads at once: the filters are those of before, warnings shown.

    ``shapely.is_valid`` on two threads at once (bands checked side by side) interleaved
    its blocks and left the filters set to "ignore": the evaluation's own warning (an image
    only the predictions have) was dropped. A race: a fresh process, three runs (the code
    before failed two of three such tests).
    """
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    script = f"""
import warnings
from dataclasses import replace
from polytopo.evaluator import evaluate, load_inputs
gt, pred, _ = load_inputs({str(folder / "gt.json")!r}, {str(folder / "pred.json")!r}, drop_degenerate=True)
pred = replace(pred, instances=pred.instances + (replace(pred.instances[0], image_id="only-in-predictions"),))
filters = list(warnings.filters)
for threads in (2, 3, 2):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(gt, pred, bootstrap_resamples=0, threads=threads)
    print(sum("appear only in the predictions" in str(w.message) for w in caught), warnings.filters == filters)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split() == ["1", "True"] * 3, done.stderr[-2000:]
