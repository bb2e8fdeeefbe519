"""The plugin's run API, shared by the Processing algorithms and the dock.

``evaluate_layers``, ``vectorize_layer`` and ``vectorize_and_evaluate`` are safe in a
worker thread (no GUI, no project access; pass a transform context taken on the main
thread); ``export_run`` writes files only; ``add_run_to_project`` changes the project and
runs on the main thread only. ``feedback`` is any object with ``setProgress``,
``isCanceled``, ``pushInfo`` and ``reportError`` (see :mod:`.run_feedback`); a cancel
raises :class:`~.errors.RunCanceled` after removing partial outputs.
"""

from .chain import vectorize_and_evaluate
from .errors import RunCanceled
from .evaluation import EvaluationRun, evaluate_layers
from .export import export_run
from .project_layers import add_run_to_project
from .vectorize import vectorize_layer

__all__ = [
    "EvaluationRun",
    "RunCanceled",
    "add_run_to_project",
    "evaluate_layers",
    "export_run",
    "vectorize_and_evaluate",
    "vectorize_layer",
]
