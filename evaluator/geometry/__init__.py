"""Geometry kernels in pixel units.

Ring sets and boundary bands, grouped nearest-segment search, corners, tangent angles and
raster IoU.
"""

__all__ = []
