"""From class maps to map polygons.

Pixel-edge polygonization with holes, strip-wise polygonization of maps that arrive in row
strips, their row filters, and simplification with the final validity guarantee.
"""

__all__ = []
