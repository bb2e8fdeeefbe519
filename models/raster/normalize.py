"""Turn raw raster values into the model's input tensor."""

import numpy as np

from ..errors import RasterError

__all__ = ["InputScaling", "default_input_range", "input_scaling", "to_model_input"]

_TYPE_RANGES = {
    "Byte": (0.0, 255.0),
    "Int8": (-128.0, 127.0),
    "UInt16": (0.0, 65535.0),
    "Int16": (-32768.0, 32767.0),
    "UInt32": (0.0, 4294967295.0),
    "Int32": (-2147483648.0, 2147483647.0),
}


def default_input_range(data_types):
    """Raw value range mapped to [0, 1] when the card gives none.

    Parameters
    ----------
    data_types : sequence of str
        GDAL type names of the bands fed to the model.

    Returns
    -------
    tuple of 2 float
        The full range of the integer type (``Byte``: 0–255, ``UInt16``:
        0–65535, …) or (0, 1) for floating-point bands, which are assumed to
        be scaled already.

    Examples
    --------
    >>> default_input_range(["Byte", "Byte", "Byte"])
    (0.0, 255.0)
    >>> default_input_range(["Float32"])
    (0.0, 1.0)
    """
    ranges = {_TYPE_RANGES.get(name, (0.0, 1.0)) for name in data_types}
    if len(ranges) != 1:
        raise RasterError(
            f"Expected bands of one data type when the card has no polytopo.input_range but got {list(data_types)}; "
            "set polytopo.input_range, e.g. [0, 255]."
        )
    return ranges.pop()


class InputScaling:
    """Affine scaling ``((raw - low) / (high - low) - mean) / std`` per channel, as float32.

    Parameters
    ----------
    low, high : float
        Raw value range mapped to [0, 1].
    mean, std : sequence of float
        One value, or one per channel.
    """

    def __init__(self, low, high, mean, std, channels):
        span = float(high) - float(low)
        mean = np.broadcast_to(np.asarray(mean, np.float64), (channels,))
        std = np.broadcast_to(np.asarray(std, np.float64), (channels,))
        self.low, self.high = float(low), float(high)
        self._gain = (1.0 / (span * std)).astype(np.float32)[:, None, None]
        self._bias = (-(float(low) / span + mean) / std).astype(np.float32)[:, None, None]

    def apply(self, raw, out=None):
        """Scale a (channels, rows, cols) float32 array (into ``out`` when given)."""
        out = np.multiply(raw, self._gain, out=out)
        out += self._bias
        return out


def input_scaling(card, data_types, channels):
    """Build the :class:`InputScaling` for a card and the raster band types."""
    low, high = card.input_range if card.input_range is not None else default_input_range(data_types)
    return InputScaling(low, high, card.standardization_mean, card.standardization_std, channels)


def to_model_input(tiles, scaling, dtype, layout):
    """Stack raw tiles into the model's input tensor.

    Parameters
    ----------
    tiles : list of numpy.ndarray, each (channels, rows, cols) float32
        Raw values; invalid pixels hold 0.
    scaling : InputScaling or None
        None feeds the raw values (for ``uint8`` model inputs).
    dtype : str
        Model input element type.
    layout : str
        ``NCHW`` or ``NHWC``.

    Returns
    -------
    numpy.ndarray
    """
    batch = np.empty((len(tiles), *tiles[0].shape), np.float32)
    for slot, tile in zip(batch, tiles):
        if scaling is not None:
            scaling.apply(tile, out=slot)
        else:
            slot[...] = tile
    if layout == "NHWC":
        batch = batch.transpose(0, 2, 3, 1)
    if dtype == "uint8":
        batch = np.clip(np.rint(batch), 0, 255)
    return np.ascontiguousarray(batch, dtype=dtype)
