"""Stability AI's REST API (v2beta stable-image generate), against a local fake of it."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.generate import GenerationOptions, make_backend, run_generate
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.sink import read_provenance
from amvicc.generate.stability import SEED_LIMIT
from amvicc.store import Store
from amvicc.testing.fake_openai import Fault
from amvicc.testing.fake_stability import FakeStabilityServer

SECRET = "sk-stability-test-do-not-leak-5151"
SD35 = "stability:sd3.5-large"
SD3_PATH = "/v2beta/stable-image/generate/sd3"


def _colour(prompt: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(prompt.encode()).digest()
    return (digest[0], digest[1], digest[2])


def coloured(form: dict[str, str]) -> bytes:
    """An image whose colour encodes the prompt, so a mix-up between requests shows."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), _colour(form["prompt"])).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def server() -> Iterator[FakeStabilityServer]:
    with FakeStabilityServer(images=coloured) as running:
        yield running


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STABILITY_API_KEY", SECRET)


def _options(server: FakeStabilityServer, **overrides: Any) -> GenerationOptions:
    api = ApiSettings(base_url=server.url, max_connections=4, timeout=5.0, max_retries=6)
    settings: dict[str, Any] = {"model": SD35, "api": api, "progress": False}
    return GenerationOptions(**{**settings, **overrides})


