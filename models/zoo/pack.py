"""Install a model of the model pack: download (or copy) a release file, verify it, store it atomically.

The zoo index gives each model's release-file URL, size in bytes and SHA-256.
:func:`install_model` streams the file from that URL (or from a file or URL the
caller names, e.g. one downloaded by hand) into a hidden temporary file in the
target folder, counting and hashing as it goes, and renames it to its final name
only when size and checksum match. Whatever goes wrong (HTTP error, a server
that stops answering, a truncated or oversized file, a wrong checksum, a cancel
or Ctrl-C) the temporary file is removed and an installed file stays as it was,
so the folder never holds a half-written model.

Only the standard library is used (:mod:`urllib.request`, :mod:`hashlib`), so the
QGIS plugin and the command line share it.
"""

import hashlib
import http.client
import os
import socket
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ..errors import PackChecksumError, PackDownloadError, PackInstallCanceled
from .. import zoo as _zoo  # the module, so that a test's replacement of ZOO_DIR holds here too
from . import MODELS_DIR_ENV, ZooError, ZooModel, user_model_dir, zoo_model

__all__ = ["CHUNK_BYTES", "PARTIAL_AGE_S", "TIMEOUT_S", "file_sha256", "install_model", "installed_ok", "remove_partials"]

CHUNK_BYTES = 1 << 16
"""Bytes read per step; progress and cancel are checked after each (64 KiB)."""
TIMEOUT_S = 30.0
"""Seconds without an answer after which a download stops (connect and each read)."""
PARTIAL_AGE_S = 3600.0
"""Age after which :func:`remove_partials` removes a temporary of a killed install, seconds."""
_SCHEMES = ("https", "http", "file")
_USER_AGENT = "polytopo-model-pack"


def file_sha256(path):
    """Hex SHA-256 of the file at ``path``.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    str
        64 lower-case hex digits.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed_ok(model):
    """Whether ``model.path`` holds exactly the file the index records (size and SHA-256).

    Parameters
    ----------
    model : ZooModel

    Returns
    -------
    bool
    """
    return model.installed and file_sha256(model.path) == model.sha256


def _is_url(source):
    return "://" in str(source)


def _open_source(source, model, timeout_s):
    """Open ``source`` (URL or local file) for reading; returns (stream, announced size or None, label)."""
    if not _is_url(source):
        path = Path(source).expanduser()
        try:
            return open(path, "rb"), path.stat().st_size, str(path)
        except OSError as exc:
            raise PackDownloadError(
                f"Expected a readable model file at {path} but got: {exc.strerror or exc}; check the path "
                f"(the release file is {model.url or 'not listed in the index'})") from None
    if urllib.parse.urlsplit(str(source)).scheme.lower() not in _SCHEMES:
        raise PackDownloadError(f"Expected an https, http or file URL but got {source!r}; fix the URL")
    request = urllib.request.Request(str(source), headers={"User-Agent": _USER_AGENT})  # noqa: S310 - scheme checked
    try:
        # nosec B310: only https, http and file (a file the user names with --from) reach this line
        response = urllib.request.urlopen(request, timeout=timeout_s)  # noqa: S310  # nosec B310
    except urllib.error.HTTPError as exc:
        raise PackDownloadError(
            f"Expected the release file of {model.name} at {source} but the server answered HTTP {exc.code} "
            f"{exc.reason}; check the URL, or download the file by hand and install it with --from FILE") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            reason = f"no answer within {timeout_s:g} s"
        raise PackDownloadError(
            f"Expected to reach {source} for {model.name} but got: {reason}; check the network and retry, or "
            "download the file by hand and install it with --from FILE") from None
    length = response.headers.get("Content-Length")
    try:
        announced = int(length) if length is not None else None
    except ValueError:
        announced = None
    return response, announced, str(source)


def _copy_verified(stream, handle, model, label, announced, progress, canceled):
    """Copy ``stream`` into ``handle``, hashing; raise when the size or checksum is not the index's."""
    expected = model.size_bytes
    if announced is not None and announced != expected:
        raise PackChecksumError(
            f"Expected {expected} bytes for {model.name} but {label} has {announced}; it is another (or a "
            "truncated) file: download the release file again or use the one the zoo index names")
    digest = hashlib.sha256()
    done = 0
    if progress is not None:
        progress(0, expected)
    while True:
        if canceled is not None and canceled():
            raise PackInstallCanceled(f"Expected to finish installing {model.name} but it was canceled after "
                                       f"{done} of {expected} bytes; nothing was stored")
        block = stream.read(CHUNK_BYTES)
        if not block:
            break
        done += len(block)
        if done > expected:
            raise PackChecksumError(
                f"Expected {expected} bytes for {model.name} but {label} sends more; it is another file: "
                "use the release file the zoo index names")
        digest.update(block)
        handle.write(block)
        if progress is not None:
            progress(done, expected)
    if done != expected:
        raise PackChecksumError(
            f"Expected {expected} bytes for {model.name} but got {done} from {label} (truncated); retry the "
            "download")
    actual = digest.hexdigest()
    if actual != model.sha256:
        raise PackChecksumError(
            f"Expected SHA-256 {model.sha256} for {model.name} but {label} has {actual}; the file is corrupt "
            "or another version: download the release file again")


