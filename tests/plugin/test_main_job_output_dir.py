"""The main job's output-folder rule, checked on the rule itself (no main job runs).

``tests/test_main_job.py`` checks that the job applies it to a real previous output.
"""

import pytest

from polytopo.plugin.demo.main_job import MARKER_FILE, MainJobError, prepare_output_dir


def test_a_missing_or_empty_folder_is_made_ready(tmp_path):
    prepare_output_dir(tmp_path / "new" / "demo")
    (tmp_path / "empty").mkdir()
    prepare_output_dir(tmp_path / "empty")
    assert list((tmp_path / "new" / "demo").iterdir()) == [] and list((tmp_path / "empty").iterdir()) == []


def test_a_previous_main_job_output_is_replaced_whole(tmp_path):
    out = tmp_path / "demo"
    (out / "report").mkdir(parents=True)
    (out / MARKER_FILE).write_text("{}")
    (out / "leftover.txt").write_text("from the first run")
    prepare_output_dir(out)
    assert out.is_dir() and list(out.iterdir()) == []


def test_a_folder_with_other_files_is_refused_and_kept(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(MainJobError, match=f"Expected .*mine to be empty or a previous main job output \\(with "
                                           f"{MARKER_FILE}\\) but it holds other files"):
        prepare_output_dir(foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    (tmp_path / "file").write_text("a file")
    with pytest.raises(MainJobError, match="is a file"):
        prepare_output_dir(tmp_path / "file")
    assert (tmp_path / "file").read_text() == "a file"
