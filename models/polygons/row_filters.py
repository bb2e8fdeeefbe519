"""Filters over maps that arrive in consecutive row strips."""

import numpy as np
from scipy import ndimage

__all__ = ["StreamingMedianFilter"]


class StreamingMedianFilter:
    """Median filter of a map pushed strip by strip, equal to filtering the whole map.

    Rows are emitted once ``size // 2`` rows below them have arrived, so the
    output lags the input by that many rows; the last push (``final=True``)
    emits the rest. Borders replicate the edge rows and columns (as
    ``cv2.medianBlur`` does).

    Parameters
    ----------
    size : int
        Odd window edge, pixels.

    Examples
    --------
    >>> image = np.random.default_rng(0).integers(0, 3, (9, 5))
    >>> stream = StreamingMedianFilter(3)
    >>> parts = [stream.push(image[:4])[0], stream.push(image[4:], final=True)[0]]
    >>> bool((np.concatenate(parts) == ndimage.median_filter(image, 3, mode="nearest")).all())
    True
    """

    def __init__(self, size):
        self.size = int(size)
        self.radius = self.size // 2
        self._rows = None
        self._context = 0

    def push(self, filtered_input, *delayed, final=False):
        """Add rows; return the filtered rows now complete, plus the same rows of ``delayed`` arrays.

        Parameters
        ----------
        filtered_input : numpy.ndarray, shape (rows, width)
            The map to filter.
        *delayed : numpy.ndarray, shape (..., rows, width)
            Arrays that must stay aligned with the output (returned unfiltered).
        final : bool

        Returns
        -------
        tuple of numpy.ndarray
            The filtered rows, then the matching rows of each ``delayed`` array.
        """
        arrays = (filtered_input, *delayed)
        if self._rows is None:
            self._rows = tuple(array[..., :0, :] for array in arrays)
        buffers = tuple(np.concatenate([old, new], axis=-2) for old, new in zip(self._rows, arrays))
        count = buffers[0].shape[0]
        emit_end = count if final else max(self._context, count - self.radius)
        filtered = ndimage.median_filter(buffers[0], size=self.size, mode="nearest")
        out = (filtered[self._context:emit_end],) + tuple(b[..., self._context:emit_end, :] for b in buffers[1:])
        keep_from = max(0, emit_end - self.radius)
        self._rows = tuple(b[..., keep_from:, :] for b in buffers)
        self._context = emit_end - keep_from
        return out
