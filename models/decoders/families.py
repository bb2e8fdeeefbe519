"""The decoder families, one row each: what a card of the family declares and which decoder runs it.

:data:`FAMILY_TABLE` is the one place a family is declared (as Deepness'
``ModelDefinition`` declares its model types): card parsing
(:mod:`polytopo.models.card.model_card`), the checks against the graph
(:mod:`polytopo.models.card.validation`), model loading
(:mod:`polytopo.models.model`) and :func:`polytopo.models.decoders.decoder_for`
read their family's row instead of branching on its name.
"""

from dataclasses import dataclass

from .frame_field import FrameFieldDecoder
from .instance import InstanceDecoder
from .promptable import PromptableDecoder
from .rings import RingsDecoder, VertexGraphDecoder
from .semantic import SemanticDecoder
from .vertex_mask import VertexMaskDecoder
from .vertex_sequence import VertexSequenceDecoder

__all__ = [
    "FAMILIES",
    "FAMILY_TABLE",
    "PROMPT_FEATURE_ROLES",
    "PROMPT_INPUT_ROLES",
    "PROMPT_OUTPUT_ROLES",
    "SAM_PROMPT_INPUTS",
    "SAM_PROMPT_OUTPUTS",
    "SEG_THRESHOLD_FAMILIES",
    "Companion",
    "Family",
    "DEFAULT_FAMILY",
    "family_row",
]

PROMPT_INPUT_ROLES = ("embedding", "point_coords", "point_labels")
"""Prompt-decoder inputs every promptable card needs (SAM's names by default)."""
PROMPT_FEATURE_ROLES = ("high_res_0", "high_res_1")
"""Optional encoder outputs passed on to the prompt decoder (SAM 2's high-resolution features)."""
PROMPT_OUTPUT_ROLES = ("masks", "scores")
"""Prompt-decoder outputs every promptable card needs."""
SAM_PROMPT_INPUTS = {"embedding": "image_embeddings", "point_coords": "point_coords", "point_labels": "point_labels"}
"""Default ``polytopo.prompt_inputs``: role to SAM's decoder input name."""
SAM_PROMPT_OUTPUTS = {"masks": "masks", "scores": "iou_predictions"}
"""Default ``polytopo.prompt_outputs``: role to SAM's decoder output name."""


@dataclass(frozen=True)
class Companion:
    """The second ONNX file a family runs beside the model's own.

    Attributes
    ----------
    key : str
        Card key naming the file (its path relative to the model), required.
    kind : str
        What that file is, for messages (``prompt decoder``, ``token decoder``).
    session_field : str
        Field of :class:`~polytopo.models.model.LoadedModel` holding its session.
    """

    key: str
    kind: str
    session_field: str


@dataclass(frozen=True)
class Family:
    """One decoder family: one row of :data:`FAMILY_TABLE`.

    Attributes
    ----------
    name : str
        Value of ``polytopo.family``.
    decoder : type
        The :class:`~polytopo.models.decoders.base.Decoder` subclass that runs it.
    required, optional : tuple of str
        Output roles of ``polytopo.outputs``.
    example : dict
        A valid card of the family (key to Python value), shown in error messages.
    companion : Companion or None
        The second ONNX file (a prompt session or a token decoder), when the family has one.
    needs_prompts : bool
        The decoder runs only on prompts (boxes or points) given with the run.
    default_role : str or None
        Role given to the graph's only output when the card has no ``polytopo.outputs``.
    class_role : str or None
        Dense output whose channels are the classes (their count is checked
        against ``polytopo.class_thresholds``).
    class_names_per_channel : bool
        ``class_names`` must name one class per channel of ``class_role``.
    image_among_inputs : bool
        The graph may have inputs besides the image, which is its only rank-4 input.
    seg_threshold : bool
        The decoder thresholds a probability map at ``seg_thresh``; the others
        threshold masks, scores or vertices.
    """

    name: str
    decoder: type
    required: tuple
    example: dict
    optional: tuple = ()
    companion: object = None
    needs_prompts: bool = False
    default_role: object = None
    class_role: object = None
    class_names_per_channel: bool = False
    image_among_inputs: bool = False
    seg_threshold: bool = False

    @property
    def roles(self):
        """All output roles of the family, required first."""
        return self.required + self.optional


