from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import diffusers
import numpy as np
import pytest
import torch

from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.generate import GenerationOptions, run_generate
from amvicc.generate.pipeline import DiffusersBackend, compile_repeated_blocks
from amvicc.generate.sink import SMOKE_LABEL, read_provenance
from amvicc.provenance import derive_seed
from amvicc.store import Store

Pixels = Callable[..., dict[tuple[int, str, int], np.ndarray]]


def _options(**overrides: Any) -> GenerationOptions:
    return GenerationOptions(**{"model": "tiny-sd3", "progress": False, **overrides})


def test_python_api_makes_labelled_images_with_provenance(store: Store, few: Catalogue) -> None:
    summary = run_generate(_options(), store=store, catalogue=few)
    assert (summary.planned, summary.made, summary.skipped, summary.failed) == (8, 8, 0, 0)
    assert summary.smoke and "SMOKE TEST" in summary.line()
    run = store.run(summary.run_id)
    assert run.smoke == 1 and run.status == "finished" and run.summary["made"] == 8
    assert run.model == "tiny-sd3" and run.catalogue_sha256 == few.sha256
    assert "batch_size" in run.config and "device" in run.config
    images = store.images(run_id=summary.run_id)
    assert len(images) == 8
    assert {(i.question_index, i.prompt_kind) for i in images} == {
        (q, k) for q in range(1, 5) for k in ("implicit", "explicit")
    }
    for image in images:
        assert image.status == "ok" and image.config_key == summary.config_key
        assert image.seed == derive_seed(0, image.question_index, image.prompt_kind, 0)
        question = few.question(image.question_index)
        expected = (
            question.implicit_prompt
            if image.prompt_kind == "implicit"
            else question.explicit_prompt
        )
        assert image.prompt == expected
        params = json.loads(image.params_json)
        assert params["pipeline"] == "StableDiffusion3Pipeline" and params["smoke_test"] is True
        assert params["steps"] == 2 and params["width"] == 64 and "diffusers" in params["versions"]
        assert image.path is not None
        png = store.path(image.path).read_bytes()
        provenance = read_provenance(png)
        assert provenance["image_id"] == image.image_id and provenance["seed"] == image.seed
        assert provenance["smoke_test"] is True and provenance["prompt"] == image.prompt
        assert provenance["params"] == params
        from PIL import Image

        with Image.open(store.path(image.path)) as opened:
            assert opened.size == (64, 64) and opened.text["Comment"] == SMOKE_LABEL


def test_rerun_makes_nothing_force_makes_new_rows(store: Store, few: Catalogue) -> None:
    first = run_generate(_options(limit=4), store=store, catalogue=few)
    assert first.made == 4
    again = run_generate(_options(limit=4), store=store, catalogue=few)
    assert (again.made, again.skipped, again.run_id) == (0, 4, first.run_id)
    wider = run_generate(_options(), store=store, catalogue=few)
    assert (wider.made, wider.skipped) == (4, 4)
    old = {i.image_id for i in store.images(run_id=first.run_id)}
    forced = run_generate(_options(limit=2, force=True), store=store, catalogue=few)
    assert forced.made == 2
    current = store.images(run_id=first.run_id)
    assert len(current) == 8 and len(store.images(run_id=first.run_id, current=False)) == 10
    assert len({i.image_id for i in current} - old) == 2


def test_hardware_settings_do_not_change_the_configuration(
    tmp_path: Path, few: Catalogue, read_pixels: Pixels
) -> None:
    stores = [Store(tmp_path / f"b{size}") for size in (1, 3)]
    one = run_generate(_options(), store=stores[0], catalogue=few)
    three = run_generate(_options(batch_size=3), store=stores[1], catalogue=few)
    assert one.config_key == three.config_key
    # Same store, other batch size: the images exist already.
    assert run_generate(_options(batch_size=4), store=stores[0], catalogue=few).made == 0
    # One generator per image: the same image whatever the batch it was made in. Batched
    # kernels round floats differently, so a few 8-bit levels may differ by one.
    a, b = read_pixels(stores[0]), read_pixels(stores[1])
    assert a.keys() == b.keys() and len(a) == 8
    for slot in a:
        difference = np.abs(a[slot].astype(int) - b[slot].astype(int))
        assert difference.max() <= 1 and (difference > 0).mean() < 0.01, slot
    # ...whereas another seed gives other images.
    other = Store(tmp_path / "seed1")
    run_generate(_options(seed=1), store=other, catalogue=few)
    c = read_pixels(other)
    assert all(np.abs(a[s].astype(int) - c[s].astype(int)).mean() > 5 for s in a)


