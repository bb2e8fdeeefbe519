"""Write the zoo index (``models/zoo/index.json``) as models are exported and scored."""

import json
from pathlib import Path

from ..models.zoo.pack import file_sha256
from .recipes import RECIPES

__all__ = ["INDEX_NAME", "update_entry"]

INDEX_NAME = "index.json"


def _input(recipe):
    if recipe.source == "kampala_rgb":
        return f"RGB 8-bit, bands 1-3, values {recipe.input_range[0]:g}-{recipe.input_range[1]:g}"
    return f"single band 16-bit, band 1, values {recipe.input_range[0]:g}-{recipe.input_range[1]:g} scaled to 0-1"


def update_entry(zoo_dir, recipe, fields):
    """Create or update the index entry of ``recipe``; size and checksum are re-read from the file.

    Parameters
    ----------
    zoo_dir : pathlib.Path
    recipe : Recipe
    fields : dict
        ``train_seconds``, ``export_seconds``, ``evaluate_seconds`` (stored
        under ``wall_seconds``) and ``scores``; other keys are ignored.

    Returns
    -------
    dict
        The entry written.
    """
    zoo_dir = Path(zoo_dir)
    index_path = zoo_dir / INDEX_NAME
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else {"format": 1, "models": []}
    entries = {entry["name"]: entry for entry in index["models"]}
    entry = entries.get(recipe.name, {"wall_seconds": {}, "scores": {}})
    path = zoo_dir / f"{recipe.name}.onnx"
    entry.update({
        "name": recipe.name,
        "file": path.name,
        "family": recipe.family,
        "baseline": recipe.baseline,
        "input": _input(recipe),
        "resolution_cm": recipe.resolution_cm,
        "size_bytes": path.stat().st_size,
        "sha256": file_sha256(path),
    })
    for key in ("train_seconds", "export_seconds", "evaluate_seconds"):
        if key in fields:
            entry["wall_seconds"][key.removesuffix("_seconds")] = fields[key]
    if "scores" in fields:
        entry["scores"] = fields["scores"]
    entries[recipe.name] = entry
    order = [name for name in RECIPES if name in entries] + sorted(set(entries) - set(RECIPES))
    index["models"] = [entries[name] for name in order]
    index_path.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return entry
