"""Model cards: the ONNX ``metadata_props`` that tell the engine how to run a model.

Two sets of keys are read, every value being JSON text:

* the keys of the Deepness QGIS plugin, so that a Deepness segmentation model
  runs unchanged: ``model_type``, ``class_names``, ``resolution`` (cm/px),
  ``tile_size`` (px), ``tiles_overlap`` (%), ``standardization_mean``,
  ``standardization_std``, ``seg_thresh``, ``seg_small_segment`` (px),
  ``det_conf``, ``det_iou_thresh``;
* our own keys under the ``polytopo.`` prefix (see :data:`POLYTOPO_KEYS`).

:func:`parse_card` turns the raw entries into a :class:`ModelCard` and fails
with a :class:`~polytopo.models.errors.ModelCardError` that names the key and
shows a valid example. Checks against the graph live in
:mod:`polytopo.models.card.validation`.
"""

import ast
import json
import math
from dataclasses import dataclass, field, replace

from ..decoders.families import DEFAULT_FAMILY, FAMILIES, SAM_PROMPT_INPUTS, SAM_PROMPT_OUTPUTS, family_row
from ..errors import ModelCardError

__all__ = [
    "MAX_OUTLINE_OFFSET_PX",
    "DEEPNESS_KEYS",
    "FAMILIES",
    "ModelCard",
    "POLYTOPO_KEYS",
    "card_to_props",
    "example_card",
    "example_hint",
    "parse_card",
]

DEEPNESS_KEYS = (
    "model_type",
    "class_names",
    "resolution",
    "tile_size",
    "tiles_overlap",
    "standardization_mean",
    "standardization_std",
    "seg_thresh",
    "seg_small_segment",
    "det_conf",
    "det_iou_thresh",
)
"""Keys shared with the Deepness plugin (values are JSON)."""

POLYTOPO_KEYS = (
    "polytopo.card_version",
    "polytopo.family",
    "polytopo.outputs",
    "polytopo.output_activation",
    "polytopo.input_range",
    "polytopo.input_layout",
    "polytopo.bands",
    "polytopo.class_thresholds",
    "polytopo.background_class",
    "polytopo.simplify_tolerance_px",
    "polytopo.outline_offset_px",
    "polytopo.min_area_px",
    "polytopo.min_hole_area_px",
    "polytopo.mask_threshold",
    "polytopo.vertex_threshold",
    "polytopo.vertex_snap_radius_px",
    "polytopo.edge_threshold",
    "polytopo.frame_field_axes",
    "polytopo.sequence_decoder",
    "polytopo.token_bins",
    "polytopo.token_order",
    "polytopo.prompt_decoder",
    "polytopo.prompt_inputs",
    "polytopo.prompt_outputs",
    "polytopo.baseline",
    "polytopo.training_data",
    "polytopo.licence",
)
"""Keys of our own, all optional except where a family needs them."""

MAX_OUTLINE_OFFSET_PX = 8.0
"""Largest ``polytopo.outline_offset_px`` a card may give, model px (a correction of an outline, not a buffer tool)."""

_DEEPNESS_MODEL_TYPES = {"segmentor": DEFAULT_FAMILY, "segmentation": DEFAULT_FAMILY}
_ACTIVATIONS = ("none", "sigmoid", "softmax")
_LAYOUTS = ("NCHW", "NHWC")
_FIELD_AXES = ("ij", "xy")
_TOKEN_ORDERS = ("yx", "xy")


def example_card(family=DEFAULT_FAMILY):
    """Return a valid example card for ``family`` as a dict of key to Python value.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.

    Returns
    -------
    dict
        Keys and values (values are Python objects; store them with
        :func:`card_to_props` or :func:`polytopo.models.card.card_files.write_card`).

    Examples
    --------
    >>> example_card("rings")["polytopo.outputs"]
    {'rings': 'rings', 'scores': 'scores'}
    """
    return json.loads(json.dumps(family_row(family if family in FAMILIES else DEFAULT_FAMILY).example))


def example_hint(family=DEFAULT_FAMILY):
    """The end of a card error: the command that prints a complete card of ``family``.

    Examples
    --------
    >>> example_hint("rings")
    "'python -m polytopo.models example-card rings' prints a complete rings card"
    """
    family = family if family in FAMILIES else DEFAULT_FAMILY
    return f"'python -m polytopo.models example-card {family}' prints a complete {family} card"


