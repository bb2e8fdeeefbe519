"""Command line of the inference engine: the parser, ``info``, ``write-card``, and the exit status.

The ``run`` command is carried out by :mod:`~polytopo.models.run_command`.

::

    python -m polytopo.models info MODEL [--json]
    python -m polytopo.models zoo [NAME]
    python -m polytopo.models example-card [FAMILY]
    python -m polytopo.models write-card MODEL [--from CARD.json] [--set KEY=JSON ...] [--out OUT.onnx] [--overwrite]
        [--no-validate]
    python -m polytopo.models run --model M.onnx --raster R.tif --out OUT.gpkg [--provider auto|cuda|cpu]
        [--extent xmin,ymin,xmax,ymax] [--aoi AOI.gpkg] [--tile PX] [--overlap PX] [--batch N] [--threads N]
        [--bands 1,2,3] [--threshold T] [--min-area-px A] [--min-hole-area-px A] [--prompts P.gpkg | --prompt-model DETECTOR.onnx] [--overwrite] [--quiet]
        [--max-pixels N]
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

from ..evaluator.cluster import local_workers_option
from ..evaluator.errors import EvaluatorError
from .card import FAMILIES, example_card
from .card_io import describe_model, format_description, write_card
from .errors import ModelsError
from .work_estimate import DEFAULT_MAX_PIXELS
from .zoo import ZOO_DIR, format_zoo_table, zoo_model, zoo_models

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


def _pixel_limit(text):
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not (math.isfinite(value) and value >= 1):
        raise argparse.ArgumentTypeError(f"expected a number of pixels >= 1 such as 4e9, got {text!r}")
    return int(value)


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


def _cmd_zoo(args):
    if args.name is None:
        models = zoo_models()
        print(format_zoo_table(models))
        print(f"\n{len(models)} bundled models in {ZOO_DIR}; 'python -m polytopo.models zoo NAME' prints one card.")
        return 0
    model = zoo_model(args.name)
    print(format_description(describe_model(model.path)))
    return 0


def _cmd_example_card(args):
    print(json.dumps(example_card(args.family), indent=2))
    return 0


def build_parser():
    """Return the argument parser of ``python -m polytopo.models``."""
    parser = argparse.ArgumentParser(prog="python -m polytopo.models", description="Run ONNX polygon models over rasters.")
    commands = parser.add_subparsers(dest="command", required=True)

    info = commands.add_parser("info", help="print the card and graph of a model")
    info.add_argument("model")
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(handler=_cmd_info)

    zoo = commands.add_parser("zoo", help="list the bundled models, or print the card of one")
    zoo.add_argument("name", nargs="?", help="a bundled model's name: print its card")
    zoo.set_defaults(handler=_cmd_zoo)

    example = commands.add_parser("example-card", help="print a complete example card of a decoder family (JSON)")
    example.add_argument("family", nargs="?", default="semantic", choices=FAMILIES)
    example.set_defaults(handler=_cmd_example_card)

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
    cluster.add_argument("--workers", type=local_workers_option, default=0,
                         help="worker processes of a local Dask cluster (0: this process; at most 4 per core)")
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
    run.add_argument("--overwrite", action="store_true",
                     help="replace OUT when it exists (an existing GeoPackage keeps its other layers)")
    run.add_argument("--max-pixels", type=_pixel_limit, default=DEFAULT_MAX_PIXELS,
                     help=f"refuse a processed area of more model-grid pixels, with the estimate of the work "
                          f"(default {DEFAULT_MAX_PIXELS:.0e})")
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
    except KeyboardInterrupt:
        print("interrupted; no output file was written (a half-written one is removed)", file=sys.stderr)
        return 130
