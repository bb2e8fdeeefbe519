"""Command line of the inference engine: the parser, ``info``, ``write-card``, and the exit status.

The ``run`` command is carried out by :mod:`~polytopo.models.run_command`.

::

    python -m polytopo.models info MODEL [--json]
    python -m polytopo.models zoo [NAME] [--json]      (also: list)
    python -m polytopo.models write-card MODEL [--from CARD.json] [--set KEY=JSON ...] [--out OUT.onnx] [--overwrite]
        [--no-validate]
    python -m polytopo.models run --model M.onnx --raster R.tif --out OUT.gpkg [--provider auto|cuda|cpu]
        [--extent xmin,ymin,xmax,ymax] [--aoi AOI.gpkg] [--tile PX] [--overlap PX] [--batch N] [--threads N]
        [--bands 1,2,3] [--threshold T] [--min-area-px A] [--min-hole-area-px A] [--prompts P.gpkg | --prompt-model DETECTOR.onnx] [--overwrite] [--quiet]
        [--workers N | --scheduler tcp://HOST:PORT] [--block-px B]
    python -m polytopo.models run --model M.onnx --images DIR|GLOB|LIST.txt --out PREDS.json|OUT.gpkg
        [--gt-images GT.json] [--workers N | --scheduler tcp://HOST:PORT] [--tile PX] [--overlap PX] [--batch N] [--threshold T] ...

With ``--workers`` or ``--scheduler`` a raster is run in blocks on a Dask
cluster (:mod:`~polytopo.models.block_run`) and an image set one task per
image (:mod:`~polytopo.models.image_sets`); without them everything runs in
this process (``--block-px`` alone runs the blocks here, one after the other).

Exit status: 0 on success, 1 on a :class:`~polytopo.models.errors.ModelsError`
or a cluster error (the message is printed to stderr) and when an image of an
image set failed (the failures are listed), 2 on a usage error.
"""

import argparse
import json
import math
import sys

from ..evaluator.errors import EvaluatorError
from .card_io import describe_model, format_description, write_card
from .errors import ModelsError

__all__ = ["build_parser", "main"]


def _parse_set(items):
    entries = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ModelsError(f"Expected --set KEY=JSON but got {item!r}; e.g. --set tile_size=512")
        try:
            entries[key] = json.loads(text)
        except json.JSONDecodeError:
            entries[key] = text
    return entries


def _cmd_info(args):
    info = describe_model(args.model)
    print(json.dumps(info, indent=2) if args.json else format_description(info))
    return 0 if info["card_error"] is None else 1


def _score_text(scores):
    if not scores:
        return "not scored"
    parts = [f"{metric} {scores[metric]:.3f}" for metric in ("AP50", "Topo-EM") if scores.get(metric) is not None]
    return f"{scores.get('heldout', '?')}: " + ", ".join(parts)


def _place_scores(path):
    """AP50 of each non-validation row of the card's ``polytopo.scores`` (held-out ground and places)."""
    from .onnx_metadata import read_metadata_props

    try:
        rows = json.loads(read_metadata_props(path).get("polytopo.scores", "{}")).get("results", [])
    except (ValueError, AttributeError):
        return []
    return [(row["key"], row["split"], row.get("AP50")) for row in rows if row.get("split") != "validation"]


def _cmd_zoo(args):
    from .zoo import zoo_model, zoo_models

    if args.name is None:
        models = zoo_models()
        if args.json:
            print(json.dumps([{"name": m.name, "file": str(m.path), "family": m.family, "baseline": m.baseline,
                               "input": m.input, "resolution_cm": m.resolution_cm_per_px,
                               "size_bytes": m.size_bytes, "scores": m.scores} for m in models], indent=2))
            return 0
        header = ("model", "family", "input", "ground size", "size", "held-out score")
        rows = [(m.name, m.family, m.input, f"{m.resolution_cm_per_px:g} cm/px", f"{m.size_bytes / 1e6:.1f} MB",
                 _score_text(m.scores)) for m in models]
        widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
        for row in (header, *rows):
            print("  ".join(str(value).ljust(width) for value, width in zip(row, widths)).rstrip())
        print("\n`python -m polytopo.models zoo NAME` prints one model's card and every score.")
        return 0
    model = zoo_model(args.name)
    info = describe_model(model.path)
    if args.json:
        print(json.dumps({"zoo": {"name": model.name, "file": str(model.path), "size_bytes": model.size_bytes,
                                  "sha256": model.sha256, "scores": model.scores,
                                  "wall_seconds": model.wall_seconds}, "model": info}, indent=2))
        return 0 if info["card_error"] is None else 1
    print(f"{model.name}: {model.baseline} ({model.family}), {model.input}, {model.resolution_cm_per_px:g} cm/px, "
          f"{model.size_bytes / 1e6:.1f} MB")
    print(f"file: {model.path}")
    print(f"headline held-out score: {_score_text(model.scores)}")
    places = _place_scores(model.path)
    if places:
        print("AP50 per scored raster (validation rows left out): " + ", ".join(
            f"{key} ({split}) {ap50:.3f}" for key, split, ap50 in places if ap50 is not None))
    print()
    print(format_description(info))
    return 0 if info["card_error"] is None else 1


