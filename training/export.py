"""Export a trained checkpoint to ONNX with its card, and record it in the zoo index.

Importing this module imports PyTorch (see :mod:`.torch_support`).

The graph is exported with the TorchScript-based exporter of PyTorch (opset
17, dynamic batch, height and width; input ``input`` in NCHW float32), its
outputs are compared with PyTorch's on a random tile, and the card is
written with :func:`polytopo.models.card.card_files.write_card`, which checks it
against the graph. A file of :data:`.model_files.MAX_MODEL_BYTES` or more is refused.
"""

import time
import warnings
from pathlib import Path

import numpy as np

from ..models.card.card_files import write_card
from ..models.session import import_onnxruntime
from .cards import card_entries
from .errors import TrainingError
from .model_files import MAX_MODEL_BYTES, recorded_model
from .nets import ExportWrapper, build_net
from .torch_support import require_torch

__all__ = ["OPSET", "export_model"]

OPSET = 17
_CHECK_TILE_PX = 90
"""Edge of the random tile used to compare ONNX and PyTorch (not a multiple of 16 or 32, so the padding runs)."""
_CHECK_TOLERANCE = 1e-4


def _check_against_torch(path, wrapper, channels, torch):
    ort = import_onnxruntime()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, channels, _CHECK_TILE_PX, _CHECK_TILE_PX + 11)).astype(np.float32)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input": x})
    with torch.no_grad():
        expected = wrapper(torch.from_numpy(x))
    expected = expected if isinstance(expected, tuple) else (expected,)
    for name, a, b in zip([o.name for o in session.get_outputs()], got, expected):
        error = float(np.abs(a - b.numpy()).max())
        if error > _CHECK_TOLERANCE:
            raise TrainingError(
                f"Expected the ONNX output {name!r} to match PyTorch within {_CHECK_TOLERANCE} but the largest "
                f"difference is {error}; check the exporter version."
            )


def export_model(recipe, checkpoint, zoo_dir, max_bytes=MAX_MODEL_BYTES):
    """Export ``checkpoint`` of ``recipe`` to ``zoo_dir/<name>.onnx`` and write its card.

    Parameters
    ----------
    recipe : Recipe
    checkpoint : pathlib.Path
    zoo_dir : pathlib.Path
    max_bytes : int
        Largest file accepted (:func:`.model_files.recorded_model`).

    Returns
    -------
    ExportResult

    Raises
    ------
    TrainingError
        The ONNX outputs differ from PyTorch's, or the file is too large.
    """
    started = time.perf_counter()
    torch = require_torch()
    # weights_only: tensors and plain values only, so a planted checkpoint cannot run code
    info = torch.load(checkpoint, map_location="cpu", weights_only=True)
    if info.get("recipe") != recipe.name:
        raise TrainingError(f"Expected a checkpoint of {recipe.name!r} in {checkpoint} but got one of {info.get('recipe')!r}.")
    net = build_net(recipe, pretrained=False)
    net.load_state_dict(info["state_dict"])
    wrapper = ExportWrapper(net, recipe.head, separate=recipe.separate_touching,
                            courtyard_reach_px=recipe.courtyard_reach_px, flips=recipe.test_time_flips).eval()
    path = Path(zoo_dir) / f"{recipe.name}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(recipe.output_names)
    dynamic = {"input": {0: "N", 2: "H", 3: "W"}, **{name: {0: "N", 2: "H", 3: "W"} for name in names}}
    example = torch.zeros(1, len(recipe.bands), recipe.tile_size_px, recipe.tile_size_px)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper, (example,), str(path), input_names=["input"], output_names=names,
            dynamic_axes=dynamic, opset_version=OPSET, do_constant_folding=True, dynamo=False,
        )
    _check_against_torch(path, wrapper, len(recipe.bands), torch)
    write_card(path, card_entries(recipe, info), keep_existing=False)
    return recorded_model(recipe, path, info["train_seconds"], started, max_bytes)
