"""The evaluation profiles: ``paper``, ``reference-code``, ``coco``, ``p3``, ``p3-code``.

:mod:`polytopo.evaluator.tables.profiles` registers them.
"""

__all__ = []
