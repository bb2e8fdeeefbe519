"""The version of PolyTopo, in one place.

Kept in its own module so that :mod:`polytopo.evaluator`, :mod:`polytopo.models` and
:mod:`polytopo.plugin` can read it without importing the package root (whose
:func:`polytopo.classFactory` belongs to QGIS). ``scripts/package`` checks that it equals
``version`` in ``metadata.txt``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
