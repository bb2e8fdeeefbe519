"""Running an evaluation.

The entry points, the Dask partitioning and merge, method comparison, and what a profile
hands on to records, analyses and reports.
"""

__all__ = []
