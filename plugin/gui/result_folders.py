"""Where the dock writes a run that was given no output path, and when those folders go.

A run without an output path writes into a new folder named after the run and its time:
next to the project file (``<project folder>/polytopo_results/``) when the project has
been saved, else in the system's temporary folder (``<temp>/polytopo-results/``). A
temporary result that a saved project uses is marked (:data:`KEPT_MARKER`) and the user
is told that its layers live in a temporary folder; at plugin start, temporary results
of sessions that have ended and that no saved project uses are removed.
"""

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from ...core.output_safety import process_alive

__all__ = ["KEPT_MARKER", "PROJECT_RESULTS", "TEMPORARY_RESULTS", "mark_kept", "new_result_folder",
           "remove_unused_temporary_results", "temporary_result_folders", "temporary_results_root"]

PROJECT_RESULTS = "polytopo_results"
"""Folder beside a saved project file that receives its runs' results."""
TEMPORARY_RESULTS = "polytopo-results"
"""Folder in the system's temporary folder that receives the results of unsaved projects."""
KEPT_MARKER = ".kept-by-project"
"""File in a temporary result folder that a saved project uses: it is never removed by the cleanup."""
_NAME = re.compile(r"^(?P<kind>[a-z]+)-(?P<stamp>\d{8}-\d{6})-(?P<pid>\d+)(?:-\d+)?$")


def temporary_results_root():
    """``<system temporary folder>/polytopo-results``."""
    return Path(tempfile.gettempdir()) / TEMPORARY_RESULTS


def new_result_folder(project_folder, kind):
    """Make and return a new, empty result folder ``<kind>-<YYYYmmdd-HHMMSS>-<pid>``.

    Parameters
    ----------
    project_folder : str
        The folder of the saved project file; empty for an unsaved project.
    kind : str
        ``vectorization`` or ``evaluation``.
    """
    root = Path(project_folder) / PROJECT_RESULTS if project_folder else temporary_results_root()
    root.mkdir(parents=True, exist_ok=True)
    base = f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    for attempt in range(1, 1000):
        folder = root / (base if attempt == 1 else f"{base}-{attempt}")
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"Expected a free result folder name in {root} but {base}-1 … -999 exist")


def temporary_result_folders(sources):
    """The temporary result folders that the layer ``sources`` (paths or OGR sources) read from."""
    root = temporary_results_root().resolve()
    found = set()
    for source in sources:
        path = Path(str(source).split("|")[0]).resolve()
        if root in path.parents:
            found.add(root / path.relative_to(root).parts[0])
    return sorted(found)


def mark_kept(folders):
    """Mark ``folders`` as used by a saved project, so the cleanup keeps them."""
    for folder in folders:
        (Path(folder) / KEPT_MARKER).touch()


def remove_unused_temporary_results():
    """Remove temporary result folders of ended sessions that no saved project uses.

    Returns
    -------
    list of Path
        The folders removed.
    """
    removed = []
    root = temporary_results_root()
    if not root.is_dir():
        return removed
    for folder in root.iterdir():
        match = _NAME.match(folder.name)
        if (match is None or not folder.is_dir() or (folder / KEPT_MARKER).exists()
                or process_alive(int(match["pid"]))):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
