"""Tile grid, blending weights, and seam-free stitching of tile-dependent predictions."""

import numpy as np
import pytest

from polytopo.models.errors import ModelCardError
from polytopo.models.session import SessionParams, open_session
from polytopo.models.raster.tiling import StripAccumulator, Tile, TilingParams, blend_weights, tile_origins


def test_tiles_cover_the_axis_with_a_uniform_stride():
    for length in (1, 31, 32, 33, 56, 57, 100, 257):
        starts = tile_origins(length, 32, 24)
        assert starts[0] == 0
        assert starts[-1] + 32 >= length
        assert len(starts) == 1 or starts[-2] + 32 < length  # no tile more than needed
        assert np.all(np.diff(starts) == 24)


def test_weights_sum_to_one_across_an_overlap():
    ramp = blend_weights(32, 8)[16]
    left, right = ramp[24:], ramp[:8]
    np.testing.assert_allclose(left + right, 1.0, rtol=1e-6)
    assert ramp.min() > 0 and ramp.max() == 1.0


def test_invalid_tiling_is_rejected():
    with pytest.raises(ModelCardError, match="overlap"):
        TilingParams(32, 32)
    with pytest.raises(ModelCardError, match="batch"):
        TilingParams(32, 8, 0)


def stitch(height, width, tile, overlap, predict, blended=True, skip=()):
    params = TilingParams(tile, overlap)
    rows = tile_origins(height, tile, params.stride_px)
    cols = tile_origins(width, tile, params.stride_px)
    accumulator = StripAccumulator(width, tile, overlap if blended else 0, 1)
    out = np.zeros((height, width), np.float32)
    valid_out = np.zeros((height, width), bool)
    for k, row0 in enumerate(rows):
        nxt = height if k == len(rows) - 1 else int(rows[k + 1])
        accumulator.begin_row(int(row0), nxt, height)
        for j, col0 in enumerate(cols):
            t = Tile(0, int(col0), int(row0), tile, k, j)
            if (k, j) in skip:
                continue
            if blended:
                accumulator.add(t, predict(t)[None], np.ones((tile, tile), bool))
            else:
                out[row0:row0 + tile, col0:col0 + tile] = predict(t)
        r0, values, valid = accumulator.end_row()
        if blended:
            out[r0:r0 + values.shape[1]] = values[0]
            valid_out[r0:r0 + values.shape[1]] = valid
    return (out, valid_out) if blended else out


def reference_blend(height, width, tile, overlap, predict, skip=()):
    """Weighted average over the whole grid at once, the definition the accumulator must match."""
    params = TilingParams(tile, overlap)
    total = np.zeros((height + tile, width + tile))
    weight = np.zeros((height + tile, width + tile))
    w = blend_weights(tile, overlap)
    for k, row0 in enumerate(tile_origins(height, tile, params.stride_px)):
        for j, col0 in enumerate(tile_origins(width, tile, params.stride_px)):
            if (k, j) not in skip:
                t = Tile(0, int(col0), int(row0), tile, k, j)
                total[row0:row0 + tile, col0:col0 + tile] += predict(t) * w
                weight[row0:row0 + tile, col0:col0 + tile] += w
    with np.errstate(invalid="ignore"):
        return np.where(weight > 0, total / np.maximum(weight, 1e-30), 0)[:height, :width], (weight > 0)[:height, :width]


@pytest.mark.parametrize("height, width, skip", [(70, 90, ()), (100, 61, ((1, 1), (0, 2))), (20, 20, ()), (130, 130, ((1, 0), (1, 1), (1, 2), (1, 3)))])
def test_accumulator_equals_whole_grid_weighted_average(height, width, skip):
    rng = np.random.default_rng(height * width)
    cache = {}

    def predict(t):
        return cache.setdefault((t.row0, t.col0), rng.random((32, 32)).astype(np.float32))

    values, valid = stitch(height, width, 32, 8, predict, skip=skip)
    expected, expected_valid = reference_blend(height, width, 32, 8, predict, skip=skip)
    np.testing.assert_array_equal(valid, expected_valid)
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)


def test_constant_predictions_blend_to_the_constant():
    out, valid = stitch(70, 90, 32, 8, lambda t: np.full((32, 32), 0.7, np.float32))
    np.testing.assert_allclose(out, 0.7, rtol=1e-6)
    assert valid.all()


def test_no_visible_seams_with_a_tile_dependent_model(tmp_path, tiny):
    """The model subtracts each tile's mean, so tiles disagree; blending must hide the steps."""
    session = open_session(tiny.tile_mean_model(tmp_path / "mean.onnx", tile=32), SessionParams(provider="cpu"))
    height, width = 104, 128  # whole tiles: 32 + k * 24
    image = np.tile(np.linspace(0, 1, width, dtype=np.float32), (height, 1))

    def predict(t):
        x = image[t.row0:t.row0 + 32, t.col0:t.col0 + 32][None, None]
        return session.run(["output"], {"input": np.ascontiguousarray(x)})[0][0, 0]

    hard = stitch(height, width, 32, 8, predict, blended=False)
    soft, _valid = stitch(height, width, 32, 8, predict)
    hard_step = np.abs(np.diff(hard, axis=1)).max()
    soft_step = np.abs(np.diff(soft, axis=1)).max()
    within_tile = np.abs(np.diff(predict(Tile(0, 0, 0, 32, 0, 0)), axis=1)).max()
    assert hard_step > 0.1  # the test is meaningful: without blending there are seams
    assert soft_step < 0.25 * hard_step
    assert soft_step < within_tile + hard_step / 8 + 1e-3
