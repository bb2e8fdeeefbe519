"""What the evaluator and the inference engine share, free of QGIS.

The error hierarchy, output safety and atomic publication, cancel checks, Dask cluster
helpers, JSON and OGR vector reading in a pixel frame, and process-level helpers (collector
pause, BLAS threads, heap trimming). Imports nothing of PolyTopo but :mod:`polytopo.version`.
"""

__all__ = []
