"""The evaluator's command lines: ``python -m polytopo.evaluator`` and ``... compare``."""

__all__ = []
