"""Numbers that look right are right: ratios stay in range, perfect is exactly 1, undefined is NaN."""

import math
import warnings

import numpy as np
import pytest
from reliability import case

from polytopo.evaluator import PROFILES, Instance, InstanceSet, InvalidParameterError, evaluate, params_for

# vertices off the integer grid, so GEOS areas of a band and itself differ in the last bits
RING = np.array([[0.0, 0], [37.3, 0], [41.1, 29.7], [3.3, 33.1]])
HOLE = np.array([[10.0, 10], [20, 10.2], [19.7, 20.1], [10.1, 19.6]])
WITH_HOLE = InstanceSet((Instance(1, 1, RING, (HOLE,)),), (1,))
WITHOUT_HOLE = InstanceSet((Instance(1, 1, RING),), (1,))


def _metrics(instances, profile):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(instances, instances, profile=profile, bootstrap_resamples=0).summary["metrics"]


@pytest.mark.parametrize("profile", [
    pytest.param(profile, marks=case(f"polygon with a hole evaluated against itself ({profile})", "evaluator API",
                                     "every BIoU, AP, F1 exactly 1.0 (ratios clipped to [0, 1]; no 1 + 1e-15)"))
    for profile in PROFILES])
def test_self_evaluation_is_exactly_perfect(profile):
    metrics = _metrics(WITH_HOLE, profile)
    for name in ("O-BIoU", "E-BIoU", "H-BIoU", "Hole-F1", "AP50"):
        if name in metrics:
            assert metrics[name] == 1.0, (name, metrics[name])
    ratios = {k: v for k, v in metrics.items() if ("BIoU" in k or k.startswith("AP") or "F1" in k)
              and isinstance(v, float) and not math.isnan(v)}
    assert ratios and all(0.0 <= v <= 1.0 for v in ratios.values()), ratios


@pytest.mark.parametrize("profile", [
    pytest.param(profile, marks=case("no holes on either side (reference-code)", "evaluator API",
                                     "Hole-F1, Hole-P, Hole-R are NaN (undefined) as in the other profiles, not 0.0"))
    if profile == "reference-code" else profile for profile in PROFILES])
def test_hole_f1_without_holes_is_undefined(profile):
    metrics = _metrics(WITHOUT_HOLE, profile)
    assert math.isnan(metrics["Hole-F1"]) and metrics["E-BIoU"] == 1.0


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=case(f"{name}=nan or inf in the Python API", "evaluator API",
                                  f"InvalidParameterError: Expected {name} to be a finite number but got nan ..."))
    for name in ("min_hole_area_px2", "score_threshold", "boundary_radius_px")])
def test_parameters_refuse_nan_and_infinity(name):
    for value in (float("nan"), float("inf")):
        with pytest.raises(InvalidParameterError, match=f"Expected {name} to be a finite number"):
            params_for("paper", **{name: value})
