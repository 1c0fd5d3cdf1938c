from __future__ import annotations

import hashlib
import os
from pathlib import Path

import diffusers
import pytest

from amvicc.generate.smoke import RECIPE_VERSION, smoke_model_names, smoke_model_path
from amvicc.resources import cache_dir


def _weights_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*.safetensors"))
    }


def test_smoke_models_are_built_once_in_the_cache(smoke_cache: Path) -> None:
    assert set(smoke_model_names()) >= {"tiny-sd3", "tiny-sdxl"}
    folder = smoke_model_path("tiny-sd3")
    assert folder == cache_dir("smoke", "tiny-sd3") / f"v{RECIPE_VERSION}"
    assert folder.is_relative_to(smoke_cache)
    assert (folder / "model_index.json").is_file()
    stamp = (folder / "model_index.json").stat().st_mtime_ns
    assert smoke_model_path("tiny-sd3") == folder
    assert (folder / "model_index.json").stat().st_mtime_ns == stamp  # not rebuilt
    assert not list(folder.parent.glob(".*.tmp"))  # no temporary build left behind


@pytest.mark.parametrize(
    ("name", "cls", "denoiser"),
    [
        ("tiny-sd3", diffusers.StableDiffusion3Pipeline, "SD3Transformer2DModel"),
        ("tiny-sdxl", diffusers.StableDiffusionXLPipeline, "UNet2DConditionModel"),
    ],
)
def test_smoke_models_load_through_from_pretrained(name: str, cls: type, denoiser: str) -> None:
    pipe = diffusers.DiffusionPipeline.from_pretrained(smoke_model_path(name))
    assert type(pipe) is cls
    model = getattr(pipe, "transformer", None) or pipe.unet
    assert type(model).__name__ == denoiser
    assert sum(p.numel() for p in model.parameters()) < 200_000  # tiny


def test_the_same_smoke_model_is_built_on_every_machine(tmp_path: Path) -> None:
    first = smoke_model_path("tiny-sdxl")
    saved = os.environ["AMVICC_CACHE"]
    os.environ["AMVICC_CACHE"] = str(tmp_path)
    try:
        second = smoke_model_path("tiny-sdxl")
    finally:
        os.environ["AMVICC_CACHE"] = saved
    assert first != second
    digests = _weights_digest(first)
    assert digests and digests == _weights_digest(second)
