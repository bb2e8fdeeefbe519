"""Running an evaluation.

The entry points, the Dask partitioning and merge (with the workers reading their own
partitions of COCO files), method comparison, and what a profile hands on to records,
analyses and reports.
"""

__all__ = []
