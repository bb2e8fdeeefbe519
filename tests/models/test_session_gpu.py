"""Preloading the CUDA and cuDNN libraries of the nvidia-* wheels (a stand-in module: no GPU here)."""

from types import SimpleNamespace

import onnxruntime

from polytopo.models.session import choose_providers, preload_gpu_libraries

GPU_BUILD = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]


def _gpu_onnxruntime(calls):
    return SimpleNamespace(preload_dlls=lambda: calls.append("preload_dlls"))


def test_a_gpu_session_preloads_the_libraries():
    calls = []
    providers, _ = choose_providers("auto", GPU_BUILD)
    assert preload_gpu_libraries(_gpu_onnxruntime(calls), providers) is True
    assert calls == ["preload_dlls"]


def test_a_cpu_session_preloads_nothing():
    calls = []
    for requested in ("cpu", "auto"):
        providers, _ = choose_providers(requested, GPU_BUILD if requested == "cpu" else ["CPUExecutionProvider"])
        assert preload_gpu_libraries(_gpu_onnxruntime(calls), providers) is False
    assert calls == []


def test_an_onnxruntime_without_preload_is_left_alone():
    assert preload_gpu_libraries(SimpleNamespace(), ["CUDAExecutionProvider", "CPUExecutionProvider"]) is False
    # The installed CPU build: whatever it offers, a CPU session preloads nothing.
    assert preload_gpu_libraries(onnxruntime, choose_providers("cpu", onnxruntime.get_available_providers())[0]) is False
