"""Reading and preparing inputs.

COCO JSON (and where each record of a COCO file lies) and OGR layers into pixel-unit
instance sets, validity, repair, filters, input checks and the canonical order.
"""

__all__ = []