FAMILY_TABLE = (
    Family(
        name="semantic",
        decoder=SemanticDecoder,
        required=("probabilities",),
        example={
            "model_type": "Segmentor",
            "class_names": {"0": "background", "1": "building"},
            "resolution": 30,
            "tile_size": 512,
            "tiles_overlap": 15,
            "standardization_mean": [0.485, 0.456, 0.406],
            "standardization_std": [0.229, 0.224, 0.225],
            "seg_thresh": 0.5,
            "polytopo.family": "semantic",
            "polytopo.outputs": {"probabilities": "output"},
            "polytopo.input_range": [0, 255],
            "polytopo.bands": [1, 2, 3],
            "polytopo.simplify_tolerance_px": 1.0,
            "polytopo.min_area_px": 16,
            "polytopo.min_hole_area_px": 4,
            "polytopo.baseline": "U-Net + Poly.",
        },
        default_role="probabilities",
        class_role="probabilities",
        class_names_per_channel=True,
        seg_threshold=True,
    ),
    Family(
        name="instance",
        decoder=InstanceDecoder,
        required=("boxes", "scores", "masks"),
        optional=("labels",),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 512,
            "tiles_overlap": 20,
            "det_conf": 0.05,
            "det_iou_thresh": 0.5,
            "polytopo.family": "instance",
            "polytopo.outputs": {"boxes": "boxes", "scores": "scores", "masks": "masks", "labels": "labels"},
            "polytopo.mask_threshold": 0.5,
            "polytopo.baseline": "Mask R-CNN + Poly.",
        },
    ),
    Family(
        name="vertex-mask",
        decoder=VertexMaskDecoder,
        required=("mask", "vertices"),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 512,
            "tiles_overlap": 15,
            "polytopo.family": "vertex-mask",
            "polytopo.outputs": {"mask": "mask", "vertices": "junctions"},
            "polytopo.vertex_threshold": 0.5,
            "polytopo.vertex_snap_radius_px": 3,
            "polytopo.baseline": "HiSup",
        },
        class_role="mask",
        seg_threshold=True,
    ),
    Family(
        name="frame-field",
        decoder=FrameFieldDecoder,
        required=("seg", "frame_field"),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 512,
            "tiles_overlap": 15,
            "standardization_mean": [0.485, 0.456, 0.406],
            "standardization_std": [0.229, 0.224, 0.225],
            "seg_thresh": 0.5,
            "polytopo.family": "frame-field",
            "polytopo.outputs": {"seg": "seg", "frame_field": "crossfield"},
            "polytopo.input_range": [0, 255],
            "polytopo.frame_field_axes": "ij",
            "polytopo.simplify_tolerance_px": 1.0,
            "polytopo.min_area_px": 10,
            "polytopo.baseline": "FFL",
        },
        seg_threshold=True,
    ),
    Family(
        name="rings",
        decoder=RingsDecoder,
        required=("rings", "scores"),
        optional=("labels", "vertex_valid"),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 224,
            "tiles_overlap": 20,
            "det_conf": 0.5,
            "det_iou_thresh": 0.5,
            "polytopo.family": "rings",
            "polytopo.outputs": {"rings": "rings", "scores": "scores"},
            "polytopo.baseline": "Pix2Poly",
        },
    ),
    Family(
        name="vertex-graph",
        decoder=VertexGraphDecoder,
        required=("vertices", "successors"),
        optional=("vertex_scores",),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 320,
            "tiles_overlap": 20,
            "det_conf": 0.5,
            "det_iou_thresh": 0.5,
            "polytopo.family": "vertex-graph",
            "polytopo.outputs": {"vertices": "vertices", "successors": "scores", "vertex_scores": "vertex_scores"},
            "polytopo.vertex_threshold": 0.5,
            "polytopo.baseline": "PolyWorld",
        },
    ),
    Family(
        name="vertex-sequence",
        decoder=VertexSequenceDecoder,
        required=("memory",),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 224,
            "tiles_overlap": 20,
            "det_conf": 0.0,
            "det_iou_thresh": 0.5,
            "polytopo.family": "vertex-sequence",
            "polytopo.outputs": {"memory": "memory"},
            "polytopo.sequence_decoder": "pix2poly_decoder.onnx",
            "polytopo.token_bins": 224,
            "polytopo.token_order": "yx",
            "polytopo.baseline": "Pix2Poly",
        },
        companion=Companion("polytopo.sequence_decoder", "token decoder", "sequence_session"),
    ),
    Family(
        name="promptable",
        decoder=PromptableDecoder,
        required=("embedding",),
        optional=("high_res_0", "high_res_1"),
        example={
            "class_names": {"0": "building"},
            "resolution": 30,
            "tile_size": 1024,
            "polytopo.family": "promptable",
            "polytopo.outputs": {"embedding": "image_embeddings"},
            "polytopo.prompt_decoder": "sam_decoder.onnx",
            "polytopo.prompt_inputs": SAM_PROMPT_INPUTS,
            "polytopo.prompt_outputs": SAM_PROMPT_OUTPUTS,
            "polytopo.mask_threshold": 0.0,
            "polytopo.baseline": "SAM2 + Poly.",
        },
        companion=Companion("polytopo.prompt_decoder", "prompt decoder", "prompt_session"),
        needs_prompts=True,
        image_among_inputs=True,
    ),
)
"""The decoder families the engine runs, one row each."""

FAMILIES = tuple(family.name for family in FAMILY_TABLE)
"""Names of the decoder families, in table order."""

DEFAULT_FAMILY = "semantic"
"""The family of a card that names none (a Deepness segmentation model's)."""

SEG_THRESHOLD_FAMILIES = tuple(family.name for family in FAMILY_TABLE if family.seg_threshold)
"""The families whose decoders threshold a probability map at ``seg_thresh``
(:attr:`~polytopo.models.card.model_card.ModelCard.seg_threshold`)."""

_ROWS = {family.name: family for family in FAMILY_TABLE}


def family_row(name):
    """Return the :class:`Family` row called ``name``.

    Parameters
    ----------
    name : str
        A family name, one of :data:`FAMILIES` (cards are parsed before this is called).

    Returns
    -------
    Family

    Examples
    --------
    >>> family_row("rings").required
    ('rings', 'scores')
    """
    return _ROWS[name]
