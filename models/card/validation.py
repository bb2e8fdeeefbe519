"""Check a model card against the model's graph and resolve how to feed it.

:func:`check_card` compares the card with the input and output tensors of the
graph (rank, channel count, fixed or dynamic tile size, output names, input
type) and returns a :class:`ModelIO` that the pipeline uses; any missing or
contradictory key raises :class:`~polytopo.models.errors.ModelCardError`
naming the key and showing a valid example.
"""

from dataclasses import dataclass

from .model_card import example_hint
from ..decoders.families import family_row
from ..errors import ModelCardError

__all__ = ["GraphSignature", "ModelIO", "TensorSpec", "check_card", "signature_from_session"]

_ORT_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(uint8)": "uint8",
    "tensor(int8)": "int8",
    "tensor(uint16)": "uint16",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(bool)": "bool",
    "tensor(string)": "string",
}
_IMAGE_DTYPES = ("float32", "float16", "float64", "uint8")


@dataclass(frozen=True)
class TensorSpec:
    """One graph input or output.

    Attributes
    ----------
    name : str
    shape : tuple
        One entry per dimension: an int when fixed, None when dynamic.
    dtype : str
        NumPy name of the element type (``float32``, ``uint8``, ...).
    """

    name: str
    shape: tuple
    dtype: str


@dataclass(frozen=True)
class GraphSignature:
    """Inputs and outputs of a graph, as :class:`TensorSpec` tuples."""

    inputs: tuple
    outputs: tuple

    def output(self, name):
        """Return the output called ``name`` or None."""
        return next((spec for spec in self.outputs if spec.name == name), None)

    def input(self, name):
        """Return the input called ``name`` or None."""
        return next((spec for spec in self.inputs if spec.name == name), None)


def _spec(node_arg):
    shape = tuple(dim if isinstance(dim, int) and dim > 0 else None for dim in (node_arg.shape or ()))
    return TensorSpec(node_arg.name, shape, _ORT_TYPES.get(node_arg.type, node_arg.type))


def signature_from_session(session):
    """Build a :class:`GraphSignature` from an ``onnxruntime.InferenceSession``."""
    return GraphSignature(
        inputs=tuple(_spec(arg) for arg in session.get_inputs()),
        outputs=tuple(_spec(arg) for arg in session.get_outputs()),
    )


@dataclass(frozen=True)
class ModelIO:
    """How to feed a model and where to find each output role.

    Attributes
    ----------
    input_name : str
    input_dtype : str
        NumPy dtype of the input tensor.
    layout : str
        ``NCHW`` or ``NHWC``.
    channels : int
        Number of input channels (raster bands fed to the model).
    tile_size_px : int or None
        Tile edge fixed by the graph, None when the graph accepts any size.
    batch_size_fixed : int or None
        Batch dimension fixed by the graph, None when dynamic.
    outputs : tuple of (str, str)
        Output role to tensor name.
    class_count : int or None
        Number of channels of the dense class output when fixed by the graph.
    """

    input_name: str
    input_dtype: str
    layout: str
    channels: int
    tile_size_px: object
    batch_size_fixed: object
    outputs: tuple
    class_count: object

    def output_name(self, role):
        """Return the tensor name of ``role`` or None."""
        return dict(self.outputs).get(role)


def _fail(key, expected, got, family):
    raise ModelCardError(
        f"Expected {expected} but got {got} (card key {key!r}). Fix the card "
        f"(python -m polytopo.models write-card MODEL --set {key}=VALUE) or re-export the model; "
        f"{example_hint(family)}."
    )


def _layout(card, shape):
    if card.input_layout is not None:
        return card.input_layout
    c_first, c_last = shape[1], shape[3]
    if c_first is not None and c_first <= 16:
        return "NCHW"
    if c_last is not None and c_last <= 16:
        return "NHWC"
    return "NCHW"


def _image_input(card, signature):
    family = card.family
    if family_row(family).image_among_inputs:
        candidates = [spec for spec in signature.inputs if len(spec.shape) == 4]
    else:
        candidates = list(signature.inputs)
    if len(candidates) != 1:
        names = [spec.name for spec in signature.inputs]
        _fail("polytopo.family", f"one image input for family {family!r}", f"inputs {names}", family)
    spec = candidates[0]
    if len(spec.shape) != 4:
        _fail(
            "polytopo.input_layout",
            "an input of rank 4 (batch, channels, height, width) or (batch, height, width, channels)",
            f"input {spec.name!r} of rank {len(spec.shape)} with shape {list(spec.shape)}",
            family,
        )
    if spec.dtype not in _IMAGE_DTYPES:
        _fail(
            "polytopo.input_range",
            f"an input of type {list(_IMAGE_DTYPES)} that a raster can supply",
            f"input {spec.name!r} of type {spec.dtype}",
            family,
        )
    return spec


