"""An ensemble: exported models of any networks run side by side in one graph, their outputs averaged.

Unlike a soup (:mod:`.soup`), the members need not share weights: each member's graph is
copied whole under its own name prefix (``m0/``, ``m1/``, ...), all read the one graph
input, and each graph output is the element-wise mean (ONNX ``Mean``) of the members'
outputs of that name. A member may read the tile on another grid: its input is resized by
its scale (bilinear, half-pixel centres; a scale of 30/21 reads a 30 cm tile as 21 cm
pixels) and each of its outputs resized back to the input's height and width (bilinear),
so one network read at two ground sizes is an ensemble of one file twice. Weights that
are the same in several members (the same file twice) are stored once. The ensemble costs
the members' CPU time together (a member at scale s about s² times its own). Members must
have the same graph inputs and outputs (names, element types) and the same operator
sets. :func:`half_stored` halves the file: float weights stored as float16 and cast back
to float32 when the session loads (onnxruntime folds the casts), so the arithmetic stays
float32. :mod:`.combined` writes the model file and its card. Needs the ``onnx`` package (a
development dependency), not PyTorch.
"""

import numpy as np

from .errors import TrainingError

__all__ = ["ensembled_model", "half_stored"]


def _signature(values):
    """Names and element types of graph inputs or outputs, comparable between models."""
    return [(value.name, value.type.tensor_type.elem_type) for value in values]


def ensembled_model(models, names, scales=None):
    """One ``onnx.ModelProto`` that runs every model of ``models`` on the same input and averages their outputs.

    ``names`` label the models in errors. ``scales`` (one per model, default all 1) resize
    a member's (N, C, H, W) input by that factor in height and width before it runs and
    its outputs back to H × W after (both bilinear). The first model gives the graph's
    inputs and outputs (with their shapes), its operator sets, IR version and name.
    Raises :class:`~.errors.TrainingError` where the models differ in inputs, outputs or
    operator sets, where fewer than two are given, or where the scales are not one
    positive number per model.
    """
    from onnx import compose, helper

    if len(models) < 2:
        raise TrainingError(f"Expected at least two models to ensemble but got {len(models)}.")
    scales = [1.0] * len(models) if scales is None else [float(scale) for scale in scales]
    if len(scales) != len(models) or not all(scale > 0 for scale in scales):
        raise TrainingError(f"Expected one positive scale per model ({len(models)}) but got {scales}.")
    first, first_name = models[0], names[0]
    opsets = sorted((o.domain, o.version) for o in first.opset_import)
    for model, name in zip(models[1:], names[1:]):
        if _signature(model.graph.input) != _signature(first.graph.input):
            raise TrainingError(f"Expected {name} to have the inputs of {first_name} "
                                f"{_signature(first.graph.input)} but got {_signature(model.graph.input)}.")
        if _signature(model.graph.output) != _signature(first.graph.output):
            raise TrainingError(f"Expected {name} to have the outputs of {first_name} "
                                f"{_signature(first.graph.output)} but got {_signature(model.graph.output)}.")
        if sorted((o.domain, o.version) for o in model.opset_import) != opsets:
            raise TrainingError(f"Expected {name} to use the operator sets of {first_name} {opsets}.")
    inputs = [value.name for value in first.graph.input]
    nodes, initializers, value_info = [], [], []
    for index, (model, scale) in enumerate(zip(models, scales)):
        prefix = f"m{index}/"
        member = compose.add_prefix(model, prefix)
        renamed = {prefix + name: name for name in inputs}
        if scale != 1.0:
            nodes.extend(_resized_inputs(inputs, prefix, scale, helper))
            renamed = {prefix + name: f"{prefix}{name}/resized" for name in inputs}
        renamed.update(_shared_weights(member.graph.initializer, initializers))
        for node in member.graph.node:
            node.input[:] = [renamed.get(edge, edge) for edge in node.input]
        nodes.extend(member.graph.node)
        if scale != 1.0:
            nodes.extend(_outputs_resized_back(first.graph.output, inputs[0], prefix, helper))
        initializers.extend(t for t in member.graph.initializer if t.name not in renamed)
        value_info.extend(member.graph.value_info)
    for output in first.graph.output:
        members = [f"m{i}/{output.name}" + ("/resized" if scale != 1.0 else "") for i, scale in enumerate(scales)]
        nodes.append(helper.make_node("Mean", members, [output.name], name=f"mean/{output.name}"))
    graph = helper.make_graph(nodes, first.graph.name or "ensemble", list(first.graph.input), list(first.graph.output),
                              initializers, value_info=value_info)
    ensemble = helper.make_model(graph, opset_imports=list(first.opset_import))
    ensemble.ir_version = first.ir_version
    return ensemble


