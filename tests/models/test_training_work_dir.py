"""Training's intermediate files (checkpoints it loads back) go to a private folder, new for each run."""

import os
import stat

from polytopo.training.cli import build_parser, private_work_dir


def test_default_work_dir_is_a_new_private_folder():
    assert build_parser().parse_args(["list"]).work_dir is None
    first, second = private_work_dir(), private_work_dir()
    try:
        assert first != second
        assert stat.S_IMODE(os.stat(first).st_mode) == 0o700
        assert first.name.startswith("polytopo-training-")
    finally:
        first.rmdir()
        second.rmdir()
