"""Models made of other exported models: a soup (weights averaged) or an ensemble (outputs averaged).

A recipe with ``soup_of`` or ``ensemble_of`` names its members by recipe; they are combined
from their exported files (``<member>.onnx``, from any folder, in that order) with
``python -m polytopo.training soup|ensemble NAME FILE ...``, not trained. The card
comes from the recipe; the standardization and input must agree among the members, the
training seconds and steps are the members' sums, and ``polytopo.training`` names each
member file with its SHA-256. Needs the ``onnx`` package (a development dependency), not
PyTorch.
"""

import json
import time
from pathlib import Path

from ..models.card.card_files import write_card
from ..models.card.onnx_metadata import read_metadata_props
from ..models.zoo.pack import file_sha256
from .cards import card_entries
from .errors import TrainingError
from .model_files import MAX_MODEL_BYTES, recorded_model

__all__ = ["AGREED_CARD_KEYS", "make_combined"]

AGREED_CARD_KEYS = ("standardization_mean", "standardization_std", "polytopo.input_range", "polytopo.bands",
                    "resolution")
"""Card entries every member of a combined model must share: they decide what input the graph is given."""


def _combined_graph(recipe, models, names):
    """The graph of ``recipe``'s combination of ``models`` (``onnx.ModelProto``), stored as the recipe asks."""
    if recipe.soup_of:
        from .soup import averaged_model

        return averaged_model(models, names)
    from .ensemble import ensembled_model, half_stored

    scales = [recipe.resolution_cm / grid for grid in recipe.member_grids_cm] or None
    ensemble = ensembled_model(models, names, scales)
    return half_stored(ensemble) if recipe.half_stored else ensemble


def make_combined(recipe, members, zoo_dir, max_bytes=MAX_MODEL_BYTES):
    """Combine the model files ``members`` into ``zoo_dir/<recipe.name>.onnx`` with ``recipe``'s card.

    ``members`` are the files of the recipes in ``recipe.members``, in that order. The zoo
    index records the file as :func:`.export.export_model` does; a file of ``max_bytes`` or
    more is refused and removed (:func:`.model_files.recorded_model`). What differs
    between the members' trainings (seed, crop shares, steps) is recorded per member.

    Returns
    -------
    .model_files.ExportResult

    Raises
    ------
    TrainingError
        ``recipe`` is trained, not combined; the files are not the members' (by name and
        order) or are missing; the members disagree on their input (:data:`AGREED_CARD_KEYS`)
        or cannot be combined.
    """
    import onnx

    if not recipe.members:
        raise TrainingError(f"Expected a recipe with soup_of or ensemble_of but {recipe.name} is trained.")
    started = time.perf_counter()
    paths = [Path(path) for path in members]
    expected = [f"{name}.onnx" for name in recipe.members]
    if [path.name for path in paths] != expected:
        raise TrainingError(f"Expected the model files {expected} of {recipe.name}'s {recipe.combination}_of but got "
                            f"{[path.name for path in paths]}.")
    for path in paths:
        if not path.is_file():
            raise TrainingError(f"Expected an ONNX model file at {path} but found none.")
    cards = [read_metadata_props(path) for path in paths]
    for key in AGREED_CARD_KEYS:
        if len({card.get(key) for card in cards}) != 1:
            raise TrainingError(f"Expected the members to agree on {key} but they differ: "
                                + ", ".join(f"{p.name} {c.get(key)}" for p, c in zip(paths, cards)) + ".")
    trainings = [json.loads(card["polytopo.training"]) for card in cards]
    combined = _combined_graph(recipe, [onnx.load(str(path)) for path in paths], [path.name for path in paths])
    info = {
        "mean": json.loads(cards[0]["standardization_mean"]),
        "std": json.loads(cards[0]["standardization_std"]),
        "train_seconds": round(sum(float(t["train_seconds"]) for t in trainings), 1),
        "final_loss": None,
        "torch_version": trainings[0]["framework"].split()[1],
    }
    out = Path(zoo_dir) / f"{recipe.name}.onnx"
    out.parent.mkdir(parents=True, exist_ok=True)
    del combined.metadata_props[:]
    onnx.save(combined, str(out))
    entries = card_entries(recipe, info)
    entries["polytopo.training"]["steps"] = sum(int(t["steps"]) for t in trainings)
    for key in ("seed", "crop_shares"):
        entries["polytopo.training"].pop(key, None)
    entries["polytopo.training"][f"{recipe.combination}_of"] = [
        {"file": path.name, "sha256": file_sha256(path), "steps": int(t["steps"]), "train_seconds": t["train_seconds"],
         **{key: t[key] for key in ("seed", "crop_shares") if key in t}}
        for path, t in zip(paths, trainings)]
    for member, grid in zip(entries["polytopo.training"][f"{recipe.combination}_of"], recipe.member_grids_cm):
        member["grid_cm"] = grid
    write_card(out, entries, keep_existing=False)
    return recorded_model(recipe, out, info["train_seconds"], started, max_bytes)
