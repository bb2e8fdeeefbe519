"""The raster side of a run: windowed reading on the model grid, normalization, tiles and blocks.

Tiles with their blending weights, the strip accumulator, and the grid and column blocks a
whole map is cut into (one Dask task per block).
"""

__all__ = []