def _card_json(path):
    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle)
    except OSError as exc:
        raise ModelsError(f"Expected a readable JSON file for --from but {path} cannot be read: {exc.strerror}; "
                          "check the path") from None
    except (ValueError, RecursionError) as exc:
        raise ModelsError(f"Expected a JSON object of card entries in {path} but it cannot be parsed: "
                          f"{str(exc)[:200]}") from None
    if not isinstance(entries, dict):
        raise ModelsError(f"Expected a JSON object of card entries in {path} but got a {type(entries).__name__}; "
                          'write e.g. {"tile_size": 512}')
    return entries


def _cmd_write_card(args):
    entries = {}
    if args.card_json:
        entries.update(_card_json(args.card_json))
    entries.update(_parse_set(args.set))
    if not entries:
        raise ModelsError("Expected card entries from --from CARD.json or --set KEY=JSON but got none.")
    card = write_card(args.model, entries, out_path=args.out, validate=not args.no_validate,
                      overwrite=args.overwrite, inputs=[args.card_json] if args.card_json else ())
    print(f"card written to {args.out or args.model}: family {card.family}")
    return 0


def _extent(text):
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 4 or not all(math.isfinite(v) for v in values) or not (values[0] < values[2] and values[1] < values[3]):
        raise argparse.ArgumentTypeError(f"expected finite xmin,ymin,xmax,ymax with xmin < xmax and ymin < ymax, got {text!r}")
    return tuple(values)


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _count(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value
def _bands(text):
    try:
        bands = tuple(int(part) for part in text.split(","))
    except ValueError:
        bands = ()
    if not bands or min(bands) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated 1-based band numbers such as 1,2,3 but got {text!r}")
    return bands


def _cmd_run(args):
    from .run_command import run_command

    return run_command(args)


def build_parser():
    """Return the argument parser of ``python -m polytopo.models``."""
    parser = argparse.ArgumentParser(prog="python -m polytopo.models", description="Run ONNX polygon models over rasters.")
    commands = parser.add_subparsers(dest="command", required=True)

    info = commands.add_parser("info", help="print the card and graph of a model")
    info.add_argument("model")
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(handler=_cmd_info)

    zoo = commands.add_parser("zoo", aliases=["list"], help="list the bundled models, or print one model's card")
    zoo.add_argument("name", nargs="?", help="a bundled model's name (none: list them all)")
    zoo.add_argument("--json", action="store_true", help="print JSON instead of text")
    zoo.set_defaults(handler=_cmd_zoo)

    card = commands.add_parser("write-card", help="write card entries into an ONNX file")
    card.add_argument("model")
    card.add_argument("--from", dest="card_json", help="JSON file of key: value entries")
    card.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="one entry; repeatable")
    card.add_argument("--out", help="write to this file instead of replacing MODEL")
    card.add_argument("--overwrite", action="store_true", help="replace OUT when it exists (never an input)")
    card.add_argument("--no-validate", action="store_true", help="skip the check against the graph")
    card.set_defaults(handler=_cmd_write_card)

    run = commands.add_parser("run", help="run a model over a raster or an image set")
    run.add_argument("--model", required=True)
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--raster", help="one raster, written as one layer in its CRS")
    source.add_argument("--images", help="folder, glob pattern or .txt list of images (GeoTIFF, PNG, JPEG)")
    run.add_argument("--out", required=True, help="output .gpkg or .geojson; with --images also .json (COCO predictions)")
    run.add_argument("--gt-images", help="with --images: COCO ground truth whose images[].file_name give the image ids")
    cluster = run.add_mutually_exclusive_group()
    cluster.add_argument("--workers", type=_count, default=0, help="worker processes of a local Dask cluster (0: this process)")
    cluster.add_argument("--scheduler", help="address of a running Dask scheduler, tcp://HOST:PORT")
    run.add_argument("--block-px", type=_positive, help="with --raster: edge of a block's core in model px (default 4096)")
    run.add_argument("--provider", choices=("auto", "cuda", "cpu"), default="auto")
    run.add_argument("--extent", type=_extent, help="xmin,ymin,xmax,ymax in the raster's CRS")
    run.add_argument("--aoi", help="vector file whose polygons limit the processed area")
    run.add_argument("--tile", type=int, help="tile edge in model pixels (overrides the card)")
    run.add_argument("--overlap", type=int, help="tile overlap in model pixels (overrides the card)")
    run.add_argument("--batch", type=int, default=1, help="tiles per session.run call")
    run.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    run.add_argument("--bands", type=_bands, help="comma-separated 1-based raster bands, overrides the card")
    run.add_argument("--threshold", type=float, help="segmentation threshold 0..1 (overrides the card's seg_thresh)")
    run.add_argument("--min-area-px", type=float, help="smallest polygon kept, square model px (overrides the card)")
    run.add_argument("--min-hole-area-px", type=float, help="smallest hole kept, square model px (overrides the card)")
    run.add_argument("--prompts", help="vector file of box or point prompts (promptable models)")
    run.add_argument("--prompt-model", help="instance model whose polygons' boxes prompt a promptable model")
    run.add_argument("--overwrite", action="store_true", help="replace OUT when it exists")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=_cmd_run)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ModelsError, EvaluatorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
