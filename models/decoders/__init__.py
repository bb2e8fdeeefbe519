"""Decoder families; :func:`decoder_for` picks the one a model's card names."""

from .base import DecodeContext, Decoder, PolygonRecord
from .frame_field import FrameFieldDecoder
from .instance import InstanceDecoder
from .promptable import PromptableDecoder
from .rings import RingsDecoder, VertexGraphDecoder
from .semantic import SemanticDecoder
from .vertex_mask import VertexMaskDecoder
from .vertex_sequence import VertexSequenceDecoder

__all__ = [
    "DECODERS",
    "DecodeContext",
    "Decoder",
    "FrameFieldDecoder",
    "InstanceDecoder",
    "PolygonRecord",
    "PromptableDecoder",
    "RingsDecoder",
    "SemanticDecoder",
    "VertexGraphDecoder",
    "VertexMaskDecoder",
    "VertexSequenceDecoder",
    "decoder_for",
]

DECODERS = {
    decoder.family: decoder
    for decoder in (
        SemanticDecoder, InstanceDecoder, VertexMaskDecoder, FrameFieldDecoder, RingsDecoder, VertexGraphDecoder,
        VertexSequenceDecoder, PromptableDecoder,
    )
}
"""Family name to decoder class."""


def decoder_for(model, context, prompts=None):
    """Create the decoder of ``model``'s family.

    Parameters
    ----------
    model : LoadedModel
    context : DecodeContext
    prompts : sequence of Prompt, optional
        Required by the promptable family, ignored otherwise.

    Returns
    -------
    Decoder
    """
    if model.card.family == "promptable":
        return PromptableDecoder(context, model, prompts)
    if model.card.family == "vertex-sequence":
        return VertexSequenceDecoder(context, model)
    return DECODERS[model.card.family](context)
