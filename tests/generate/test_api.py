from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.generate import GenerationOptions, run_generate
from amvicc.generate.sink import read_provenance
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault

SECRET = "sk-test-do-not-leak-4242"


def _colour(prompt: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(prompt.encode()).digest()
    return (digest[0], digest[1], digest[2])


def prompt_coloured_png(request: dict[str, Any]) -> bytes:
    """An image whose colour encodes the prompt, so a mix-up between requests shows."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), _colour(request["prompt"])).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(images=prompt_coloured_png) as running:
        yield running


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMVICC_TEST_KEY", SECRET)


def _options(
    server: FakeOpenAIServer,
    *,
    concurrency: int = 4,
    timeout: float = 5.0,
    max_retries: int = 6,
    **overrides: Any,
) -> GenerationOptions:
    api = ApiSettings(
        base_url=server.url,
        api_key_env="AMVICC_TEST_KEY",
        max_connections=concurrency,
        timeout=timeout,
        max_retries=max_retries,
    )
    settings: dict[str, Any] = {"model": "openai:gpt-image-1", "api": api, "progress": False}
    return GenerationOptions(**{**settings, **overrides})


def _image_requests(server: FakeOpenAIServer) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/images/generations"]


def test_api_images_are_stored_and_the_key_never_is(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    summary = run_generate(_options(server, concurrency=3), store=store, catalogue=few)
    assert (summary.made, summary.failed, summary.refused, summary.smoke) == (8, 0, 0, False)
    requests = _image_requests(server)
    assert len(requests) == 8
    for request in requests:
        assert request.authorization == f"Bearer {SECRET}"
        body = request.body
        assert (body["model"], body["n"], body["size"], body["quality"]) == (
            "gpt-image-1",
            1,
            "1024x1024",
            "auto",
        )
        assert "response_format" not in body  # GPT image models reject it
    for image in store.images(run_id=summary.run_id):
        assert image.status == "ok" and image.seed is None  # the images API takes no seed
        assert image.path is not None
        with Image.open(store.path(image.path)) as opened:
            assert opened.getpixel((0, 0)) == _colour(image.prompt)
        provenance = read_provenance(store.path(image.path).read_bytes())
        assert provenance["params"]["api_model"] == "gpt-image-1"
        assert provenance["params"]["endpoint"] == server.url
    run = store.run(summary.run_id)
    assert run.config["api"]["api_key_env"] == "AMVICC_TEST_KEY"
    for path in store.root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_429_is_retried_after_the_servers_retry_after(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(429, retry_after=0.3))
    summary = run_generate(_options(server, limit=1), store=store, catalogue=few)
    assert (summary.made, summary.failed) == (1, 0)
    first, second = _image_requests(server)
    assert second.received_at - first.received_at >= 0.25


def test_5xx_and_timeouts_are_retried(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(500), Fault.http(503), Fault.hang(2.0))
    summary = run_generate(
        _options(server, limit=4, concurrency=4, timeout=0.5), store=store, catalogue=few
    )
    assert (summary.made, summary.failed) == (4, 0)
    assert len(_image_requests(server)) == 7 and server.pending_faults() == 0


def test_a_refusal_is_recorded_with_its_reason_and_counts_as_done(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.refusal("Your request was rejected by the safety system."))
    summary = run_generate(_options(server, limit=2, concurrency=1), store=store, catalogue=few)
    assert (summary.made, summary.refused, summary.failed) == (1, 1, 0)
    refused = [i for i in store.images(run_id=summary.run_id) if i.status == "refused"]
    assert len(refused) == 1 and refused[0].path is None
    assert refused[0].error == "Your request was rejected by the safety system."
    again = run_generate(_options(server, limit=2), store=store, catalogue=few)
    assert (again.made, again.skipped) == (0, 2)
    forced = run_generate(_options(server, limit=2, force=True), store=store, catalogue=few)
    assert forced.made == 2
    assert {i.status for i in store.images(run_id=summary.run_id)} == {"ok"}


def test_failures_left_after_retries_are_recorded_and_retried_next_run(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(500), Fault.http(500), Fault.malformed())
    summary = run_generate(
        _options(server, limit=3, concurrency=1, max_retries=1), store=store, catalogue=few
    )
    assert (summary.made, summary.failed) == (1, 2)
    failed = [i for i in store.images(run_id=summary.run_id) if i.status == "failed"]
    assert {f.error.split(":")[0] for f in failed if f.error} == {
        "InternalServerError",
        "JSONDecodeError",
    }
    resumed = run_generate(_options(server, limit=3), store=store, catalogue=few)
    assert (resumed.made, resumed.skipped, resumed.failed) == (2, 1, 0)
    assert len(store.images(run_id=summary.run_id, current=False)) == 5


def test_concurrency_is_bounded(store: Store, few: Catalogue) -> None:
    lock = threading.Lock()
    in_flight = peak = 0

    def slow_image(request: dict[str, Any]) -> bytes:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.1)
        with lock:
            in_flight -= 1
        return prompt_coloured_png(request)

    with FakeOpenAIServer(images=slow_image) as server:
        summary = run_generate(_options(server, concurrency=3), store=store, catalogue=few)
    assert summary.made == 8
    assert 2 <= peak <= 3


def test_any_openai_compatible_endpoint_gets_base64_requests(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    summary = run_generate(
        _options(server, model="flux-on-my-server", limit=1, extra={"quality": "hd"}),
        store=store,
        catalogue=few,
    )
    assert summary.made == 1 and summary.model == "flux-on-my-server"
    (request,) = _image_requests(server)
    assert request.body["model"] == "flux-on-my-server"
    assert request.body["response_format"] == "b64_json" and request.body["quality"] == "hd"


def _cli(server: FakeOpenAIServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "generate",
        "--base-url",
        server.url,
        "--api-key-env",
        "AMVICC_TEST_KEY",
        "--store",
        str(tmp_path / "ws"),
        "--index",
        "1",
        "--prompts",
        "implicit",
        "-q",
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "fault", "fragment"),
    [
        (
            ["--model", "openai:gpt-image-1", "--api-key-env", "AMVICC_UNSET_KEY"],
            None,
            "environment variable AMVICC_UNSET_KEY is not set",
        ),
        (
            ["--model", "openai:gpt-image-1"],
            Fault.http(401),
            "refused the API key in AMVICC_TEST_KEY",
        ),
        (["--model", "openai:gpt-image-1"], Fault.http(404), "has no image model 'gpt-image-1'"),
        (
            ["--model", "openai:gpt-image-1"],
            Fault.http(400),
            "rejected the request for gpt-image-1",
        ),
        (
            ["--model", "openai:dall-e-3", "--width", "512", "--height", "512"],
            None,
            "openai:dall-e-3 cannot make 512x512 images; it takes 1024x1024, 1792x1024, 1024x1792",
        ),
    ],
)
def test_api_mistakes_are_one_line_exit_2(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fault: Fault | None,
    fragment: str,
) -> None:
    if fault is not None:
        server.inject(fault)
    assert main(_cli(server, tmp_path, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert SECRET not in err


def test_cli_exits_1_when_images_failed(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.inject(Fault.http(500), Fault.http(500))
    args = _cli(
        server,
        tmp_path,
        "--model",
        "openai:gpt-image-1",
        "--index",
        "1-2",
        "--max-retries",
        "1",
        "--max-connections",
        "1",
    )
    args.remove("-q")
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "made 1, skipped 0, failed 1" in out and "rerun to retry the 1 failed" in out
    assert main(args) == 0
    assert "made 1, skipped 1, failed 0" in capsys.readouterr().out
    with Store(tmp_path / "ws") as store:
        assert json.loads(store.runs()[0].summary_json)["failed"] == 0


def test_local_model_options_are_refused_for_api_models(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    with pytest.raises(UserError, match="--steps, --dtype only apply to local models"):
        run_generate(_options(server, steps=4, dtype="float16"), store=store, catalogue=few)
    assert not server.requests


def test_works_when_called_from_async_code(
    server: FakeOpenAIServer, store: Store, few: Catalogue
) -> None:
    import asyncio

    async def from_a_notebook() -> int:
        return run_generate(_options(server, limit=2), store=store, catalogue=few).made

    assert asyncio.run(from_a_notebook()) == 2
