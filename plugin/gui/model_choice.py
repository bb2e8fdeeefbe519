"""The models the dock offers: the zoo with one line per model (installed or not), and a model's channel count."""

from dataclasses import dataclass

from ...evaluator.tables.metric_table import metric_names
from ...models import ModelsError, describe_model

__all__ = ["SHOWN_SCORES", "ZooChoice", "model_channels", "zoo_choices"]

SHOWN_SCORES = metric_names("AP50", "Hole-F1", "Topo-EM")
"""Held-out scores of the zoo index shown in each model's line, in this order."""


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
