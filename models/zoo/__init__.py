"""The model zoo: small ONNX models trained by PolyTopo, each with a complete card.

``index.json`` beside this module lists the models (file, family, baseline,
input, size, checksum, wall times, headline held-out scores, download URL: the
entry's ``url``, else the index's ``release_url`` followed by the file name) and
marks with ``"bundled": true`` the default model that the plugin ZIP carries;
the card in each ONNX file has everything the engine needs. Retrain and
re-export them with ``python -m polytopo.training all`` (see models/README.md).

A git checkout holds every model file in this folder. The plugin ZIP holds only
the bundled one; the others form the *model pack*: release files that
``python -m polytopo.models zoo install NAME`` (or the dock's *Install*)
downloads, checks against the index's size and SHA-256 and stores in the user
model folder (:func:`user_model_dir`). A model is looked up here first, then
there.

>>> from polytopo.models import load_model                       # doctest: +SKIP
>>> model = load_model(zoo_model("unet_buildings_rgb").path)      # doctest: +SKIP
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelsError

__all__ = [
    "HELD_OUT_KEY",
    "INDEX_FILE",
    "MODELS_DIR_ENV",
    "ZOO_DIR",
    "ZooError",
    "ZooModel",
    "format_zoo_table",
    "user_model_dir",
    "zoo_model",
    "zoo_models",
]

ZOO_DIR = Path(__file__).resolve().parent
"""Folder of the bundled ``.onnx`` files."""
INDEX_FILE = ZOO_DIR / "index.json"
"""The zoo index."""
MODELS_DIR_ENV = "POLYTOPO_MODELS_DIR"
"""Environment variable naming the user model folder (overrides the default of :func:`user_model_dir`)."""
HELD_OUT_KEY = "heldout"
"""Key of an index entry's ``scores`` that names the held-out ground; the other keys are metric names."""


def user_model_dir():
    """The folder that receives downloaded model-pack files outside QGIS.

    Returns
    -------
    pathlib.Path
        ``$POLYTOPO_MODELS_DIR`` when set; else ``$XDG_DATA_HOME/polytopo/models``
        (``~/.local/share/polytopo/models`` without ``XDG_DATA_HOME``); on Windows
        ``%LOCALAPPDATA%/polytopo/models``. It need not exist yet. The QGIS plugin
        uses a folder in the QGIS profile instead and passes it explicitly.
    """
    override = os.environ.get(MODELS_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "polytopo" / "models"
    data_home = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data_home) if data_home and Path(data_home).is_absolute() else Path.home() / ".local" / "share"
    return base / "polytopo" / "models"


class ZooError(ModelsError, LookupError):
    """The zoo index is missing or malformed, or names no such model."""


@dataclass(frozen=True)
class ZooModel:
    """One model of the zoo as listed in the index.

    Attributes
    ----------
    name : str
    path : pathlib.Path
        Where the ``.onnx`` file is or would be: the bundled file beside the index when
        it exists, else the file of that name in the user model folder.
    family : str
        Decoder family.
    baseline : str
        Which baseline of the paper's Table 2 the model implements.
    input : str
        Bands and value type the model expects.
    resolution_cm_per_px : float
        Ground sample distance the model was trained at, centimetres per pixel.
    size_bytes : int
        Size of the file, bytes.
    sha256 : str
        Hex SHA-256 of the file.
    scores : dict
        Headline held-out scores (see the card's ``polytopo.scores`` for all).
    wall_seconds : dict
        ``train``, ``export`` and ``evaluate`` wall times, seconds.
    file : str
        File name of the model (the same in the zoo folder, the user folder and the release).
    url : str or None
        Download URL of the release file; None when the index gives none.
    bundled : bool
        Whether the plugin ZIP carries the file (the default model).
    """

    name: str
    path: Path
    family: str
    baseline: str
    input: str
    resolution_cm_per_px: float
    size_bytes: int
    sha256: str
    scores: dict
    wall_seconds: dict
    file: str = ""
    url: str = None
    bundled: bool = False

    @property
    def installed(self):
        """Whether the file is in place (bool).

        A file beside the index counts as it is (it came with the checkout or the ZIP;
        ``tests/models/test_zoo.py`` checks those against the index); a downloaded file must
        also have the size the index records, else it is ``outdated``.
        """
        try:
            if not self.path.is_file():
                return False
            return self.path.parent == ZOO_DIR or self.path.stat().st_size == self.size_bytes
        except OSError:
            return False

    @property
    def status(self):
        """Where the file is (str).

        ``"bundled"`` (the default model, beside the index), ``"zoo folder"`` (a pack model
        beside the index, as in a git checkout), ``"installed"`` (user folder), ``"outdated"``
        (a file of another size is there: install again) or ``"not installed"``.
        """
        if self.installed:
            if self.path.parent != ZOO_DIR:
                return "installed"
            return "bundled" if self.bundled else "zoo folder"
        return "outdated" if self.path.exists() else "not installed"