def card_to_props(entries):
    """Encode Python values as the JSON strings stored in ``metadata_props``.

    Parameters
    ----------
    entries : dict of str to object
        Card keys and values; values must be JSON-serialisable.

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> card_to_props({"model_type": "Segmentor", "tile_size": 512})
    {'model_type': '"Segmentor"', 'tile_size': '512'}
    """
    props = {}
    for key, value in entries.items():
        try:
            props[str(key)] = json.dumps(value)
        except TypeError as exc:
            raise ModelCardError(
                f"Expected a JSON-serialisable value for card key {key!r} but got {value!r} ({exc}); "
                "use numbers, strings, lists or dicts."
            ) from exc
    return props


@dataclass(frozen=True)
class ModelCard:
    """What the engine knows about a model, read from its ``metadata_props``.

    Units are in the field names: ``_px`` is pixels of the model grid (the
    raster resampled to the model's ground sampling distance), ``_px2`` is
    square pixels of that grid, ``_cm_per_px`` is centimetres per pixel.

    Attributes
    ----------
    family : str
        Decoder family, one of :data:`FAMILIES`.
    class_names : tuple of str
        Names of the classes in output-channel order (may be empty).
    resolution_cm_per_px : float or None
        Ground sampling distance the model expects; None runs at the raster's own.
    tile_size_px : int or None
        Tile edge; None when the graph fixes it or an override must give it.
    tiles_overlap_percent : float
        Overlap of neighbouring tiles, percent of the tile edge.
    standardization_mean, standardization_std : tuple of float
        Applied after scaling the input range to [0, 1]: ``(x - mean) / std``.
    seg_threshold : float
        Probability threshold of the semantic family (Deepness ``seg_thresh``).
    seg_small_segment_px : int
        Median-filter size applied to the class map, as Deepness does (0: none).
    det_confidence : float
        Minimum score of instances and rings (Deepness ``det_conf``).
    det_iou_threshold : float
        IoU above which overlapping instances are duplicates.
    outputs : tuple of (str, str)
        Output role to output tensor name, e.g. ``(("probabilities", "out"),)``.
    output_activation : str
        ``none``, ``sigmoid`` or ``softmax``, applied to dense outputs.
    input_range : tuple of float or None
        Raw value range mapped to [0, 1]; None picks it from the raster type.
    input_layout : str or None
        ``NCHW`` or ``NHWC``; None infers it from the input shape.
    bands : tuple of int or None
        1-based raster bands in model-channel order; None takes 1..channels.
    class_thresholds : tuple of float or None
        Per-class thresholds (semantic family) overriding ``seg_threshold``.
    background_class : int or None
        Class index that never yields polygons; None picks 0 for multi-channel
        outputs (the Deepness convention) and -1 means no background class.
    simplify_tolerance_px : float
        Douglas–Peucker tolerance of the topology-preserving simplification.
    outline_offset_px : float
        Model px every finished polygon's rings are moved outward by (mitre joins:
        exteriors grow, holes shrink), for models whose outlines lie inside the objects'
        (the boundary-aware U-Nets separate touching buildings by a band inside each
        outline); 0 leaves them as polygonized, the default.
    min_area_px2, min_hole_area_px2 : float
        Polygons and holes smaller than this are dropped.
    mask_threshold : float
        Threshold on instance or prompt-decoder masks.
    vertex_threshold : float
        Minimum heatmap value of a vertex peak (vertex-mask family) or vertex
        score of a ring vertex (vertex-graph family).
    vertex_snap_radius_px : float
        Largest distance between a contour vertex and the peak it snaps to.
    edge_threshold : float or None
        Frame-field family: pixels whose edge probability (channel 1 of the
        ``seg`` output) reaches this are not interior; None ignores the edge.
    frame_field_axes : str
        Frame-field family: ``ij`` when a direction is the complex number
        ``Δrow + i Δcol`` (FFL), ``xy`` when it is ``Δx + i Δy``.
    sequence_decoder : str or None
        Vertex-sequence family: the token decoder's ONNX file, relative to
        the encoder file.
    token_bins : int
        Vertex-sequence family: coordinate bins of a token (Pix2Poly: the
        input size); bins, bins + 1 and bins + 2 are the BOS, EOS and PAD tokens.
    token_order : str
        Vertex-sequence family: ``yx`` when a vertex is the token pair
        (row, column), as Pix2Poly, ``xy`` for (column, row).
    prompt_decoder : str or None
        Prompt decoder ONNX file, relative to the encoder file (promptable).
    prompt_inputs, prompt_outputs : tuple of (str, str)
        Role to tensor name of the prompt decoder.
    baseline, training_data, licence, model_type : str or None
        Descriptive entries.
    extra : tuple of (str, str)
        Entries that are not card keys, kept for display.
    """

    family: str
    class_names: tuple = ()
    resolution_cm_per_px: object = None
    tile_size_px: object = None
    tiles_overlap_percent: float = 15.0
    standardization_mean: tuple = (0.0,)
    standardization_std: tuple = (1.0,)
    seg_threshold: float = 0.5
    seg_small_segment_px: int = 0
    det_confidence: float = 0.5
    det_iou_threshold: float = 0.5
    outputs: tuple = ()
    output_activation: str = "none"
    input_range: object = None
    input_layout: object = None
    bands: object = None
    class_thresholds: object = None
    background_class: object = None
    simplify_tolerance_px: float = 1.0
    outline_offset_px: float = 0.0
    min_area_px2: float = 0.0
    min_hole_area_px2: float = 0.0
    mask_threshold: float = 0.5
    vertex_threshold: float = 0.5
    vertex_snap_radius_px: float = 3.0
    edge_threshold: object = None
    frame_field_axes: str = "ij"
    sequence_decoder: object = None
    token_bins: int = 224
    token_order: str = "yx"
    prompt_decoder: object = None
    prompt_inputs: tuple = tuple(SAM_PROMPT_INPUTS.items())
    prompt_outputs: tuple = tuple(SAM_PROMPT_OUTPUTS.items())
    baseline: object = None
    training_data: object = None
    licence: object = None
    model_type: object = None
    extra: tuple = field(default=(), compare=False)

    def output_name(self, role):
        """Return the output tensor name of ``role``, or None when the card has none."""
        return dict(self.outputs).get(role)

    def with_overrides(self, **changes):
        """Return a copy with some fields replaced (for command-line overrides)."""
        return replace(self, **changes)

    def class_name(self, index):
        """Return the name of class ``index``, or ``class_<index>`` without a name."""
        if 0 <= index < len(self.class_names):
            return self.class_names[index]
        return f"class_{index}"


