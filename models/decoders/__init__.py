"""Decoder families; :func:`decoder_for` picks the one a model's card names.

Each family is one row of :data:`~polytopo.models.decoders.families.FAMILY_TABLE`.
"""

from .base import DecodeContext, Decoder, PolygonRecord
from .families import FAMILY_TABLE, Family, family_row
from .frame_field import FrameFieldDecoder
from .instance import InstanceDecoder
from .promptable import PromptableDecoder
from .rings import RingsDecoder, VertexGraphDecoder
from .semantic import SemanticDecoder
from .vertex_mask import VertexMaskDecoder
from .vertex_sequence import VertexSequenceDecoder

__all__ = [
    "DECODERS",
    "FAMILY_TABLE",
    "DecodeContext",
    "Decoder",
    "Family",
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
    "family_row",
]

DECODERS = {family.name: family.decoder for family in FAMILY_TABLE}
"""Family name to decoder class (read from :data:`FAMILY_TABLE`)."""


def decoder_for(model, context, prompts=None):
    """Create the decoder of ``model``'s family.

    Parameters
    ----------
    model : LoadedModel
    context : DecodeContext
    prompts : sequence of Prompt, optional
        Required by the families that need prompts (promptable), ignored otherwise.

    Returns
    -------
    Decoder
    """
    return family_row(model.card.family).decoder.for_model(context, model, prompts)
