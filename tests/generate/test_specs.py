from __future__ import annotations

from pathlib import Path

import diffusers
import pytest

from amvicc.errors import UserError
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions
from amvicc.generate.pipeline import DiffusersBackend, pipeline_class
from amvicc.generate.specs import (
    API_MODELS,
    ApiModelSpec,
    DiffusersModelSpec,
    load_pipeline_file,
    resolve_model,
    shipped_model_names,
    shipped_models,
)

REQUIRED = {
    "sd35",
    "sd35-medium",
    "sd35-turbo",
    "sdxl",
    "flux-schnell",
    "flux-dev",
    "tiny-sd3",
    "tiny-sdxl",
}


def test_the_required_pipeline_files_ship_and_name_real_diffusers_classes() -> None:
    assert set(shipped_model_names()) >= REQUIRED
    for spec in shipped_models():
        cls = pipeline_class(spec)
        assert issubclass(cls, diffusers.DiffusionPipeline), spec.name
        assert spec.steps and spec.width and spec.height and spec.size_multiple
        assert spec.width % spec.size_multiple == 0 and spec.height % spec.size_multiple == 0


def test_sd35_resolves_to_sd3_pipeline_with_its_defaults() -> None:
    spec = resolve_model("sd35")
    assert isinstance(spec, DiffusersModelSpec)
    assert pipeline_class(spec) is diffusers.StableDiffusion3Pipeline
    assert spec.repo == "stabilityai/stable-diffusion-3.5-large"
    assert (spec.steps, spec.guidance, spec.width, spec.height) == (28, 3.5, 1024, 1024)
    assert spec.dtype == "bfloat16" and spec.gated and not spec.is_smoke
    turbo = resolve_model("sd35-turbo")
    assert isinstance(turbo, DiffusersModelSpec)
    assert (turbo.steps, turbo.guidance) == (4, 0.0)
    # The configuration that keys sd35's images: what the issue asks, and nothing about hardware.
    backend = DiffusersBackend(spec, GenerationOptions(model="sd35", batch_size=8), ProcessLayout())
    assert backend.outputs["pipeline"] == "StableDiffusion3Pipeline"
    assert backend.outputs["weights"] == "stabilityai/stable-diffusion-3.5-large"
    assert not {"batch_size", "device", "offload", "compile"} & backend.outputs.keys()


def test_smoke_models_use_the_real_pipeline_classes() -> None:
    sd3, sdxl = resolve_model("tiny-sd3"), resolve_model("tiny-sdxl")
    assert isinstance(sd3, DiffusersModelSpec) and isinstance(sdxl, DiffusersModelSpec)
    assert sd3.is_smoke and sdxl.is_smoke
    assert pipeline_class(sd3) is diffusers.StableDiffusion3Pipeline
    assert pipeline_class(sdxl) is diffusers.StableDiffusionXLPipeline


def test_model_names_api_models_repo_ids_and_folders(tmp_path: Path) -> None:
    gpt = resolve_model("openai:gpt-image-1")
    assert gpt == API_MODELS["openai:gpt-image-1"] and gpt.response_format is None
    other = resolve_model("openai:some-new-model")
    assert isinstance(other, ApiModelSpec) and other.api_model == "some-new-model"
    served = resolve_model("my-flux", base_url="http://127.0.0.1:9/v1")
    assert isinstance(served, ApiModelSpec)
    assert (served.api_model, served.base_url) == ("my-flux", "http://127.0.0.1:9/v1")
    repo = resolve_model("org/some-model")
    assert isinstance(repo, DiffusersModelSpec)
    assert (repo.pipeline, repo.repo) == ("DiffusionPipeline", "org/some-model")
    folder = tmp_path / "weights"
    folder.mkdir()
    with pytest.raises(UserError, match="does not exist; give a local diffusers folder"):
        resolve_model(str(tmp_path / "missing"))
    with pytest.raises(UserError, match=r"no model_index\.json"):
        resolve_model(str(folder))
    (folder / "model_index.json").write_text("{}")
    local = resolve_model(str(folder))
    assert isinstance(local, DiffusersModelSpec) and local.repo == str(folder.resolve())


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as info:
        resolve_model("sd99")
    message = str(info.value)
    assert "unknown model 'sd99'" in message
    for name in ("sd35", "tiny-sd3", "flux-schnell", "openai:gpt-image-1"):
        assert name in message


