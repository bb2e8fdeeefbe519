"""Analyses of one evaluation (``evaluator/metrics/analysis.py``): the image-level bootstrap."""

import math
import types

import numpy as np

from polytopo.evaluator import evaluate
from polytopo.evaluator.metrics.analysis import resample_metrics, resample_weights


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


def test_bootstrap_weights_are_the_stream_counts_in_a_byte_each():
    """The weights are each resample's draw counts of one seeded stream, as the smallest exact integers."""
    n_images, resamples = 300, 150
    rng = np.random.default_rng(9)
    expected = [np.bincount(rng.integers(0, n_images, n_images), minlength=n_images) for _ in range(resamples)]
    chunks = list(resample_weights(n_images, resamples, seed=9))
    assert [len(c) for c in chunks] == [64, 64, 22] and {c.dtype for c in chunks} == {np.dtype(np.uint8)}
    assert np.array_equal(np.concatenate(chunks), np.array(expected))
    # chunks of another size (one per thread of a large cluster) hold the same resamples
    small = list(resample_weights(n_images, resamples, seed=9, chunk=7))
    assert [len(c) for c in small] == [7] * 21 + [3] and np.array_equal(np.concatenate(small), np.array(expected))
    # read as floats: the same metrics as from float weights, to the last bit
    rng = np.random.default_rng(4)
    stats = {key: rng.random(n_images) for key in ("e_biou_sum", "e_biou_n", "hole_tp", "holes_gt", "holes_pred",
                                                 "topo", "k")}
    ranking = types.SimpleNamespace(gt_per_image=rng.integers(1, 4, n_images).astype(float),
                                    image=rng.integers(0, n_images, 900), scores=rng.random(900),
                                    tp=rng.random(900) < 0.6)
    assert resample_metrics(chunks[0], stats, ranking) == resample_metrics(chunks[0].astype(float), stats, ranking)
