"""The dock's Workers and Scheduler fields: a local Dask cluster from the dock, Cancel, bad addresses.

The dock is built offscreen and runs the real core through the task manager, with
``sys.executable`` set to a non-Python file as inside QGIS (worker processes must then be
started with the system Python). The layers are those of :mod:`dock_testing`.
"""

import multiprocessing
import sys
import threading
import time

import psutil
import pytest
from dock_testing import make_dock, set_up_evaluation
from polytopo_testing import wait_until
from stand_ins import real_core

#: A local cluster of this many worker processes.
WORKERS = 2
#: Seconds a cluster run may take here (start-up of the worker processes included).
CLUSTER_RUN_S = 120


@pytest.fixture(autouse=True)
def clean_settings(qgis_app):
    """Start every test from the default fields and leave no remembered value behind."""
    from qgis.core import QgsSettings

    from polytopo.plugin.gui.cluster_fields import SCHEDULER_KEY, WORKERS_KEY

    settings = QgsSettings()
    for key in (WORKERS_KEY, SCHEDULER_KEY):
        settings.remove(key)
    yield
    for key in (WORKERS_KEY, SCHEDULER_KEY):
        settings.remove(key)


@pytest.fixture
def qgis_binary(tmp_path_factory, monkeypatch):
    """Make ``sys.executable`` the QGIS binary, as it is inside QGIS (not a Python interpreter)."""
    binary = tmp_path_factory.mktemp("qgis") / "qgis.bin"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(binary))
    return binary


def child_processes():
    """Command lines of the processes this test process started that are still running.

    Python's multiprocessing resource tracker is left out: started with the first spawned
    process, it serves every later one and ends with its parent (QGIS), holding no work.
    """
    multiprocessing.active_children()  # joins the finished ones
    running = [child for child in psutil.Process().children(recursive=True) if child.status() != psutil.STATUS_ZOMBIE]
    return [line for line in (child.cmdline() for child in running)
            if not any("multiprocessing.resource_tracker" in part for part in line)]


def evaluate_in_dock(dock, project, gpkg, workers=0, scheduler=""):
    """Run one evaluation from the dock with the given fields; return its summary metrics and its messages."""
    set_up_evaluation(dock, project, gpkg)
    dock.cluster_fields.workers.setValue(workers)
    dock.cluster_fields.scheduler.setText(scheduler)
    task = dock.start_evaluation()
    assert task is not None
    wait_until(lambda: dock.evaluation_task is None, CLUSTER_RUN_S)
    return dock.last_result.run.evaluation.summary["metrics"], task.feedback.messages


def test_the_fields_default_to_this_process_and_are_remembered(qgis_app):
    """Workers 0 and no scheduler at first; the values typed come back in the next dock."""
    dock, _ = make_dock(real_core())
    fields = dock.cluster_fields
    assert fields.isCollapsed() and fields.title() == "Advanced"
    assert (fields.workers.value(), fields.scheduler.text(), fields.choice()) == (0, "", (0, None))
    assert fields.workers.text() == "0 (in this process)"
    fields.workers.setValue(3)
    dock.deleteLater()
    again, _ = make_dock(real_core())
    assert again.cluster_fields.choice() == (3, None)
    again.cluster_fields.workers.setValue(0)
    again.cluster_fields.scheduler.setText(" 10.0.0.5:8786 ")
    third, _ = make_dock(real_core())
    assert third.cluster_fields.scheduler.text() == "10.0.0.5:8786"
    assert third.cluster_fields.choice() == (0, "tcp://10.0.0.5:8786")
    again.deleteLater()
    third.deleteLater()


def test_a_two_worker_dock_run_gives_the_in_process_numbers(project, qgis_binary, tmp_path):
    """The same layers in this process and on 2 local workers: the same summary, nothing left running."""
    dock, notifier = make_dock(real_core())
    in_process, local_messages = evaluate_in_dock(dock, project, tmp_path / "in_process.gpkg")
    on_cluster, cluster_messages = evaluate_in_dock(dock, project, tmp_path / "cluster.gpkg", workers=WORKERS)
    assert [level for level, _ in notifier.texts] == ["info", "info"], notifier.texts
    assert on_cluster == pytest.approx(in_process, rel=1e-12, nan_ok=True)
    assert "Evaluation: partition 1 of 1" in cluster_messages  # one image: one partition
    assert not any("partition" in message for message in local_messages)
    assert (tmp_path / "cluster.gpkg").is_file()
    assert child_processes() == []
    dock.deleteLater()


