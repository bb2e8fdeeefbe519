"""Command line: retrain, re-export and re-score the bundled models.

::

    python -m polytopo.training all                 train, export and score every model
    python -m polytopo.training NAME [NAME ...]     the same for the named models
    python -m polytopo.training evaluate [NAME ...] score the exported models again
    python -m polytopo.training list                the model names and recipes
    python -m polytopo.training calibrate NAME      choose NAME's threshold on the validation ground
                                                    only (and its courtyard reach where the recipe
                                                    lists candidates), write it into the card, then
                                                    score it
    python -m polytopo.training soup NAME FILE ...  average the models FILE ... (NAME's ``soup_of``,
                                                    one network) into NAME, then score it
    python -m polytopo.training ensemble NAME FILE ...
                                                    run the models FILE ... (NAME's ``ensemble_of``)
                                                    side by side, outputs averaged, as NAME; score it

Options: ``--threads N`` (PyTorch and onnxruntime CPU threads, default 2),
``--work-dir DIR`` (mosaics, checkpoints, held-out rasters; default a new
private folder, mode 0700, ``polytopo-training-*`` in the system's temporary
directory, made for each run and named in the log),
``--zoo-dir DIR`` and ``--readme FILE`` (default: the package's own),
``--augmentation NAME`` (train with that strength of :data:`.augment.AUGMENTATIONS`
instead of the recipe's; the card says which), ``--steps N`` (instead of the
recipe's; the card says how many), ``--checkpoint-every N`` (also keep
``NAME-stepN.pt`` checkpoints), ``--export-only CHECKPOINT`` (no training:
export that checkpoint, then score it), ``--resume CHECKPOINT`` (start from
a checkpoint's weights with a second schedule of ``--steps`` and
``--learning-rate``), ``--time-budget SECONDS`` (stop then, the schedule
following the elapsed share of it), ``--separate-touching yes|no``
(``boundary3`` head: which output the graph gets), ``--test-time-flips 1|2|4``
(mirrored views of each tile the graph averages).
Training needs PyTorch (a development dependency) and the shared data folder
(``$POLYTOPO_SHARED/data`` or ``<repository>/../shared/data``).

Exit status: 0 on success, 1 on a :class:`~polytopo.models.errors.ModelsError`
(the message is printed to stderr), 2 on a usage error.
"""

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ..models.errors import ModelsError
from .augment import AUGMENTATIONS
from .errors import TrainingError
from .model_files import MAX_MODEL_BYTES
from .readme import checked_readme
from .recipes import RECIPES, recipe
from .shared_data import find_shared_data

__all__ = ["DEFAULT_README", "DEFAULT_ZOO_DIR", "build_parser", "main", "private_work_dir", "run"]

_MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
DEFAULT_ZOO_DIR = _MODELS_DIR / "zoo"
DEFAULT_README = _MODELS_DIR / "README.md"


def private_work_dir():
    """A new folder only this user can enter (``mkdtemp``, mode 0700) for one run's files.

    A fixed name in the shared temporary directory would let another user plant
    checkpoints or mosaics there before the run.
    """
    return Path(tempfile.mkdtemp(prefix="polytopo-training-"))


def _grids(text):
    """``--member-grids``: comma-separated positive ground sizes in cm, e.g. ``30,21``."""
    try:
        grids = tuple(float(item) for item in text.split(","))
    except ValueError:
        grids = ()
    if not grids or not all(grid > 0 for grid in grids):
        raise argparse.ArgumentTypeError(f"expected positive ground sizes in cm separated by commas (e.g. 30,21) "
                                         f"but got {text!r}")
    return grids


def _reaches(text):
    """``--courtyard-reaches``: comma-separated reaches in grid px, each >= 0 (0: no gate), e.g. ``0,8``."""
    try:
        reaches = tuple(int(item) for item in text.split(","))
    except ValueError:
        reaches = ()
    if not reaches or min(reaches) < 0 or len(set(reaches)) != len(reaches):
        raise argparse.ArgumentTypeError(f"expected different whole numbers of pixels >= 0 separated by commas "
                                         f"(e.g. 0,8; 0: no courtyard gate) but got {text!r}")
    return reaches


