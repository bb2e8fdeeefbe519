"""Load a model: read its card, open its session(s) and check one against the other."""

import os
from dataclasses import dataclass

from .card.model_card import parse_card
from .card.validation import check_card
from .confinement import inside_model_folder
from .decoders.families import PROMPT_FEATURE_ROLES, PROMPT_INPUT_ROLES, PROMPT_OUTPUT_ROLES, family_row
from .errors import ModelCardError
from .card.onnx_metadata import read_metadata_props
from .session import SessionParams, open_session

__all__ = ["LoadedModel", "PromptIO", "SequenceIO", "load_model", "model_from_session"]


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
        Other decoder inputs; those SAM and SAM 2 exports have (``mask_input``
        or ``input_masks``, ``has_mask_input`` or ``has_input_masks``,
        ``orig_im_size`` or ``original_image_size``) are fed neutral values.
    features : tuple of (str, str)
        Encoder output role (``high_res_0``, ``high_res_1``) to the decoder
        input it feeds (SAM 2's high-resolution features).
    """

    embedding: str
    point_coords: str
    point_labels: str
    masks: str
    scores: str
    extra_inputs: tuple = ()
    features: tuple = ()


@dataclass(frozen=True)
class SequenceIO:
    """Shape of a token decoder (vertex-sequence family): one greedy step per call.

    The decoder takes ``memory`` (the encoder output, batch first) and
    ``tokens`` (1, length) int64, the sequence so far padded with PAD, and
    returns ``logits`` (1, length, vocabulary), the next-token logits at every
    position, and ``successors`` (1, vertices, vertices), the successor scores
    of the vertices the tokens encode.

    Attributes
    ----------
    length : int
        Token positions of the decoder (Pix2Poly: 2 · vertices + 1).
    vertices : int
        Vertex slots of the successor scores ((length - 1) / 2).
    """

    length: int
    vertices: int


_SEQUENCE_INPUTS = ("memory", "tokens")
_SEQUENCE_OUTPUTS = ("logits", "successors")


def _sequence_io(card, signature):
    names_in = [spec.name for spec in signature.inputs]
    names_out = [spec.name for spec in signature.outputs]
    if sorted(names_in) != sorted(_SEQUENCE_INPUTS) or any(name not in names_out for name in _SEQUENCE_OUTPUTS):
        raise ModelCardError(
            f"Expected the token decoder {card.sequence_decoder!r} to have the inputs {list(_SEQUENCE_INPUTS)} and the outputs "
            f"{list(_SEQUENCE_OUTPUTS)} but it has inputs {names_in} and outputs {names_out}; export it with those names "
            "(see tools/export/pix2poly.py)."
        )
    tokens = signature.input("tokens")
    length = tokens.shape[-1] if len(tokens.shape) == 2 else None
    if tokens.dtype != "int64" or length is None or length < 3 or length % 2 == 0:
        raise ModelCardError(
            f"Expected the token decoder's input 'tokens' to be int64 of shape (1, 2 * vertices + 1) with a fixed odd length "
            f"but got {tokens.dtype} of shape {list(tokens.shape)}; export it with the sequence padded to its full length."
        )
    vocabulary = signature.output("logits").shape[-1]
    if vocabulary is not None and vocabulary != card.token_bins + 3:
        raise ModelCardError(
            f"Expected logits over polytopo.token_bins + 3 = {card.token_bins + 3} tokens (bins, BOS, EOS, PAD) but the "
            f"token decoder has {vocabulary}; set polytopo.token_bins to {vocabulary - 3}."
        )
    return SequenceIO(length=int(length), vertices=(int(length) - 1) // 2)


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
    sequence_session : ModelSession or None
        The token decoder (vertex-sequence family).
    sequence_io : SequenceIO or None
    """

    path: str
    card: object
    io: object
    session: object
    prompt_session: object = None
    prompt_io: object = None
    sequence_session: object = None
    sequence_io: object = None


_SAM_NEUTRAL_INPUTS = ("mask_input", "has_mask_input", "orig_im_size", "input_masks", "has_input_masks", "original_image_size")


def _prompt_io(card, signature):
    inputs = dict(card.prompt_inputs)
    outputs = dict(card.prompt_outputs)
    names_in = [spec.name for spec in signature.inputs]
    names_out = [spec.name for spec in signature.outputs]
    for role in PROMPT_FEATURE_ROLES:
        if (role in inputs) != bool(card.output_name(role)):
            raise ModelCardError(
                f"Expected encoder feature role {role!r} in both polytopo.outputs and polytopo.prompt_inputs (or in neither) "
                f"but polytopo.outputs maps it to {card.output_name(role)!r} and polytopo.prompt_inputs to {inputs.get(role)!r}; "
                'a SAM 2 card maps e.g. {"high_res_0": "image_features_0"} in both.'
            )
    for role in PROMPT_INPUT_ROLES + tuple(r for r in PROMPT_FEATURE_ROLES if card.output_name(r)):
        if inputs.get(role) not in names_in:
            raise ModelCardError(
                f"Expected the prompt decoder to have an input for role {role!r} named {inputs.get(role)!r} but its "
                f"inputs are {names_in}; set polytopo.prompt_inputs, e.g. "
                '{"embedding": "image_embeddings", "point_coords": "point_coords", "point_labels": "point_labels"}.'
            )
    for role in PROMPT_OUTPUT_ROLES:
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
        features=tuple((role, inputs[role]) for role in PROMPT_FEATURE_ROLES if card.output_name(role)),
    )