class PauseAtFirstPartition:
    """The real core whose feedback waits, at the first finished partition, until the user cancels."""

    def __init__(self):
        self.runs = real_core()
        self.at_partition = threading.Event()

    def evaluate_layers(self, *args, feedback=None, **kwargs):
        return self.runs.evaluate_layers(*args, feedback=_Pausing(feedback, self.at_partition), **kwargs)

    def export_run(self, *args, **kwargs):
        raise AssertionError("a canceled run must not export")


class _Pausing:
    """Forward to ``feedback``; on the message of the first finished partition, wait for Cancel."""

    def __init__(self, feedback, event):
        self.feedback, self.event = feedback, event

    def __getattr__(self, name):
        return getattr(self.feedback, name)

    def pushInfo(self, message):  # noqa: N802 - feedback protocol name.
        self.feedback.pushInfo(message)
        if "partition 1 of" in message:
            self.event.set()
            deadline = time.monotonic() + CLUSTER_RUN_S
            while not self.feedback.isCanceled() and time.monotonic() < deadline:
                time.sleep(0.01)


def test_cancel_at_the_first_finished_partition_leaves_nothing(project, qgis_binary, tmp_path):
    """Cancel clicked once a partition finished on the cluster: no output file, no child process."""
    core = PauseAtFirstPartition()
    dock, notifier = make_dock(core)
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    dock.cluster_fields.workers.setValue(WORKERS)
    layers_before = set(project.project.mapLayers())
    assert dock.start_evaluation() is not None
    wait_until(core.at_partition.is_set, CLUSTER_RUN_S)
    assert child_processes(), "the cluster's worker processes should be running"
    dock.evaluate_cancel.click()
    wait_until(lambda: dock.evaluation_task is None, CLUSTER_RUN_S)
    assert notifier.texts == [("info", "PolyTopo evaluation of pred was canceled; nothing was written.")]
    assert list(tmp_path.iterdir()) == []
    assert set(project.project.mapLayers()) == layers_before
    assert child_processes() == []
    dock.deleteLater()


@pytest.mark.parametrize(("workers", "scheduler", "message"), [
    (0, "http://10.0.0.5:8786", "Expected a Dask scheduler address tcp://HOST:PORT (for example "
                                "tcp://192.168.1.20:8786) but got 'http://10.0.0.5:8786': its protocol 'http' is "
                                "not one of tcp, tls, ws, wss, ucx."),
    (0, "tcp://10.0.0.5", "but got 'tcp://10.0.0.5': it has no port from 1 to 65535 after the host"),
    (2, "tcp://10.0.0.5:8786", "Expected either workers or a scheduler address but got both (workers=2, "
                               "scheduler='tcp://10.0.0.5:8786'); give one."),
])
def test_a_bad_scheduler_address_is_refused_before_the_run(project, tmp_path, workers, scheduler, message):
    """A malformed address, or one with workers, is shown under the field and refuses to start."""
    dock, notifier = make_dock(real_core())
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    dock.cluster_fields.workers.setValue(workers)
    dock.cluster_fields.scheduler.setText(scheduler)
    assert not dock.cluster_fields.problem.isHidden()
    assert message.replace("'", "&#x27;") in dock.cluster_fields.problem.text()
    assert dock.start_evaluation() is None
    ((level, text),) = notifier.texts
    assert level == "warning" and message in text
    assert dock.evaluation_task is None and list(tmp_path.iterdir()) == []
    dock.cluster_fields.scheduler.clear()
    assert dock.cluster_fields.problem.isHidden()
    dock.deleteLater()


def test_a_scheduler_that_does_not_answer_fails_the_run_with_its_address(project, tmp_path):
    """A well-formed address nobody answers at: the run fails with the address named, and writes nothing."""
    dock, notifier = make_dock(real_core())
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    dock.cluster_fields.scheduler.setText("tcp://127.0.0.1:9")
    assert dock.cluster_fields.problem.isHidden()
    assert dock.start_evaluation() is not None
    wait_until(lambda: dock.evaluation_task is None, CLUSTER_RUN_S)
    ((level, text),) = notifier.texts
    assert level == "error"
    assert "PolyTopo evaluation of pred failed: Expected a Dask scheduler answering at tcp://127.0.0.1:9" in text
    assert list(tmp_path.iterdir()) == []
    assert dock.evaluate_button.isEnabled()
    dock.deleteLater()
