"""One set of rules for every file and folder PolyTopo writes.

The evaluator, the inference engine (:mod:`polytopo.models`) and the QGIS plugin write
through these functions, so the rules hold for all of them:

1. **An output is never an input**, whatever ``overwrite`` says. Inputs are recognised
   by what GDAL reads for them (:func:`input_files`): the file itself and the files GDAL
   lists for its dataset (a Shapefile's ``.shx``/``.dbf``/``.prj``, a raster's
   ``.aux.xml``/``.ovr``), the archive behind a ``/vsizip/``, ``/vsitar/`` or
   ``/vsigzip/`` name; a ``/vsicurl/`` name is no local file. A folder output holding an
   input is refused.
2. **An existing file is replaced only with** ``overwrite``.
3. **An existing folder is replaced only with** ``overwrite`` **and only when PolyTopo
   wrote it**: it is empty, or it holds the marker file :data:`MARKER_NAME`, which lists
   the files PolyTopo put there. Only those files are removed; anything else in the
   folder is kept. A folder without the marker is never replaced.
4. **Outputs are written under temporary names and moved into place when complete**
   (:func:`partial_name`): ``.polytopo-partial-<host>-<pid>-<token>-<name>`` in the
   target's folder, so the move is a rename. Every file is finished (closed, metadata
   written) before the move.
5. **Stale leftovers are removed at the next run** (:func:`clean_stale_partials`): a
   temporary of this naming whose process no longer runs on this host (killed, power
   loss). Temporaries of running processes are never touched, so runs at once into
   the same folder do not interfere.
6. **A folder is probed before the work** (:func:`probe_folder`): a read-only folder or a
   full disk is reported before any computation, and a failure while writing names the
   full disk (:func:`write_failure`).

Errors::

    PolytopoError
    ├── UnsafeOutputError (an InvalidParameterError) the output is an input or holds one
    ├── OutputExistsError (also FileExistsError)  output exists and overwrite is off, or PolyTopo did not write it
    └── OutputWriteError (also OSError)           read-only folder, disk full (``disk_full`` is True)
"""

import contextlib
import errno
import json
import os
import re
import secrets
import shutil
import socket
import zlib
from pathlib import Path

from .errors import PolytopoError, InvalidParameterError

__all__ = [
    "MARKER_NAME",
    "OutputExistsError",
    "OutputWriteError",
    "UnsafeOutputError",
    "process_alive",
    "check_file_output",
    "check_folder_output",
    "clean_stale_partials",
    "input_files",
    "partial_name",
    "probe_folder",
    "publish_folder",
    "write_failure",
]

MARKER_NAME = ".polytopo-output.json"
"""File in every output folder PolyTopo writes: ``{"producer": "PolyTopo", "complete": bool,
"files": [names]}``. Its presence is what allows ``overwrite`` to replace the folder."""

_PREFIX = ".polytopo-partial-"
_PARTIAL = re.compile(r"^\.?polytopo-partial-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]+-")
_ARCHIVE_PREFIXES = ("/vsizip/", "/vsitar/", "/vsigzip/", "/vsi7z/", "/vsirar/")
_ARCHIVE_SUFFIXES = (".zip", ".kmz", ".tar", ".tgz", ".gz", ".7z", ".rar")
_NETWORK_PREFIXES = ("/vsicurl", "/vsis3", "/vsigs", "/vsiaz", "/vsiadls", "/vsioss", "/vsiswift", "/vsihdfs",
                     "/vsiwebhdfs", "/vsimem/", "/vsistdin", "/vsistdout")
_SQLITE_SIDES = ("-wal", "-shm", "-journal")
_NO_SIDECARS = (".json", ".geojson", ".onnx", ".csv")
_PROBE_BYTES = 64 * 1024
_FULL_BELOW_BYTES = 1024 * 1024
_DISK_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_DISK_FULL_TEXTS = ("disk is full", "no space left", "disk full", "quota exceeded")


class UnsafeOutputError(InvalidParameterError):
    """The output is one of the inputs or a folder holding one."""


class OutputExistsError(PolytopoError, FileExistsError):
    """The output exists and ``overwrite`` was not given, or it is a folder PolyTopo did not write."""


class OutputWriteError(PolytopoError, OSError):
    """The output cannot be written: read-only folder, permissions, or a full disk.

    Attributes
    ----------
    disk_full : bool
        The disk holding the output has no space left.
    """

    def __init__(self, message, disk_full=False):
        super().__init__(message)
        self.disk_full = disk_full

    def __str__(self):
        return self.args[0]


