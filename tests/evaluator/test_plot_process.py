"""The plots of a one-process run drawn by a child process: the same PNG bytes, and nothing outlives the run."""

import os
import signal
import subprocess
import sys
import time

import pytest

from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.outputs.plot_process import PlotProcess, plot_process
from polytopo.evaluator.outputs.plots import plot_pngs, plotted_entries
from polytopo.evaluator.outputs.report import write_report


@pytest.fixture(scope="module")
def evaluation(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, frame = load_inputs(folder / "gt.json", folder / "pred.json")
    return evaluate(gt, pred, bootstrap_resamples=0, sweeps=True), frame


def _gone(pid, timeout=20.0):
    """True once process ``pid`` has ended (gone, or a zombie of a parent that is gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def _children():
    """Process ids of this process's children."""
    found = set()
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as children:
            found.update(int(pid) for pid in children.read().split())
    return found


def test_the_child_draws_the_bytes_drawn_here_and_is_reaped(evaluation):
    summary = evaluation[0].summary
    plotted = plotted_entries(summary)
    assert len(plotted) == 5  # with the sweeps' plots
    with plot_process() as process:
        assert process.pid in _children()
        assert process.start(plotted)
        drawn = process.pngs()
    assert drawn == plot_pngs(plotted)
    assert process.pid not in _children()  # ended and reaped with the block


def test_write_report_with_the_child_writes_the_files_written_without_it(evaluation, tmp_path):
    result, frame = evaluation
    with plot_process() as process:
        with_child = write_report(result, tmp_path / "child", frame=frame, plotter=process)
    here = write_report(result, tmp_path / "here", frame=frame)
    assert sorted(with_child) == sorted(here)
    for name in here:
        if name.endswith("_sweep") or name in ("precision_recall", "simple_to_complex", "wrong_topo") or name.endswith(
                "_csv"):
            assert with_child[name].read_bytes() == here[name].read_bytes(), name


def test_a_child_that_died_leaves_the_plots_to_this_process(evaluation, tmp_path):
    result, frame = evaluation
    with plot_process() as process:
        os.kill(process.pid, signal.SIGKILL)
        assert _gone(process.pid)
        files = write_report(result, tmp_path / "out", frame=frame, geopackage=False, plotter=process)
    here = write_report(result, tmp_path / "here", frame=frame, geopackage=False)
    assert files["precision_recall"].read_bytes() == here["precision_recall"].read_bytes()
    assert len([name for name in files if files[name].suffix == ".png"]) == 5


def test_a_failed_drawing_in_the_child_is_drawn_here(evaluation):
    """The child's failure gives None; drawing here then raises the failure's own error."""
    with plot_process() as process:
        assert process.start({"pr_curve": "not a curve"})
        assert process.pngs() is None
    with pytest.raises(TypeError):
        plot_pngs({"pr_curve": "not a curve"})


def test_the_child_ends_when_the_block_fails_or_this_process_is_killed(tmp_path):
    with pytest.raises(RuntimeError, match="evaluation failed"):
        with plot_process() as process:
            raise RuntimeError("evaluation failed")
    assert process.pid not in _children()
    # a parent killed outright: the child sees its input close and ends by itself
    script = ("import sys, time\nfrom polytopo.evaluator.outputs.plot_process import PlotProcess\n"
              "child = PlotProcess()\nprint(child.pid, flush=True)\ntime.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert not _gone(child, timeout=0.5)  # it runs while its parent does
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
    assert _gone(child)


def test_not_enabled_starts_nothing():
    before = _children()
    with plot_process(False) as process:
        assert process is None and _children() == before


def test_the_command_line_draws_in_a_child_only_on_several_threads(fixtures_dir, tmp_path, monkeypatch):
    """``--threads 1`` keeps the run on one core: no child; otherwise one child, gone when the command returns."""
    from polytopo.evaluator.cli.evaluate import main
    from polytopo.evaluator.outputs import plot_process as module

    started = []
    real = module.PlotProcess.__init__

    def noted(self):
        real(self)
        started.append(self.pid)

    monkeypatch.setattr(module.PlotProcess, "__init__", noted)
    folder = fixtures_dir / "ptb_small"
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--quiet", "--bootstrap", "0",
              "--workers", "0"]
    assert main(common + ["--out", str(tmp_path / "one"), "--threads", "1"]) == 0
    assert started == []
    assert main(common + ["--out", str(tmp_path / "two"), "--threads", "2"]) == 0
    assert len(started) == 1 and started[0] not in _children()
    for name in ("precision_recall.png", "wrong_topo.png", "references.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert PlotProcess is module.PlotProcess
