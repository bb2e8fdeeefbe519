"""Metrics of one polygon pair, in the shapely style: ``boundary_iou(a, b)``, ``polis(a, b)``, ...

Each function takes shapely Polygons (holes allowed) in pixel units and returns one number.
They prepare the pair as the ``paper`` profile does (holes below A_min dropped, canonical
vertex order) and call the same vectorized kernels as :func:`polytopo.evaluator.evaluate`
(:func:`.pairs.evaluate_pairs`, :func:`.paper.topology_exact`) on that one pair, so each
value equals the evaluator's per-feature record of the pair. The pair is taken as matched:
no IoU threshold β is applied. Keyword arguments are ``paper`` profile parameters
(:class:`.params.EvaluationParams`), e.g. ``min_hole_area_px2``.

>>> from shapely import Polygon
>>> square = Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(5, 5), (10, 5), (10, 10), (5, 10)]])
>>> boundary_iou(square, square), polis(square, square), topo_em(square, square)
(1.0, 0.0, 1)
"""

import numpy as np
import shapely

from ...core.errors import InvalidParameterError
from ..inputs.instances import InstanceSet, instances_from_geometry
from .matching import iou_candidates
from .pairs import evaluate_pairs
from ..profiles.paper import prepare, topology_exact
from ..tables.params import params_for
from ..tables.profiles import DEFAULT_PROFILE
from ..inputs.repair import occupied_region
from ..geometry.rings import RingTable
from .stats import f1_score
from ..inputs.validity import validity_reasons

__all__ = ["boundary_iou", "polis", "mta", "hole_f1", "topo_em"]


def _instance_set(polygon, name):
    if not isinstance(polygon, shapely.Polygon) or polygon.is_empty:
        raise InvalidParameterError(
            f"Expected {name} to be a non-empty shapely Polygon in pixels but got {type(polygon).__name__}"
            f"{' (empty)' if isinstance(polygon, shapely.Geometry) and polygon.is_empty else ''}; "
            "pass one part of a MultiPolygon at a time")
    return InstanceSet(tuple(instances_from_geometry(polygon, image_id=0, source_id=0)), (0,))


def _pair(pred, ref, overrides):
    """The evaluator's pair metrics, topology flag and hole counts of the one pair ``(ref, pred)``."""
    params = params_for(DEFAULT_PROFILE, **overrides)
    gt_set, pred_set, _ = prepare(_instance_set(ref, "ref"), _instance_set(pred, "pred"), params)
    gt, preds = list(gt_set.instances), list(pred_set.instances)
    gt_table, pred_table = RingTable(gt, params.boundary_radius_px), RingTable(preds, params.boundary_radius_px)
    gt_regions, pred_regions = occupied_region(gt_table.polygons), occupied_region(pred_table.polygons)
    zero = np.zeros(1, dtype=np.int64)
    cand = iou_candidates(gt_regions, pred_regions, zero, zero)
    iou, inter = cand.lookup(zero, zero) if len(cand.iou) else (np.zeros(1), np.zeros(1))
    pairs = evaluate_pairs(gt_table, pred_table, gt_regions, pred_regions, zero, zero, iou, inter, params)
    _, topo = topology_exact(pairs, gt_table, pred_table, validity_reasons(preds, pred_table.polygons), params)
    return pairs, bool(topo[0]), gt[0].hole_count, preds[0].hole_count


def boundary_iou(a, b, radius_px=1.0, *, scope="overall", **params):
    """Boundary IoU of two polygons (Definition 5): IoU of their rings' bands of half-width ``radius_px``.

    Parameters
    ----------
    a, b : shapely.Polygon
        Prediction and reference, in pixels; holes allowed.
    radius_px : float
        Band half-width d, pixels.
    scope : {"overall", "exterior"}
        ``"overall"`` bands all rings (O-BIoU), ``"exterior"`` the exterior ring only (E-BIoU).
    **params
        Other ``paper`` profile parameters.

    Returns
    -------
    float
        In [0, 1], unitless; higher is better.

    Examples
    --------
    >>> from shapely import Polygon
    >>> ref = Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(5, 5), (10, 5), (10, 10), (5, 10)]])
    >>> pred = Polygon([(0, 0), (20, 0), (20, 20), (0, 20)])
    >>> boundary_iou(pred, ref, scope="exterior")
    1.0
    >>> round(boundary_iou(pred, ref), 3)
    0.8
    """
    pairs = _pair(a, b, {"boundary_radius_px": radius_px, **params})[0]
    return float(_scoped(pairs.o_biou, pairs.e_biou, scope)[0])


