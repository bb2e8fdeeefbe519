"""Exceptions of the training tools.

::

    ModelsError
    └── TrainingError(ModelsError, RuntimeError)         training or export cannot proceed
        ├── SharedDataError(TrainingError, FileNotFoundError)  the training data folder is absent
        └── TorchMissingError(TrainingError, ImportError)      PyTorch is not installed

Messages follow the form "Expected X but got Y" followed by how to fix it.
"""

from ..models.errors import ModelsError

__all__ = ["SharedDataError", "TorchMissingError", "TrainingError"]


class TrainingError(ModelsError, RuntimeError):
    """Root of every error raised by :mod:`polytopo.training`."""


class SharedDataError(TrainingError, FileNotFoundError):
    """The shared data folder (imagery and labels) cannot be found."""


class TorchMissingError(TrainingError, ImportError):
    """PyTorch, a development dependency of training only, is not installed."""
