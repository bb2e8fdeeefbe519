"""Load a model: read its card, open its session(s) and check one against the other."""

import os
from dataclasses import dataclass

from .card import parse_card
from .card_validation import check_card
from .confinement import inside_model_folder
from .errors import ModelCardError
from .onnx_metadata import read_metadata_props
from .session import SessionParams, open_session

__all__ = ["LoadedModel", "PromptIO", "load_model", "model_from_session"]


@dataclass(frozen=True)
class PromptIO:
    """Tensor names of a prompt decoder (promptable family).

    Attributes
    ----------
    embedding, point_coords, point_labels : str
        Decoder inputs: the encoder's embedding, prompt points (batch, n, 2)
        in tile pixels (x, y) and their labels (1 point, 2 box corner
        top-left, 3 box corner bottom-right, as SAM expects).
    masks, scores : str
        Decoder outputs.
    extra_inputs : tuple of str
        Other decoder inputs; those SAM exports have (``mask_input``,
        ``has_mask_input``, ``orig_im_size``) are fed neutral values.
    """

    embedding: str
    point_coords: str
    point_labels: str
    masks: str
    scores: str
    extra_inputs: tuple = ()


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to run.

    Attributes
    ----------
    path : str
    card : ModelCard
    io : ModelIO
    session : ModelSession or any object with ``signature``, ``report`` and ``run``
    prompt_session : ModelSession or None
        The prompt decoder (promptable family).
    prompt_io : PromptIO or None
    """

    path: str
    card: object
    io: object
    session: object
    prompt_session: object = None
    prompt_io: object = None


_SAM_NEUTRAL_INPUTS = ("mask_input", "has_mask_input", "orig_im_size")


def _prompt_io(card, signature):
    inputs = dict(card.prompt_inputs)
    outputs = dict(card.prompt_outputs)
    names_in = [spec.name for spec in signature.inputs]
    names_out = [spec.name for spec in signature.outputs]
    for role in ("embedding", "point_coords", "point_labels"):
        if inputs.get(role) not in names_in:
            raise ModelCardError(
                f"Expected the prompt decoder to have an input for role {role!r} named {inputs.get(role)!r} but its "
                f"inputs are {names_in}; set polytopo.prompt_inputs, e.g. "
                '{"embedding": "image_embeddings", "point_coords": "point_coords", "point_labels": "point_labels"}.'
            )
    for role in ("masks", "scores"):
        if outputs.get(role) not in names_out:
            raise ModelCardError(
                f"Expected the prompt decoder to have an output for role {role!r} named {outputs.get(role)!r} but its "
                f"outputs are {names_out}; set polytopo.prompt_outputs, e.g. "
                '{"masks": "masks", "scores": "iou_predictions"}.'
            )
    extra = tuple(name for name in names_in if name not in inputs.values())
    unsupported = [name for name in extra if name not in _SAM_NEUTRAL_INPUTS]
    if unsupported:
        raise ModelCardError(
            f"Expected prompt decoder inputs among the roles of polytopo.prompt_inputs and {list(_SAM_NEUTRAL_INPUTS)} "
            f"but got {unsupported}; re-export the decoder without them."
        )
    return PromptIO(
        embedding=inputs["embedding"],
        point_coords=inputs["point_coords"],
        point_labels=inputs["point_labels"],
        masks=outputs["masks"],
        scores=outputs["scores"],
        extra_inputs=extra,
    )


def model_from_session(path, session, prompt_session=None):
    """Build a :class:`LoadedModel` from already-open session objects.

    Parameters
    ----------
    path : str
        Model path (for messages).
    session : object
        Any predictor with ``signature``, ``metadata``, ``report`` and ``run``.
    prompt_session : object, optional
        The prompt decoder predictor (promptable family).

    Returns
    -------
    LoadedModel
    """
    card = parse_card(session.metadata)
    io = check_card(card, session.signature)
    prompt_io = None
    if card.family == "promptable":
        if prompt_session is None:
            raise ModelCardError(
                f"Expected a prompt decoder session for the promptable model {path} but got none; "
                "set polytopo.prompt_decoder to the decoder's ONNX file."
            )
        prompt_io = _prompt_io(card, prompt_session.signature)
    return LoadedModel(os.fspath(path), card, io, session, prompt_session, prompt_io)


def load_model(path, params=SessionParams()):
    """Read the card, open the session and check the card against the graph.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file (for the promptable family: the image encoder).
    params : SessionParams
        Provider choice and thread count.

    Returns
    -------
    LoadedModel

    Raises
    ------
    ModelFileError
        Missing or corrupt model file (checked before anything is loaded).
    ModelCardError
        A card key is missing or contradicts the graph.
    ProviderError
        ``cuda`` requested and not usable.
    """
    path = os.fspath(path)
    parse_card(read_metadata_props(path))
    session = open_session(path, params)
    prompt_session = None
    card = parse_card(session.metadata)
    if card.family == "promptable":
        decoder_path = inside_model_folder(path, card.prompt_decoder)
        if decoder_path is None:
            raise ModelCardError(
                f"Expected polytopo.prompt_decoder of {path} to name a file inside the model's folder "
                f"{os.path.dirname(os.path.abspath(path))} but got {card.prompt_decoder!r}; put the decoder's ONNX "
                "file beside the encoder and give its name relative to it, e.g. \"sam_decoder.onnx\"."
            )
        read_metadata_props(decoder_path)
        prompt_session = open_session(decoder_path, params)
    return model_from_session(path, session, prompt_session)
