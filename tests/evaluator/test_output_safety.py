"""The output-path rules of every writer, checked on the rules themselves (no export runs).

Each test below is one rule of :mod:`polytopo.core.output_safety` on small files
made in the test; the command-line, export and main-job tests check only that their
entry point applies the rule.
"""

import errno
import json
import os
import subprocess
import sys

import pytest
from reliability import case

from polytopo.core import output_safety
from polytopo.core.output_safety import (
    MARKER_NAME,
    OutputExistsError,
    UnsafeOutputError,
    check_file_output,
    check_folder_output,
    clean_stale_partials,
    partial_name,
    probe_folder,
    publish_folder,
    write_failure,
)


def _staged(parent, target_name, files):
    """A staging folder next to the target, holding ``{name: text}``."""
    staging = parent / partial_name(target_name)
    staging.mkdir()
    for name, text in files.items():
        (staging / name).write_text(text)
    return staging


def _previous_output(parent, name, files):
    """A folder written by PolyTopo before: its files and the marker listing them."""
    target = parent / name
    publish_folder(_staged(parent, name, files), target)
    return target


def _marker(folder):
    return json.loads((folder / MARKER_NAME).read_text(encoding="utf-8"))


def _dead_pid():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


# ----- rule 1: an output is never an input -------------------------------------------------------------------------


def test_an_input_file_its_journal_and_its_folder_are_never_outputs(tmp_path):
    source = tmp_path / "in.gpkg"
    source.write_bytes(b"input")
    for target in (source, tmp_path / "in.gpkg-wal"):
        with pytest.raises(UnsafeOutputError, match="is the input"):
            check_file_output(target, inputs=[str(source)], overwrite=True)
    with pytest.raises(UnsafeOutputError, match="contains the input"):
        check_folder_output(tmp_path, inputs=[f"{source}|layername=buildings"], overwrite=True)
    assert source.read_bytes() == b"input"


def test_a_linked_name_of_an_input_is_the_input(tmp_path):
    source = tmp_path / "in.json"
    source.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(source)
    with pytest.raises(UnsafeOutputError, match="is the input"):
        check_file_output(link, inputs=[str(source)], overwrite=True)


# ----- rule 2: an existing file is replaced only with overwrite ----------------------------------------------------


def test_an_existing_file_needs_overwrite_and_a_folder_is_no_file(tmp_path):
    target = tmp_path / "out.csv"
    check_file_output(target)  # missing: fine
    target.write_text("old")
    with pytest.raises(OutputExistsError, match=r"Expected no file at .*out.csv but one exists; pass --replace"):
        check_file_output(target, option="--replace")
    check_file_output(target, overwrite=True)
    with pytest.raises(UnsafeOutputError, match="is a folder"):
        check_file_output(tmp_path, overwrite=True)


# ----- rule 3: a folder is replaced only with overwrite and only when PolyTopo wrote it -----------------------------


def test_missing_and_empty_folders_are_always_fine(tmp_path):
    check_folder_output(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_folder_output(tmp_path / "empty")


def test_a_folder_without_the_marker_is_refused_whatever_overwrite_says(tmp_path):
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "thesis.txt").write_text("keep")
    with pytest.raises(OutputExistsError, match=r"holds other files \(e.g. thesis.txt\).*never replaced"):
        check_folder_output(folder, overwrite=True)
    (tmp_path / "file").write_text("a file")
    with pytest.raises(OutputExistsError, match="is a file"):
        check_folder_output(tmp_path / "file", overwrite=True)


def test_a_previous_output_needs_overwrite(tmp_path):
    target = _previous_output(tmp_path, "report", {"summary.json": "{}"})
    with pytest.raises(OutputExistsError, match="Expected no previous output at .*report but one exists"):
        check_folder_output(target)
    check_folder_output(target, overwrite=True)


def test_a_marker_of_another_producer_counts_as_no_marker(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / MARKER_NAME).write_text(json.dumps({"producer": "someone else", "files": []}))
    with pytest.raises(OutputExistsError, match="never replaced"):
        check_folder_output(folder, overwrite=True)


