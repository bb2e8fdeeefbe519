"""The bundled model zoo: small ONNX models trained by PolyTopo, each with a complete card.

``index.json`` beside this module lists the models (file, family, baseline,
input, size, checksum, wall times and headline held-out scores); the card in
each ONNX file has everything the engine needs. Retrain and re-export them with
``python -m polytopo.training all`` (see models/README.md).

>>> from polytopo.models import load_model                       # doctest: +SKIP
>>> model = load_model(zoo_model("unet_buildings_rgb").path)      # doctest: +SKIP
"""

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelsError

__all__ = ["INDEX_FILE", "ZOO_DIR", "ZooError", "ZooModel", "format_zoo_table", "zoo_model", "zoo_models"]

ZOO_DIR = Path(__file__).resolve().parent
"""Folder of the bundled ``.onnx`` files."""
INDEX_FILE = ZOO_DIR / "index.json"
"""The zoo index."""


class ZooError(ModelsError, LookupError):
    """The zoo index is missing or malformed, or names no such model."""


@dataclass(frozen=True)
class ZooModel:
    """One bundled model as listed in the index.

    Attributes
    ----------
    name : str
    path : pathlib.Path
        The ``.onnx`` file.
    family : str
        Decoder family.
    baseline : str
        Which baseline of the paper's Table 2 the model implements.
    input : str
        Bands and value type the model expects.
    resolution_cm_per_px : float
    size_bytes : int
    sha256 : str
    scores : dict
        Headline held-out scores (see the card's ``polytopo.scores`` for all).
    wall_seconds : dict
        ``train``, ``export`` and ``evaluate`` wall times, seconds.
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


def _read_index():
    try:
        return json.loads(INDEX_FILE.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ZooError(
            f"Expected a readable zoo index at {INDEX_FILE} but got: {exc}; reinstall the package or "
            "re-export the zoo with python -m polytopo.training all."
        ) from exc


def zoo_models():
    """Every bundled model, in index order.

    Returns
    -------
    tuple of ZooModel

    Raises
    ------
    ZooError
        The index is missing or malformed.
    """
    index = _read_index()
    models = []
    for entry in index.get("models", []):
        try:
            models.append(
                ZooModel(
                    name=entry["name"],
                    path=ZOO_DIR / entry["file"],
                    family=entry["family"],
                    baseline=entry["baseline"],
                    input=entry["input"],
                    resolution_cm_per_px=float(entry["resolution_cm"]),
                    size_bytes=int(entry["size_bytes"]),
                    sha256=entry["sha256"],
                    scores=dict(entry.get("scores", {})),
                    wall_seconds=dict(entry.get("wall_seconds", {})),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ZooError(f"Expected zoo index entries with name, file, family, ... but got {entry!r} ({exc}).") from exc
    return tuple(models)


def zoo_model(name):
    """The bundled model called ``name``.

    Raises
    ------
    ZooError
        No model of that name; the message lists the names.
    """
    models = {model.name: model for model in zoo_models()}
    if name not in models:
        raise ZooError(f"Expected a bundled model among {sorted(models)} but got {name!r}.")
    return models[name]


def _score(value):
    return "-" if value is None else f"{value:.3f}"


def format_zoo_table(models):
    """The bundled models as a text table: name, family, input, ground size, size on disk, held-out scores.

    Parameters
    ----------
    models : sequence of ZooModel

    Returns
    -------
    str
        One header line and one line per model; sizes in MB (10⁶ bytes), ground size in
        metres per pixel, scores on the held-out ground the index names.
    """
    header = ("model", "family", "input", "m/px", "MB", "held out", "AP50", "Topo-EM", "Hole-F1")
    rows = [header] + [
        (m.name, m.family, m.input.split(",")[0], f"{m.resolution_cm_per_px / 100:g}", f"{m.size_bytes / 1e6:.1f}",
         str(m.scores.get("heldout", "-")), _score(m.scores.get("AP50")), _score(m.scores.get("Topo-EM")),
         _score(m.scores.get("Hole-F1")))
        for m in models]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)
