"""An ensemble: exported models of any networks run side by side in one graph, their outputs averaged.

Unlike a soup (:mod:`.soup`), the members need not share weights: each member's graph is
copied whole under its own name prefix (``m0/``, ``m1/``, ...), all read the one graph
input, and each graph output is the element-wise mean (ONNX ``Mean``) of the members'
outputs of that name. The ensemble costs the members' CPU time together. Members must
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


def ensembled_model(models, names):
    """One ``onnx.ModelProto`` that runs every model of ``models`` on the same input and averages their outputs.

    ``names`` label the models in errors. The first model gives the graph's inputs and
    outputs (with their shapes), its operator sets, IR version and name. Raises
    :class:`~.errors.TrainingError` where the models differ in inputs, outputs or
    operator sets, or where fewer than two are given.
    """
    from onnx import compose, helper

    if len(models) < 2:
        raise TrainingError(f"Expected at least two models to ensemble but got {len(models)}.")
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
    inputs = {value.name for value in first.graph.input}
    nodes, initializers, value_info = [], [], []
    for index, model in enumerate(models):
        prefix = f"m{index}/"
        member = compose.add_prefix(model, prefix)
        renamed_inputs = {prefix + name: name for name in inputs}
        for node in member.graph.node:
            node.input[:] = [renamed_inputs.get(edge, edge) for edge in node.input]
        nodes.extend(member.graph.node)
        initializers.extend(member.graph.initializer)
        value_info.extend(member.graph.value_info)
    for output in first.graph.output:
        nodes.append(helper.make_node("Mean", [f"m{i}/{output.name}" for i in range(len(models))], [output.name],
                                      name=f"mean/{output.name}"))
    graph = helper.make_graph(nodes, first.graph.name or "ensemble", list(first.graph.input), list(first.graph.output),
                              initializers, value_info=value_info)
    ensemble = helper.make_model(graph, opset_imports=list(first.opset_import))
    ensemble.ir_version = first.ir_version
    return ensemble


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
