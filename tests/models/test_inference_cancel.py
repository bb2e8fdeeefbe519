"""A cancel request at a progress step (a batch) stops an engine run with InferenceCanceled, leaving no output."""

import os

import numpy as np
import pytest

from polytopo.core.cancel import CancelToken
from polytopo.models import InferenceCanceled, SessionParams, load_model, run_to_file


def test_a_cancel_request_at_a_progress_step_stops_the_run_before_the_next_batch(tmp_path, tiny):
    model = load_model(tiny.deepness_model(tmp_path / "deepness.onnx", tile=64), SessionParams(provider="cpu"))
    band = np.zeros((160, 150), np.uint8)
    band[30:110, 20:90] = 255
    band[50:90, 40:70] = 0
    raster = tiny.write_raster(tmp_path / "rgb.tif", np.stack([band, band, band]))
    token, steps = CancelToken(), []

    def progress(done, total):
        steps.append((done, total))
        if len(steps) == 2:
            token.request()

    with pytest.raises(InferenceCanceled, match="The inference was canceled; no output was written"):
        run_to_file(model, raster, tmp_path / "out.gpkg", progress=progress, cancel=token)
    assert len(steps) == 2 and steps[-1][0] < steps[-1][1]
    assert sorted(os.listdir(tmp_path)) == ["deepness.onnx", "rgb.tif"]


def test_the_old_spelling_still_imports_with_a_deprecation_warning():
    from polytopo.models import errors

    with pytest.warns(DeprecationWarning, match="InferenceCancelled is now InferenceCanceled"):
        assert errors.InferenceCancelled is errors.InferenceCanceled