def build_parser():
    """The argument parser of ``python -m polytopo.training``."""
    parser = argparse.ArgumentParser(
        prog="python -m polytopo.training",
        description="Retrain, re-export and re-score the bundled models (needs PyTorch and the shared data).",
    )
    parser.add_argument("what", nargs="+", help="all | evaluate [NAME ...] | calibrate NAME | soup NAME FILE ... | ensemble NAME FILE ... | list | "
                             "NAME [NAME ...]")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for PyTorch and onnxruntime (default 2)")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="folder for intermediate files (default: a new private temporary folder)")
    parser.add_argument("--zoo-dir", type=Path, default=DEFAULT_ZOO_DIR, help="folder of the exported models")
    parser.add_argument("--readme", type=Path, default=DEFAULT_README, help="README whose tables are regenerated")
    parser.add_argument("--augmentation", choices=sorted(AUGMENTATIONS), default=None,
                        help="training-crop augmentation instead of the recipe's (basic: flips, gain and shift; "
                             "strong: also scale, rotation, saturation, blur, JPEG and noise)")
    parser.add_argument("--steps", type=int, default=None,
                        help="optimizer steps instead of the recipe's (a short smoke run; the card says how many)")
    parser.add_argument("--checkpoint-every", type=int, default=0,
                        help="also save the checkpoint every N steps (work-dir/checkpoints/NAME-stepN.pt)")
    parser.add_argument("--separate-touching", choices=("yes", "no"), default=None,
                        help="boundary3 head: export the grown interior (yes, touching buildings apart) or the whole "
                             "foreground (no) instead of the recipe's choice")
    parser.add_argument("--test-time-flips", type=int, choices=(1, 2, 4), default=None,
                        help="views of each tile the exported graph averages instead of the recipe's (2: also "
                             "mirrored left-right; 4: also upside down and both; costs that many times the CPU)")
    parser.add_argument("--member-grids", type=_grids, default=None, metavar="CM,CM,...",
                        help="ensemble: ground size (cm) of the pixel each member reads, in the members' order, "
                             "instead of the recipe's (the graph resizes the tile to it and the member's output back)")
    parser.add_argument("--courtyard-reaches", type=_reaches, default=None, metavar="PX,PX,...",
                        help="courtyard4 head: the courtyard gate's reaches (grid px) that calibrate chooses among "
                             "on validation instead of the recipe's; 0: no gate (the grown interior everywhere)")
    parser.add_argument("--half-stored", choices=("yes", "no"), default=None,
                        help="ensemble: store the weights as float16 (yes) or float32 (no) instead of the recipe's "
                             "choice; the arithmetic is float32 either way")
    parser.add_argument("--max-model-bytes", type=int, default=MAX_MODEL_BYTES, metavar="BYTES",
                        help=f"refuse (and remove) a model file this large or larger (default {MAX_MODEL_BYTES}, "
                             "what fits the plugin ZIP; larger only to compare with a file that cannot ship)")
    parser.add_argument("--learning-rate", type=float, default=None, help="peak learning rate instead of the recipe's")
    parser.add_argument("--rendered-share", type=float, default=None, metavar="SHARE",
                        help="share (0-1) of the training crops drawn from the rendered OSM courtyard cities instead "
                             "of the recipe's (the card records it)")
    parser.add_argument("--resume", type=Path, default=None, metavar="CHECKPOINT",
                        help="start from this checkpoint's weights (a run cut short); --steps and --learning-rate "
                             "then give a second warm-up and cosine schedule")
    parser.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                        help="stop after this many seconds of steps, the learning-rate schedule following the "
                             "elapsed share of it (a loaded machine still ends annealed on time)")
    parser.add_argument("--export-only", type=Path, default=None, metavar="CHECKPOINT",
                        help="skip training: export this checkpoint of the named model, then score it")
    return parser


def overridden(current, args):
    """``current`` with the command line's overrides (augmentation, steps, learning rate, rendered share, output)."""
    if args.augmentation is not None:
        current = replace(current, augmentation=AUGMENTATIONS[args.augmentation])
    if getattr(args, "steps", None):
        current = replace(current, steps=args.steps)
    if getattr(args, "learning_rate", None):
        current = replace(current, learning_rate=args.learning_rate)
    if getattr(args, "rendered_share", None) is not None:
        current = replace(current, rendered_share=args.rendered_share)
    if getattr(args, "separate_touching", None):
        current = replace(current, separate_touching=args.separate_touching == "yes")
    if getattr(args, "test_time_flips", None):
        current = replace(current, test_time_flips=args.test_time_flips)
    if getattr(args, "member_grids", None):
        current = replace(current, member_grids_cm=args.member_grids)
    if getattr(args, "courtyard_reaches", None):
        current = replace(current, courtyard_reaches_px=args.courtyard_reaches)
    if getattr(args, "half_stored", None):
        current = replace(current, half_stored=args.half_stored == "yes")
    return current


