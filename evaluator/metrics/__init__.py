"""Metrics built on the geometry.

Matching, detection (AP/AR), per-pair and per-polygon metrics, aggregation and analyses
(simple-to-complex breakdown, WrongTopo, bootstrap).
"""

__all__ = []
