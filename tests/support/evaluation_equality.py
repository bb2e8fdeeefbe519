"""Equality of two evaluations: every summary number within 1e-9 and identical records."""

import math

import shapely

__all__ = ["assert_same", "assert_same_evaluation"]


def assert_same(a, b, where="summary"):
    """Equal structure, equal non-float leaves, floats within 1e-9 (NaN equals NaN)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9, (where, a, b)
    elif isinstance(a, shapely.Geometry):
        assert shapely.equals_exact(a, b, 0.0), where
    else:
        assert a == b, (where, a, b)


def assert_same_evaluation(one, two):
    assert_same({k: v for k, v in one.summary.items() if k != "timings"},
                {k: v for k, v in two.summary.items() if k != "timings"})
    assert_same(one.records, two.records, "records")
