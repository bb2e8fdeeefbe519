"""Checks of loaded instances that run before the metrics: cost bounds and reference flags.

* :func:`check_sampling_cost` estimates how many boundary samples ``sample_spacing_px``
  asks for (MTA and HD95 sample every ring) and refuses, with the estimate, a spacing
  that would allocate more than :data:`MAX_SAMPLES_PER_RING` points for one ring.
* :func:`reference_flags` counts invalid reference polygons and reference ids that
  appear more than once, and warns about both: the metrics still run, but the user
  learns that their numbers rest on such input.
"""

import warnings
from collections import Counter

import numpy as np
import shapely

from .construct import polygons_of
from .errors import InvalidParameterError
from .kernels import ring_perimeters

__all__ = ["MAX_SAMPLES_PER_RING", "check_sampling_cost", "reference_flags"]

MAX_SAMPLES_PER_RING = 10_000_000
"""Boundary samples one ring may need (two float64 coordinates each: 160 MB)."""
_BYTES_PER_SAMPLE = 16


def _ring_perimeter(ring):
    closed = np.vstack([ring, ring[:1]])
    return float(np.hypot(*np.diff(closed, axis=0).T).sum())


def _longest_perimeter(rings):
    """The longest perimeter (px) of ``rings``, or None without rings.

    All perimeters are summed in one pass; the few within rounding of the longest are
    summed again ring by ring, so the value does not depend on the order of summation.
    """
    if not rings:
        return None
    perimeters = ring_perimeters(rings)
    top = float(perimeters.max())
    near = np.flatnonzero(perimeters >= top * (1.0 - 1e-6))
    return max(_ring_perimeter(rings[i]) for i in near) if near.size else top


def check_sampling_cost(gt_set, pred_set, params):
    """Refuse a ``sample_spacing_px`` that would make one ring need too many samples.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Instances in pixels.
    params : EvaluationParams
        Uses ``sample_spacing_px``.

    Raises
    ------
    InvalidParameterError
        The longest ring (perimeter in px) divided by the spacing exceeds
        :data:`MAX_SAMPLES_PER_RING`; the message gives the estimate in points and bytes
        and the smallest spacing that fits.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance, params_for
    >>> square = InstanceSet((Instance(0, 0, np.array([[0.0, 0], [100, 0], [100, 100], [0, 100]])),), (0,))
    >>> check_sampling_cost(square, square, params_for("paper"))
    >>> check_sampling_cost(square, square, params_for("paper", sample_spacing_px=1e-7))
    Traceback (most recent call last):
    ...
    polytopo.evaluator.errors.InvalidParameterError: Expected at most 10000000 boundary samples per ring ...
    """
    longest = _longest_perimeter([ring for s in (gt_set, pred_set) for i in s.instances for ring in i.rings])
    if longest is None:
        return
    samples = longest / params.sample_spacing_px
    if samples > MAX_SAMPLES_PER_RING:
        raise InvalidParameterError(
            f"Expected at most {MAX_SAMPLES_PER_RING} boundary samples per ring but sample_spacing_px "
            f"{params.sample_spacing_px:g} on the longest ring ({longest:.4g} px) needs {samples:.3g} points "
            f"({samples * _BYTES_PER_SAMPLE / 2**30:.3g} GiB); use --sample-spacing "
            f"{longest / MAX_SAMPLES_PER_RING:.3g} px or more (default 2)")


def reference_flags(gt_set):
    """Count invalid reference polygons and repeated reference ids, warning about each.

    Parameters
    ----------
    gt_set : InstanceSet
        The reference instances.

    Returns
    -------
    dict
        ``gt_invalid`` (polygons GEOS finds invalid) and ``gt_duplicate_ids`` (instances
        sharing a ``(source_id, part)`` with an earlier one).

    Warns
    -----
    UserWarning
        When either count is not zero, naming the first ones.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance
    >>> bowtie = np.array([[0.0, 0], [4, 4], [4, 0], [0, 4]])
    >>> square = np.array([[0.0, 0], [4, 0], [4, 4], [0, 4]])
    >>> with warnings.catch_warnings(record=True):
    ...     warnings.simplefilter("always")
    ...     reference_flags(InstanceSet((Instance(0, 7, bowtie), Instance(0, 7, square)), (0,)))
    {'gt_invalid': 1, 'gt_duplicate_ids': 1}
    """
    instances = gt_set.instances
    polygons = polygons_of(instances)
    invalid = np.flatnonzero(~shapely.is_valid(polygons)) if len(polygons) else np.array([], dtype=int)
    keys = Counter((instance.source_id, instance.part) for instance in instances if instance.source_id is not None)
    repeated = [key for key, count in keys.items() if count > 1]
    duplicates = sum(keys[key] - 1 for key in repeated)
    if len(invalid):
        first = instances[invalid[0]]
        warnings.warn(
            f"{len(invalid)} reference polygon(s) are invalid (e.g. id {first.source_id}: "
            f"{shapely.is_valid_reason(polygons[invalid[0]])}); the metrics use them as they are, so fix them "
            "(e.g. ogr2ogr -makevalid) for numbers you can trust", stacklevel=3)
    if duplicates:
        warnings.warn(
            f"{duplicates} reference instance(s) repeat an id (e.g. {[key[0] for key in repeated[:3]]}); per-feature "
            "records cannot tell them apart: give every reference its own id", stacklevel=3)
    return {"gt_invalid": int(len(invalid)), "gt_duplicate_ids": int(duplicates)}
