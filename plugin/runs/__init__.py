"""The plugin's run API, shared by the Processing algorithms and the dock.

``evaluate_layers``, ``vectorize_layer`` and ``vectorize_and_evaluate`` are safe in a
worker thread (no GUI, no project access; pass a transform context taken on the main
thread); ``export_run`` writes files only; ``add_run_to_project`` changes the project and
runs on the main thread only. ``feedback`` is any object with ``setProgress``,
``isCanceled``, ``pushInfo`` and ``reportError`` (see :mod:`polytopo.plugin.runs.feedback`); a cancel
raises :class:`~polytopo.plugin.errors.RunCanceled` after removing partial outputs.
"""

from ...core.lazy_names import lazy_namespace

#: Where each name of the run API is defined. The names are imported on first use
#: (PEP 562): the Processing algorithms import light modules of this package at QGIS
#: start (``styles``, ``raster_pixel``, ``feedback``), and those must not pull in
#: shapely before :mod:`polytopo.plugin.setup.geos_isolation` has run.
_DEFINED_IN = {
    "EvaluationRun": ".evaluation",
    "RunCanceled": "..errors",
    "VectorizationRun": ".vectorize",
    "add_run_to_project": ".project_layers",
    "evaluate_layers": ".evaluation",
    "export_run": ".export",
    "vectorize_and_evaluate": ".vectorize_evaluate",
    "vectorize_layer": ".vectorize",
}

__all__ = [
    "EvaluationRun",
    "RunCanceled",
    "VectorizationRun",
    "add_run_to_project",
    "evaluate_layers",
    "export_run",
    "vectorize_and_evaluate",
    "vectorize_layer",
]


__getattr__, __dir__ = lazy_namespace(__name__, _DEFINED_IN)
