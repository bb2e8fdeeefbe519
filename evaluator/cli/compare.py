"""Command line: ``python -m polytopo.evaluator compare --gt GT --pred NAME=FILE [...] --out DIR``.

Scores every method against the same ground truth with the same profile and parameters
and writes the comparison (:func:`.compare.compare_to_folder`): the methods are read and
evaluated one at a time, each method's folder written as soon as it is scored. On a
cluster, for a ``paper``-like profile and COCO JSON files, the workers read them
(:func:`.api.evaluate_files`; the ground truth indexed once). Exit statuses as for a
single evaluation (:mod:`.cli`).
"""

import argparse
import sys
from pathlib import Path

from .shared import add_cluster_options, resolved_workers, run_guarded, workers_read_inputs
from ...core.errors import InputFormatError, InvalidParameterError
from ..tables.profiles import PROFILE_NAMES, profiles_help

__all__ = ["build_parser", "main", "run"]


def _method(text):
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE (e.g. HiSup=hisup.json) but got {text!r}")
    return name, Path(path)


def build_parser():
    """The argument parser of ``compare``."""
    parser = argparse.ArgumentParser(
        prog="python -m polytopo.evaluator compare",
        description="Score several methods against one ground truth and write the paper's Table 3 for them "
                    "(table.csv/md/tex), 95%% image-level bootstrap intervals, a paired bootstrap against the best "
                    "method per headline metric, the simple-to-complex and WrongTopo figures with one curve per "
                    "method, and each method's full output in OUT/NAME/.")
    parser.add_argument("--gt", required=True, type=Path, help="reference (ground truth): COCO JSON or vector layer")
    parser.add_argument("--pred", required=True, action="append", type=_method, metavar="NAME=FILE",
                        help="a method's predictions (repeat for each method); NAME also names its output folder")
    parser.add_argument("--out", type=Path, default=Path("polytopo-comparison"),
                        help="output folder (default: ./polytopo-comparison), moved into place when complete")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default=PROFILE_NAMES[0],
                        help="metric definitions; " + profiles_help("; "))
    parser.add_argument("--bootstrap", type=int, dest="bootstrap_resamples",
                        help="image-level bootstrap resamples, also of the paired bootstrap (default 500, 0 = off)")
    parser.add_argument("--seed", type=int, dest="bootstrap_seed", help="bootstrap random seed (default 0)")
    parser.add_argument("--pixel-size", type=float, help="map units per pixel (vector layers only)")
    parser.add_argument("--default-score", type=float, help="score given to predictions that have none")
    parser.add_argument("--score-field", help="prediction attribute holding the score (vector layers)")
    parser.add_argument("--image-field", help="attribute that groups features into images (vector layers)")
    parser.add_argument("--drop-degenerate-rings", action="store_true",
                        help="skip COCO records with fewer than 3 distinct points (as the public evaluator does)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    parser.add_argument("--no-gpkg", action="store_true", help="skip each method's GeoPackage")
    parser.add_argument("--quiet", action="store_true", help="no table on stdout")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on failure")
    add_cluster_options(parser)
    return parser


def run(args):
    """Run one comparison from parsed arguments; returns the output folder."""
    from ..run.api import load_inputs
    from ...core.cluster import client_starting
    from ..run.compare import check_method_name, compare_to_folder, format_markdown

    names = [check_method_name(name) for name, _ in args.pred]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InvalidParameterError(f"Expected each method name once but got {repeated[0]!r} "
                                    f"{names.count(repeated[0])} times; give every --pred its own NAME")
    options = {"default_score": args.default_score, "score_field": args.score_field, "image_field": args.image_field,
               "pixel_size": args.pixel_size, "drop_degenerate": args.drop_degenerate_rings}
    overrides = {key: getattr(args, key) for key in ("bootstrap_resamples", "bootstrap_seed")
                 if getattr(args, key) is not None}
    workers = resolved_workers(args, [args.gt, *(path for _, path in args.pred)])
    on_workers = _read_on_workers(args, workers, overrides)
    for _, path in args.pred[0 if on_workers else 1:]:  # else the first is read at once, the others when needed
        _check_exists(path)
    common = {"profile": args.profile, "progress": None if args.quiet else _print_progress,
              "overwrite": args.overwrite, "plots": not args.no_plots, "geopackage": not args.no_gpkg,
              "inputs": [args.gt, *(path for _, path in args.pred)], **overrides}
    with client_starting(workers, args.scheduler) as started_client:  # the cluster starts while loading
        if on_workers:
            from ..run.read_on_workers import ground_truth_indexed_once

            client = started_client()
            with ground_truth_indexed_once():
                comparison = compare_to_folder(None, args.pred, args.out, client=client,
                                               evaluate_method=_evaluated_on_workers(args, client, options,
                                                                                     overrides),
                                               **common)
        else:
            gt_set, first, frame = load_inputs(args.gt, args.pred[0][1], **options)
            pending = _one_at_a_time(args.pred[0][0], first, args.pred[1:],
                                     lambda path: load_inputs(args.gt, path, reference=(gt_set, frame), **options)[1])
            del first  # the generator holds the first method until it is evaluated, then lets it go
            comparison = compare_to_folder(gt_set, pending, args.out, client=started_client(), frame=frame,
                                           threads=args.threads, **common)
    if not args.quiet:
        print(format_markdown(comparison))
        print(f"wrote {args.out}/ (table.csv, table.md, table.tex, paired_bootstrap.json, figures, one folder "
              "per method)")
    return args.out


def _print_progress(name):
    print(f"evaluating {name} ...", file=sys.stderr)


def _read_on_workers(args, workers, overrides):
    """Whether the cluster's workers read the methods' files (:func:`.api.evaluate_files`), not this process.

    As for a single evaluation (:func:`.shared.workers_read_inputs`), when every input is
    COCO-style JSON (by its ``.json`` name): the comparison's outputs then need no map frame.
    """
    from ..tables.params import params_for

    return (workers_read_inputs(args, workers, ("score_field", "image_field", "pixel_size"),
                                params_for(args.profile, **overrides))
            and all(Path(path).suffix.lower() == ".json" for path in [args.gt, *(p for _, p in args.pred)]))


def _evaluated_on_workers(args, client, options, overrides):
    """``evaluate(path)``: one method's evaluation, its files read by the workers where they can.

    A method the workers cannot read (:func:`.api.evaluate_files` gives None: a file the
    index cannot place, or the workers do not see) is read here, with the ground truth,
    which is then kept for the methods after it.
    """
    from ..outputs.record_parts import parts_request
    from ..run.api import evaluate, evaluate_files, load_inputs

    read_here = {}

    def evaluate_method(path):
        evaluation = evaluate_files(args.gt, path, profile=args.profile, client=client,
                                    record_parts=parts_request(None, not args.no_gpkg, client),
                                    default_score=args.default_score, drop_degenerate=args.drop_degenerate_rings,
                                    **overrides)
        if evaluation is not None:
            return evaluation
        gt_set, pred_set, frame = load_inputs(args.gt, path, reference=read_here.get("gt"), **options)
        read_here["gt"] = gt_set, frame
        return evaluate(gt_set, pred_set, profile=args.profile, client=client,
                        record_parts=parts_request(frame, not args.no_gpkg), **overrides)

    return evaluate_method


def _one_at_a_time(first_name, first_set, rest, load):
    """``(name, predictions)`` of each method, reading each when its evaluation starts."""
    yield first_name, first_set
    del first_set
    for name, path in rest:
        yield name, load(path)


def _check_exists(path):
    """Refuse a missing method file before any method is evaluated (a GDAL ``/vsi`` path is left to the reader)."""
    if not str(path).startswith("/vsi") and not path.exists():
        raise InputFormatError(f"{path}: file not found; check the --pred NAME=FILE paths")


def main(argv=None):
    """Entry point of ``compare``; returns the process exit status."""
    args = build_parser().parse_args(sys.argv[2:] if argv is None else argv)
    return run_guarded(run, args)
