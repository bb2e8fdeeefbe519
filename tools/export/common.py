"""Shared by the export scripts: ``torch.onnx.export`` with fixed conventions, then the card written into the file.

Run the scripts from the root of the baseline's own repository with that
root on the Python path (``PYTHONPATH=. python .../tools/export/hisup_heads.py``),
torch installed and PolyTopo importable (``pip install -e`` of this
repository). They are not part of PolyTopo's runtime or test command.

Each script has ``options()`` (its command line), ``build(args)`` (the
graphs to export: the torch modules, example inputs and names) and
``main()``; ``tools/export/verify.py`` imports the first two to compare the
written ONNX files with the same torch modules.
"""

import argparse
import json
import os
from dataclasses import dataclass, field

__all__ = ["CARDS", "Graph", "export_graphs", "load_card", "parser", "run"]

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


def sam_parser(description):
    """:func:`parser` with SAM's ``--model-type`` (the encoder and the prompt decoder must name the same)."""
    args = parser(description)
    args.add_argument("--model-type", default="vit_h", choices=["vit_h", "vit_l", "vit_b"])
    return args


@dataclass
class Graph:
    """One ONNX file to write: ``module`` traced on ``example`` (a tuple of tensors).

    ``axes`` are the dynamic axes (``torch.onnx.export``'s ``dynamic_axes``);
    ``card`` names ``cards/<card>.json``, stored in the file after every graph
    of the script is written (a card may name a second file, such as a
    prompt or token decoder, that must exist to be checked). With
    ``batch_statistics`` the module is exported in training mode (batch
    normalization then uses the statistics of the batch it is given).
    """

    module: object
    example: tuple
    out: str
    inputs: list
    outputs: list
    axes: dict = field(default=None)
    card: str = None
    batch_statistics: bool = False


def load_card(name, overrides=()):
    """The card ``cards/<name>.json`` with ``KEY=JSON`` overrides applied."""
    with open(os.path.join(CARDS, name + ".json"), encoding="utf-8") as handle:
        card = json.load(handle)
    for entry in overrides:
        key, _, value = entry.partition("=")
        card[key] = json.loads(value)
    return card


def export_graphs(graphs, opset, overrides=()):
    """Export every graph with the TorchScript exporter, then write the cards; remove the files when a card is refused.

    The TorchScript exporter (``dynamo=False``) is the one whose
    ``dynamic_axes``, ``training`` and constant folding these scripts use; it
    writes one self-contained file at ``opset`` (torch 2.9 and later default
    to the dynamo exporter, which writes the weights to a separate
    ``.onnx.data`` file and may keep a newer opset). The card is checked
    against the exported graph (``write_card`` validates).
    """
    import torch

    from polytopo.models import write_card

    for graph in graphs:
        graph.module.train(graph.batch_statistics)
        mode = torch.onnx.TrainingMode.TRAINING if graph.batch_statistics else torch.onnx.TrainingMode.EVAL
        with torch.no_grad():
            torch.onnx.export(
                graph.module, tuple(graph.example), graph.out, input_names=list(graph.inputs),
                output_names=list(graph.outputs), dynamic_axes=graph.axes, opset_version=opset,
                do_constant_folding=not graph.batch_statistics, training=mode, dynamo=False,
            )
        print(f"wrote {graph.out}")
    try:
        for graph in graphs:
            if graph.card:
                write_card(graph.out, load_card(graph.card, overrides))
                print(f"wrote the {graph.card} card into {graph.out}")
    except Exception:
        for graph in graphs:
            if os.path.exists(graph.out):
                os.remove(graph.out)
        raise


def run(options, build, argv=None):
    """The scripts' ``main``: parse the command line, build the graphs, export them and write the card."""
    args = options().parse_args(argv)
    export_graphs(build(args), args.opset, args.set)