def _fail(key, expected, got, family=DEFAULT_FAMILY):
    raise ModelCardError(
        f"Expected card key {key!r} to be {expected} but got {got}. "
        f"Fix the entry (python -m polytopo.models write-card MODEL --set {key}=VALUE); {example_hint(family)}."
    )


def _loads(props, key, family, text_ok=False):
    raw = props[key]
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        if text_ok:
            return raw
        try:
            return ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            _fail(key, "JSON text", f"{raw!r}, which is not JSON", family)


def _number(props, key, family, default, low=None, high=None, integer=False):
    if key not in props:
        return default
    value = _loads(props, key, family)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(key, "a finite number", repr(props[key]), family)
    if integer and float(value) != int(value):
        _fail(key, "an integer", repr(props[key]), family)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"in [{low}, {high}]" if high is not None else f">= {low}"
        _fail(key, f"a number {bounds}", repr(props[key]), family)
    return int(value) if integer else float(value)


def _text(props, key, family):
    if key not in props:
        return None
    value = _loads(props, key, family, text_ok=True)
    if not isinstance(value, str):
        _fail(key, "a string", repr(props[key]), family)
    return value


def _number_list(props, key, family, default, integer=False, low=None):
    if key not in props:
        return default
    value = _loads(props, key, family)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
    ):
        _fail(key, "a non-empty list of numbers", repr(props[key]), family)
    if integer and any(float(v) != int(v) for v in value):
        _fail(key, "a list of integers", repr(props[key]), family)
    if low is not None and any(v < low for v in value):
        _fail(key, f"a list of numbers >= {low}", repr(props[key]), family)
    return tuple(int(v) if integer else float(v) for v in value)