def test_publishing_replaces_only_the_listed_files(tmp_path):
    target = _previous_output(tmp_path, "report", {"summary.json": "old", "table.csv": "old"})
    assert _marker(target) == {"producer": "PolyTopo", "complete": True, "files": ["summary.json", "table.csv"]}
    (target / "notes.txt").write_text("mine")
    publish_folder(_staged(tmp_path, "report", {"summary.json": "new"}), target, order=("summary.json",))
    assert sorted(p.name for p in target.iterdir()) == [MARKER_NAME, "notes.txt", "summary.json"]
    assert (target / "summary.json").read_text() == "new" and (target / "notes.txt").read_text() == "mine"
    assert _marker(target)["files"] == ["summary.json"] and _marker(target)["complete"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # the staging folder is gone


def test_publishing_over_a_users_file_of_the_same_name_removes_nothing(tmp_path):
    target = _previous_output(tmp_path, "report", {"summary.json": "old"})
    (target / "report.html").write_text("the user's own page")
    staging = _staged(tmp_path, "report", {"summary.json": "new", "report.html": "ours"})
    with pytest.raises(OutputExistsError, match="Expected to add report.html to .* PolyTopo did not write"):
        publish_folder(staging, target)
    assert (target / "summary.json").read_text() == "old"
    assert (target / "report.html").read_text() == "the user's own page"


def test_publishing_into_an_empty_folder_keeps_the_folder(tmp_path):
    target = tmp_path / "empty"
    target.mkdir()
    publish_folder(_staged(tmp_path, "empty", {"summary.json": "{}"}), target)
    assert sorted(p.name for p in target.iterdir()) == [MARKER_NAME, "summary.json"]


# ----- rules 4 and 5: temporary names, stale leftovers removed -----------------------------------------------------


def test_temporaries_are_hidden_siblings_unique_to_the_process():
    first, second = partial_name("out.gpkg"), partial_name("out.gpkg")
    assert first != second and first.startswith(".polytopo-partial-") and first.endswith("-out.gpkg")
    assert f"-{os.getpid()}-" in first


def test_only_temporaries_of_dead_processes_on_this_host_are_removed(tmp_path):
    host = partial_name("x").split("-")[2]
    dead = _dead_pid()
    stale_file = tmp_path / f".polytopo-partial-{host}-{dead}-0a-out.gpkg"
    stale_file.write_bytes(b"half")
    stale_folder = tmp_path / f".polytopo-partial-{host}-{dead}-0b-report"
    (stale_folder / f".polytopo-partial-{host}-{dead}-0c-x.csv").mkdir(parents=True)
    finished = tmp_path / f"polytopo-partial-{host}-{dead}-0d-run"
    finished.mkdir()
    (finished / "layer.gpkg").write_bytes(b"a finished layer")
    live = tmp_path / partial_name("out.gpkg")
    live.write_bytes(b"running")
    other_host = tmp_path / f".polytopo-partial-00000000-{dead}-0e-out.gpkg"
    other_host.write_bytes(b"another machine's")
    user = tmp_path / "polytopo-partial-notes.txt"
    user.write_text("a name that only looks like ours")
    removed = clean_stale_partials(tmp_path, keep_finished=True)
    assert sorted(p.name for p in removed) == sorted([stale_file.name, stale_folder.name])
    assert all(p.exists() for p in (finished, live, other_host, user))
    assert clean_stale_partials(tmp_path)[0] == finished  # without keep_finished the dead run's folder goes too
    assert clean_stale_partials(tmp_path / "missing") == []


# ----- rule 6: a folder is probed before the work; a failed write names its cause -----------------------------------


@case("output folder under /proc (a file system with no disk space figures)", "evaluator CLI, models CLI, plugin",
      "Expected a writable folder for /proc/... but ... is read-only or takes no new files (...); never 'disk full', "
      "never the name of the internal probe file")
def test_a_folder_that_takes_no_files_is_not_called_full(tmp_path):
    with pytest.raises(output_safety.OutputWriteError) as info:
        probe_folder("/proc/self")
    message = str(info.value)
    assert "is read-only or takes no new files" in message and "full" not in message and "probe" not in message
    assert not info.value.disk_full


def test_the_probe_names_a_missing_folder_and_leaves_nothing(tmp_path):
    with pytest.raises(output_safety.OutputWriteError, match="Expected an existing folder .*missing"):
        probe_folder(tmp_path / "missing")
    probe_folder(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("error", "disk_full", "message"), [
    (OSError(errno.ENOSPC, "No space left on device"), True, "is full"),
    (RuntimeError("sqlite3_step() failed: database or disk is full"), True, "is full"),
    (OSError(errno.EROFS, "Read-only file system"), False, "read-only or takes no new files"),
    (OSError(errno.EIO, "Input/output error"), False, "the system refused"),
])
def test_a_write_failure_says_why(tmp_path, error, disk_full, message):
    failure = write_failure(error, tmp_path / "out.gpkg")
    assert failure.disk_full is disk_full and message in str(failure) and "out.gpkg" in str(failure)