_COMPANION_IO = {"prompt_session": ("prompt_io", _prompt_io), "sequence_session": ("sequence_io", _sequence_io)}
"""Each second session's :class:`LoadedModel` field (a family row's ``companion.session_field``): its I/O field and check."""


def _companion_path(card, path):
    """The second ONNX file of ``card``'s family, confined to the folder of ``path``."""
    key = family_row(card.family).companion.key
    name = getattr(card, key.removeprefix("polytopo."))
    companion = inside_model_folder(path, name)
    if companion is None:
        raise ModelCardError(
            f"Expected {key} of {path} to name a file inside the model's folder "
            f"{os.path.dirname(os.path.abspath(path))} but got {name!r}; put the second ONNX file beside "
            "the first and give its name relative to it, e.g. \"decoder.onnx\"."
        )
    return companion


def _companion_io(card, path, sessions):
    """``{io field: I/O}`` of the second session of ``card``'s family (empty without one)."""
    companion = family_row(card.family).companion
    if companion is None:
        return {}
    session = sessions.get(companion.session_field)
    if session is None:
        raise ModelCardError(
            f"Expected a {companion.kind} session for the {card.family} model {path} but got none; "
            f"set {companion.key} to the {companion.kind}'s ONNX file."
        )
    io_field, check = _COMPANION_IO[companion.session_field]
    return {io_field: check(card, session.signature)}


def model_from_session(path, session, prompt_session=None, sequence_session=None, card=None):
    """Build a :class:`LoadedModel` from already-open session objects.

    Parameters
    ----------
    path : str
        Model path (for messages).
    session : object
        Any predictor with ``signature``, ``metadata``, ``report`` and ``run``.
    prompt_session : object, optional
        The prompt decoder predictor (promptable family).
    sequence_session : object, optional
        The token decoder predictor (vertex-sequence family).
    card : ModelCard, optional
        The card already parsed from ``session.metadata``; parsed here when None.

    Returns
    -------
    LoadedModel
    """
    if card is None:
        card = parse_card(session.metadata)
    io = check_card(card, session.signature)
    sessions = {"prompt_session": prompt_session, "sequence_session": sequence_session}
    companion_io = _companion_io(card, path, sessions)
    return LoadedModel(os.fspath(path), card, io, session, **sessions, **companion_io)


def load_model(path, params=SessionParams()):
    """Read the card, open the session and check the card against the graph.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file (for the promptable and vertex-sequence families: the image encoder).
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
    card = parse_card(read_metadata_props(path))
    session = open_session(path, params)
    companions = {}
    companion = family_row(card.family).companion
    if companion is not None:
        decoder_path = _companion_path(card, path)
        read_metadata_props(decoder_path)
        companions[companion.session_field] = open_session(decoder_path, params)
    return model_from_session(path, session, card=card, **companions)
