"""Locate the shared training data (imagery and labels), which is not part of the project.

The folder is ``$POLYTOPO_SHARED/data`` when the environment variable is set,
else ``<repository>/../shared/data``. It holds (see its README for sources and
licences):

* ``imagery/fair_oam/chips/*.tif``: Kampala RGB tiles (XYZ zoom 19, 20, 21),
  ``imagery/fair_oam/chips_labels.geojson``: their building footprints;
* ``imagery/spacenet_atlanta/sample_geotiff.tif``: Atlanta panchromatic tile,
  ``imagery/spacenet_atlanta/geotiff_labels.geojson``: its footprints.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import SharedDataError

__all__ = ["ENV_VAR", "SharedData", "find_shared_data", "shared_data_available"]

ENV_VAR = "POLYTOPO_SHARED"
_REPO_ROOT = Path(__file__).resolve().parents[1]


def _candidate():
    base = os.environ.get(ENV_VAR)
    return (Path(base) if base else _REPO_ROOT.parent / "shared") / "data"


@dataclass(frozen=True)
class SharedData:
    """Paths inside the shared data folder.

    Attributes
    ----------
    root : pathlib.Path
        The ``data`` folder.
    """

    root: Path

    @property
    def kampala_chips(self):
        """Folder of the Kampala GeoTIFF chips ``OAM-<x>-<y>-<z>.tif``."""
        return self.root / "imagery" / "fair_oam" / "chips"

    @property
    def kampala_labels(self):
        """GeoJSON of the Kampala building footprints (EPSG:4326)."""
        return self.root / "imagery" / "fair_oam" / "chips_labels.geojson"

    @property
    def atlanta_raster(self):
        """The 900 x 900 px UInt16 panchromatic Atlanta tile (EPSG:32616, 0.5 m)."""
        return self.root / "imagery" / "spacenet_atlanta" / "sample_geotiff.tif"

    @property
    def atlanta_labels(self):
        """GeoJSON of the Atlanta building footprints (EPSG:32616)."""
        return self.root / "imagery" / "spacenet_atlanta" / "geotiff_labels.geojson"

    def check(self):
        """Raise :class:`SharedDataError` naming the first missing input; return self."""
        for path in (self.kampala_chips, self.kampala_labels, self.atlanta_raster, self.atlanta_labels):
            if not path.exists():
                raise SharedDataError(
                    f"Expected the training input {path} but it does not exist; point {ENV_VAR} at the "
                    "folder that contains data/imagery/fair_oam and data/imagery/spacenet_atlanta."
                )
        return self


def shared_data_available():
    """Whether the shared data folder exists (tests skip real-data checks without it)."""
    return _candidate().is_dir()


def find_shared_data():
    """Return the :class:`SharedData` folder, checked.

    Raises
    ------
    SharedDataError
        The folder or one of its inputs is missing.
    """
    root = _candidate()
    if not root.is_dir():
        raise SharedDataError(
            f"Expected the shared data folder at {root} but it does not exist; set {ENV_VAR} to the folder "
            "that contains data/ (imagery and labels), e.g. export POLYTOPO_SHARED=/path/to/shared."
        )
    return SharedData(root).check()