def test_a_pipeline_file_given_as_a_path(tmp_path: Path) -> None:
    (tmp_path / "weights").mkdir()
    path = tmp_path / "mine.yaml"
    path.write_text(
        "pipeline: StableDiffusionXLPipeline\nrepo: ./weights\nsteps: 12\nguidance: 6\n"
        "scheduler:\n  class: EulerAncestralDiscreteScheduler\n  options: {timestep_spacing: trailing}\n"
        "call_options: {negative_prompt: blurry}\n"
    )
    spec = resolve_model(str(path))
    assert isinstance(spec, DiffusersModelSpec)
    assert spec.name == "mine" and spec.repo == str((tmp_path / "weights").resolve())
    assert spec.steps == 12 and spec.guidance == 6.0
    assert spec.scheduler is not None and spec.scheduler.name == "EulerAncestralDiscreteScheduler"
    assert spec.call_options == {"negative_prompt": "blurry"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("pipeline: FluxPipeline\nrepo: a/b\nstpes: 4\n", "unknown field 'stpes'"),
        (
            "pipeline: FluxPipeline\nrepo: a/b\nsteps: many\n",
            "field 'steps' must be a whole number",
        ),
        ("pipeline: FluxPipeline\nrepo: a/b\nsteps: 0\n", "field 'steps' must be a whole number"),
        ("repo: a/b\n", "field 'pipeline' is missing"),
        ("pipeline: Flux Pipeline\nrepo: a/b\n", "field 'pipeline' must be a diffusers class"),
        ("pipeline: FluxPipeline\n", "exactly one of field 'repo'"),
        ("pipeline: FluxPipeline\nrepo: a/b\nsmoke: tiny-sd3\n", "exactly one of field 'repo'"),
        ("pipeline: FluxPipeline\nsmoke: tiny-flux\n", "field 'smoke' is 'tiny-flux'"),
        ("pipeline: FluxPipeline\nrepo: a/b\ndtype: fp8\n", "field 'dtype' is 'fp8'"),
        ("pipeline: FluxPipeline\nrepo: a/b\nguidance: [1]\n", "field 'guidance' must be a number"),
        (
            "pipeline: FluxPipeline\nrepo: a/b\ngated: maybe\n",
            "field 'gated' must be true or false",
        ),
        ("pipeline: FluxPipeline\nrepo: a/b\nscheduler: {shift: 3}\n", "'scheduler.shift'"),
        ("pipeline: FluxPipeline\nrepo: a/b\ncall_options: [1, 2]\n", "field 'call_options'"),
        ("pipeline: FluxPipeline\nrepo: [a/b\n", "is not valid YAML (line 3: expected"),
        ("- just\n- a list\n", "must be a mapping of fields"),
    ],
)
def test_a_broken_pipeline_file_names_the_field(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_pipeline_file(path)
    assert fragment in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_an_unknown_pipeline_class_is_named(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("pipeline: NoSuchPipeline\nrepo: a/b\n")
    with pytest.raises(
        UserError, match=r"field 'pipeline': diffusers .* has no pipeline class 'NoSuchPipeline'"
    ):
        pipeline_class(load_pipeline_file(path))


def test_sizes_are_checked_before_any_weights_are_read() -> None:
    spec = resolve_model("sd35")
    assert isinstance(spec, DiffusersModelSpec)
    with pytest.raises(UserError, match="multiples of 16; use --width 1008 or 1024"):
        DiffusersBackend(spec, GenerationOptions(model="sd35", width=1010), ProcessLayout())
