from __future__ import annotations

import json
import subprocess
import sys

import pytest

from amvicc.cli import main
from amvicc.generate.specs import API_MODELS, shipped_model_names


def test_models_lists_every_image_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Image models (amvicc generate --model NAME)")
    rows = {
        line.split()[0]: line for line in out.splitlines()[2:] if line and not line.startswith("--")
    }
    for name in (*shipped_model_names(), *API_MODELS):
        assert name in rows, name
    assert "stabilityai/stable-diffusion-3.5-large" in rows["sd35"]
    assert "28 steps, guidance 3.5, 1024x1024, bfloat16" in rows["sd35"]
    assert "smoke" in rows["tiny-sd3"].split()[1] and "random weights" in rows["tiny-sd3"]
    assert "HF_TOKEN" in rows["sd35"] and "HF_TOKEN" not in rows["flux-schnell"]


def test_models_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--kind", "image", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    by_name = {row["name"]: row for row in listing["image"]}
    assert by_name["sdxl"]["runs_with"] == "StableDiffusionXLPipeline"
    assert by_name["openai:dall-e-3"]["kind"] == "api"
    assert by_name["tiny-sdxl"]["kind"] == "smoke"


def test_models_runs_as_a_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "amvicc.models", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tiny-sd3" in {row["name"] for row in json.loads(proc.stdout)["image"]}


def test_models_lists_the_presets_and_the_key_each_needs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    images = {row["name"]: row for row in listing["image"]}
    vlms = {row["name"]: row for row in listing["vlm"]}
    assert "OPENROUTER_API_KEY" in images["openrouter:google/gemini-2.5-flash-image"]["source"]
    assert "no seed" in images["openrouter:google/gemini-2.5-flash-image"]["defaults"]
    for name in ("sd3.5-large", "sd3.5-large-turbo", "sd3.5-medium", "ultra", "core"):
        assert "STABILITY_API_KEY" in images[f"stability:{name}"]["source"], name
    assert "OPENAI_API_KEY" in images["openai:dall-e-3"]["source"]
    amvicc = [row for row in vlms.values() if row["notes"].startswith("AMVICC's")]
    assert len(amvicc) == 11
    assert all(row["source"] == "OPENROUTER_API_KEY" for row in amvicc)
    assert "openrouter:x-ai/grok-4" in vlms
