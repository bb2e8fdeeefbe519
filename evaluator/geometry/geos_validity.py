"""GEOS's validity check, safe to run on several threads at once.

``shapely.is_valid`` runs the GEOS check inside ``warnings.catch_warnings()`` with
``simplefilter("ignore")``. Those blocks change the process's warning filters, which are
shared by every thread: two threads inside such blocks at once can leave the filters set
to "ignore" when both have ended (the first restores what it saw, the second then restores
the first one's "ignore"), and every later warning of the process is dropped, an
evaluation's own warnings about its inputs among them. The GEOS check itself issues no
Python warning (shapely 2.1), so :func:`geos_is_valid` calls it without the block.
"""

import numpy as np
import shapely

__all__ = ["geos_is_valid"]


def geos_is_valid(geometries):
    """Whether each geometry is valid by GEOS; False for a missing one (``shapely.is_valid``'s values).

    Examples
    --------
    >>> bowtie = shapely.Polygon([(0, 0), (2, 2), (2, 0), (0, 2)])
    >>> geos_is_valid([shapely.box(0, 0, 1, 1), bowtie, None]).tolist()
    [True, False, False]
    """
    return shapely.lib.is_valid(np.asarray(geometries, dtype=object))
