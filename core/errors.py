"""Exception hierarchy of the evaluator.

::

    EvaluatorError
    ├── InputFormatError (also ValueError)      unreadable file, wrong schema, bad record
    ├── InvalidParameterError (also ValueError) a parameter outside its domain
    ├── MissingDependencyError (also ImportError) an optional library (GDAL, matplotlib) is missing
    ├── ClusterError (also RuntimeError)        a Dask scheduler, worker or partition failed
    └── EvaluationCanceled (also RuntimeError)  the run's cancel check said stop (:mod:`.cancel`)

Every message names what was expected, what was found and, where it helps, how to fix it.
Invalid polygon geometry is *not* an error: it is evaluated and counted as a topology failure.
"""

__all__ = ["EvaluatorError", "InputFormatError", "InvalidParameterError", "MissingDependencyError",
           "ClusterError", "EvaluationCanceled"]


class EvaluatorError(Exception):
    """Root of every error the evaluator raises on purpose."""


class InputFormatError(EvaluatorError, ValueError):
    """An input file, record or feature cannot be read as polygons."""


class InvalidParameterError(EvaluatorError, ValueError):
    """A parameter is outside the domain the metric definitions allow."""


class MissingDependencyError(EvaluatorError, ImportError):
    """An optional library needed for this input or output cannot be imported."""


class ClusterError(EvaluatorError, RuntimeError):
    """A Dask scheduler does not answer, a worker differs or dies, or a partition fails."""


class EvaluationCanceled(EvaluatorError, RuntimeError):
    """The cancel check of a run said stop at a progress step (:mod:`.cancel`); nothing was written."""