def _read_index():
    try:
        return json.loads(INDEX_FILE.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ZooError(
            f"Expected a readable zoo index at {INDEX_FILE} but got: {exc}; reinstall the package or "
            "re-export the zoo with python -m polytopo.training all."
        ) from exc


def _entry_path(file_name, user_dir):
    bundled = ZOO_DIR / file_name
    return bundled if bundled.is_file() else Path(user_dir) / file_name


def zoo_models(user_dir=None):
    """Every model of the zoo, in index order, installed or not.

    Parameters
    ----------
    user_dir : path-like, optional
        User model folder searched after the bundled folder; defaults to :func:`user_model_dir`.

    Returns
    -------
    tuple of ZooModel

    Raises
    ------
    ZooError
        The index is missing or malformed.
    """
    index = _read_index()
    user_dir = user_model_dir() if user_dir is None else Path(user_dir)
    release_url = index.get("release_url") or ""
    models = []
    for entry in index.get("models", []):
        try:
            file_name = entry["file"]
            if not isinstance(file_name, str) or Path(file_name).name != file_name or not file_name.endswith(".onnx"):
                raise ValueError(f"file must be a plain .onnx file name, got {file_name!r}")
            models.append(
                ZooModel(
                    name=entry["name"],
                    path=_entry_path(file_name, user_dir),
                    family=entry["family"],
                    baseline=entry["baseline"],
                    input=entry["input"],
                    resolution_cm_per_px=float(entry["resolution_cm"]),
                    size_bytes=int(entry["size_bytes"]),
                    sha256=str(entry["sha256"]).lower(),
                    scores=dict(entry.get("scores", {})),
                    wall_seconds=dict(entry.get("wall_seconds", {})),
                    file=file_name,
                    url=entry.get("url") or (release_url + file_name if release_url else None),
                    bundled=bool(entry.get("bundled", False)),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ZooError(f"Expected zoo index entries with name, file, family, ... but got {entry!r} ({exc}).") from exc
    return tuple(models)


def zoo_model(name, user_dir=None):
    """The zoo model called ``name``; its ``path`` is the installed file when there is one.

    Parameters
    ----------
    name : str
    user_dir : path-like, optional
        User model folder, see :func:`zoo_models`.

    Returns
    -------
    ZooModel
        ``installed`` says whether ``path`` holds the file; install a missing one with
        :func:`polytopo.models.zoo.pack.install_model` (``python -m polytopo.models zoo install NAME``).

    Raises
    ------
    ZooError
        No model of that name; the message lists the names.
    """
    models = {model.name: model for model in zoo_models(user_dir)}
    if name not in models:
        raise ZooError(f"Expected a bundled model among {sorted(models)} but got {name!r}; "
                       "'python -m polytopo.models zoo' lists them.")
    return models[name]


def _score(value):
    return "-" if value is None else f"{value:.3f}"


def format_zoo_table(models):
    """The zoo as a text table: name, family, input, ground size, size, held-out scores, install status.

    Parameters
    ----------
    models : sequence of ZooModel

    Returns
    -------
    str
        One header line and one line per model; sizes in MB (10⁶ bytes), ground size in
        metres per pixel, scores on the held-out ground the index names, and
        :attr:`ZooModel.status`.
    """
    scored = tuple(dict.fromkeys(name for m in models for name in m.scores if name != HELD_OUT_KEY))
    header = ("model", "family", "input", "m/px", "MB", "held out", *scored, "status")
    rows = [header] + [
        (m.name, m.family, m.input.split(",")[0], f"{m.resolution_cm_per_px / 100:g}", f"{m.size_bytes / 1e6:.1f}",
         str(m.scores.get(HELD_OUT_KEY, "-")), *(_score(m.scores.get(name)) for name in scored), m.status)
        for m in models]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)
