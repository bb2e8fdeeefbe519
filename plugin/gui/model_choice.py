"""What the dock offers to vectorize with: the models and the execution providers.

The zoo with one line per model (installed or not), a model's card in one line and its
channel count, and which onnxruntime execution providers can run here (and why CUDA
cannot, when it cannot).
"""

import importlib.metadata
from dataclasses import dataclass

from ...evaluator.tables.metric_table import metric_names
from ...models import ModelsError, describe_model, read_card
from ...models.session import import_onnxruntime

__all__ = ["SHOWN_SCORES", "ZooChoice", "card_summary", "model_channels", "probe_providers", "provider_availability",
           "zoo_choices"]

SHOWN_SCORES = metric_names("AP50", "Hole-F1", "Topo-EM")
"""Held-out scores of the zoo index shown in each model's line, in this order."""
_CUDA = "CUDAExecutionProvider"


@dataclass(frozen=True)
class ZooChoice:
    """One zoo model as the dock lists it.

    Attributes
    ----------
    name : str
    path : str
        The ``.onnx`` file (where it will be once installed, for a model of the pack).
    summary : str
        Baseline, input and the held-out scores of the zoo index, one line; for a model
        that is not installed it starts with ``Not installed`` and the download size.
    installed : bool
        Whether the file is in place (bundled or downloaded).
    """

    name: str
    path: str
    summary: str
    installed: bool = True


def _score(value):
    return "–" if value is None else f"{value:.3f}"


def zoo_choices(folder=None):
    """The zoo's models, installed or not, in zoo order; empty when the zoo cannot be read.

    Parameters
    ----------
    folder : path-like, optional
        Folder of downloaded models; defaults to the QGIS profile's
        (:func:`~polytopo.plugin.runs.model_folder.profile_model_dir`).

    Returns
    -------
    list of ZooChoice
    """
    try:
        from ...models.zoo import HELD_OUT_KEY, ZooError, zoo_models
    except ImportError:
        return []
    if folder is None:
        from ..runs.model_folder import profile_model_dir

        folder = profile_model_dir()
    try:
        models = zoo_models(folder)
    except ZooError:
        return []
    choices = []
    for model in models:
        scores = model.scores
        held_out = f"held-out {scores.get(HELD_OUT_KEY, '?')}: " + ", ".join(
            f"{name} {_score(scores.get(name))}" for name in SHOWN_SCORES)
        status = "" if model.installed else f"Not installed ({model.size_bytes / 1e6:.1f} MB download) · "
        choices.append(ZooChoice(model.name, str(model.path),
                                 f"{status}{model.baseline} · {model.input} · {model.resolution_cm_per_px:g} cm/px · "
                                 f"{held_out}", model.installed))
    return choices


def model_channels(path):
    """Input channels of the ONNX model at ``path`` (its graph checked against its card).

    Returns
    -------
    int or None
        None when the file is missing or is not a usable model (the card line says why).
    """
    if not path:
        return None
    try:
        io = describe_model(path)["io"]
    except ModelsError:
        return None
    return None if io is None else int(io["channels"])


def card_summary(path, read=read_card):
    """Describe the model card of an ONNX file in one line.

    Parameters
    ----------
    path : str
        ONNX file; empty for none.
    read : callable
        ``read(path) -> ModelCard`` (:func:`polytopo.models.read_card`).

    Returns
    -------
    text : str
        ``family · GSD · classes · licence``, or the reason the card is unusable.
    ok : bool
        Whether the model can be run.
    """
    if not path:
        return "Choose an ONNX model file.", False
    try:
        card = read(path)
    except ModelsError as exc:
        return f"This model cannot be used: {exc}", False
    gsd = ("native raster resolution" if card.resolution_cm_per_px is None
           else f"GSD {card.resolution_cm_per_px:g} cm/px")
    classes = "classes: " + ", ".join(card.class_names) if card.class_names else "no class names"
    licence = card.licence or "licence not stated"
    return f"{card.family} family · {gsd} · {classes} · {licence}", True


def _gpu_package_installed():
    try:
        importlib.metadata.distribution("onnxruntime-gpu")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def probe_providers():
    """Return what the installed onnxruntime offers.

    Returns
    -------
    available : list of str or None
        ``onnxruntime.get_available_providers()``; None without onnxruntime.
    gpu_package : bool
        Whether the ``onnxruntime-gpu`` distribution is installed.
    """
    try:
        onnxruntime = import_onnxruntime()
    except ModelsError:
        return None, _gpu_package_installed()
    return list(onnxruntime.get_available_providers()), _gpu_package_installed()


def provider_availability(available, gpu_package):
    """Say which execution providers can run, and why CUDA cannot when it cannot.

    Parameters
    ----------
    available : list of str or None
        ``onnxruntime.get_available_providers()``; None when onnxruntime is missing.
    gpu_package : bool
        Whether ``onnxruntime-gpu`` is installed.

    Returns
    -------
    str

    Examples
    --------
    >>> provider_availability(["CPUExecutionProvider"], False)
    'Available: CPU. CUDA unavailable: onnxruntime-gpu not installed.'
    >>> provider_availability(["CUDAExecutionProvider", "CPUExecutionProvider"], True)
    'Available: CUDA, CPU. auto runs on CUDA.'
    """
    if available is None:
        return "onnxruntime is not installed: vectorization cannot run (install it from the dependency message)."
    names = ", ".join(name.replace("ExecutionProvider", "") for name in available)
    if _CUDA in available:
        return f"Available: {names}. auto runs on CUDA."
    if gpu_package:
        return (f"Available: {names}. CUDA unavailable: no CUDA provider in this onnxruntime-gpu build "
                "(its CUDA libraries did not load).")
    return f"Available: {names}. CUDA unavailable: onnxruntime-gpu not installed."
