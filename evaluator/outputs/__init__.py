"""What an evaluation writes.

Per-feature records, the report folder, CSV/JSON/GeoPackage writers, plots and QGIS styles.
"""

__all__ = []
