"""Read, write and describe the card of an ONNX file (the ``info`` and ``write-card`` commands)."""

import dataclasses
import json
import os

from .model_card import card_to_props, parse_card
from .validation import check_card
from ..errors import ModelsError
from .onnx_metadata import read_metadata_props, write_metadata_props
from ..session import SessionParams, open_session

__all__ = ["describe_model", "format_description", "read_card", "write_card"]


def read_card(path):
    """Return the :class:`~polytopo.models.card.model_card.ModelCard` of an ONNX file.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    ModelCard

    Raises
    ------
    ModelFileError
        Missing or corrupt file.
    ModelCardError
        Missing or malformed key.
    """
    return parse_card(read_metadata_props(path))


def write_card(path, entries, out_path=None, validate=True, keep_existing=True, *, overwrite=False, inputs=()):
    """Write card entries into an existing ONNX file.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file.
    entries : dict of str to object
        Card keys and Python values (JSON-encoded on write); a value of None
        removes the key.
    out_path : str or os.PathLike, optional
        Output file; defaults to replacing ``path`` (atomically).
    validate : bool
        Parse the resulting card and check it against the graph first; nothing
        is written when the check fails.
    keep_existing : bool
        Keep the entries already in the file that ``entries`` does not name.
    overwrite : bool
        Replace an existing ``out_path`` (replacing ``path`` itself needs no flag).
    inputs : iterable of str
        Other inputs (e.g. the card JSON) that ``out_path`` must not be.

    Returns
    -------
    ModelCard
        The card now stored.

    Raises
    ------
    ModelCardError
        The resulting card is invalid (when ``validate``).
    OutputError
        ``out_path`` exists without ``overwrite``, is an input, or cannot be written.
    """
    props = dict(read_metadata_props(path)) if keep_existing else {}
    for key, value in entries.items():
        if value is None:
            props.pop(key, None)
    props.update(card_to_props({key: value for key, value in entries.items() if value is not None}))
    card = parse_card(props)
    if validate:
        session = open_session(path, SessionParams(provider="cpu"))
        check_card(card, session.signature)
    write_metadata_props(path, props, out_path, overwrite=overwrite, inputs=inputs)
    return card


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def describe_model(path):
    """Describe an ONNX model: raw entries, parsed card, graph and whether they agree.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dict
        ``path``, ``metadata_props`` (raw), ``card`` (parsed fields or None),
        ``card_error`` (message or None), ``inputs`` and ``outputs`` (name,
        shape, dtype) and ``io`` (resolved feeding, or None).

    Raises
    ------
    ModelFileError
        Missing or corrupt file (the only error not reported inside the dict).
    """
    path = os.fspath(path)
    props = read_metadata_props(path)
    session = open_session(path, SessionParams(provider="cpu"))
    info = {
        "path": path,
        "metadata_props": props,
        "inputs": [dataclasses.asdict(spec) for spec in session.signature.inputs],
        "outputs": [dataclasses.asdict(spec) for spec in session.signature.outputs],
        "card": None,
        "card_error": None,
        "io": None,
    }
    try:
        card = parse_card(props)
        info["card"] = {key: _plain(value) for key, value in dataclasses.asdict(card).items()}
        info["io"] = {key: _plain(value) for key, value in dataclasses.asdict(check_card(card, session.signature)).items()}
    except ModelsError as exc:
        info["card_error"] = str(exc)
    return info


def format_description(info):
    """Format :func:`describe_model` output as text for the terminal."""
    lines = [f"model: {info['path']}", "graph:"]
    for kind in ("inputs", "outputs"):
        for spec in info[kind]:
            shape = ["?" if dim is None else dim for dim in spec["shape"]]
            lines.append(f"  {kind[:-1]:6} {spec['name']}: {spec['dtype']} {shape}")
    lines.append("metadata_props:")
    lines.extend(f"  {key} = {value}" for key, value in sorted(info["metadata_props"].items()))
    if not info["metadata_props"]:
        lines.append("  (none)")
    if info["card_error"]:
        lines.append("card: INVALID")
        lines.append("  " + info["card_error"].replace("\n", "\n  "))
        return "\n".join(lines)
    lines.append("card (parsed, defaults filled in):")
    for key, value in info["card"].items():
        if key != "extra":
            lines.append(f"  {key}: {json.dumps(value)}")
    lines.append("feeding (checked against the graph):")
    lines.extend(f"  {key}: {json.dumps(value)}" for key, value in info["io"].items())
    return "\n".join(lines)
