"""Analyses of one evaluation (``evaluator/metrics/analysis.py``): the image-level bootstrap."""

import math

from polytopo.evaluator import evaluate


def test_one_image_has_no_bootstrap_interval(square, make_set):
    """Resampling one image always gives the evaluation itself: the interval is undefined, not [x, x]."""
    from polytopo.evaluator.outputs.report import format_table

    polygons = [(square(0, 0, 20), []), (square(40, 0, 20), [])]
    one = evaluate(make_set(polygons), make_set(polygons[:1]), bootstrap_resamples=20).summary
    assert one["bootstrap"]["undefined"] == "1 image(s): an image-level bootstrap needs at least two images"
    assert all(math.isnan(one["bootstrap"][name]["low"]) for name in ("AP50", "Hole-F1", "Topo-EM"))
    assert "   [undefined]" in format_table(one) and "no bootstrap interval: 1 image(s)" in format_table(one)
    two = evaluate(make_set(polygons, image_ids=[0, 1]), make_set(polygons[:1], image_ids=[0]),
                   bootstrap_resamples=20).summary
    assert two["bootstrap"]["undefined"] is None
    assert two["bootstrap"]["AP50"]["low"] <= two["bootstrap"]["AP50"]["high"]
