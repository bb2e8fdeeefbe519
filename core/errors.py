"""The root of every error PolyTopo raises on purpose, and the errors both engines share.

::

    PolytopoError (also named EvaluatorError)
    ├── InputFormatError (also ValueError)      unreadable file, wrong schema, bad record
    ├── InvalidParameterError (also ValueError) a parameter outside its domain
    ├── MissingDependencyError (also ImportError) an optional library (GDAL, matplotlib) is missing
    ├── ClusterError (also RuntimeError)        a Dask scheduler, worker or partition failed
    ├── EvaluationCanceled (also RuntimeError)  an evaluation's cancel check said stop (:mod:`.cancel`)
    ├── output errors of :mod:`.output_safety`  (unsafe, existing or unwritable outputs)
    └── polytopo.models.errors.ModelsError      the inference engine's errors

``EvaluatorError`` is the evaluator's name for the root, kept for callers that catch it: every
error the evaluator raises is one.

Every message names what was expected, what was found and, where it helps, how to fix it.
Invalid polygon geometry is *not* an error: it is evaluated and counted as a topology failure.
"""

__all__ = ["PolytopoError", "EvaluatorError", "InputFormatError", "InvalidParameterError", "MissingDependencyError",
           "ClusterError", "EvaluationCanceled"]


class PolytopoError(Exception):
    """Root of every error PolyTopo raises on purpose."""


EvaluatorError = PolytopoError
"""The evaluator's name for :class:`PolytopoError`."""


class InputFormatError(PolytopoError, ValueError):
    """An input file, record or feature cannot be read as polygons."""


class InvalidParameterError(PolytopoError, ValueError):
    """A parameter is outside the domain the metric definitions allow."""


class MissingDependencyError(PolytopoError, ImportError):
    """An optional library needed for this input or output cannot be imported."""


class ClusterError(PolytopoError, RuntimeError):
    """A Dask scheduler does not answer, a worker differs or dies, or a partition fails."""


class EvaluationCanceled(PolytopoError, RuntimeError):
    """The cancel check of a run said stop at a progress step (:mod:`.cancel`); nothing was written."""
