"""Every process a ``--workers`` run starts is gone, and reaped, when the command returns or dies.

The command runs in a child Python whose own children are listed (psutil) right after
``main`` returns: success, an input error after the cluster started, and Ctrl-C. A client
killed with SIGKILL takes its local workers with it. The same for a one-process run on two
threads, whose plots a child process draws.
"""

import json
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

RUN_S = 180
ARGS = ["--quiet", "--no-plots", "--no-gpkg", "--workers", "2"]
ONE_PROCESS_ARGS = ["--quiet", "--no-gpkg", "--workers", "0", "--threads", "2"]  # plots: drawn by a child


def _child_report(fixtures_dir, tmp_path, pred, extra=(), args=ARGS, command=()):
    """Run ``main`` in a fresh Python; return (exit status, children still there after it returned).

    ``command`` goes first (``("compare",)``; ``pred`` is then ``NAME=FILE``).
    """
    script = textwrap.dedent(f"""
        import json, psutil
        from polytopo.evaluator.cli.evaluate import main
        if __name__ == "__main__":
            code = main({json.dumps([
                *command, "--gt", str(fixtures_dir / "ptb_small" / "gt.json"), "--pred", str(pred),
                "--out", str(tmp_path / "out"), *args, *extra])})
            left = [" ".join(child.cmdline()) for child in psutil.Process().children(recursive=True)]
            print("REPORT", json.dumps([code, left]))
    """)
    (tmp_path / "run.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "run.py")], capture_output=True, text=True,
                          timeout=RUN_S, check=False)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    return json.loads(line[len("REPORT "):])


def test_a_two_worker_run_leaves_no_process(fixtures_dir, tmp_path):
    code, left = _child_report(fixtures_dir, tmp_path, fixtures_dir / "ptb_small" / "pred.json", ["--bootstrap", "0"])
    assert code == 0 and left == []


def test_a_one_process_run_that_draws_in_a_child_leaves_no_process(fixtures_dir, tmp_path):
    pred = fixtures_dir / "ptb_small" / "pred.json"
    code, left = _child_report(fixtures_dir, tmp_path, pred, ["--bootstrap", "0"], args=ONE_PROCESS_ARGS)
    assert code == 0 and left == [] and (tmp_path / "out" / "precision_recall.png").exists()
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, left = _child_report(fixtures_dir, tmp_path, broken, args=ONE_PROCESS_ARGS)
    assert code == 2 and left == []


def test_a_failed_two_worker_run_leaves_no_process(fixtures_dir, tmp_path):
    """The prediction file is broken: the run fails while the cluster is up (it starts beside the reading)."""
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, left = _child_report(fixtures_dir, tmp_path, broken)
    assert code == 2 and left == []


def test_a_two_worker_comparison_leaves_no_process(fixtures_dir, tmp_path):
    """``compare`` whose workers read every method's files; also when a later method cannot be read."""
    pred = fixtures_dir / "ptb_small" / "pred.json"
    code, left = _child_report(fixtures_dir, tmp_path, f"A={pred}", ["--pred", f"B={pred}", "--bootstrap", "0"],
                               command=["compare"])
    assert code == 0 and left == [] and (tmp_path / "out" / "table.csv").exists()
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, left = _child_report(fixtures_dir, tmp_path, f"A={pred}", ["--pred", f"B={broken}", "--overwrite"],
                               command=["compare"])
    assert code == 2 and left == []


def _start(fixtures_dir, tmp_path, args=ARGS, children_expected=3):
    """Start a run that lasts well beyond its cluster's start (100,000 bootstrap resamples: about 15 s).

    The signal is sent as soon as the children exist (a cluster's workers and more, or the
    plots' child process), so the run is still in progress then even on a slow machine.
    """
    command = [sys.executable, "-m", "polytopo.evaluator", "--gt", str(fixtures_dir / "ptb_small" / "gt.json"),
               "--pred", str(fixtures_dir / "ptb_small" / "pred.json"), "--out", str(tmp_path / "out"), *args,
               "--bootstrap", "100000"]
    # A shell that runs the tests in the background ignores SIGINT in its children, and a
    # Python started with SIGINT ignored never raises KeyboardInterrupt: give the run the default.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + RUN_S
    while len(parent.children(recursive=True)) < children_expected and time.monotonic() < deadline:
        time.sleep(0.2)
    children = parent.children(recursive=True)
    assert len(children) >= children_expected, "the run's child processes did not start"
    return process, children


def _gone(children, within_s):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(child.is_running() and child.status() != psutil.STATUS_ZOMBIE for child in children):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("how", ["ctrl-c", "sigkill"])
@pytest.mark.parametrize("args, children_expected", [(ARGS, 3), (ONE_PROCESS_ARGS, 1)], ids=["cluster", "one-process"])
def test_an_interrupted_or_killed_client_takes_its_workers_with_it(fixtures_dir, tmp_path, how, args,
                                                                   children_expected):
    process, children = _start(fixtures_dir, tmp_path, args, children_expected)
    process.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    _, err = process.communicate(timeout=RUN_S)
    if how == "ctrl-c":
        # 130, or ended by the SIGINT itself after the clean-up (which a shell shows as 130 too):
        # Python 3.11 ends so when the interrupt landed inside an exec of a text (a dataclass's
        # first import runs one), although the command caught it (see .cli.shared)
        assert process.returncode in (130, -signal.SIGINT), err[-2000:]
        assert err.strip().endswith("interrupted; no output folder was written"), err[-2000:]
    assert _gone(children, 30), [child.cmdline() for child in children if child.is_running()]
    assert not (tmp_path / "out").exists() or how == "sigkill"