def _resized_inputs(inputs, prefix, scale, helper):
    """Nodes that make ``<prefix><input>/resized``: each (N, C, H, W) input scaled by ``scale`` in H and W."""
    from onnx import TensorProto

    factors = f"{prefix}scales"
    nodes = [helper.make_node("Constant", [], [factors], name=f"{prefix}scales",
                              value=helper.make_tensor(factors, TensorProto.FLOAT, [4], [1.0, 1.0, scale, scale]))]
    for name in inputs:
        nodes.append(helper.make_node("Resize", [name, "", factors], [f"{prefix}{name}/resized"],
                                      name=f"{prefix}{name}/resize", mode="linear",
                                      coordinate_transformation_mode="half_pixel"))
    return nodes


def _outputs_resized_back(outputs, first_input, prefix, helper):
    """Nodes that make ``<prefix><output>/resized``: each member output resized to the graph input's H × W."""
    height_width = f"{prefix}input_height_width"
    nodes = [helper.make_node("Shape", [first_input], [height_width], name=f"{prefix}input_shape", start=2, end=4)]
    for output in outputs:
        name = f"{prefix}{output.name}"
        nodes.extend([
            helper.make_node("Shape", [name], [f"{name}/batch_channels"], name=f"{name}/shape", start=0, end=2),
            helper.make_node("Concat", [f"{name}/batch_channels", height_width], [f"{name}/sizes"],
                             name=f"{name}/sizes", axis=0),
            helper.make_node("Resize", [name, "", "", f"{name}/sizes"], [f"{name}/resized"], name=f"{name}/resize",
                             mode="linear", coordinate_transformation_mode="half_pixel"),
        ])
    return nodes


def _shared_weights(member_weights, kept):
    """Names of ``member_weights`` equal (type, shape, values) to a weight already in ``kept``, mapped to that one."""
    from onnx import numpy_helper

    def key(tensor):
        values = numpy_helper.to_array(tensor)
        return tensor.data_type, values.shape, values.tobytes()

    known = {key(tensor): tensor.name for tensor in kept}
    keys = {tensor.name: key(tensor) for tensor in member_weights}
    return {name: known[value] for name, value in keys.items() if value in known}


def half_stored(model, min_elements=16):
    """``model`` with each float32 weight of at least ``min_elements`` values stored as float16 and cast back.

    Each such initializer ``W`` becomes ``W/float16`` and a ``Cast`` node at the head of the
    graph makes ``W`` again as float32, so every operator still computes in float32; the
    weights lose what float16 cannot hold (about 3 significant digits). Weights outside
    float16's range (above 65504 in magnitude) are left float32.
    """
    from onnx import TensorProto, helper, numpy_helper

    halved = type(model)()
    halved.CopyFrom(model)
    kept, casts = [], []
    for tensor in halved.graph.initializer:
        values = numpy_helper.to_array(tensor)
        if (tensor.data_type != TensorProto.FLOAT or values.size < min_elements
                or not np.all(np.abs(values) <= np.finfo(np.float16).max)):
            kept.append(tensor)
            continue
        kept.append(numpy_helper.from_array(values.astype(np.float16), f"{tensor.name}/float16"))
        casts.append(helper.make_node("Cast", [f"{tensor.name}/float16"], [tensor.name], to=TensorProto.FLOAT,
                                      name=f"cast/{tensor.name}"))
    del halved.graph.initializer[:]
    halved.graph.initializer.extend(kept)
    nodes = casts + list(halved.graph.node)
    del halved.graph.node[:]
    halved.graph.node.extend(nodes)
    return halved