def _class_names(props, family):
    key = next((k for k in ("class_names", "names") if k in props), None)
    if key is None:
        return ()
    value = _loads(props, key, family)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, dict):
        try:
            items = sorted((int(k), str(v)) for k, v in value.items())
        except (TypeError, ValueError):
            _fail(key, 'an object of class index to name, e.g. {"0": "background"}', repr(props[key]), family)
        if [index for index, _name in items] != list(range(len(items))):
            _fail(key, "consecutive class indices starting at 0", repr(props[key]), family)
        return tuple(name for _index, name in items)
    _fail(key, 'an object of class index to name, e.g. {"0": "background"}', repr(props[key]), family)


def _family(props):
    if "polytopo.family" in props:
        family = _text(props, "polytopo.family", DEFAULT_FAMILY)
        if family not in FAMILIES:
            _fail("polytopo.family", f"one of {list(FAMILIES)}", repr(family))
        return family
    model_type = _text(props, "model_type", DEFAULT_FAMILY) if "model_type" in props else None
    if model_type is not None and model_type.lower() in _DEEPNESS_MODEL_TYPES:
        return _DEEPNESS_MODEL_TYPES[model_type.lower()]
    got = "no polytopo.family key" + (
        f" and Deepness model_type {model_type!r}, which yields no polygons" if model_type else " and no model_type"
    )
    _fail("polytopo.family", f"one of {list(FAMILIES)} (or model_type \"Segmentor\")", got)


def _role_map(props, key, family, default):
    if key not in props:
        return tuple(default.items())
    value = _loads(props, key, family)
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        _fail(key, 'an object of role to tensor name, e.g. {"probabilities": "output"}', repr(props[key]), family)
    return tuple(value.items())


def _outputs(props, family):
    key = "polytopo.outputs"
    outputs = _role_map(props, key, family, {})
    row = family_row(family)
    required = row.required
    roles = dict(outputs)
    unknown = sorted(set(roles) - set(row.roles))
    if unknown:
        _fail(key, f"roles among {list(row.roles)} for family {family!r}", f"unknown roles {unknown}", family)
    if roles and row.default_role is None:
        missing = [role for role in required if role not in roles]
        if missing:
            _fail(key, f"the roles {list(required)} for family {family!r}", f"no {missing}", family)
    if not roles and row.default_role is None:
        _fail(key, f"the roles {list(required)} for family {family!r}", "no polytopo.outputs key", family)
    return outputs


def _choice(props, key, family, choices, default):
    if key not in props:
        return default
    value = _text(props, key, family)
    if value not in choices:
        _fail(key, f"one of {list(choices)}", repr(value), family)
    return value