def test_unet_smoke_model_and_several_samples(
    store: Store, few: Catalogue, read_pixels: Pixels
) -> None:
    summary = run_generate(
        _options(model="tiny-sdxl", num_images=2, limit=2, batch_size=4), store=store, catalogue=few
    )
    assert (summary.planned, summary.made) == (4, 4)
    images = store.images(run_id=summary.run_id)
    assert {(i.question_index, i.prompt_kind, i.sample) for i in images} == {
        (1, "implicit", 0),
        (1, "implicit", 1),
        (1, "explicit", 0),
        (1, "explicit", 1),
    }
    assert len({i.seed for i in images}) == 4
    got = read_pixels(store)
    assert np.abs(got[(1, "implicit", 0)].astype(int) - got[(1, "implicit", 1)]).mean() > 5
    assert json.loads(images[0].params_json)["pipeline"] == "StableDiffusionXLPipeline"


def test_parameters_from_the_command_line_define_a_new_configuration(
    store: Store, few: Catalogue
) -> None:
    base = run_generate(_options(limit=1), store=store, catalogue=few)
    bigger = run_generate(
        _options(limit=1, width=32, height=48, steps=1, guidance=0.0), store=store, catalogue=few
    )
    assert bigger.config_key != base.config_key and bigger.made == 1
    (image,) = store.images(run_id=bigger.run_id)
    params = json.loads(image.params_json)
    assert (params["width"], params["height"], params["steps"], params["guidance"]) == (
        32,
        48,
        1,
        0.0,
    )
    from PIL import Image

    assert image.path is not None
    with Image.open(store.path(image.path)) as opened:
        assert opened.size == (32, 48)


def test_a_prompt_variant_is_a_run_of_its_own_beside_the_baseline(
    store: Store, tmp_path: Path
) -> None:
    from amvicc.report import build_report
    from amvicc.resources import resource_dir

    shipped = resource_dir("prompts") / "amvicc.csv"
    baseline = load_catalogue(shipped).select(indices=range(1, 3))
    reworded = tmp_path / "reworded.csv"
    text = shipped.read_text(encoding="utf-8")
    old = "generate a butterfly in a natural outdoor setting"
    reworded.write_text(text.replace(old, old + " at dusk"), encoding="utf-8")
    variant = load_catalogue(reworded).select(indices=range(1, 3))
    first = run_generate(_options(), store=store, catalogue=baseline)
    second = run_generate(_options(), store=store, catalogue=variant)
    assert second.run_id != first.run_id and second.config_key != first.config_key
    assert (second.made, second.skipped) == (4, 0)
    # The baseline's images stay current, with the baseline's prompts.
    current = store.images_frame()
    ours = current[current["config_key"] == first.config_key]
    assert len(ours) == 4 and set(ours["prompt"]) >= {old}
    theirs = current[current["config_key"] == second.config_key]
    assert set(theirs["prompt"]) >= {old + " at dusk"}
    # Each run records its catalogue file (None: the shipped one), outside its configuration.
    recorded = {r.config_key: r.config["catalogue"] for r in store.runs(stage="generate")}
    assert recorded == {first.config_key: None, second.config_key: str(reworded.resolve())}
    # The report shows both, side by side: the variant asks the same questions, so it is in
    # the main tables (compared item by item), not scored apart as another catalogue.
    report = build_report(store, indices=frozenset({1, 2}), bootstrap=0, format="md")
    assert {e.key for e in report.entries} == {first.config_key, second.config_key}
    assert not report.catalogues.any
    # Rerunning the baseline makes nothing.
    assert run_generate(_options(), store=store, catalogue=baseline).made == 0


