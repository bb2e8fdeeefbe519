"""Exceptions raised by the inference engine.

Every error of :mod:`polytopo.models` derives from :class:`ModelsError` and
also from the builtin exception that describes it best, so callers may catch
either::

    ModelsError
    ├── ModelFileError(ModelsError, OSError)          model file missing or corrupt
    ├── ModelCardError(ModelsError, ValueError)       card key missing or contradictory
    ├── ProviderError(ModelsError, RuntimeError)      execution provider not available
    ├── RasterError(ModelsError, ValueError)          raster cannot feed the model
    ├── VectorInputError(ModelsError, ValueError)     AOI or prompt file cannot be read
    ├── InferenceError(ModelsError, RuntimeError)     model produced unusable output
    ├── MemoryBudgetError(ModelsError, MemoryError)   the working set does not fit
    ├── OutputError(ModelsError, OSError)             the vector output cannot be written
    ├── InferenceCanceled(ModelsError, RuntimeError) the run's cancel check said stop
    ├── PackDownloadError(ModelsError, OSError)       a model-pack file cannot be fetched or stored
    ├── PackChecksumError(ModelsError, ValueError)    a model-pack file has the wrong size or SHA-256
    └── PackInstallCanceled(ModelsError, RuntimeError) a model-pack install was canceled

(``polytopo.models.zoo.ZooError(ModelsError, LookupError)``: the zoo index is unreadable or
names no such model.)

Messages follow the form "Expected X but got Y" followed by how to fix it. ``ModelsError``
derives from :class:`polytopo.core.errors.PolytopoError`, the root of every PolyTopo error,
so errors of the shared core (unreadable JSON or vector inputs, unsafe outputs, cluster
failures) and of the engine are caught together with ``except PolytopoError``.
"""

from ..core.errors import PolytopoError

__all__ = [
    "InferenceCanceled",
    "InferenceError",
    "MemoryBudgetError",
    "ModelCardError",
    "ModelFileError",
    "ModelsError",
    "OutputError",
    "PackChecksumError",
    "PackDownloadError",
    "PackInstallCanceled",
    "ProviderError",
    "RasterError",
    "VectorInputError",
]


class ModelsError(PolytopoError):
    """Root of every error raised by :mod:`polytopo.models` (a :class:`~polytopo.core.errors.PolytopoError`)."""


class ModelFileError(ModelsError, OSError):
    """The model file is missing, unreadable or not an ONNX model."""


class ModelCardError(ModelsError, ValueError):
    """A model card key is missing, malformed or contradicts the graph."""


class ProviderError(ModelsError, RuntimeError):
    """The requested onnxruntime execution provider cannot be used."""


class RasterError(ModelsError, ValueError):
    """The raster cannot be opened or cannot supply what the model needs."""


class VectorInputError(ModelsError, ValueError):
    """A vector input (area of interest, prompts) cannot be opened, reprojected or used."""


class InferenceError(ModelsError, RuntimeError):
    """The model ran but its outputs cannot be decoded (NaN, wrong shape)."""


class MemoryBudgetError(ModelsError, MemoryError):
    """The estimated working set exceeds the memory available."""


class OutputError(ModelsError, OSError):
    """The vector output cannot be created or moved into place."""


class InferenceCanceled(ModelsError, RuntimeError):
    """The run's cancel check (:mod:`polytopo.core.cancel`) said stop before a batch; no output was written."""


class PackDownloadError(ModelsError, OSError):
    """A model-pack file cannot be downloaded, read or stored (network, HTTP status, timeout, disk).

    Nothing is left behind: the temporary file is removed and an installed model stays as it was.
    """


class PackChecksumError(ModelsError, ValueError):
    """A model-pack file arrived with another size or SHA-256 than the zoo index records; it was not stored."""


class PackInstallCanceled(ModelsError, RuntimeError):
    """A model-pack install was canceled (cancel check or Ctrl-C); the temporary file was removed."""


_RENAMED = {"InferenceCancelled": "InferenceCanceled", "PackInstallCancelled": "PackInstallCanceled"}


def __getattr__(name):
    """The old spellings of the canceled errors, with a DeprecationWarning (one spelling: *canceled*)."""
    if name in _RENAMED:
        import warnings

        warnings.warn(f"{name} is now {_RENAMED[name]}", DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
