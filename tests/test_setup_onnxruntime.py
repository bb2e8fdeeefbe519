"""Which onnxruntime ``scripts/setup`` installs: the GPU build only where ``nvidia-smi`` lists a GPU.

The selection runs through ``scripts/setup --which-onnxruntime``, which installs nothing,
with a fake ``nvidia-smi`` first on ``PATH`` (a GPU is never needed).
"""

import os
import re
import shutil
import stat
import subprocess

import pytest

GPU_LISTING = "GPU 0: NVIDIA H200 (UUID: GPU-00000000-1111-2222-3333-444444444444)"
DRIVER_FAILURE = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                  "Make sure that the latest NVIDIA driver is installed and running.")


def _tool_dir(tmp_path, nvidia_smi=None):
    """A folder for PATH with the tools the selection uses and, if given, a fake nvidia-smi script body."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("dirname", "grep"):
        os.symlink(shutil.which(tool), folder / tool)
    if nvidia_smi is not None:
        fake = folder / "nvidia-smi"
        fake.write_text("#!/bin/sh\n" + nvidia_smi + "\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return folder


def _which(repo_root, folder, **env):
    environment = {"PATH": str(folder), "HOME": os.environ.get("HOME", "/"), **env}
    done = subprocess.run([shutil.which("bash"), str(repo_root / "scripts" / "setup"), "--which-onnxruntime"],
                          capture_output=True, text=True, env=environment, timeout=60)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def test_a_listed_gpu_gets_onnxruntime_gpu(repo_root, tmp_path):
    code, out, _ = _which(repo_root, _tool_dir(tmp_path, f"echo '{GPU_LISTING}'"))
    assert code == 0
    assert out == f"onnxruntime-gpu (requirements-gpu.txt): nvidia-smi lists {GPU_LISTING}"


def test_no_nvidia_smi_keeps_the_cpu_onnxruntime(repo_root, tmp_path):
    assert _which(repo_root, _tool_dir(tmp_path)) == (0, "onnxruntime (requirements.txt): no nvidia-smi on PATH", "")


@pytest.mark.parametrize("body", [f"echo '{DRIVER_FAILURE}'; exit 9", "exit 0"], ids=["driver-failure", "no-gpu"])
def test_an_nvidia_smi_without_a_gpu_keeps_the_cpu_onnxruntime(repo_root, tmp_path, body):
    code, out, _ = _which(repo_root, _tool_dir(tmp_path, body))
    assert (code, out) == (0, "onnxruntime (requirements.txt): nvidia-smi is there but lists no GPU "
                              "(driver not loaded?)")


def test_the_environment_overrides_the_detection(repo_root, tmp_path):
    folder = _tool_dir(tmp_path, f"echo '{GPU_LISTING}'")
    assert _which(repo_root, folder, POLYTOPO_ONNXRUNTIME="cpu")[1] == (
        "onnxruntime (requirements.txt): POLYTOPO_ONNXRUNTIME=cpu")
    assert _which(repo_root, folder, POLYTOPO_ONNXRUNTIME="auto")[1].startswith("onnxruntime-gpu ")
    code, out, err = _which(repo_root, folder, POLYTOPO_ONNXRUNTIME="cuda")
    assert code != 0 and out == ""
    assert "expected POLYTOPO_ONNXRUNTIME to be cpu, gpu or auto but got 'cuda'" in err


def test_gpu_requirements_pin_the_gpu_build_with_cuda_and_cudnn_from_pypi(repo_root):
    lines = [line.strip() for line in (repo_root / "requirements-gpu.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[a-z,]+\])?==[0-9][0-9.]*", line) for line in lines), lines
    names = {line.split("==")[0] for line in lines}
    assert "onnxruntime-gpu[cuda,cudnn]" in names and "onnxruntime" not in names
    assert {"nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12"} <= names
    # The CPU pin stays where it was, for every machine without a GPU.
    assert "onnxruntime==" in (repo_root / "requirements.txt").read_text()
