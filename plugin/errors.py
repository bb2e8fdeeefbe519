"""Exceptions raised by the QGIS plugin.

::

    PluginError
    ├── ProviderRegistrationError (also RuntimeError)  the Processing registry refused the provider
    ├── LayerInputError (also ValueError)              a layer cannot be evaluated or vectorized
    ├── RunParameterError (also ValueError)            a parameter is missing or outside its domain
    ├── ModelInputError (also ValueError)              the model file is not a usable model
    ├── OutputExistsError (also FileExistsError)       an output would replace a file without permission
    ├── RunFailedError (also RuntimeError)             inference or writing failed while running
    ├── RunCanceled (also RuntimeError)                the user canceled; partial outputs were removed
    └── DemoDataError (also RuntimeError)              the main job's data could not be fetched or checked

Messages name what was expected, what was found and how to fix it. Errors of
:mod:`polytopo.evaluator` and :mod:`polytopo.models` are re-raised as one of these
(the original is chained as ``__cause__``), so callers catch :class:`PluginError`.
"""

__all__ = [
    "PluginError",
    "ProviderRegistrationError",
    "LayerInputError",
    "RunParameterError",
    "ModelInputError",
    "OutputExistsError",
    "RunFailedError",
    "RunCanceled",
    "DemoDataError",
]


class PluginError(Exception):
    """Root of every exception raised by :mod:`polytopo.plugin`."""


class ProviderRegistrationError(PluginError, RuntimeError):
    """The Processing registry refused the PolyTopo provider."""


class LayerInputError(PluginError, ValueError):
    """A layer cannot be used: wrong geometry type, missing field or CRS, unusable bands."""


class RunParameterError(PluginError, ValueError):
    """A run parameter is missing, contradictory or outside its domain (pixel size, profile...)."""


class ModelInputError(PluginError, ValueError):
    """The model file cannot be read as a PolyTopo/Deepness ONNX model, or its card is incomplete."""


class OutputExistsError(PluginError, FileExistsError):
    """An output path exists and the run was not allowed to replace it."""


class RunFailedError(PluginError, RuntimeError):
    """Inference or writing the outputs failed for a reason other than the inputs."""


class RunCanceled(PluginError, RuntimeError):
    """The feedback object asked to stop; every partial output has been removed."""


class DemoDataError(PluginError, RuntimeError):
    """The demo data could not be downloaded, or the downloaded files are not the expected ones."""
