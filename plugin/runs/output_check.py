"""The output check that runs before any work: an existing file needs *Replace*, the folder must be writable.

The dock runs it when *Run* is clicked; the core functions run the same rule again
when they write (the file may appear in between).
"""

import os
from pathlib import Path

from ...core.geopackage_publish import check_layer_names
from ...core.output_safety import OutputExistsError as ExistingLayerError
from ..errors import OutputExistsError, RunParameterError

__all__ = ["REPLACE_LABEL", "REPLACE_OPTION", "check_output", "report_folder"]

#: The check box that allows replacing an existing output, named the same in every message.
REPLACE_LABEL = "Replace an existing output"
#: How output-safety messages name that permission.
REPLACE_OPTION = f"overwrite=True (tick '{REPLACE_LABEL}')"


def check_output(path, replace, layers=()):
    """Refuse an output that exists while *Replace* is off, or whose folder cannot be written.

    Parameters
    ----------
    path : str or Path or None
        The chosen output file; empty or None for a temporary file (always accepted).
    replace : bool
        Whether *Replace an existing output* is ticked.
    layers : iterable of str
        The layers the run writes into ``path`` when it is a GeoPackage: an existing
        GeoPackage keeps its other layers, and a user's layer of one of these names is
        never replaced.

    Raises
    ------
    OutputExistsError
        The file exists and ``replace`` is False, or it is a GeoPackage with a layer of
        one of ``layers`` that PolyTopo did not write.
    RunParameterError
        The nearest existing folder above the file is not writable.
    """
    if not path:
        return
    path = Path(path)
    if path.exists() and not replace:
        kind = "folder" if path.is_dir() else "file"
        raise OutputExistsError(f"Expected no {kind} at {path} but one exists; choose another {kind} or tick "
                                f"'{REPLACE_LABEL}'")
    try:
        check_layer_names(path, layers)
    except ExistingLayerError as exc:
        raise OutputExistsError(str(exc)) from exc
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RunParameterError(f"Expected a writable folder for {path} but {folder} cannot be written; choose "
                                "another output folder")


def report_folder(gpkg_path):
    """The report folder written beside an evaluation GeoPackage: ``<name>_report``.

    Examples
    --------
    >>> report_folder("runs/evaluation.gpkg").as_posix()
    'runs/evaluation_report'
    """
    gpkg_path = Path(gpkg_path)
    return gpkg_path.with_name(gpkg_path.stem + "_report")
