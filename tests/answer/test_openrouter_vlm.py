"""VLMs through OpenRouter (``openrouter:<provider/model>``): answer, grade's judge, AMVICC's prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.store import Store
from amvicc.testing.fake_openai import Fault, last_user_text
from amvicc.testing.fake_openrouter import FakeOpenRouterServer
from amvicc.testing.mmvp_images import reply_by_index
from amvicc.vlm import open_vlm
from amvicc.vlm.openai_chat import OpenAIChatVLM
from amvicc.vlm.openrouter import AMVICC_VLMS

SECRET = "sk-or-v1-vlm-test-do-not-leak-7171"


@pytest.fixture
def openrouter() -> Iterator[FakeOpenRouterServer]:
    # (a) for odd questions, a hedge for even ones: the extractor leaves those to a judge
    rule = reply_by_index(lambda i: "(a)" if i % 2 else "It could be either.")
    with FakeOpenRouterServer(chat=rule) as fake:
        yield fake


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)


def test_openrouter_names_open_the_chat_back_end_with_its_preset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vlm = open_vlm("openrouter:x-ai/grok-4")
    assert isinstance(vlm, OpenAIChatVLM)
    assert (vlm.name, vlm.model) == ("openrouter:x-ai/grok-4", "x-ai/grok-4")
    described = vlm.describe()
    assert described["base_url"] == "https://openrouter.ai/api/v1"
    assert described["api_key_env"] == "OPENROUTER_API_KEY"
    assert SECRET not in json.dumps(described)
    local = open_vlm("openrouter:x-ai/grok-4", api=ApiSettings(base_url="http://127.0.0.1:9/v1"))
    assert local.describe()["base_url"] == "http://127.0.0.1:9/v1"
    monkeypatch.delenv("OPENROUTER_API_KEY")
    with pytest.raises(UserError, match="environment variable OPENROUTER_API_KEY is not set"):
        open_vlm("openrouter:google/gemini-2.5-pro")
    with pytest.raises(UserError, match="names no model after openrouter:"):
        open_vlm("openrouter:")


def test_amvicc_vlms_are_eleven_openrouter_ids() -> None:
    assert len(AMVICC_VLMS) == 11
    assert all("/" in name and name == name.lower() for name in AMVICC_VLMS)


def test_answer_and_judge_through_openrouter_with_one_key(
    openrouter: FakeOpenRouterServer, images: Path, tmp_path: Path, catalogue: Catalogue
) -> None:
    workspace = tmp_path / "ws"
    openrouter.inject(Fault.http(429, retry_after=0.1), Fault.http(502))
    args = [
        "answer", "--model", "openrouter:x-ai/grok-4", "--base-url", openrouter.url,
        "--images", str(images), "--index", "1-4", "--store", str(workspace), "-q",
        "--template", "answer_amvicc.jinja", "--temperature", "0.2", "--max-tokens", "1024",
    ]  # fmt: skip
    assert main(args) == 0
    asked = [r for r in openrouter.requests if r.path == "/api/v1/chat/completions"]
    assert len(asked) == 6  # 4 questions, one 429 and one 502 retried
    for request in asked:
        assert request.authorization == f"Bearer {SECRET}"
        assert {k.lower(): v for k, v in request.headers.items()}["x-title"] == "amvicc"
        assert request.body["model"] == "x-ai/grok-4"
        assert (request.body["temperature"], request.body["max_tokens"]) == (0.2, 1024)
    # AMVICC's own prompt: the question, a space, the options; no instruction
    expected = {f"{q.text} {q.options_text}" for q in catalogue.select(indices=range(1, 5))}
    assert {last_user_text(r.body) for r in asked} == expected
    with Store(workspace, create=False) as store:
        (run,) = store.runs(stage="answer")
        assert run.model == "openrouter:x-ai/grok-4"
        assert run.config["api_key_env"] == "OPENROUTER_API_KEY"
        assert len([r for r in store.responses() if r.status == "ok"]) == 4
        assert len(store.undecided_responses()) == 2  # the hedges of 2 and 4

    # grade's LLM judge through OpenRouter too, with the same key
    openrouter.chat = lambda request: "A"
    before = len(openrouter.requests)
    grade = [
        "grade", "--store", str(workspace), "-q", "--judge", "openrouter:openai/gpt-4o-mini",
        "--judge-base-url", openrouter.url,
    ]  # fmt: skip
    assert main(grade) == 0
    judged = openrouter.requests[before:]
    assert len(judged) == 2 and all(r.body["model"] == "openai/gpt-4o-mini" for r in judged)
    assert all(r.authorization == f"Bearer {SECRET}" for r in judged)
    with Store(workspace, create=False) as store:
        assert not store.undecided_responses()
        sources = {v.source for v in store.verdicts()}
        assert "llm-judge:openrouter:openai/gpt-4o-mini" in sources
    for path in workspace.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
