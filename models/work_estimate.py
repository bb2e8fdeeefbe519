"""How much work a run is, said before it starts: a raster far larger than meant is refused with the estimate.

A virtual raster (VRT) or a mistyped extent can describe 10⁶ × 10⁶ pixels; tiling it
would run for weeks and fill the disk. :func:`check_work` counts the model-grid pixels and
tiles of the processed area and refuses more than ``max_pixels`` with the estimate (tiles,
hours at the measured CPU rate), unless the caller raised the limit (``--max-pixels``,
the Processing parameter *Maximum model pixels*).
"""

from .errors import RasterError

__all__ = ["CPU_SECONDS_PER_MEGAPIXEL", "DEFAULT_MAX_PIXELS", "WorkTooLargeError", "check_work", "describe_work"]

DEFAULT_MAX_PIXELS = 2_000_000_000
"""Model-grid pixels a run may cover without raising the limit: about 180 km² at 30 cm per
pixel, some 20 minutes on a GPU and several hours on a 2-core CPU."""
CPU_SECONDS_PER_MEGAPIXEL = 0.5
"""Wall seconds per model-grid megapixel of the bundled default model on 2 CPU threads
(measured: 361 tiles of 256 px, a 4096² grid, in 7.8 s; ``benchmarks/bench_models_overhead.py``);
the time in :func:`describe_work` is this rate, a rough guide for other models and machines."""


class WorkTooLargeError(RasterError):
    """The processed area has more model pixels than the run's limit."""


def describe_work(width_px, height_px, tiles):
    """One phrase: the grid, its tiles and the time at :data:`CPU_SECONDS_PER_MEGAPIXEL`.

    Examples
    --------
    >>> describe_work(4096, 4096, 361)
    '4096 x 4096 = 1.68e+07 model pixels in 361 tiles, about 8 s on a 2-core CPU'
    """
    pixels = width_px * height_px
    seconds = pixels / 1e6 * CPU_SECONDS_PER_MEGAPIXEL
    return (f"{width_px} x {height_px} = {pixels:.3g} model pixels in {tiles} tiles, about "
            f"{_duration(seconds)} on a 2-core CPU")


def _duration(seconds):
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.0f} s"


def check_work(width_px, height_px, tiles, max_pixels=DEFAULT_MAX_PIXELS):
    """Refuse a run over more than ``max_pixels`` model-grid pixels, with the estimate.

    Parameters
    ----------
    width_px, height_px : int
        The model grid of the processed area (after resampling to the model's ground size).
    tiles : int
        Tiles the run would infer.
    max_pixels : int or None
        The limit; None for none.

    Raises
    ------
    WorkTooLargeError
        ``width_px * height_px`` exceeds ``max_pixels``; the message gives the estimate
        and the two ways on: a smaller area, or a higher limit.
    """
    pixels = width_px * height_px
    if max_pixels is None or pixels <= max_pixels:
        return
    raise WorkTooLargeError(
        f"Expected at most {max_pixels:.3g} model pixels (the run's limit) but the processed area is "
        f"{describe_work(width_px, height_px, tiles)}. Limit the area (--extent, --aoi; in QGIS the processed "
        f"extent or a mask layer), or raise the limit to run it anyway (--max-pixels {pixels:.0f}; Processing: "
        "Maximum model pixels)")
