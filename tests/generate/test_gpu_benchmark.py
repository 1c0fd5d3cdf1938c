"""The GPU benchmark's paths that run anywhere: FLOPs from the configs, no CUDA, --tiny (issue 15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from amvicc.errors import UserError
from amvicc.generate.specs import load_pipeline_file, resolve_model

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "gpu_generate.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=False,
    )


def test_without_cuda_it_counts_flops_and_exits_0_saying_why() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the benchmark would time the models")
    proc = _run("--modes", "eager")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    sd35 = next(line for line in lines if line.startswith("sd35-large:"))
    flux = next(line for line in lines if line.startswith("flux-dev:"))
    # 28 steps of two transformer passes (guidance), 50 of one; counted from the configs
    assert "TFLOP per 1024x1024 image, 28 steps" in sd35 and "vae_decode" in sd35
    assert "TFLOP per 1024x1024 image, 50 steps" in flux
    assert 1500 < float(sd35.split()[1]) < 2100 and 3300 < float(flux.split()[1]) < 4200
    assert lines[-1].startswith("no CUDA device:") and "nothing was timed" in lines[-1]


def test_tiny_runs_the_same_path_on_the_cpu() -> None:
    proc = _run("--tiny", "--modes", "eager", "--images", "1", "--warmup", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for model in ("sd35-large", "flux-dev"):
        assert f"{model}_eager_s_per_img:" in proc.stdout
    assert "device: CPU (--tiny)" in proc.stdout


def test_random_weight_pipeline_files_name_their_configs(tmp_path: Path) -> None:
    spec = resolve_model(str(REPO / "pipelines" / "random" / "sd35-large.yaml"))
    assert spec.is_smoke and spec.random is not None
    assert (Path(spec.random) / "transformer" / "config.json").is_file()
    assert (spec.steps, spec.guidance, spec.width, spec.dtype) == (28, 3.5, 1024, "bfloat16")
    flux = resolve_model(str(REPO / "pipelines" / "random" / "flux-dev.yaml"))
    assert flux.steps == 50 and flux.pipeline == "FluxPipeline"
    broken = tmp_path / "broken.yaml"
    broken.write_text("pipeline: FluxPipeline\nrandom: nowhere\n")
    with pytest.raises(UserError, match=r"no model_index\.json"):
        load_pipeline_file(broken)
    both = tmp_path / "both.yaml"
    both.write_text("pipeline: FluxPipeline\nrandom: nowhere\nrepo: org/name\n")
    with pytest.raises(UserError, match="exactly one of"):
        load_pipeline_file(both)
