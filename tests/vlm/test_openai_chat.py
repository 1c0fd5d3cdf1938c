"""The OpenAI-compatible back end against a local server, including the faults real APIs have."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from typing import Any

import httpx
import pytest

from amvicc.api import ApiSettings
from amvicc.errors import UserError
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault, iter_image_parts, last_user_text
from amvicc.testing.mmvp_images import image_bytes
from amvicc.vlm import EncodedImage, Reply, open_vlm
from amvicc.vlm.base import ChatTurn


def ask(server: FakeOpenAIServer, image: bytes | None = None, **api: object) -> Reply:
    settings = ApiSettings(base_url=server.url, **api)  # type: ignore[arg-type]
    vlm = open_vlm("fake-vlm", api=settings)

    async def go() -> Reply:
        try:
            return await vlm.ask(image, "Is it open? (a) Open (b) Closed", seed=7, max_tokens=32)
        finally:
            await vlm.aclose()

    return asyncio.run(go())


def test_sends_image_as_data_url_and_keeps_the_body(server: FakeOpenAIServer, cycle: Any) -> None:
    data = image_bytes(5)
    reply = ask(server, data)
    assert reply.ok and reply.text == cycle.reply(5)
    (request,) = server.requests
    url = next(iter_image_parts(request.body))
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == data
    assert last_user_text(request.body) == "Is it open? (a) Open (b) Closed"
    assert request.body["model"] == "fake-vlm"
    assert request.body["max_tokens"] == 32 and request.body["temperature"] == 0.0
    assert request.body["seed"] == 7
    assert request.authorization == "Bearer EMPTY"  # keyless local server
    body = json.loads(reply.raw or b"")
    assert body["choices"][0]["message"]["content"] == reply.text
    assert reply.prompt_tokens == body["usage"]["prompt_tokens"] > 0
    assert reply.completion_tokens == body["usage"]["completion_tokens"]
    assert reply.latency_s is not None and reply.latency_s > 0
    assert reply.request["image_sha256"] == EncodedImage.from_bytes(data).sha256
    assert reply.request["attempts"] == 1
    assert "Is it open" not in json.dumps(reply.request)  # parameters, not the prompt


def test_text_only_question_has_no_image() -> None:
    with FakeOpenAIServer(chat=lambda request: "yes") as server:
        reply = ask(server, None)
        assert reply.text == "yes"
        assert list(iter_image_parts(server.requests[0].body)) == []


def test_429_with_retry_after_is_retried(server: FakeOpenAIServer) -> None:
    server.inject(Fault.http(429, retry_after=0.2))
    reply = ask(server, image_bytes(1), max_retries=3)
    assert reply.ok and reply.request["attempts"] == 2
    assert len(server.requests) == 2
    gap = server.requests[1].received_at - server.requests[0].received_at
    assert gap >= 0.15  # Retry-After honoured (a lower bound, not a timing target)


def test_5xx_are_retried(server: FakeOpenAIServer) -> None:
    server.inject(Fault.http(500), Fault.http(503))
    reply = ask(server, image_bytes(1), max_retries=3)
    assert reply.ok and reply.request["attempts"] == 3


def test_persistent_5xx_becomes_an_error_reply_with_its_body(server: FakeOpenAIServer) -> None:
    server.inject(Fault.http(500), Fault.http(500))
    reply = ask(server, image_bytes(1), max_retries=1)
    assert not reply.ok and reply.error is not None and reply.error.startswith("HTTP 500")
    assert reply.raw is not None and b"injected fault" in reply.raw
    assert not reply.retryable


def test_timeout_is_retried_then_reported(server: FakeOpenAIServer) -> None:
    # generous margins: a loaded machine must not turn normal replies into timeouts
    server.inject(Fault.hang(3))
    reply = ask(server, image_bytes(1), timeout=1, max_retries=2)
    assert reply.ok and reply.request["attempts"] == 2
    server.inject(Fault.hang(3), Fault.hang(3))
    reply = ask(server, image_bytes(1), timeout=1, max_retries=1)
    assert not reply.ok and reply.error is not None and "timed out" in reply.error


def test_malformed_body_is_kept_verbatim_and_retryable(server: FakeOpenAIServer) -> None:
    server.inject(Fault.malformed())
    reply = ask(server, image_bytes(1))
    assert not reply.ok and reply.retryable
    assert reply.raw == b"{this is not json"
    assert reply.error is not None and "malformed" in reply.error


@pytest.mark.parametrize("status", [401, 403, 404])
def test_rejected_key_or_model_stops_with_one_line(server: FakeOpenAIServer, status: int) -> None:
    server.inject(Fault.http(status))
    with pytest.raises(UserError, match=f"HTTP {status}") as caught:
        ask(server, image_bytes(1), max_retries=0)
    assert "\n" not in str(caught.value)


def test_unreachable_server_stops_with_one_line() -> None:
    with FakeOpenAIServer() as server:
        url = server.url
    vlm = open_vlm("fake", api=ApiSettings(base_url=url, max_retries=0, timeout=2))
    with pytest.raises(UserError, match="cannot reach"):
        asyncio.run(vlm.ask(image_bytes(1), "q"))


def test_model_names(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match=r"unknown model 'gpt-4o'.*--base-url"):
        open_vlm("gpt-4o")
    with pytest.raises(UserError, match="OPENAI_API_KEY is not set"):
        open_vlm("openai:gpt-4o")
    monkeypatch.setenv("MY_KEY", "sk-test")
    vlm = open_vlm("openai:gpt-4o", api=ApiSettings(api_key_env="MY_KEY"))
    assert vlm.name == "openai:gpt-4o" and vlm.kind == "openai"
    described = json.dumps(vlm.describe())
    assert "sk-test" not in described and "MY_KEY" in described
    with pytest.raises(UserError, match="names no model"):
        open_vlm("hf:")


def test_a_conversation_goes_as_chat_messages() -> None:
    with FakeOpenAIServer(chat=lambda request: "(b)") as server:
        vlm = open_vlm("fake-vlm", api=ApiSettings(base_url=server.url))
        turns = (
            ChatTurn.user("Is it open? (a) Open (b) Closed", image_bytes(5)),
            ChatTurn.assistant("(a)"),
            ChatTurn.user("Please state your final answer."),
        )

        async def go() -> Reply:
            try:
                return await vlm.converse(turns, seed=3, max_tokens=16)
            finally:
                await vlm.aclose()

        reply = asyncio.run(go())
    assert reply.ok and reply.text == "(b)"
    (request,) = server.requests
    user, assistant, second = request.body["messages"]
    assert user["role"] == "user" and user["content"][1]["text"].startswith("Is it open?")
    assert base64.b64decode(user["content"][0]["image_url"]["url"].split(",", 1)[1]) == (
        image_bytes(5)
    )
    assert assistant == {"role": "assistant", "content": "(a)"}
    assert second == {
        "role": "user",
        "content": [{"type": "text", "text": "Please state your final answer."}],
    }
    assert reply.request["turns"] == 3
    assert reply.request["image_sha256"] == EncodedImage.from_bytes(image_bytes(5)).sha256
    with pytest.raises(ValueError, match="must end with a user message"):
        asyncio.run(vlm.converse(turns[:2]))


def test_a_request_cut_off_mid_body_is_not_recorded() -> None:
    """A client killed while sending leaves no request behind, as on a real server.

    The fake read the missing body as empty and recorded ``{}`` (a flaky KeyError in the
    killed-challenge test).
    """
    with FakeOpenAIServer() as fake:
        port = int(fake.root.rsplit(":", 1)[1])
        body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": "hi"}]})
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", port)) as cut:
            cut.sendall(head.encode())  # killed before its first byte of body
        whole = httpx.post(f"{fake.url}/chat/completions", content=body, timeout=10)
        assert whole.status_code == 200
        assert [len(r.body["messages"]) for r in fake.requests] == [1]
