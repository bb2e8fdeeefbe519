"""The models the dock offers: the bundled zoo with one line per model, and a model's channel count."""

from dataclasses import dataclass

from ...models import ModelsError, describe_model

__all__ = ["ZooChoice", "model_channels", "zoo_choices"]


@dataclass(frozen=True)
class ZooChoice:
    """One bundled model as the dock lists it.

    Attributes
    ----------
    name : str
    path : str
        The ``.onnx`` file.
    summary : str
        Baseline, input and the held-out scores of the zoo index, one line.
    """

    name: str
    path: str
    summary: str


def _score(value):
    return "–" if value is None else f"{value:.3f}"


def zoo_choices():
    """The bundled models, in zoo order; empty when the zoo cannot be read.

    Returns
    -------
    list of ZooChoice
    """
    try:
        from ...models.zoo import ZooError, zoo_models
    except ImportError:
        return []
    try:
        models = zoo_models()
    except ZooError:
        return []
    choices = []
    for model in models:
        scores = model.scores
        held_out = (f"held-out {scores.get('heldout', '?')}: AP50 {_score(scores.get('AP50'))}, Hole-F1 "
                    f"{_score(scores.get('Hole-F1'))}, Topo-EM {_score(scores.get('Topo-EM'))}")
        choices.append(ZooChoice(model.name, str(model.path),
                                 f"{model.baseline} · {model.input} · {model.resolution_cm_per_px:g} cm/px · "
                                 f"{held_out}"))
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
