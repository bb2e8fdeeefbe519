"""Write a file under a temporary name and put it in place when complete.

The one way PolyTopo publishes a file it writes (:mod:`.output_safety` states the rules):
the evaluator's CSV, JSON and GeoPackage writers and the engine's vector outputs all go
through :func:`atomic_output`.
"""

import contextlib
from pathlib import Path

from .errors import PolytopoError
from .geopackage_publish import publish_file
from .output_safety import check_file_output, partial_name, write_failure

__all__ = ["atomic_output"]

_SIDE_SUFFIXES = ("", "-journal", "-wal", "-shm")
"""SQLite side files of a temporary GeoPackage, removed with it."""


@contextlib.contextmanager
def atomic_output(path, *, overwrite=False, protect=()):
    """Write a file under a temporary name and put it in place as ``path`` when the block succeeds.

    The rules are those of :mod:`.output_safety`: inputs are never written, an existing
    file only with ``overwrite``, and the temporary name is one a later run recognises
    and removes if this process dies. A GeoPackage written over an existing GeoPackage
    does not replace it: its layers are added to it, PolyTopo's earlier layers of the
    same names replaced and every other layer kept (:mod:`.geopackage_publish`).

    Parameters
    ----------
    path : str or Path
        The final file; its folder must exist.
    overwrite : bool
        Replace an existing ``path`` (add to an existing GeoPackage); without it an
        existing file is an error.
    protect : iterable of str or Path
        Input dataset names that must never be written (see
        :func:`.output_safety.input_files`: sidecars and ``/vsizip/`` archives count).

    Yields
    ------
    Path
        The temporary file to write, in the same folder and with the same suffix as
        ``path``; it does not exist yet.

    Raises
    ------
    OutputExistsError
        ``path`` exists and ``overwrite`` is False (also a FileExistsError).
    FileNotFoundError
        The folder of ``path`` does not exist.
    UnsafeOutputError
        ``path`` is one of the ``protect`` inputs.
    OutputWriteError
        Writing failed: read-only folder, disk full (named as such).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with atomic_output(Path(folder) / "notes.txt") as temporary:
    ...         _ = temporary.write_text("done")
    ...     sorted(p.name for p in Path(folder).iterdir())
    ['notes.txt']
    """
    target = Path(path)
    check_file_output(target, inputs=protect, overwrite=overwrite, option="overwrite=True (--overwrite)")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"Expected an existing folder for {target} but {target.parent} does not exist")
    temporary = target.with_name(partial_name(target.name))
    try:
        yield temporary
        publish_file(temporary, target)
    except OSError as exc:
        if isinstance(exc, PolytopoError):
            raise
        raise write_failure(exc, target) from exc
    finally:
        for suffix in _SIDE_SUFFIXES:
            side = temporary.with_name(temporary.name + suffix)
            if side.exists():
                side.unlink()
