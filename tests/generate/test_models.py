"""``amvicc models``: what the image routes and VLM providers declare, as a table and as JSON."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from amvicc.cli import main
from amvicc.generate import routes as image_routes
from amvicc.generate.specs import (
    API_MODELS,
    CHAT_IMAGE_MODELS,
    STABILITY_MODELS,
    shipped_model_names,
)
from amvicc.routes import KnownModel
from amvicc.vlm import providers
from amvicc.vlm.openrouter import AMVICC_VLMS


def listing(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict[str, dict[str, str]]]:
    assert main(["models", "--format", "json", *argv]) == 0
    return {
        kind: {row["name"]: row for row in rows}
        for kind, rows in json.loads(capsys.readouterr().out).items()
    }


def test_models_lists_every_image_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Image models (amvicc generate --model NAME)")
    lines = out.splitlines()
    header = "name kind runs with source key extra defaults notes"
    assert lines[1].split() == header.split()
    rows = {line.split()[0]: line for line in lines[2:] if line}
    for name in (*shipped_model_names(), *API_MODELS, *CHAT_IMAGE_MODELS, *STABILITY_MODELS):
        assert name in rows, name
    assert "stabilityai/stable-diffusion-3.5-large" in rows["sd35"]
    assert "28 steps, guidance 3.5, 1024x1024, bfloat16" in rows["sd35"]
    assert rows["tiny-sd3"].split()[1] == "smoke" and "random weights" in rows["tiny-sd3"]
    assert "HF_TOKEN" in rows["sd35"] and "HF_TOKEN" not in rows["flux-schnell"]
    assert "Vision-language models" in out and "tiny-llava" in out


def test_models_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    images = listing(capsys, "--kind", "image")["image"]
    assert images["sdxl"]["runs_with"] == "StableDiffusionXLPipeline"
    assert images["openai:dall-e-3"]["kind"] == "api"
    assert images["tiny-sdxl"]["kind"] == "smoke"
    assert (images["tiny-sd3"]["route"], images["tiny-sd3"]["extra"]) == ("diffusers", "local")
    assert images["sd35"]["key_env"] == "HF_TOKEN" and images["flux-schnell"]["key_env"] == ""


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
    models = listing(capsys)
    images, vlms = models["image"], models["vlm"]
    gemini = images["openrouter:google/gemini-2.5-flash-image"]
    assert gemini["key_env"] == "OPENROUTER_API_KEY" and "no seed" in gemini["defaults"]
    for name in ("sd3.5-large", "sd3.5-large-turbo", "sd3.5-medium", "ultra", "core"):
        assert images[f"stability:{name}"]["key_env"] == "STABILITY_API_KEY", name
    assert "stability:<model>" not in images  # only the known Stability AI names work
    assert images["openai:dall-e-3"]["key_env"] == "OPENAI_API_KEY"
    amvicc = [row for row in vlms.values() if row["notes"].startswith("AMVICC's")]
    assert len(amvicc) == len(AMVICC_VLMS) == 11
    assert all(row["key_env"] == "OPENROUTER_API_KEY" for row in amvicc)
    assert all(row["route"] == "openrouter" and row["extra"] == "" for row in amvicc)
    assert "openrouter:x-ai/grok-4" in vlms
    assert (vlms["tiny-llava"]["kind"], vlms["tiny-llava"]["extra"]) == ("smoke", "local")
    assert vlms["hf:<repo or folder>"]["extra"] == "local"
    assert vlms["NAME --base-url URL"]["route"] == "compatible"


def test_every_route_and_provider_is_listed_with_what_it_declares(
    capsys: pytest.CaptureFixture[str],
) -> None:
    models = listing(capsys)
    for kind, routes in (("image", image_routes.IMAGE_ROUTES), ("vlm", providers.PROVIDERS)):
        for route in routes:
            names = [route.pattern] if route.any_name else []
            names += [model.name for model in route.known_models()]
            assert names, route.name
            for name in names:
                row = models[kind][name]
                assert row["route"] == route.name
                assert row["extra"] == (route.extra or "")


def test_the_listing_is_read_from_the_registries(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A route added to a registry is listed without touching the verb."""
    hf = next(p for p in providers.PROVIDERS if p.name == "hf")
    added = dataclasses.replace(
        hf,
        name="mlx",
        pattern="mlx:<repo>",
        runs_with="mlx-vlm",
        defaults="greedy",
        notes="Apple silicon",
        models="tests_registry_models:known",
    )
    module = type(sys)("tests_registry_models")
    module.known = lambda: [KnownModel("mlx:tiny", "a known one", kind="smoke")]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tests_registry_models", module)
    monkeypatch.setattr(providers, "PROVIDERS", (*providers.PROVIDERS, added))
    vlms = listing(capsys, "--kind", "vlm")["vlm"]
    assert vlms["mlx:<repo>"] == {
        "name": "mlx:<repo>",
        "kind": "local",
        "route": "mlx",
        "runs_with": "mlx-vlm",
        "source": hf.source,
        "key_env": "",
        "extra": "local",
        "defaults": "greedy",
        "notes": "Apple silicon",
    }
    assert (vlms["mlx:tiny"]["kind"], vlms["mlx:tiny"]["notes"]) == ("smoke", "a known one")


def test_listing_the_models_opens_no_back_end() -> None:
    """The registries name their back ends lazily: listing them imports none of them."""
    heavy = ("torch", "diffusers", "transformers", "gradio", "openai", "pandas")
    back_ends = (
        "amvicc.generate.pipeline",
        "amvicc.generate.openai_images",
        "amvicc.generate.chat_images",
        "amvicc.generate.stability",
        "amvicc.vlm.transformers_vlm",
        "amvicc.vlm.smoke",
    )
    probe = (
        "import contextlib, io, sys; from amvicc.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): assert main(['models']) == 0\n"
        f"print(sorted(m for m in {(*heavy, *back_ends)!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
