"""Files a model names (external weights, a prompt decoder) must lie inside the model's folder.

A model file is untrusted input: a shared ONNX model could name ``/etc/passwd`` or
``../../secret`` as the location of its weights, and onnxruntime would copy that file's bytes
into a tensor, so they could leak into the scores of the polygons it writes. Every file a
model refers to is therefore resolved (symbolic links followed) and must stay inside the
folder that holds the model.
"""

import os

__all__ = ["inside_model_folder"]


def inside_model_folder(model_path, relative):
    """The resolved path of ``relative`` next to ``model_path``, or None when it leaves that folder.

    Parameters
    ----------
    model_path : str or os.PathLike
        The model file; its folder is the only place its files may come from.
    relative : str
        A path as written in the model, relative to the model's folder.

    Returns
    -------
    str or None
        None for an absolute path, a path that climbs out with ``..``, a symbolic link
        that points outside, an empty name, or a name the system cannot hold.

    Examples
    --------
    >>> inside_model_folder("/models/m.onnx", "../etc/passwd") is None
    True
    >>> inside_model_folder("/models/m.onnx", "/etc/passwd") is None
    True
    """
    if not isinstance(relative, str) or not relative or os.path.isabs(relative):
        return None
    folder = os.path.realpath(os.path.dirname(os.path.abspath(os.fspath(model_path))))
    try:
        target = os.path.realpath(os.path.join(folder, relative))
    except (ValueError, OSError):
        return None
    if target == folder or os.path.commonpath([folder, target]) != folder:
        return None
    return target
