"""OpenAI-compatible chat back end: OpenAI, vLLM, Ollama, SGLang, OpenRouter.

Images go as base64 ``data:`` URLs in the user message. The ``openai`` client retries 408,
409, 429 (honouring ``Retry-After``), 5xx, connection errors and timeouts with exponential
backoff and jitter. Requests go through the client's documented raw ``post`` rather than the
typed ``chat.completions.create``: the same retries, errors and headers, without walking the
whole request (base64 image included) to transform it and without building pydantic models of
the reply. The body comes back verbatim and is parsed here, so a malformed body is recorded as
it came and retried instead of lost.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from amvicc.api import ApiSettings, raw_response_type
from amvicc.errors import UserError
from amvicc.redaction import redact_url
from amvicc.vlm.base import (
    VLM,
    ChatTurn,
    LocalSettings,
    Reply,
    check_conversation,
    conversation_request,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI


class OpenAIChatVLM(VLM):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: the model id the server knows (``gpt-4o``, ``Qwen/Qwen2.5-VL-7B-Instruct``).
        api: endpoint, key variable, concurrency, timeout and retries.
        name: the model as the user named it (``openai:gpt-4o``).
    """

    kind = "openai"

    def __init__(self, model: str, api: ApiSettings, *, name: str | None = None) -> None:
        self.model = model
        self.api = api
        self.name = name or model
        self.concurrency = api.max_connections
        self._client: AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reached = False
        api.api_key()  # a missing key is a mistake to report before any work starts
        # The client's HTTP library's Response (loaded now, not inside the first request).
        self._response_type: type[Any] = raw_response_type()

    def describe(self) -> dict[str, Any]:
        """The endpoint settings (the key's variable name, never the key)."""
        return {"backend": self.kind, "model_id": self.model, **self.api.public()}

    def client(self) -> AsyncOpenAI:
        """This event loop's client (an async client must not outlive its loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self.api.async_client()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the current loop's connections."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._loop = None

    def request_params(
        self, *, temperature: float, max_tokens: int, seed: int | None
    ) -> dict[str, Any]:
        """The sampling parameters as this endpoint takes them."""
        # OpenAI's newer models take only max_completion_tokens; other servers know max_tokens.
        length_key = "max_completion_tokens" if self.api.base_url is None else "max_tokens"
        params: dict[str, Any] = {"temperature": temperature, length_key: max_tokens}
        if seed is not None:
            # Some servers keep seeds in 32-bit integers.
            params["seed"] = seed % 2**31
        return params

    async def converse(
        self,
        turns: Sequence[ChatTurn],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> Reply:
        """Send one chat request holding the whole conversation; see :meth:`VLM.converse`."""
        import openai

        check_conversation(turns)
        params = self.request_params(temperature=temperature, max_tokens=max_tokens, seed=seed)
        request: dict[str, Any] = {"model": self.model, **params, **conversation_request(turns)}
        messages = [chat_message(turn) for turn in turns]
        body = {"model": self.model, "messages": messages, **params}
        started = time.perf_counter()
        try:
            response = await self.client().post(
                "/chat/completions", cast_to=self._response_type, body=body
            )
        except (
            openai.AuthenticationError,
            openai.PermissionDeniedError,
            openai.NotFoundError,
        ) as err:
            raise UserError(
                f"{self._where()} refused the request for model {self.model!r} "
                f"(HTTP {err.status_code}: {_error_message(err)}); check the model name and "
                f"the key in ${self.api.key_env}"
            ) from None
        except openai.APIStatusError as err:
            return Reply(
                text=None,
                raw=err.response.content,
                latency_s=time.perf_counter() - started,
                request=request,
                error=f"HTTP {err.status_code}: {_error_message(err)}",
            )
        except openai.APITimeoutError:
            return Reply(
                text=None,
                raw=None,
                latency_s=time.perf_counter() - started,
                request=request,
                error=f"timed out after {self.api.timeout:g} s per attempt, "
                f"{self.api.max_retries + 1} attempts",
            )
        except openai.APIConnectionError as err:
            if not self._reached:
                raise UserError(
                    f"cannot reach {self._where()} ({err.__cause__ or err}); is the server "
                    "running and --base-url right?"
                ) from None
            return Reply(
                text=None,
                raw=None,
                latency_s=time.perf_counter() - started,
                request=request,
                error=f"connection failed: {err.__cause__ or err}",
            )
        latency = time.perf_counter() - started
        self._reached = True
        raw = response.content
        retries = response.request.headers.get("x-stainless-retry-count")
        request["attempts"] = int(retries or 0) + 1
        return parse_chat_body(raw, latency=latency, request=request)

    def _where(self) -> str:
        return redact_url(self.api.base_url) if self.api.base_url else "the OpenAI API"


def chat_message(turn: ChatTurn) -> dict[str, Any]:
    """One turn as a chat-completions message: a user's image goes first, as a data URL.

    A one-turn question is the single user message amvicc has always sent; the model's own
    earlier reply goes back as an ``assistant`` message with plain text content.
    """
    if turn.role in ("assistant", "system"):
        return {"role": turn.role, "content": turn.text}
    content: list[dict[str, Any]] = []
    if turn.image is not None:
        content.append({"type": "image_url", "image_url": {"url": turn.image.data_url}})
    content.append({"type": "text", "text": turn.text})
    return {"role": "user", "content": content}


def parse_chat_body(raw: bytes, *, latency: float | None, request: dict[str, Any]) -> Reply:
    """Read a chat-completion body into a :class:`Reply` (a malformed one is retryable)."""
    try:
        body = json.loads(raw)
        message = body["choices"][0]["message"]
        text = message.get("content")
        if isinstance(text, list):  # some servers return content parts
            text = "".join(part.get("text", "") for part in text if isinstance(part, dict))
        if text is None:
            text = message.get("refusal") or ""
        if not isinstance(text, str):
            raise TypeError("message content is not text")
        usage = body.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
        return Reply(
            text=None,
            raw=raw,
            latency_s=latency,
            request=request,
            error=f"malformed response body ({type(err).__name__}: {err})"[:300],
            retryable=True,
        )
    return Reply(
        text=text,
        raw=raw,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_s=latency,
        request=request,
    )


def _error_message(err: Any) -> str:
    body = err.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error", {}).get("message")
        if message:
            return str(message)[:300]
    return str(err.message)[:300]


def open_openai_chat(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    """The registry's opener for ``openai:<model>`` and for names served at a base URL."""
    return OpenAIChatVLM(target, api, name=name)