def _stream_failure(exc, model, label, timeout_s):
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return PackDownloadError(
            f"Expected data from {label} for {model.name} but the server stopped answering for {timeout_s:g} s; "
            "nothing was stored: check the network and retry")
    if isinstance(exc, http.client.IncompleteRead):
        return PackChecksumError(
            f"Expected {model.size_bytes} bytes for {model.name} but the connection to {label} closed after "
            f"{len(exc.partial)} more (truncated); nothing was stored: retry the download")
    return PackDownloadError(f"Expected to download {model.name} from {label} but got: {exc}; nothing was stored: "
                             "retry, or install a downloaded file with --from FILE")


def install_model(model, folder=None, source=None, *, progress=None, canceled=None, timeout_s=TIMEOUT_S,
                  force=False):
    """Download or copy a model-pack file, verify its size and SHA-256, and store it atomically.

    Parameters
    ----------
    model : str or ZooModel
        A zoo model or its name.
    folder : path-like, optional
        Target folder; defaults to :func:`polytopo.models.zoo.user_model_dir`. Created when missing.
    source : str or path-like, optional
        ``https://``, ``http://`` or ``file://`` URL, or a local file (works offline); defaults to
        the index's ``url``.
    progress : callable, optional
        ``progress(done_bytes, total_bytes)``, called after each 64 KiB block.
    canceled : callable, optional
        ``canceled() -> bool``, checked before each block; True stops the install.
    timeout_s : float
        Seconds without an answer after which a download fails (connect and each read).
    force : bool
        Download again even when a verified file is already in place.

    Returns
    -------
    pathlib.Path
        The installed file (``folder / model.file``), or the file already in place (bundled, or
        installed and verified) when ``force`` is False.

    Raises
    ------
    ZooError
        No model of that name.
    PackDownloadError
        No source, an unreachable source, an HTTP error, a timeout, or the folder cannot be written.
    PackChecksumError
        The file has another size or SHA-256 than the index records.
    PackInstallCanceled
        ``canceled()`` returned True.
    KeyboardInterrupt
        Ctrl-C: re-raised after the temporary file is removed.

    Notes
    -----
    The file is written to a hidden ``.<file>.*.part`` temporary in ``folder``, flushed to disk and
    renamed over ``folder / model.file`` (:func:`os.replace`), so readers see either the old file,
    nothing, or the complete verified new file. Temporaries of killed installs older than
    :data:`PARTIAL_AGE_S` are removed first (:func:`remove_partials`).
    """
    folder = user_model_dir() if folder is None else Path(folder).expanduser()
    if not isinstance(model, ZooModel):
        model = zoo_model(str(model), folder)
    if not model.file:
        raise ZooError(f"Expected a file name for {model.name} in the zoo index but got none; fix the index")
    target = folder / model.file
    if not force:
        if model.path.parent == _zoo.ZOO_DIR and installed_ok(model):
            return model.path
        if target.is_file() and target.stat().st_size == model.size_bytes and file_sha256(target) == model.sha256:
            return target
    if source is None:
        if not model.url:
            raise PackDownloadError(
                f"Expected a download URL for {model.name} in the zoo index but got none; install a downloaded "
                "file with --from FILE")
        source = model.url
    if _is_url(source) and urllib.parse.urlsplit(str(source)).scheme.lower() not in _SCHEMES:
        raise PackDownloadError(f"Expected an https, http or file URL but got {source!r}; fix the URL")  # before mkdir
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_partials(folder)
        handle, temporary = tempfile.mkstemp(prefix=f".{model.file}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise PackDownloadError(f"Expected a writable model folder at {folder} but got: {exc.strerror or exc}; "
                                f"choose another folder (--dir, or ${MODELS_DIR_ENV})") from None
    try:
        stream, announced, label = _open_source(source, model, timeout_s)
        with stream, os.fdopen(handle, "wb") as out:
            handle = None
            try:
                _copy_verified(stream, out, model, label, announced, progress, canceled)
            except (OSError, http.client.HTTPException) as exc:
                if isinstance(exc, (PackDownloadError, PackChecksumError)):
                    raise
                raise _stream_failure(exc, model, label, timeout_s) from None
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        if handle is not None:
            os.close(handle)
        if os.path.exists(temporary):
            os.remove(temporary)
    return target


def remove_partials(folder, older_than_s=PARTIAL_AGE_S):
    """Remove temporaries left in ``folder`` by installs that were killed (power loss, SIGKILL).

    Parameters
    ----------
    folder : path-like
    older_than_s : float
        Only temporaries not written to for this many seconds go (a running install writes
        at least every :data:`TIMEOUT_S` seconds), so another install's file is never touched.

    Returns
    -------
    list of pathlib.Path
        The files removed.
    """
    removed = []
    now = time.time()
    for path in Path(folder).glob(".*.onnx.*.part"):
        try:
            if now - path.stat().st_mtime > older_than_s:
                path.unlink()
                removed.append(path)
        except OSError:
            pass
    return removed
