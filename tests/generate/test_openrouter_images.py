"""Images through chat completions: OpenRouter's wire format, against a local fake OpenRouter."""

from __future__ import annotations

import hashlib
import io
import json
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
from amvicc.store import Store
from amvicc.testing.fake_openai import Fault
from amvicc.testing.fake_openrouter import ChatImage, FakeOpenRouterServer, prompt_of

SECRET = "sk-or-v1-test-do-not-leak-9393"
GEMINI = "openrouter:google/gemini-2.5-flash-image"
CHAT = "/api/v1/chat/completions"


def _colour(prompt: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(prompt.encode()).digest()
    return (digest[0], digest[1], digest[2])


def coloured(request: dict[str, Any]) -> ChatImage:
    """An image whose colour encodes the prompt, so a mix-up between requests shows."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), _colour(prompt_of(request))).save(buffer, format="PNG")
    return ChatImage((buffer.getvalue(),), text="A picture, as asked.")


@pytest.fixture
def server() -> Iterator[FakeOpenRouterServer]:
    with FakeOpenRouterServer(chat_images=coloured) as running:
        yield running


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _options(server: FakeOpenRouterServer, **overrides: Any) -> GenerationOptions:
    api = ApiSettings(base_url=server.url, max_connections=4, timeout=5.0, max_retries=6)
    settings: dict[str, Any] = {"model": GEMINI, "api": api, "progress": False}
    return GenerationOptions(**{**settings, **overrides})


def _image_requests(server: FakeOpenRouterServer) -> list[Any]:
    return [r for r in server.requests if r.path == CHAT]


def _no_secret_in(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_preset_names_openrouter_and_its_key() -> None:
    backend = make_backend(GenerationOptions(model=GEMINI), ProcessLayout())
    assert backend.endpoint == "https://openrouter.ai/api/v1"
    assert backend.api.key_env == "OPENROUTER_API_KEY"
    assert dict(backend.api.headers)["X-Title"] == "amvicc"
    own = make_backend(
        GenerationOptions(model=GEMINI, api=ApiSettings(api_key_env="MY_OR_KEY")), ProcessLayout()
    )
    assert own.api.key_env == "MY_OR_KEY"


def test_images_come_back_as_data_urls_and_are_stored_with_the_text(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    summary = run_generate(_options(server), store=store, catalogue=few)
    assert (summary.made, summary.failed, summary.refused) == (8, 0, 0)
    requests = _image_requests(server)
    assert len(requests) == 8
    for request in requests:
        assert request.authorization == f"Bearer {SECRET}"
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert headers["http-referer"].startswith("https://")
        assert headers["x-title"] == "amvicc"
        assert request.body["model"] == "google/gemini-2.5-flash-image"
        assert request.body["modalities"] == ["image", "text"]
        assert [m["role"] for m in request.body["messages"]] == ["user"]
    prompts = {prompt_of(r.body) for r in requests}
    assert prompts == {p.text for p in few.prompts(("implicit", "explicit"))}
    for image in store.images(run_id=summary.run_id):
        assert image.status == "ok" and image.seed is None  # the route takes no seed
        assert image.path is not None
        with Image.open(store.path(image.path)) as opened:
            assert opened.getpixel((0, 0)) == _colour(image.prompt)
        params = read_provenance(store.path(image.path).read_bytes())["params"]
        assert params["reply_text"] == "A picture, as asked."
        assert params["backend"] == "chat-images" and params["endpoint"] == server.url
    run = store.run(summary.run_id)
    assert run.config["seeds"].startswith("not controllable")
    assert run.config["api"]["api_key_env"] == "OPENROUTER_API_KEY"
    _no_secret_in(store.root)


def test_a_reply_without_an_image_is_a_refusal_with_the_models_text(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    server.inject(
        Fault.text_only("I can't generate images of that.", path=CHAT), Fault.moderation(path=CHAT)
    )
    options = _options(server, limit=4, api=ApiSettings(base_url=server.url, max_connections=1))
    summary = run_generate(options, store=store, catalogue=few)
    assert (summary.made, summary.refused, summary.failed) == (2, 2, 0)
    refused = [i for i in store.images(run_id=summary.run_id) if i.status == "refused"]
    assert {r.error for r in refused} == {
        "I can't generate images of that.",
        "moderation: Your input was flagged by moderation.",
    }
    assert all(r.path is None for r in refused)
    assert not list((store.root / "images").rglob("*.tmp"))
    again = run_generate(options, store=store, catalogue=few)
    assert (again.made, again.skipped) == (0, 4)  # a refusal counts as done


def test_num_images_sends_one_request_per_image(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    summary = run_generate(_options(server, limit=2, num_images=3), store=store, catalogue=few)
    assert summary.made == 6 and len(_image_requests(server)) == 6
    samples = sorted((i.question_index, i.prompt_kind, i.sample) for i in store.images())
    assert [s[2] for s in samples] == [0, 1, 2, 0, 1, 2]


def test_429_waits_for_retry_after_and_5xx_and_timeouts_are_retried(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(429, retry_after=0.3))
    one = run_generate(_options(server, limit=1), store=store, catalogue=few)
    first, second = _image_requests(server)
    assert one.made == 1 and second.received_at - first.received_at >= 0.25
    server.inject(Fault.http(500), Fault.http(502), Fault.hang(2.0))
    api = ApiSettings(base_url=server.url, timeout=0.5, max_retries=6)
    more = run_generate(_options(server, limit=4, api=api), store=store, catalogue=few)
    assert (more.made, more.skipped, more.failed) == (3, 1, 0)
    assert server.pending_faults() == 0


def test_failures_left_after_retries_and_malformed_bodies_are_retried_next_run(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    server.inject(Fault.http(503), Fault.http(503), Fault.malformed(path=CHAT))
    api = ApiSettings(base_url=server.url, max_connections=1, max_retries=1)
    summary = run_generate(_options(server, limit=3, api=api), store=store, catalogue=few)
    assert (summary.made, summary.failed) == (1, 2)
    errors = sorted(i.error or "" for i in store.images() if i.status == "failed")
    assert errors[0].startswith("HTTP 503") and errors[1].startswith("malformed reply")
    resumed = run_generate(_options(server, limit=3), store=store, catalogue=few)
    assert (resumed.made, resumed.skipped, resumed.failed) == (2, 1, 0)


def test_any_compatible_server_with_image_api_chat(store: Store, few: Catalogue) -> None:
    with FakeOpenRouterServer(chat_images=coloured, prefix="/v1") as local:
        api = ApiSettings(base_url=local.url)
        options = GenerationOptions(
            model="my-image-model", image_api="chat", api=api, limit=1, progress=False
        )
        summary = run_generate(options, store=store, catalogue=few)
    assert summary.made == 1
    (request,) = [r for r in local.requests if r.path == "/v1/chat/completions"]
    assert request.body["model"] == "my-image-model"
    assert request.authorization == "Bearer EMPTY"  # a local server needs no key
    # OpenRouter's headers only go to OpenRouter
    assert "x-title" not in {k.lower() for k in request.headers}


def test_chat_route_mistakes_are_user_errors(
    server: FakeOpenRouterServer, store: Store, few: Catalogue
) -> None:
    with pytest.raises(UserError, match="--image-api chat needs --base-url"):
        run_generate(
            GenerationOptions(model="m", image_api="chat", progress=False),
            store=store,
            catalogue=few,
        )
    with pytest.raises(UserError, match="does not take --width"):
        run_generate(_options(server, width=512), store=store, catalogue=few)
    with pytest.raises(UserError, match="names no model after openrouter:"):
        run_generate(_options(server, model="openrouter:"), store=store, catalogue=few)
    assert not server.requests


def _cli(server: FakeOpenRouterServer, workspace: Path, *extra: str) -> list[str]:
    return [
        "generate",
        "--model",
        GEMINI,
        "--base-url",
        server.url,
        "--index",
        "1-4",
        "--store",
        str(workspace),
        *extra,
    ]


def test_done_means_eight_images_and_refusals_recorded_from_the_command_line(
    server: FakeOpenRouterServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert main(_cli(server, workspace, "-q")) == 0
    with Store(workspace) as store:
        made = store.images()
        assert len(made) == 8 and {i.status for i in made} == {"ok"}
    server.inject(Fault.text_only("No.", path=CHAT), Fault.text_only("Cannot.", path=CHAT))
    assert main(_cli(server, workspace, "--force", "--max-connections", "1")) == 0
    out = capsys.readouterr().out
    assert "made 6, skipped 0, failed 0, refused 2 of 8" in out
    with Store(workspace) as store:
        refused = [i for i in store.images() if i.status == "refused"]
        assert sorted(i.error or "" for i in refused) == ["Cannot.", "No."]
    _no_secret_in(workspace)
    assert SECRET not in out


@pytest.mark.parametrize(
    ("extra", "fault", "env", "fragment"),
    [
        ([], Fault.http(401), {}, "refused the API key in OPENROUTER_API_KEY"),
        ([], Fault.http(402), {}, "asks for payment (402"),
        ([], Fault.http(404), {}, "has no model 'google/gemini-2.5-flash-image'"),
        ([], Fault.http(400), {}, "rejected the request for google/gemini-2.5-flash-image"),
        (
            [],
            None,
            {"OPENROUTER_API_KEY": ""},
            "environment variable OPENROUTER_API_KEY is not set",
        ),
    ],
)
def test_mistakes_are_one_line_exit_2(
    server: FakeOpenRouterServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    fault: Fault | None,
    env: dict[str, str],
    fragment: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if fault is not None:
        server.inject(fault)
    assert main(_cli(server, tmp_path / "ws", "-q", "--index", "1", *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert SECRET not in err


def test_a_run_records_no_key_even_in_its_failure(
    server: FakeOpenRouterServer, tmp_path: Path
) -> None:
    server.inject(Fault.http(401))
    main(_cli(server, tmp_path / "ws", "-q", "--index", "1"))
    with Store(tmp_path / "ws") as store:
        (run,) = store.runs()
        assert run.status == "failed"
        assert SECRET not in json.dumps(run.config) + run.summary_json
    _no_secret_in(tmp_path / "ws")


def test_the_reports_methods_say_seeds_are_not_controllable(
    server: FakeOpenRouterServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert main(_cli(server, workspace, "-q", "--index", "1-2")) == 0
    capsys.readouterr()
    report = ["report", "--store", str(workspace), "--format", "md", "--bootstrap", "0", "-o", "-"]
    assert main(report) == 0
    methods = capsys.readouterr().out.split("Run `generate-openrouter", 1)[1]
    assert "seeds not controllable: the provider takes no seed" in methods.splitlines()[0]