def _host_tag():
    return f"{zlib.crc32(socket.gethostname().encode()):08x}"


def partial_name(name):
    """A temporary name for an output called ``name``, unique to this process.

    Examples
    --------
    >>> partial_name("out.gpkg").startswith(".polytopo-partial-")
    True
    >>> partial_name("out.gpkg").endswith("-out.gpkg")
    True
    """
    return f"{_PREFIX}{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}-{name}"


def process_alive(pid):
    """True when a process ``pid`` runs on this host (this process included)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # pragma: no cover - Windows: ask the kernel for a handle of the process
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_partials(folder, *, keep_finished=False):
    """Remove PolyTopo's temporaries in ``folder`` whose process no longer runs.

    Parameters
    ----------
    folder : str or Path
        The folder to clean (an output's parent folder); a missing folder is fine.
    keep_finished : bool
        Keep a stale temporary *folder* that holds anything but temporaries (used for the
        plugin's temporary result folders, which may hold a finished layer).

    Returns
    -------
    list of Path
        What was removed.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     dead = Path(folder) / f".polytopo-partial-{_host_tag()}-999999999-00-out.gpkg"
    ...     _ = dead.write_text("half")
    ...     live = Path(folder) / partial_name("out.gpkg")
    ...     _ = live.write_text("running")
    ...     [p.name for p in clean_stale_partials(folder)] == [dead.name], live.exists()
    (True, True)
    """
    folder = Path(folder)
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    host = _host_tag()
    for entry in entries:
        match = _PARTIAL.match(entry.name)
        if match is None or match["host"] != host or process_alive(int(match["pid"])):
            continue
        if keep_finished and entry.is_dir() and any(_PARTIAL.match(p.name) is None for p in entry.iterdir()):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
    return removed


def _archive_file(inner):
    """The local archive file of the part after ``/vsizip/`` (or another archive prefix)."""
    if inner.startswith("{"):
        end = inner.find("}")
        inner = inner[1:end] if end > 0 else inner[1:]
        return _local_file(inner)
    if inner.startswith("/vsi"):
        return _local_file(inner)
    parts = inner.split("/")
    for count in range(1, len(parts) + 1):
        candidate = "/".join(parts[:count])
        if candidate and os.path.isfile(candidate):
            return os.path.realpath(candidate)
    for count, part in enumerate(parts, start=1):  # a missing archive: cut after its name
        if part.lower().endswith(_ARCHIVE_SUFFIXES):
            return os.path.realpath("/".join(parts[:count]))
    return os.path.realpath(inner)


def _local_file(name):
    """The local file GDAL reads for the dataset name ``name``, or None (network, memory)."""
    text = str(name).split("|")[0]
    for prefix in _ARCHIVE_PREFIXES:
        if text.startswith(prefix):
            return _archive_file(text[len(prefix):])
    if text.startswith(_NETWORK_PREFIXES):
        return None
    return os.path.realpath(text) if text else None


def _gdal_file_list(name):
    if Path(name).suffix.lower() in _NO_SIDECARS:
        return []
    try:
        from osgeo import gdal
    except ImportError:  # pragma: no cover - GDAL is a dependency of vector inputs only
        return []
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        dataset = gdal.OpenEx(str(name), gdal.OF_READONLY)
        listed = (dataset.GetFileList() or []) if dataset is not None else []
    except RuntimeError:
        listed = []
    finally:
        gdal.PopErrorHandler()
    return listed


def input_files(sources):
    """The local files GDAL reads for each input dataset name in ``sources``.

    Parameters
    ----------
    sources : iterable of str, Path or None
        Dataset names as given by the user: paths, ``path|layername=x`` (QGIS),
        ``/vsizip/archive.zip/inner.shp``; None entries are skipped.

    Returns
    -------
    set of str
        Real paths (symbolic links resolved): each file, the files GDAL lists for its
        dataset (sidecars), SQLite journals next to it, and the archive behind archive
        names. Network names add nothing.

    Examples
    --------
    >>> sorted(input_files(["/vsizip//data/a.zip/a.shp", "/vsicurl/https://x.org/b.tif"]))
    ['/data/a.zip']
    """
    return set(_input_sources(sources))


def _input_sources(sources):
    """``{local file: the input it belongs to}`` (see :func:`input_files`)."""
    files = {}
    for source in sources:
        if source is None or str(source) == "":
            continue
        name = str(source).split("|")[0]
        for listed in [name, *_gdal_file_list(name)]:
            local = _local_file(listed)
            if local is None:
                continue
            files.setdefault(local, str(source))
            if not str(listed).startswith("/vsi"):
                files.update({local + side: str(source) for side in _SQLITE_SIDES if local + side not in files})
    return files


def _refuse_inputs(target, sources, inside):
    resolved = os.path.realpath(target)
    for path, source in sorted(_input_sources(sources).items()):
        if path == resolved or (inside and Path(path).is_relative_to(resolved)):
            what = "is" if path == resolved else "contains"
            named = source if path == source else f"{source} (file {path})"
            raise UnsafeOutputError(
                f"Expected an output path different from every input but {target} {what} the input {named}; "
                "choose another output (inputs are never written, whatever overwrite says)"
            )


def check_file_output(path, *, inputs=(), overwrite=False, option="--overwrite"):
    """Refuse a file output that is an input, or that exists without ``overwrite``.

    Parameters
    ----------
    path : str or Path
        The output file.
    inputs : iterable of str
        Input dataset names (see :func:`input_files`).
    overwrite : bool
        Allow replacing an existing file that is no input.
    option : str
        How the user turns ``overwrite`` on, named in the message.

    Raises
    ------
    UnsafeOutputError, OutputExistsError
    """
    path = Path(path)
    _refuse_inputs(path, inputs, inside=False)
    if path.is_dir():
        raise UnsafeOutputError(f"Expected an output file but {path} is a folder; choose a file name")
    if os.path.lexists(path) and not overwrite:
        raise OutputExistsError(f"Expected no file at {path} but one exists; pass {option} to replace it "
                                "or choose another name")


def _marker(folder):
    try:
        data = json.loads((Path(folder) / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(data, dict) and data.get("producer") == "PolyTopo" and isinstance(data.get("files"), list)):
        return None
    return [name for name in data["files"] if isinstance(name, str) and name == Path(name).name and name != ".."]


def check_folder_output(folder, *, inputs=(), overwrite=False, option="--overwrite"):
    """Refuse a folder output that holds an input, that PolyTopo did not write, or that exists.

    An empty folder or a missing one is always fine; a folder with :data:`MARKER_NAME`
    needs ``overwrite``; any other folder is refused, whatever ``overwrite`` says.

    Raises
    ------
    UnsafeOutputError
        The folder is an input or holds one.
    OutputExistsError
        The folder exists and PolyTopo did not write it, or ``overwrite`` is False.
    """
    folder = Path(folder)
    _refuse_inputs(folder, inputs, inside=True)
    if not folder.exists():
        return
    if not folder.is_dir():
        raise OutputExistsError(f"Expected a folder at {folder} but it is a file; choose a folder")
    others = sorted(p.name for p in folder.iterdir())
    if not others:
        return
    if _marker(folder) is None:
        raise OutputExistsError(
            f"Expected an empty folder or a previous PolyTopo output (with {MARKER_NAME}) at {folder} but it "
            f"holds other files (e.g. {others[0]}); choose a new folder: a folder PolyTopo did not write is never "
            "replaced"
        )
    if not overwrite:
        raise OutputExistsError(f"Expected no previous output at {folder} but one exists; pass {option} to "
                                "replace it or choose another folder")


def _write_marker(folder, files, complete):
    text = json.dumps({"producer": "PolyTopo", "complete": complete, "files": sorted(files)}, indent=2)
    temporary = Path(folder) / partial_name(MARKER_NAME)
    temporary.write_text(text + "\n", encoding="utf-8")
    os.replace(temporary, Path(folder) / MARKER_NAME)


def _unlisted(folder):
    """Names in ``folder`` (a previous PolyTopo output) that its marker does not list, recursively."""
    listed = _marker(folder)
    if listed is None:
        return sorted(p.name for p in folder.iterdir())
    found = []
    for path in sorted(folder.iterdir()):
        if path.name == MARKER_NAME:
            continue
        if path.name not in listed:
            found.append(path.name)
        elif path.is_dir() and not path.is_symlink():
            found += [f"{path.name}/{inner}" for inner in _unlisted(path)]
    return found


def _remove_output_folder(folder):
    """Remove a previous PolyTopo output folder that :func:`_unlisted` found holding only its own files."""
    for name in _marker(folder) or []:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            _remove_output_folder(path)
        elif os.path.lexists(path):
            path.unlink()
    (folder / MARKER_NAME).unlink(missing_ok=True)
    folder.rmdir()


def publish_folder(staging, target, order=()):
    """Move the finished files of ``staging`` into the output folder ``target``.

    Parameters
    ----------
    staging : str or Path
        A folder of finished files, made next to ``target`` with :func:`partial_name`;
        it is gone afterwards. A subfolder must itself be a PolyTopo output (with its
        marker), as :func:`publish_folder` leaves one.
    target : str or Path
        The output folder, checked with :func:`check_folder_output` before the work.
    order : sequence of str
        File names to move last, in this order (e.g. ``summary.json``, the file that
        makes the folder look complete).

    Notes
    -----
    A new folder is a single rename. Into an existing empty or PolyTopo folder, the
    marker first lists the old and the new files as incomplete, the old files are
    removed, the new ones moved in and the marker finally says complete: a kill at
    any moment leaves a folder the next run can replace, and files PolyTopo did not
    write are kept: a new file whose name a file of the user's already has is an
    :class:`OutputExistsError`, raised before anything is removed.
    """
    staging, target = Path(staging), Path(target)
    names = sorted(p.name for p in staging.iterdir() if p.name != MARKER_NAME)
    last = [name for name in order if name in names]
    names = [name for name in names if name not in last] + last
    if not target.exists():
        _write_marker(staging, names, complete=True)
        os.replace(staging, target)
        return
    old = _marker(target) or []
    foreign = sorted(name for name in names if name not in old and os.path.lexists(target / name))
    foreign += [f"{name}/{inner}" for name in old if (target / name).is_dir() and not (target / name).is_symlink()
                for inner in _unlisted(target / name)]
    if foreign:
        raise OutputExistsError(
            f"Expected to add {foreign[0]} to {target} but a file of that name exists that PolyTopo did not write; "
            "move it away or choose another folder (it is never replaced)")
    _write_marker(target, set(old) | set(names), complete=False)
    for name in old:
        path = target / name
        if path.is_file() or path.is_symlink():
            path.unlink()
        elif path.is_dir():
            _remove_output_folder(path)
    for name in names:
        os.replace(staging / name, target / name)
    _write_marker(target, names, complete=True)
    (staging / MARKER_NAME).unlink(missing_ok=True)
    staging.rmdir()


def _free_bytes(folder):
    """Free bytes on the file system of ``folder``; None when unknown or not a disk (``/proc`` has 0 of 0)."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return None
    return usage.free if usage.total > 0 else None


def write_failure(exc, path):
    """An :class:`OutputWriteError` that says why ``path`` could not be written.

    Parameters
    ----------
    exc : BaseException
        The error raised while writing (OSError, or a GDAL/SQLite RuntimeError).
    path : str or Path
        The output being written.

    Returns
    -------
    OutputWriteError
        ``disk_full`` is True when the errno says so, the message does, or the disk
        holding ``path`` has less than 1 MiB left.
    """
    folder = Path(path).parent if not Path(path).is_dir() else Path(path)
    text = str(exc).lower()
    free = _free_bytes(folder)
    full = (getattr(exc, "errno", None) in _DISK_FULL_ERRNOS or any(t in text for t in _DISK_FULL_TEXTS)
            or (free is not None and free < _FULL_BELOW_BYTES))
    if full:
        return OutputWriteError(
            f"Expected free disk space to write {path} but the disk holding {folder} is full "
            f"({free if free is not None else 'unknown'} bytes free); free some space or choose another folder; "
            "nothing was left behind", disk_full=True)
    if getattr(exc, "errno", None) in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.EINVAL,
                                       errno.ENOTDIR):
        return OutputWriteError(f"Expected a writable folder for {path} but {folder} is read-only or takes no "
                                f"new files ({exc.strerror}); choose another folder")
    return OutputWriteError(f"Expected to write {path} but the system refused: {exc}")


def probe_folder(folder):
    """Check that ``folder`` exists, takes new files and has room, before any work.

    Writes and removes a 64 KiB temporary file. Also removes stale temporaries of
    killed runs there (:func:`clean_stale_partials`).

    Raises
    ------
    OutputWriteError
        The folder is missing, read-only, or the disk is full.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise OutputWriteError(f"Expected an existing folder {folder} for the output but it does not exist; "
                               "create it or choose another")
    clean_stale_partials(folder)
    probe = folder / partial_name("probe")
    try:
        with open(probe, "xb") as handle:
            handle.write(b"\0" * _PROBE_BYTES)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise write_failure(exc, folder) from None  # named by the folder: the probe file is ours, not the user's
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