def test_cli_writes_a_summary_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = str(tmp_path / "ws")
    args = ["generate", "--model", "tiny-sd3", "--index", "1-2", "--store", workspace]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "made 4, skipped 0, failed 0, refused 0 of 4" in captured.out
    assert "SMOKE TEST" in captured.out and SMOKE_LABEL in captured.err
    assert main(args) == 0
    assert "made 0, skipped 4" in capsys.readouterr().out
    assert main([*args, "-q"]) == 0
    quiet = capsys.readouterr()
    assert quiet.out == "" and "img/s" not in quiet.err


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("amvicc generate: error: ")
    return err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--model", "sd99"], "unknown model 'sd99'; known models: "),
        (["--model", "tiny-sd3", "--width", "66"], "multiples of 4; use --width 64 or 68"),
        (["--model", "tiny-sd3", "--categories", "tx", "--index", "1-2"], "matches no question"),
        (
            ["--model", "tiny-sd3", "--offload", "model", "--device", "cpu"],
            "--offload moves weights",
        ),
        (["--model", "tiny-sd3", "--device", "cuda"], "no CUDA GPU is visible"),
        (["--model", "tiny-sd3", "--device", "gpu0"], "is not a device"),
        (
            ["--model", "tiny-sd3", "--option", "no_such_arg=1"],
            "cannot generate with these settings",
        ),
        # Larger than the tiny transformer's position table: only the pipeline knows.
        (["--model", "tiny-sd3", "--width", "512"], "cannot generate with these settings"),
        (["--model", "nowhere/missing.yaml"], "pipeline file nowhere/missing.yaml does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_keeps_finished_images(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    workspace = tmp_path / "ws"
    assert (
        main(["generate", "--model", "tiny-sd3", "--limit", "1", "--store", str(workspace), "-q"])
        == 0
    )
    err = _one_line_error(
        capsys, ["generate", "--index", "1-2", "--store", str(workspace), "-q", *extra]
    )
    assert fragment in err
    assert len(Store(workspace).images()) == 1


def test_a_broken_pipeline_file_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("pipeline: StableDiffusion3Pipeline\nsmoke: tiny-sd3\nsteps: -2\n")
    err = _one_line_error(
        capsys, ["generate", "--model", str(path), "--store", str(tmp_path / "ws")]
    )
    assert f"pipeline file {path}: field 'steps' must be a whole number of at least 1" in err


def test_out_of_memory_suggests_smaller_batches_and_keeps_what_was_made(
    store: Store, few: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_call = diffusers.StableDiffusion3Pipeline.__call__
    calls = []

    def call_then_run_out(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real_call(self, *args, **kwargs)

    monkeypatch.setattr(diffusers.StableDiffusion3Pipeline, "__call__", call_then_run_out)
    with pytest.raises(UserError) as info:
        run_generate(_options(batch_size=2), store=store, catalogue=few)
    message = str(info.value)
    assert "out of memory" in message and "--batch-size 1" in message and "--offload" in message
    (run,) = store.runs()
    assert run.status == "failed" and run.summary["made"] == 2
    assert len(store.images()) == 2
    monkeypatch.setattr(diffusers.StableDiffusion3Pipeline, "__call__", real_call)
    resumed = run_generate(_options(batch_size=2), store=store, catalogue=few)
    assert (resumed.made, resumed.skipped) == (6, 2)
    assert store.run(resumed.run_id).status == "finished"


@pytest.mark.slow
def test_missing_weights_name_the_repo_and_how_to_download(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    workspace = tmp_path / "ws"
    with Store(workspace) as store:
        run_generate(_options(limit=2), store=store, catalogue=load_catalogue())
    proc = run_cli(
        "--model",
        "sd35",
        "--limit",
        "2",
        "--store",
        str(workspace),
        HF_HOME=str(tmp_path / "empty-hf-home"),
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    message = lines[0]
    for fragment in (
        "stabilityai/stable-diffusion-3.5-large",
        "not in the local Hugging Face cache",
        "HF_HUB_OFFLINE is set",
        "accept the licence at https://huggingface.co/stabilityai/stable-diffusion-3.5-large",
        "HF_TOKEN",
        "`hf download stabilityai/stable-diffusion-3.5-large`",
    ):
        assert fragment in message
    store = Store(workspace)
    assert [r.model for r in store.runs()] == ["tiny-sd3"]  # no empty sd35 run left behind
    assert len(store.images()) == 2


def test_an_interrupted_run_is_recorded_and_resumes(
    store: Store, few: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_call = diffusers.StableDiffusion3Pipeline.__call__
    calls = []

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_call(self, *args, **kwargs)

    monkeypatch.setattr(diffusers.StableDiffusion3Pipeline, "__call__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_generate(_options(), store=store, catalogue=few)
    (run,) = store.runs()
    assert run.status == "interrupted" and len(store.images()) == 2
    monkeypatch.setattr(diffusers.StableDiffusion3Pipeline, "__call__", real_call)
    assert run_generate(_options(), store=store, catalogue=few).made == 6


def test_a_damaged_smoke_model_says_how_to_rebuild_it(
    store: Store, few: Catalogue, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AMVICC_CACHE", str(tmp_path / "cache"))
    from amvicc.generate.smoke import smoke_model_path

    folder = smoke_model_path("tiny-sd3")
    for weights in (folder / "vae").glob("*.safetensors"):
        weights.unlink()
    with pytest.raises(
        UserError,
        match=f"the smoke model in {re.escape(str(folder))} is damaged.*delete that folder",
    ):
        run_generate(_options(), store=store, catalogue=few)


def test_a_pipeline_file_sets_the_scheduler(
    store: Store, few: Catalogue, tmp_path: Path, read_pixels: Pixels
) -> None:
    base = tmp_path / "base.yaml"
    base.write_text(
        "pipeline: StableDiffusion3Pipeline\nsmoke: tiny-sd3\nwidth: 32\nheight: 32\nsteps: 2\n"
    )
    shifted = tmp_path / "shifted.yaml"
    shifted.write_text(base.read_text() + "scheduler:\n  options: {shift: 6.0}\n")
    plain = run_generate(_options(model=str(base), limit=1), store=store, catalogue=few)
    other = run_generate(_options(model=str(shifted), limit=1), store=store, catalogue=few)
    assert plain.config_key != other.config_key
    (record,) = store.images(run_id=other.run_id)
    assert json.loads(record.params_json)["scheduler"] == {"class": None, "options": {"shift": 6.0}}
    images = [read_pixels(store, run_id=run) for run in (plain.run_id, other.run_id)]
    slot = (1, "implicit", 0)
    assert np.abs(images[0][slot].astype(int) - images[1][slot].astype(int)).max() > 0
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(base.read_text() + "scheduler:\n  class: NoSuchScheduler\n")
    with pytest.raises(
        UserError, match=r"field 'scheduler\.class'.* has no scheduler 'NoSuchScheduler'"
    ):
        run_generate(_options(model=str(wrong), limit=1), store=store, catalogue=few)


@pytest.mark.parametrize(
    ("model", "blocks"),
    [("tiny-sd3", "JointTransformerBlock"), ("tiny-sdxl", "BasicTransformerBlock")],
)
def test_compile_wraps_the_repeated_blocks(model: str, blocks: str) -> None:
    from amvicc.generate import ProcessLayout, make_backend

    backend = make_backend(_options(model=model), ProcessLayout())
    backend.load()
    assert isinstance(backend, DiffusersBackend)
    described = compile_repeated_blocks(backend.pipe)
    denoiser = getattr(backend.pipe, "transformer", None) or backend.pipe.unet
    compiled = [
        m for m in denoiser.modules() if getattr(m, "_compiled_call_impl", None) is not None
    ]
    assert compiled and {type(m).__name__ for m in compiled} == {blocks}
    assert type(denoiser).__name__ in described


def test_an_empty_selection_is_refused(store: Store, catalogue: Catalogue) -> None:
    with pytest.raises(UserError, match="nothing to generate"):
        run_generate(_options(), store=store, catalogue=catalogue.select(indices=[]))
    assert not store.runs()
