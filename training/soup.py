"""A uniform model soup: the weights of exported models of one network averaged into a new model file.

Models fine-tuned from the same ImageNet encoder and the same decoder initialization
(one recipe's seed) can be averaged weight by weight (Wortsman et al. 2022, "Model
soups"); the soup runs at the cost of one model. The ingredients must hold the same
weights by name, shape and type and the same graph inputs and outputs; the first
ingredient's graph carries the averages (the convolutions' weights as exported, batch
normalization folded into them). Every other tensor of the graph (shapes, indices) must
be equal in all ingredients. Needs the ``onnx`` package (a development dependency), not
PyTorch.
"""

import json
import time
from pathlib import Path

import numpy as np

from ..models.card.card_files import write_card
from ..models.card.onnx_metadata import read_metadata_props
from ..models.zoo.pack import file_sha256
from .cards import card_entries
from .errors import TrainingError
from .model_files import recorded_model

__all__ = ["averaged_model", "make_soup"]


def _weights(model):
    from onnx import numpy_helper

    return {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}


def averaged_model(models, names):
    """The first of ``models`` (``onnx.ModelProto``) with every floating-point weight the mean over all of them.

    ``names`` label the models in errors. Raises :class:`~.errors.TrainingError` where the
    models differ in weight names, shapes or types, in a non-float tensor, or in the
    graph's inputs and outputs.
    """
    from onnx import numpy_helper

    if len(models) < 2:
        raise TrainingError(f"Expected at least two models to average but got {len(models)}.")
    first, first_name = models[0], names[0]
    weights = [_weights(model) for model in models]
    for model, name, own in zip(models[1:], names[1:], weights[1:]):
        if (list(model.graph.input), list(model.graph.output)) != (list(first.graph.input), list(first.graph.output)):
            raise TrainingError(f"Expected {name} to have the inputs and outputs of {first_name}; they differ.")
        if own.keys() != weights[0].keys():
            raise TrainingError(f"Expected {name} to hold the weights of {first_name} but "
                                f"{len(own.keys() ^ weights[0].keys())} weight names differ: not the same network.")
        for key, value in own.items():
            reference = weights[0][key]
            if (value.shape, value.dtype) != (reference.shape, reference.dtype):
                raise TrainingError(f"Expected weight {key!r} of {name} to be {reference.dtype} {reference.shape} as in "
                                    f"{first_name} but got {value.dtype} {value.shape}.")
            if not np.issubdtype(value.dtype, np.floating) and not np.array_equal(value, reference):
                raise TrainingError(f"Expected tensor {key!r} of {name} to equal {first_name}'s (it is not a weight).")
    soup = type(first)()
    soup.CopyFrom(first)
    for tensor in soup.graph.initializer:
        values = [own[tensor.name] for own in weights]
        if np.issubdtype(values[0].dtype, np.floating):
            mean = np.mean(np.stack(values).astype(np.float64), axis=0).astype(values[0].dtype)
            tensor.CopyFrom(numpy_helper.from_array(mean, tensor.name))
    return soup


def make_soup(recipe, ingredients, zoo_dir):
    """Average the models at ``ingredients`` into ``zoo_dir/<recipe.name>.onnx`` with ``recipe``'s card.

    ``ingredients`` are the files of the recipes in ``recipe.soup_of``, in that order
    (``<name>.onnx``, from any folder). The card's standardization and input come from the ingredients (which must agree);
    ``polytopo.training`` names each ingredient file with its SHA-256 and adds their
    training seconds. The zoo index records the file as :func:`.export.export_model` does.

    Returns
    -------
    .model_files.ExportResult
    """
    import onnx

    started = time.perf_counter()
    paths = [Path(path) for path in ingredients]
    expected = [f"{name}.onnx" for name in recipe.soup_of]
    if not expected or [path.name for path in paths] != expected:
        raise TrainingError(f"Expected the model files {expected} of {recipe.name}'s soup_of but got "
                            f"{[path.name for path in paths]}.")
    for path in paths:
        if not path.is_file():
            raise TrainingError(f"Expected an ONNX model file at {path} but found none.")
    cards = [read_metadata_props(path) for path in paths]
    for key in ("standardization_mean", "standardization_std", "polytopo.input_range", "polytopo.bands",
                "resolution"):
        if len({card.get(key) for card in cards}) != 1:
            raise TrainingError(f"Expected the ingredients to agree on {key} but they differ: "
                                + ", ".join(f"{p.name} {c.get(key)}" for p, c in zip(paths, cards)) + ".")
    trainings = [json.loads(card["polytopo.training"]) for card in cards]
    soup = averaged_model([onnx.load(str(path)) for path in paths], [path.name for path in paths])
    info = {
        "mean": json.loads(cards[0]["standardization_mean"]),
        "std": json.loads(cards[0]["standardization_std"]),
        "train_seconds": round(sum(float(t["train_seconds"]) for t in trainings), 1),
        "final_loss": None,
        "torch_version": trainings[0]["framework"].split()[1],
    }
    out = Path(zoo_dir) / f"{recipe.name}.onnx"
    out.parent.mkdir(parents=True, exist_ok=True)
    del soup.metadata_props[:]
    onnx.save(soup, str(out))
    entries = card_entries(recipe, info)
    entries["polytopo.training"]["steps"] = sum(int(t["steps"]) for t in trainings)
    entries["polytopo.training"]["soup_of"] = [{"file": path.name, "sha256": file_sha256(path),
                                               "steps": int(t["steps"]), "train_seconds": t["train_seconds"]}
                                              for path, t in zip(paths, trainings)]
    write_card(out, entries, keep_existing=False)
    return recorded_model(recipe, out, info["train_seconds"], started)
