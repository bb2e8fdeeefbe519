"""Runs without an output path: named result folders, beside a saved project, kept when a saved project uses them."""

import os
import re
import subprocess
import sys

from dock_testing import make_dock, run_evaluation, set_up_evaluation
from reliability import case
from stand_ins import real_core

from polytopo.plugin.gui import result_folders
from polytopo.plugin.gui.result_folders import KEPT_MARKER, remove_unused_temporary_results, temporary_results_root

NAME = re.compile(r"^evaluation-\d{8}-\d{6}-\d+(-\d+)?$")


def test_an_unsaved_project_gets_a_named_temporary_folder_and_a_saved_one_a_folder_beside_it(project, tmp_path):
    dock, _ = make_dock(real_core())
    set_up_evaluation(dock, project, "")
    run_evaluation(dock)
    folder = dock.report_path().parent.parent
    assert folder.parent == temporary_results_root() and NAME.match(folder.name), folder
    assert "partial" not in str(folder)
    project.project.write(str(tmp_path / "city.qgz"))
    set_up_evaluation(dock, project, "")
    run_evaluation(dock)
    beside = dock.report_path().parent.parent
    assert beside.parent == tmp_path / "polytopo_results" and NAME.match(beside.name), beside
    dock.deleteLater()


@case("saving a project whose layers live in the dock's temporary result folder", "plugin (dock)",
      "a warning names the layers and the folder and says how to keep them; the folder is marked and survives the "
      "cleanup of ended sessions, unmarked folders of ended sessions are removed at plugin start")
def test_saving_a_project_on_temporary_results_warns_and_keeps_them(project, tmp_path, monkeypatch):
    monkeypatch.setattr(result_folders.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    dock, notifier = make_dock(real_core())
    set_up_evaluation(dock, project, "")
    run_evaluation(dock)
    used = dock.report_path().parent.parent
    project.project.write(str(tmp_path / "saved.qgz"))
    level, text = notifier.texts[-1]
    assert level == "warning" and "live in a temporary folder" in text and "Save Features As" in text
    assert (used / KEPT_MARKER).exists()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True).stdout.strip()  # the pid of a process that has ended
    unused = temporary_results_root() / f"evaluation-20260101-000000-{ended}"
    unused.mkdir(parents=True)
    running = temporary_results_root() / f"evaluation-20260101-000000-{os.getpid()}"
    running.mkdir()
    assert remove_unused_temporary_results() == [unused]
    assert used.is_dir() and running.is_dir() and not unused.exists()
    dock.deleteLater()