def polis(a, b, *, scope="overall", **params):
    """PoLiS distance of two polygons (Definition 6): symmetric mean vertex-to-boundary distance.

    Parameters
    ----------
    a, b : shapely.Polygon
        Prediction and reference, in pixels; holes allowed.
    scope : {"overall", "exterior"}
        All rings (O-POLIS) or the exterior ring only (E-POLIS).
    **params
        Other ``paper`` profile parameters, e.g. ``polis_vertex_sets``.

    Returns
    -------
    float
        Pixels, >= 0; lower is better.

    Examples
    --------
    >>> from shapely import Polygon
    >>> ref = Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(5, 5), (10, 5), (10, 10), (5, 10)]])
    >>> pred = Polygon([(1, 0), (21, 0), (21, 20), (1, 20)], [[(6, 5), (11, 5), (11, 10), (6, 10)]])
    >>> polis(pred, ref, scope="exterior")
    0.5
    """
    pairs = _pair(a, b, params)[0]
    return float(_scoped(pairs.o_polis, pairs.e_polis, scope)[0])


def mta(a, b, *, scope="overall", **params):
    """Maximum tangent angle error of two polygons (Definition 7).

    Parameters
    ----------
    a, b : shapely.Polygon
        Prediction and reference, in pixels; holes allowed.
    scope : {"overall", "exterior"}
        All rings (O-MTA) or the exterior ring only (E-MTA).
    **params
        Other ``paper`` profile parameters, e.g. ``sample_spacing_px``.

    Returns
    -------
    float
        Degrees in [0, 180]; lower is better. NaN when the prediction's region precision is
        below ``mta_min_precision``.

    Examples
    --------
    >>> from shapely import Polygon
    >>> ref = Polygon([(0, 0), (20, 0), (20, 20), (0, 20)], [[(5, 5), (10, 5), (10, 10), (5, 10)]])
    >>> mta(ref, ref)
    0.0
    """
    pairs = _pair(a, b, params)[0]
    return float(_scoped(pairs.o_mta, pairs.e_mta, scope)[0])


def hole_f1(pred, ref, **params):
    """F1 of the one-to-one hole matching of a pair (Definition 12): ``2TP / (2TP + FP + FN)``.

    Parameters
    ----------
    pred, ref : shapely.Polygon
        Prediction and reference, in pixels; their interiors are the holes.
    **params
        Other ``paper`` profile parameters, e.g. ``ring_match_threshold`` γ, ``min_hole_area_px2``.

    Returns
    -------
    float
        In [0, 1], unitless; higher is better. NaN when neither polygon has a hole.

    Examples
    --------
    >>> from shapely import Polygon
    >>> outer = [(0, 0), (30, 0), (30, 30), (0, 30)]
    >>> ref = Polygon(outer, [[(5, 5), (10, 5), (10, 10), (5, 10)], [(20, 20), (25, 20), (25, 25), (20, 25)]])
    >>> pred = Polygon(outer, [[(5, 5), (10, 5), (10, 10), (5, 10)]])
    >>> round(hole_f1(pred, ref), 4)
    0.6667
    """
    pairs, _, ref_holes, pred_holes = _pair(pred, ref, params)
    tp = int(pairs.hole_tp[0])
    return float(f1_score(tp, pred_holes - tp, ref_holes - tp))


def topo_em(pred, ref, **params):
    """Topology exact match of a pair (Definition 16): 1 when valid, exterior matched, every hole matched.

    Parameters
    ----------
    pred, ref : shapely.Polygon
        Prediction and reference, in pixels; holes allowed.
    **params
        Other ``paper`` profile parameters, e.g. ``ring_match_threshold`` γ, ``check_validity``.

    Returns
    -------
    int
        1 or 0.

    Examples
    --------
    >>> from shapely import Polygon
    >>> outer = [(0, 0), (30, 0), (30, 30), (0, 30)]
    >>> ref = Polygon(outer, [[(5, 5), (10, 5), (10, 10), (5, 10)]])
    >>> topo_em(ref, ref), topo_em(Polygon(outer), ref)
    (1, 0)
    """
    return int(_pair(pred, ref, params)[1])


def _scoped(overall, exterior, scope):
    if scope not in ("overall", "exterior"):
        raise InvalidParameterError(f"Expected scope to be 'overall' or 'exterior' but got {scope!r}")
    return overall if scope == "overall" else exterior
