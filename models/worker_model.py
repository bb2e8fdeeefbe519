"""The model a worker process runs: loaded once per process, reused by every task.

Tasks of an image-set or block run (see :mod:`~polytopo.models.image_sets` and
:mod:`~polytopo.models.raster.block_run`) name the model by path; creating an
onnxruntime session for each task would cost more than many tasks take, so the
last model loaded is kept, keyed by its path, size, modification time and
session parameters (a changed file is loaded again). A worker with several
threads loads it once: the others wait for that load and share the session
(onnxruntime's ``InferenceSession.run`` may be called from several threads).
"""

import os
import threading

from .model import load_model

__all__ = ["worker_model"]

_LOADED = {}
_LOCK = threading.Lock()


def worker_model(path, params):
    """Return :func:`~polytopo.models.load_model` ``(path, params)``, cached for this process.

    Parameters
    ----------
    path : str
        The ONNX file, readable at the same path on every worker.
    params : SessionParams

    Returns
    -------
    LoadedModel
    """
    try:
        stat = os.stat(path)
        key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, params)
    except OSError:
        return load_model(path, params)  # raises the error that names the file
    with _LOCK:
        model = _LOADED.get(key)
        if model is None:
            model = load_model(path, params)
            _LOADED.clear()  # one model per process: memory stays that of one session
            _LOADED[key] = model
    return model