def parse_card(props):
    """Parse ONNX ``metadata_props`` into a :class:`ModelCard`.

    Parameters
    ----------
    props : dict of str to str
        Raw entries, e.g. from :func:`polytopo.models.card.onnx_metadata.read_metadata_props`.

    Returns
    -------
    ModelCard

    Raises
    ------
    ModelCardError
        A key is missing, is not JSON, has the wrong type or range, or two keys
        contradict each other. The message names the key and shows a valid
        example card of the family.

    Examples
    --------
    >>> card = parse_card({"model_type": '"Segmentor"', "class_names": '{"0": "bg", "1": "building"}'})
    >>> card.family, card.class_names, card.seg_threshold
    ('semantic', ('bg', 'building'), 0.5)
    """
    family = _family(props)
    range_ = _number_list(props, "polytopo.input_range", family, None)
    if range_ is not None and (len(range_) != 2 or not range_[0] < range_[1]):
        _fail("polytopo.input_range", "[low, high] with low < high, e.g. [0, 255] or [0, 65535]", repr(props["polytopo.input_range"]), family)
    mean = _number_list(props, "standardization_mean", family, (0.0,))
    std = _number_list(props, "standardization_std", family, (1.0,))
    if any(v == 0 for v in std):
        _fail("standardization_std", "non-zero numbers", repr(props["standardization_std"]), family)
    if len(mean) != len(std) and 1 not in (len(mean), len(std)):
        _fail(
            "standardization_std",
            f"one value or as many values as standardization_mean ({len(mean)})",
            f"{len(std)} values",
            family,
        )
    background = _number(props, "polytopo.background_class", family, None, low=-1, integer=True) if (
        "polytopo.background_class" in props and props["polytopo.background_class"] != "null"
    ) else None
    thresholds = None
    if "polytopo.class_thresholds" in props:
        thresholds = _number_list(props, "polytopo.class_thresholds", family, None)
        if any(not 0.0 <= v <= 1.0 for v in thresholds):
            _fail("polytopo.class_thresholds", "numbers in [0, 1], one per class", repr(props["polytopo.class_thresholds"]), family)
    companion = family_row(family).companion
    if companion is not None and companion.key not in props:
        _fail(companion.key, f"the {companion.kind}'s ONNX file name, relative to this model", "no such key", family)
    bands = _number_list(props, "polytopo.bands", family, None, integer=True, low=1)
    layout = props.get("polytopo.input_layout")
    known = set(DEEPNESS_KEYS) | set(POLYTOPO_KEYS) | {"names"}
    return ModelCard(
        family=family,
        class_names=_class_names(props, family),
        resolution_cm_per_px=_number(props, "resolution", family, None, low=1e-6),
        tile_size_px=_number(props, "tile_size", family, None, low=1, integer=True),
        tiles_overlap_percent=_number(props, "tiles_overlap", family, 15.0, low=0, high=90),
        standardization_mean=mean,
        standardization_std=std,
        seg_threshold=_number(props, "seg_thresh", family, 0.5, low=0, high=1),
        seg_small_segment_px=_number(props, "seg_small_segment", family, 0, low=0, integer=True),
        det_confidence=_number(props, "det_conf", family, 0.5, low=0, high=1),
        det_iou_threshold=_number(props, "det_iou_thresh", family, 0.5, low=0, high=1),
        outputs=_outputs(props, family),
        output_activation=_choice(props, "polytopo.output_activation", family, _ACTIVATIONS, "none"),
        input_range=range_,
        input_layout=None if layout is None else _choice(props, "polytopo.input_layout", family, _LAYOUTS, None),
        bands=bands,
        class_thresholds=thresholds,
        background_class=background,
        simplify_tolerance_px=_number(props, "polytopo.simplify_tolerance_px", family, 1.0, low=0),
        outline_offset_px=_number(props, "polytopo.outline_offset_px", family, 0.0, low=0, high=MAX_OUTLINE_OFFSET_PX),
        min_area_px2=_number(props, "polytopo.min_area_px", family, 0.0, low=0),
        min_hole_area_px2=_number(props, "polytopo.min_hole_area_px", family, 0.0, low=0),
        mask_threshold=_number(props, "polytopo.mask_threshold", family, 0.5),
        vertex_threshold=_number(props, "polytopo.vertex_threshold", family, 0.5),
        vertex_snap_radius_px=_number(props, "polytopo.vertex_snap_radius_px", family, 3.0, low=0),
        edge_threshold=_number(props, "polytopo.edge_threshold", family, None, low=0, high=1) if (
            props.get("polytopo.edge_threshold", "null") != "null"
        ) else None,
        frame_field_axes=_choice(props, "polytopo.frame_field_axes", family, _FIELD_AXES, "ij"),
        sequence_decoder=_text(props, "polytopo.sequence_decoder", family),
        token_bins=_number(props, "polytopo.token_bins", family, 224, low=2, integer=True),
        token_order=_choice(props, "polytopo.token_order", family, _TOKEN_ORDERS, "yx"),
        prompt_decoder=_text(props, "polytopo.prompt_decoder", family),
        prompt_inputs=_role_map(props, "polytopo.prompt_inputs", family, SAM_PROMPT_INPUTS),
        prompt_outputs=_role_map(props, "polytopo.prompt_outputs", family, SAM_PROMPT_OUTPUTS),
        baseline=_text(props, "polytopo.baseline", family),
        training_data=_text(props, "polytopo.training_data", family),
        licence=_text(props, "polytopo.licence", family),
        model_type=_text(props, "model_type", family),
        extra=tuple(sorted((k, v) for k, v in props.items() if k not in known)),
    )
