"""Shared by the export scripts: ``torch.onnx.export`` with fixed conventions, then the card written into the file.

Run the scripts from the root of the baseline's own repository with that
root on the Python path (``PYTHONPATH=. python .../tools/export/hisup.py``),
torch installed and PolyTopo importable (``pip install -e`` of this
repository). They are not part of PolyTopo's runtime or test command.
"""

import argparse
import json
import os

__all__ = ["CARDS", "export_and_write_card", "parser"]

CARDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cards")
"""The card files (JSON) that docs/baselines.md lists, one per baseline."""


def parser(description, checkpoint=True):
    """Command line shared by the scripts: checkpoint in (unless the script reads its own weights), ONNX file out, card overrides."""
    args = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    if checkpoint:
        args.add_argument("--checkpoint", required=True, help="trained weights of the baseline")
    args.add_argument("--out", required=True, help="ONNX file to write")
    args.add_argument("--tile", type=int, default=512, help="tile edge in px the graph is traced with")
    args.add_argument("--opset", type=int, default=17)
    args.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="card entry to override")
    return args


def export_and_write_card(module, example, out, input_names, output_names, dynamic_axes, opset, card_name, overrides=(),
                          batch_statistics=False):
    """Export ``module`` traced on ``example``, then store the card ``cards/<card_name>.json`` in it.

    The module is exported in evaluation mode, or with ``batch_statistics``
    in training mode (batch normalization then uses the statistics of the
    batch it is given). The card is checked against the exported graph
    (``write_card`` validates), so a file whose outputs do not match the card
    is not left behind.
    """
    import torch

    from polytopo.models.card.card_files import write_card

    module.train(batch_statistics)
    mode = torch.onnx.TrainingMode.TRAINING if batch_statistics else torch.onnx.TrainingMode.EVAL
    with torch.no_grad():
        torch.onnx.export(
            module, example, out, input_names=list(input_names), output_names=list(output_names),
            dynamic_axes=dynamic_axes, opset_version=opset, do_constant_folding=not batch_statistics, training=mode,
        )
    with open(os.path.join(CARDS, card_name + ".json"), encoding="utf-8") as handle:
        card = json.load(handle)
    for entry in overrides:
        key, _, value = entry.partition("=")
        card[key] = json.loads(value)
    try:
        write_card(out, card)
    except Exception:
        os.remove(out)
        raise
    print(f"wrote {out} with the {card_name} card")
