"""A uniform model soup: the weights of exported models of one network averaged into one graph.

Models fine-tuned from the same ImageNet encoder and the same decoder initialization
(one recipe's seed) can be averaged weight by weight (Wortsman et al. 2022, "Model
soups"); the soup runs at the cost of one model. The ingredients must hold the same
weights by name, shape and type and the same graph inputs and outputs; the first
ingredient's graph carries the averages (the convolutions' weights as exported, batch
normalization folded into them). Every other tensor of the graph (shapes, indices) must
be equal in all ingredients. :mod:`.combined` writes the model file and its card. Needs
the ``onnx`` package (a development dependency), not PyTorch.
"""

import numpy as np

from .errors import TrainingError

__all__ = ["averaged_model"]


def _weights(model):
    from onnx import numpy_helper

    return {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}


def averaged_model(models, names):
    """The first of ``models`` (``onnx.ModelProto``) with every floating-point weight the mean over all of them.

    ``names`` label the models in errors. Raises :class:`~.errors.TrainingError` where the
    models differ in weight names, shapes or types, in a non-float tensor, or in the
    graph's inputs and outputs.
    """
    from onnx import numpy_helper

    if len(models) < 2:
        raise TrainingError(f"Expected at least two models to average but got {len(models)}.")
    first, first_name = models[0], names[0]
    weights = [_weights(model) for model in models]
    for model, name, own in zip(models[1:], names[1:], weights[1:]):
        if (list(model.graph.input), list(model.graph.output)) != (list(first.graph.input), list(first.graph.output)):
            raise TrainingError(f"Expected {name} to have the inputs and outputs of {first_name}; they differ.")
        if own.keys() != weights[0].keys():
            raise TrainingError(f"Expected {name} to hold the weights of {first_name} but "
                                f"{len(own.keys() ^ weights[0].keys())} weight names differ: not the same network.")
        for key, value in own.items():
            reference = weights[0][key]
            if (value.shape, value.dtype) != (reference.shape, reference.dtype):
                raise TrainingError(f"Expected weight {key!r} of {name} to be {reference.dtype} {reference.shape} as in "
                                    f"{first_name} but got {value.dtype} {value.shape}.")
            if not np.issubdtype(value.dtype, np.floating) and not np.array_equal(value, reference):
                raise TrainingError(f"Expected tensor {key!r} of {name} to equal {first_name}'s (it is not a weight).")
    soup = type(first)()
    soup.CopyFrom(first)
    for tensor in soup.graph.initializer:
        values = [own[tensor.name] for own in weights]
        if np.issubdtype(values[0].dtype, np.floating):
            mean = np.mean(np.stack(values).astype(np.float64), axis=0).astype(values[0].dtype)
            tensor.CopyFrom(numpy_helper.from_array(mean, tensor.name))
    return soup