def _tile_size(card, spec, layout):
    height, width = (spec.shape[2], spec.shape[3]) if layout == "NCHW" else (spec.shape[1], spec.shape[2])
    if (height is None) != (width is None) or (height is not None and height != width):
        _fail("tile_size", "square tiles (height and width both fixed and equal, or both dynamic)", f"input shape {list(spec.shape)}", card.family)
    if height is not None and card.tile_size_px is not None and card.tile_size_px != height:
        _fail("tile_size", f"tile_size {height} (the graph fixes the input to {height}x{height} px)", f"tile_size {card.tile_size_px}", card.family)
    return height


def _dense_class_count(card, signature, outputs):
    row = family_row(card.family)
    row.decoder.check_outputs(card, signature, dict(outputs), _fail)
    role = row.class_role
    if role is None:
        return None
    spec = signature.output(dict(outputs)[role])
    if len(spec.shape) not in (3, 4):
        _fail("polytopo.outputs", f"output {spec.name!r} ({role}) of rank 4 (batch, classes, height, width) or 3", f"rank {len(spec.shape)}", card.family)
    count = 1 if len(spec.shape) == 3 else spec.shape[1]
    if row.class_names_per_channel and count is not None and card.class_names:
        names = len(card.class_names)
        if not (names == count or (count == 1 and names in (1, 2))):
            _fail("class_names", f"{count} class names (one per channel of output {spec.name!r})", f"{names} names {list(card.class_names)}", card.family)
    if card.class_thresholds is not None and count is not None and len(card.class_thresholds) not in (1, count):
        _fail("polytopo.class_thresholds", f"1 or {count} thresholds (one per class)", f"{len(card.class_thresholds)}", card.family)
    return count


def _outputs(card, signature):
    family = card.family
    row = family_row(family)
    outputs = dict(card.outputs)
    if row.default_role is not None and not outputs:
        if len(signature.outputs) != 1:
            names = [spec.name for spec in signature.outputs]
            _fail(
                "polytopo.outputs",
                f'a polytopo.outputs entry such as {{"{row.default_role}": "NAME"}} when the graph has several outputs',
                f"outputs {names}",
                family,
            )
        outputs = {row.default_role: signature.outputs[0].name}
    missing = {role: name for role, name in outputs.items() if signature.output(name) is None}
    if missing:
        names = [spec.name for spec in signature.outputs]
        _fail("polytopo.outputs", f"output names among {names}", f"{missing}", family)
    absent = [role for role in row.required if role not in outputs]
    if absent:
        _fail("polytopo.outputs", f"the roles {list(row.required)}", f"no {absent}", family)
    return tuple(outputs.items())


def check_card(card, signature):
    """Check ``card`` against ``signature`` and resolve the model's I/O.

    Parameters
    ----------
    card : ModelCard
    signature : GraphSignature

    Returns
    -------
    ModelIO

    Raises
    ------
    ModelCardError
        Input rank is not 4, the input type is not one a raster can supply,
        the channel count contradicts ``polytopo.bands`` or the
        standardization lists, the tile size contradicts ``tile_size``, an
        output named by ``polytopo.outputs`` is not in the graph, or the class
        names do not match the class channels.
    """
    spec = _image_input(card, signature)
    layout = _layout(card, spec.shape)
    channels = spec.shape[1] if layout == "NCHW" else spec.shape[3]
    if channels is None:
        _fail("polytopo.input_layout", "a fixed channel dimension", f"input shape {list(spec.shape)} with a dynamic channel axis for layout {layout}", card.family)
    if card.bands is not None and len(card.bands) != channels:
        _fail("polytopo.bands", f"{channels} bands (the model input has {channels} channels)", f"{list(card.bands)}", card.family)
    for key, values in (("standardization_mean", card.standardization_mean), ("standardization_std", card.standardization_std)):
        if len(values) not in (1, channels):
            _fail(key, f"1 or {channels} values (one per input channel)", f"{len(values)} values", card.family)
    tile = _tile_size(card, spec, layout)
    outputs = _outputs(card, signature)
    return ModelIO(
        input_name=spec.name,
        input_dtype=spec.dtype,
        layout=layout,
        channels=int(channels),
        tile_size_px=tile,
        batch_size_fixed=spec.shape[0],
        outputs=outputs,
        class_count=_dense_class_count(card, signature, outputs),
    )
