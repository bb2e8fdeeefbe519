"""Lazy access to PyTorch, a development dependency of training only.

The inference engine needs onnxruntime alone; only the modules that train or
export (:mod:`.nets`, :mod:`.train`, :mod:`.export`) call :func:`require_torch`,
and they are imported only by the commands that need them.
"""

import os
import random

import numpy as np

from .errors import TorchMissingError

__all__ = ["INSTALL_HINT", "configure_torch", "require_torch"]

INSTALL_HINT = "python -m pip install torch==2.13.0"
"""Command that installs the PyTorch the training code was written for, from PyPI.

PyPI's Linux wheel of torch is the CUDA build (527 MB); with the ``nvidia-*`` packages it
requires it trains on the CPU as well (without them it does not import). Where pip can find
a CPU-only wheel of the same version (``2.13.0+cpu``) it takes that one, and training runs
the same. Never part of the runtime requirements."""


def require_torch():
    """Import and return :mod:`torch`, or raise with the install command.

    Raises
    ------
    TorchMissingError
        PyTorch is not installed.
    """
    try:
        import torch
    except ImportError as exc:
        raise TorchMissingError(
            "Expected PyTorch (needed to train and export models, not to run them) but it is not "
            f"installed; install it with `{INSTALL_HINT}`."
        ) from exc
    return torch


def configure_torch(seed, threads):
    """Seed every generator and fix the thread count, for repeatable CPU training.

    Parameters
    ----------
    seed : int
        Seed of Python's, NumPy's and PyTorch's generators.
    threads : int
        Intra-op threads of PyTorch (also set for OpenMP).

    Returns
    -------
    module
        :mod:`torch`.
    """
    torch = require_torch()
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    return torch
