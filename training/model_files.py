"""The model files that training writes (exported or averaged): their size limit and their zoo index entry.

Torch-free, so :mod:`.combined` can use it without PyTorch.
"""

import time
from dataclasses import dataclass
from pathlib import Path

from .errors import TrainingError
from .zoo_index import update_entry

__all__ = ["MAX_MODEL_BYTES", "ExportResult", "recorded_model"]

MAX_MODEL_BYTES = 25_000_000
"""Largest model file accepted (25 MB, float32)."""


@dataclass(frozen=True)
class ExportResult:
    """A written model: its file, size in bytes and the wall time in seconds that writing it took."""

    path: Path
    size_bytes: int
    seconds: float


def recorded_model(recipe, path, train_seconds, started, max_bytes=MAX_MODEL_BYTES):
    """Check the size of ``path`` (``recipe``'s model) and record it in its folder's zoo index.

    ``started`` is the :func:`time.perf_counter` value when writing began; ``max_bytes``
    the largest size accepted (a file above :data:`MAX_MODEL_BYTES` does not fit the plugin
    ZIP: a larger limit is for comparisons only).

    Raises
    ------
    TrainingError
        The file has ``max_bytes`` or more; it is removed, so no file of the model is left
        looking made.
    """
    path = Path(path)
    size = path.stat().st_size
    if size >= max_bytes:
        path.unlink()
        raise TrainingError(
            f"Expected {path.name} under {max_bytes} bytes but it has {size} (removed); use fewer base_channels, a "
            "smaller encoder or fewer ensemble members, or store an ensemble's weights as float16."
        )
    seconds = time.perf_counter() - started
    update_entry(path.parent, recipe, {"size_bytes": size, "train_seconds": train_seconds,
                                       "export_seconds": round(seconds, 1)})
    return ExportResult(path, size, seconds)