def run(names, args, train_models=True, log=print):
    """Train and export (when ``train_models``) and then score each named model.

    Returns
    -------
    dict of str to dict
        Wall seconds of each phase per model.
    """
    from .evaluate_zoo import evaluate_model

    shared = find_shared_data()
    if args.work_dir is None:
        args.work_dir = private_work_dir()
        log(f"intermediate files go to {args.work_dir}")
    timings = {}
    for name in names:
        current = overridden(recipe(name), args)
        timings[name] = {}
        if train_models:
            from .export import export_model

            checkpoint = getattr(args, "export_only", None)
            if checkpoint is None:
                from .train import train

                result = train(current, shared, args.work_dir, threads=args.threads, log=log,
                               checkpoint_every=getattr(args, "checkpoint_every", 0),
                               resume=getattr(args, "resume", None),
                               time_budget=getattr(args, "time_budget", None))
                timings[name]["train"] = round(result.seconds, 1)
                checkpoint = result.checkpoint
            exported = export_model(current, checkpoint, args.zoo_dir, args.max_model_bytes)
            timings[name]["export"] = round(exported.seconds, 1)
            log(f"{name}: exported {exported.path.name} ({exported.size_bytes / 1e6:.2f} MB)")
        started = time.perf_counter()
        evaluate_model(current, shared, args.work_dir, args.zoo_dir, args.readme, threads=args.threads, log=log)
        timings[name]["evaluate"] = round(time.perf_counter() - started, 1)
        log(f"{name}: wall seconds {timings[name]}")
    return timings


def main(argv=None):
    """Entry point; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    what = args.what
    if args.threads < 1:
        parser.error(f"expected --threads >= 1 but got {args.threads}")
    try:
        if what == ["list"]:
            for name, item in RECIPES.items():
                print(f"{name}: {item.family}, {item.summary}")
            return 0
        checked_readme(args.readme)
        if what[0] == "calibrate":
            from .calibrate import calibrate_courtyard_reach, calibrate_threshold

            names = what[1:]
            if not names:
                parser.error("calibrate needs a model name")
            shared = find_shared_data()
            if args.work_dir is None:
                args.work_dir = private_work_dir()
            for name in names:
                chosen = overridden(recipe(name), args)
                if chosen.courtyard_reaches_px:
                    calibrate_courtyard_reach(chosen, shared, args.work_dir, args.zoo_dir, args.max_model_bytes,
                                              threads=args.threads)
                    continue
                calibrate_threshold(args.zoo_dir / f"{name}.onnx", shared, args.work_dir, threads=args.threads,
                                    holes=chosen.courtyards, places=chosen.validation_places)
            run(names, args, train_models=False)
            return 0
        if what[0] in ("soup", "ensemble"):
            from .combined import make_combined

            if len(what) < 2:
                parser.error(f"{what[0]} needs a model name and the model files it combines")
            chosen = overridden(recipe(what[1]), args)
            if chosen.combination != what[0]:
                raise TrainingError(f"{what[1]} is not a model {what[0]} (its recipe has no {what[0]}_of).")
            made = make_combined(chosen, what[2:], args.zoo_dir, args.max_model_bytes)
            print(f"{what[1]}: combined {len(what) - 2} models into {made.path} ({made.size_bytes / 1e6:.2f} MB)")
            run(what[1:2], args, train_models=False)
            return 0
        if what[0] == "evaluate":
            names = what[1:] or list(RECIPES)
            for name in names:
                recipe(name)
            run(names, args, train_models=False)
            return 0
        names = [name for name, item in RECIPES.items() if not item.members] if what == ["all"] else what
        for name in names:
            chosen = recipe(name)
            if chosen.members:
                raise TrainingError(f"{name} is a model {chosen.combination} of {list(chosen.members)}, not trained: "
                                    f"make it with python -m polytopo.training {chosen.combination} {name} "
                                    + " ".join(f"{item}.onnx" for item in chosen.members))
        run(names, args)
        return 0
    except ModelsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
