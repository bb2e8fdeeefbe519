"""Command line of the inference engine: the parser, ``info``, ``write-card``, and the exit status.

The ``run`` command is carried out by :mod:`~polytopo.models.run_command`.

::

    python -m polytopo.models info MODEL [--json]
    python -m polytopo.models zoo [NAME]
    python -m polytopo.models zoo install NAME [--from FILE_OR_URL] [--dir DIR] [--force]
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
cluster (:mod:`~polytopo.models.raster.block_run`) and an image set one task per
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
from pathlib import Path

from ..core.cluster import local_workers_option
from ..core.errors import PolytopoError
from ..core.interrupts import interrupts_noted
from .card.model_card import example_card
from .decoders.families import DEFAULT_FAMILY, FAMILIES
from .card.card_files import describe_model, format_description, write_card
from .errors import ModelsError
from .work_estimate import DEFAULT_MAX_PIXELS
from .zoo import ZOO_DIR, format_zoo_table, user_model_dir, zoo_model, zoo_models

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


class _StderrProgress:
    """Download progress on stderr: on a terminal one line rewritten every whole percent, else a line per 25 %."""

    def __init__(self, name):
        self.name = name
        self.shown = -1

    def __call__(self, done, total):
        percent = int(100 * done / total) if total else 100
        terminal = sys.stderr.isatty()
        if percent == self.shown or not (terminal or percent % 25 == 0):
            return  # a log file gets 0, 25, 50, 75 and 100 % only
        self.shown = percent
        text = f"{self.name}: {done / 1e6:.1f} of {total / 1e6:.1f} MB ({percent} %)"
        if terminal:
            print("\r" + text, end="\n" if done >= total else "", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)


def _zoo_install(args, names):
    from .zoo.pack import install_model

    if len(names) != 1:
        raise argparse.ArgumentTypeError(f"expected zoo install NAME (one model) but got {' '.join(names) or 'no name'}")
    folder = args.dir if args.dir is not None else user_model_dir()
    model = zoo_model(names[0], folder)
    before = model.path if model.installed else None
    path = install_model(model, folder, args.source, progress=_StderrProgress(model.name), force=args.force)
    if before is not None and path == before and not args.force:
        print(f"{model.name} is already in place and verified: {path}")
    else:
        print(f"{model.name} installed ({model.size_bytes} bytes, SHA-256 verified): {path}")
    return 0


def _cmd_zoo(args):
    words = list(args.words)
    if words[:1] == ["install"]:
        try:
            return _zoo_install(args, words[1:])
        except argparse.ArgumentTypeError as exc:
            print(f"python -m polytopo.models zoo: error: {exc}", file=sys.stderr)
            return 2
    if args.source is not None or args.force:
        print("python -m polytopo.models zoo: error: --from and --force belong to 'zoo install NAME'",
              file=sys.stderr)
        return 2
    if len(words) > 1:
        print(f"python -m polytopo.models zoo: error: expected zoo [NAME] or zoo install NAME but got "
              f"{' '.join(words)}", file=sys.stderr)
        return 2
    folder = args.dir if args.dir is not None else user_model_dir()
    if not words:
        models = zoo_models(folder)
        print(format_zoo_table(models))
        missing = [m.name for m in models if not m.installed]
        print(f"\n{len(models)} models: the bundled ones in {ZOO_DIR}, downloaded ones in {folder}. "
              "'python -m polytopo.models zoo NAME' prints one card"
              + (f"; 'python -m polytopo.models zoo install NAME' installs one of {', '.join(missing)}."
                 if missing else "."))
        return 0
    model = zoo_model(words[0], folder)
    if not model.installed:
        print(f"{model.name}: {model.status}. {model.family} family, {model.baseline}, {model.input}, "
              f"{model.resolution_cm_per_px:g} cm/px, {model.size_bytes} bytes, SHA-256 {model.sha256}\n"
              f"held-out scores: {json.dumps(model.scores)}\n"
              f"release file: {model.url or 'none listed'}\n"
              f"install it with: python -m polytopo.models zoo install {model.name} (into {folder})")
        return 0
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

    zoo = commands.add_parser(
        "zoo", help="list the zoo's models (bundled, installed or not), print the card of one, or install one",
        description="zoo: list the models; zoo NAME: print one card; zoo install NAME: download a model of the "
                    "model pack, check its size and SHA-256 and store it in the user model folder "
                    "($POLYTOPO_MODELS_DIR, else $XDG_DATA_HOME/polytopo/models or ~/.local/share/polytopo/models)")
    zoo.add_argument("words", nargs="*", metavar="NAME | install NAME",
                     help="a model's name: print its card; 'install NAME': install it")
    zoo.add_argument("--from", dest="source", metavar="FILE_OR_URL",
                     help="with install: a downloaded release file (works offline) or another URL")
    zoo.add_argument("--dir", type=Path, help="user model folder (default: $POLYTOPO_MODELS_DIR or the XDG data folder)")
    zoo.add_argument("--force", action="store_true", help="with install: download again even when verified")
    zoo.set_defaults(handler=_cmd_zoo)

    example = commands.add_parser("example-card", help="print a complete example card of a decoder family (JSON)")
    example.add_argument("family", nargs="?", default=DEFAULT_FAMILY, choices=FAMILIES)
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
    with interrupts_noted() as interrupted:
        try:
            return args.handler(args)
        except KeyboardInterrupt:
            pass
        except PolytopoError as exc:
            if not interrupted():  # else the Ctrl-C came back as another error
                print(f"error: {exc}", file=sys.stderr)
                return 1
        except Exception:
            if not interrupted():
                raise
    print("interrupted; no output file was written (a half-written one is removed)", file=sys.stderr)
    return 130
