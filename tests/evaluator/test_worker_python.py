"""The interpreter of local Dask workers: the running installation's Python, whatever ``sys.executable`` says."""

import os
import sys
from pathlib import Path

import pytest

from polytopo.core.cluster import worker_python


def executable(path):
    path.write_text("#!/bin/sh\nexit 1\n")
    path.chmod(0o755)
    return path


def running_python():
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return str(Path(os.path.abspath(sys.exec_prefix)) / "bin" / version)


@pytest.mark.skipif(not os.access(running_python(), os.X_OK), reason="no pythonX.Y in sys.exec_prefix/bin")
@pytest.mark.parametrize("name", ["qgis.bin", "python3"])
def test_an_executable_that_is_not_this_installations_python_is_passed_over(tmp_path, monkeypatch, name):
    """The QGIS binary, or a python3 of another installation (a pyenv shim on PATH): this one's Python."""
    monkeypatch.setattr(sys, "executable", str(executable(tmp_path / name)))
    assert worker_python() == running_python()


def test_this_installations_python_is_kept():
    assert worker_python() == os.path.abspath(sys.executable)
