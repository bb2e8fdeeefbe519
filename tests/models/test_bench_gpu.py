"""``benchmarks/bench_gpu.py`` runs on the CPU: CUDA rows say why they are not available, CPU rows are measured."""

import json
import subprocess
import sys

import onnxruntime


def test_one_command_prints_the_table_and_measures_the_cpu_rows(repo_root, tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, str(repo_root / "benchmarks" / "bench_gpu.py"), "--size", "256",
                           "--batch", "1", "--repeats", "1", "--json-out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(row["provider"], row["precision"]): row for row in json.loads(out.read_text())}
    assert set(rows) == {("cuda", "fp32"), ("cuda", "fp16"), ("cpu", "fp32"), ("cpu", "fp16")}
    cuda_offered = "CUDAExecutionProvider" in onnxruntime.get_available_providers()
    for precision in ("fp32", "fp16"):
        cuda, cpu = rows["cuda", precision], rows["cpu", precision]
        assert cuda["available"] is cuda_offered
        if not cuda_offered:
            assert "CUDAExecutionProvider" in cuda["reason"]
            assert f"CUDA     {precision}      not available: " in done.stdout
        assert cpu["available"] and cpu["provider_used"].startswith("CPUExecutionProvider")
        assert cpu["bare_tiles_per_s"] > 0 and cpu["pipeline_tiles_per_s"] > 0
        assert cpu["busy_share"] == cpu["pipeline_tiles_per_s"] / cpu["bare_tiles_per_s"]
        assert cpu["tiles_run"] == cpu["tiles"] > 0 and cpu["polygons"] > 0
    # The fp16 variant is compared with the fp32 run of the same provider.
    check = rows["cpu", "fp16"]["fp16_check"]
    assert check["count_reference"] == rows["cpu", "fp32"]["polygons"]
    assert check["count_other"] == rows["cpu", "fp16"]["polygons"]
    assert (check["difference_share"] == 0.0) is check["equal"]
    assert ("GPU: not measured" in done.stdout) is not cuda_offered
