"""Working-set estimate of a run, checked before any work starts.

The estimate counts what the pipeline allocates (a batch of input tiles, the
model's outputs for that batch, the batches prefetched ahead of the decoding,
the strip accumulator and the decoder's buffers for one strip of the widest
column block) with a factor for the model's own intermediate tensors, which
onnxruntime does not expose. It is a guard against settings that cannot
work (a tile size or batch the memory cannot hold), not a promise.
"""

from dataclasses import dataclass

from ..core.machine import available_memory_bytes
from .errors import MemoryBudgetError

__all__ = ["MemoryEstimate", "available_memory_bytes", "check_memory", "estimate_memory"]

_FLOAT_BYTES = 4
_MODEL_ACTIVATION_FACTOR = 8
"""Intermediate tensors of a model, as a multiple of its input and output size (a guess)."""


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated peak allocations of a run, bytes.

    Attributes
    ----------
    batch_bytes : int
        Input batch, outputs and the model's intermediates for the batch being
        run, plus the tensors of the batches prefetched or being decoded.
    strip_bytes : int
        Strip accumulator and the decoder's buffers for one strip.
    """

    batch_bytes: int
    strip_bytes: int

    @property
    def total_bytes(self):
        """Sum of the parts, bytes."""
        return self.batch_bytes + self.strip_bytes


def estimate_memory(grid_width_px, tile_size_px, batch_size, input_channels, output_channels, dense_channels,
                    prefetch_batches=0):
    """Estimate the working set of a run.

    Parameters
    ----------
    grid_width_px : int
        Width of the widest column-block window, px (the model grid's width
        when it is processed in one block).
    tile_size_px, batch_size : int
    input_channels : int
        Channels of the model input.
    output_channels : int
        Channels of all outputs per tile pixel (instance masks count per instance).
    dense_channels : int
        Channels blended into the strip accumulator.
    prefetch_batches : int
        Batches a background thread may hold ready ahead of the decoding
        (each holds its tensors while it waits, one more is being decoded).

    Returns
    -------
    MemoryEstimate

    Examples
    --------
    >>> estimate_memory(1024, 256, 4, 3, 1, 1).total_bytes > 0
    True
    """
    tile_pixels = tile_size_px * tile_size_px
    tensors = batch_size * tile_pixels * (input_channels + output_channels) * _FLOAT_BYTES
    waiting = tensors * (prefetch_batches + 1) if prefetch_batches else 0  # queued, plus the one being decoded
    batch = tensors * (1 + _MODEL_ACTIVATION_FACTOR) + waiting
    strip = tile_size_px * (grid_width_px + tile_size_px) * ((dense_channels + 1) * _FLOAT_BYTES + 1)
    strip += tile_size_px * grid_width_px * (2 + _FLOAT_BYTES)
    return MemoryEstimate(int(batch), int(strip))


def check_memory(estimate, limit_bytes=None):
    """Raise when ``estimate`` exceeds ``limit_bytes`` (default: the memory available now).

    Raises
    ------
    MemoryBudgetError
        The estimate does not fit; the message suggests a smaller tile or batch.
    """
    limit = limit_bytes if limit_bytes is not None else available_memory_bytes()
    if limit is None or estimate.total_bytes <= limit:
        return
    raise MemoryBudgetError(
        f"Expected the working set to fit in {limit / 2**20:.0f} MiB but the estimate is "
        f"{estimate.total_bytes / 2**20:.0f} MiB ({estimate.batch_bytes / 2**20:.0f} MiB per batch, "
        f"{estimate.strip_bytes / 2**20:.0f} MiB for the strip); pass a smaller --tile or --batch."
    )
