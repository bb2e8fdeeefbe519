"""Provider choice and reporting."""

import numpy as np
import onnxruntime
import pytest

from polytopo.models.errors import ModelFileError, ProviderError
from polytopo.models.session import SessionParams, choose_providers, open_session

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
TRT = "TensorrtExecutionProvider"


def test_auto_without_gpu_falls_back_and_says_why():
    providers, reason = choose_providers("auto", [CPU])
    assert providers == [CPU]
    assert "no GPU provider" in reason and CPU in reason


def test_auto_prefers_tensorrt_then_cuda():
    assert choose_providers("auto", [TRT, CUDA, CPU]) == ([TRT, CUDA, CPU], None)
    assert choose_providers("auto", [TRT, CUDA, CPU], use_tensorrt=False) == ([CUDA, CPU], None)
    assert choose_providers("auto", [CUDA, CPU]) == ([CUDA, CPU], None)


def test_cuda_without_cuda_provider_names_the_provider_list():
    with pytest.raises(ProviderError) as info:
        choose_providers("cuda", ["AzureExecutionProvider", CPU])
    assert "AzureExecutionProvider" in str(info.value) and CPU in str(info.value)
    assert "--provider auto" in str(info.value)


def test_cpu_never_asks_for_gpu():
    assert choose_providers("cpu", [TRT, CUDA, CPU]) == ([CPU], None)


def test_unknown_provider_choice_is_rejected():
    with pytest.raises(ProviderError, match="one of"):
        SessionParams(provider="gpu")


def test_session_reports_what_it_uses(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx")
    session = open_session(path, SessionParams(provider="auto", intra_op_threads=1))
    assert session.report.requested == "auto"
    assert session.report.used[0] in onnxruntime.get_available_providers()
    if CUDA not in onnxruntime.get_available_providers():
        assert session.report.primary == CPU
        assert "fell back" in session.report.describe()
    x = np.random.default_rng(0).random((2, 1, 8, 8), dtype=np.float32)
    (out,) = session.run(["output"], {"input": x})
    np.testing.assert_array_equal(out, x)


@pytest.mark.skipif(CUDA in onnxruntime.get_available_providers(), reason="this onnxruntime has CUDA")
def test_cuda_request_on_cpu_build_fails_clearly(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx")
    with pytest.raises(ProviderError, match="CUDAExecutionProvider"):
        open_session(path, SessionParams(provider="cuda"))


def test_missing_and_corrupt_model_files(tmp_path):
    with pytest.raises(ModelFileError, match="no such file"):
        open_session(tmp_path / "missing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00garbage")
    # refused by the external-data check, which reads the file before onnxruntime does
    with pytest.raises(ModelFileError, match="Expected an ONNX model"):
        open_session(bad, SessionParams(provider="cpu"))