def _no_secret_in(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_preset_names_stability_and_its_key() -> None:
    backend = make_backend(GenerationOptions(model=SD35), ProcessLayout())
    assert backend.endpoint == "https://api.stability.ai" + SD3_PATH
    assert backend.api.key_env == "STABILITY_API_KEY"
    ultra = make_backend(GenerationOptions(model="stability:ultra"), ProcessLayout())
    assert ultra.endpoint.endswith("/generate/ultra")


def test_multipart_requests_seeds_and_images(
    server: FakeStabilityServer, store: Store, few: Catalogue
) -> None:
    summary = run_generate(_options(server, seed=7), store=store, catalogue=few)
    assert (summary.made, summary.failed, summary.refused) == (8, 0, 0)
    assert len(server.requests) == 8
    sent = set()
    for request in server.requests:
        assert request.path == SD3_PATH
        assert request.authorization == f"Bearer {SECRET}"
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert headers["accept"] == "image/*"
        assert headers["content-type"].startswith("multipart/form-data")
        form = request.body
        assert (form["model"], form["output_format"], form["aspect_ratio"]) == (
            "sd3.5-large",
            "png",
            "1:1",
        )
        assert 0 <= int(form["seed"]) < SEED_LIMIT
        sent.add((form["prompt"], int(form["seed"])))
    images = store.images(run_id=summary.run_id)
    for image in images:
        assert image.status == "ok" and image.path is not None
        assert (image.prompt, image.seed) in sent  # the seed the API used, not a 63-bit one
        with Image.open(store.path(image.path)) as opened:
            assert opened.getpixel((0, 0)) == _colour(image.prompt)
        provenance = read_provenance(store.path(image.path).read_bytes())
        assert provenance["seed"] == image.seed
        assert provenance["params"]["finish_reason"] == "SUCCESS"
    assert len({i.seed for i in images}) == 8
    again = run_generate(_options(server, seed=7, force=True), store=store, catalogue=few)
    assert again.made == 8
    second = {(r.body["prompt"], int(r.body["seed"])) for r in server.requests[8:]}
    assert second == sent  # the same seeds on every run
    _no_secret_in(store.root)


def test_json_replies_are_read_too(store: Store, few: Catalogue) -> None:
    with FakeStabilityServer(images=coloured, json_replies=True) as server:
        summary = run_generate(_options(server, limit=2), store=store, catalogue=few)
        server.inject(Fault.filtered())
        filtered = run_generate(_options(server, limit=3), store=store, catalogue=few)
    assert summary.made == 2 and (filtered.made, filtered.refused) == (0, 1)
    for image in store.images():
        if image.status == "ok":
            assert image.path is not None
            with Image.open(store.path(image.path)) as opened:
                assert opened.getpixel((0, 0)) == _colour(image.prompt)


def test_content_filtered_and_moderation_are_refusals_never_images(
    server: FakeStabilityServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.filtered(), Fault.moderation("Your prompt was flagged."))
    api = ApiSettings(base_url=server.url, max_connections=1)
    summary = run_generate(_options(server, limit=4, api=api), store=store, catalogue=few)
    assert (summary.made, summary.refused, summary.failed) == (2, 2, 0)
    refused = sorted(
        (i for i in store.images() if i.status == "refused"), key=lambda i: i.error or ""
    )
    assert refused[0].error is not None and refused[0].error.startswith("CONTENT_FILTERED")
    assert refused[1].error == "content_moderation: Your prompt was flagged."
    assert all(i.path is None for i in refused)
    files = list((store.root / "images").rglob("*.png"))
    assert len(files) == 2  # the blurred placeholder was not kept


def test_429_waits_for_retry_after_and_5xx_and_timeouts_are_retried(
    server: FakeStabilityServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(429, retry_after=0.3))
    one = run_generate(_options(server, limit=1), store=store, catalogue=few)
    first, second = server.requests
    assert one.made == 1 and second.received_at - first.received_at >= 0.25
    server.inject(Fault.http(500), Fault.http(503), Fault.hang(2.0))
    api = ApiSettings(base_url=server.url, timeout=0.5, max_retries=6)
    more = run_generate(_options(server, limit=4, api=api), store=store, catalogue=few)
    assert (more.made, more.skipped, more.failed) == (3, 1, 0)
    assert server.pending_faults() == 0


def test_failures_left_after_retries_are_recorded_and_retried_next_run(
    server: FakeStabilityServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(500), Fault.http(500))
    api = ApiSettings(base_url=server.url, max_connections=1, max_retries=1)
    summary = run_generate(_options(server, limit=2, api=api), store=store, catalogue=few)
    assert (summary.made, summary.failed) == (1, 1)
    (failed,) = [i for i in store.images() if i.status == "failed"]
    assert failed.error is not None and failed.error.startswith("HTTP 500")
    assert "2 attempts" in failed.error
    resumed = run_generate(_options(server, limit=2), store=store, catalogue=few)
    assert (resumed.made, resumed.skipped) == (1, 1)


def test_aspect_ratio_from_width_and_height_or_an_option(
    server: FakeStabilityServer, store: Store, few: Catalogue
) -> None:
    run_generate(_options(server, limit=1, width=1920, height=1080), store=store, catalogue=few)
    run_generate(
        _options(server, model="stability:ultra", limit=1, extra={"aspect_ratio": "2:3"}),
        store=store,
        catalogue=few,
    )
    wide, ultra = server.requests
    assert wide.body["aspect_ratio"] == "16:9"
    assert ultra.path.endswith("/ultra") and ultra.body["aspect_ratio"] == "2:3"
    assert "model" not in ultra.body
    with pytest.raises(UserError, match=r"cannot make 1000x700 images: their aspect ratio 10:7"):
        run_generate(_options(server, width=1000, height=700), store=store, catalogue=few)
    with pytest.raises(UserError, match="takes aspect_ratio 16:9, 1:1"):
        run_generate(_options(server, extra={"aspect_ratio": "7:3"}), store=store, catalogue=few)
    with pytest.raises(UserError, match="only apply to local models"):
        run_generate(_options(server, steps=30), store=store, catalogue=few)
    with pytest.raises(UserError, match="unknown Stability AI model 'stability:sd9'"):
        run_generate(_options(server, model="stability:sd9"), store=store, catalogue=few)
    assert len(server.requests) == 2


def _cli(server: FakeStabilityServer, workspace: Path, *extra: str) -> list[str]:
    return [
        "generate",
        "--model",
        SD35,
        "--base-url",
        server.url,
        "--index",
        "1-4",
        "--store",
        str(workspace),
        *extra,
    ]


def test_done_means_eight_images_and_refusals_recorded_from_the_command_line(
    server: FakeStabilityServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert main(_cli(server, workspace, "-q")) == 0
    with Store(workspace) as store:
        made = store.images()
        assert len(made) == 8 and {i.status for i in made} == {"ok"}
    server.inject(Fault.filtered(), Fault.filtered())
    assert main(_cli(server, workspace, "--force", "--max-connections", "1")) == 0
    out = capsys.readouterr().out
    assert "made 6, skipped 0, failed 0, refused 2 of 8" in out
    with Store(workspace) as store:
        refused = [i for i in store.images() if i.status == "refused"]
        assert len(refused) == 2 and all("CONTENT_FILTERED" in (i.error or "") for i in refused)
    _no_secret_in(workspace)


@pytest.mark.parametrize(
    ("fault", "env", "fragment"),
    [
        (
            Fault.bad_request("aspect_ratio: must be one of 16:9, 1:1"),
            {},
            "rejected the request for stability:sd3.5-large: aspect_ratio: must be one of",
        ),
        (Fault.http(401), {}, "refused the API key in STABILITY_API_KEY"),
        (Fault.http(402), {}, "asks for payment (402"),
        (None, {"STABILITY_API_KEY": ""}, "environment variable STABILITY_API_KEY is not set"),
    ],
)
def test_mistakes_are_one_line_exit_2(
    server: FakeStabilityServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fault: Fault | None,
    env: dict[str, str],
    fragment: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if fault is not None:
        server.inject(fault)
    assert main(_cli(server, tmp_path / "ws", "-q", "--index", "1")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert SECRET not in err
    _no_secret_in(tmp_path)
