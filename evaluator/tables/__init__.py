"""The evaluator's vocabularies, each declared once.

Metrics, error classes, parameters, the profile registry and the rules applied to matched
pairs; every other module reads them from here.
"""

__all__ = []
