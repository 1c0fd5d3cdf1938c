"""A local OpenRouter for tests: chat completions under ``/api/v1``, with image output.

It speaks OpenRouter's wire format: a chat request with ``"modalities": ["image", "text"]`` is
answered with the assistant's text in ``message.content`` and the image as a ``data:`` URL in
``message.images[i].image_url.url``; any other chat request is answered with text, as the
OpenAI-compatible fake does (so the VLM route runs against it too). Faults are those of
:class:`~amvicc.testing.fake_openai.Fault`: 429 with ``Retry-After``, 5xx, hung requests,
malformed bodies, ``text_only`` replies (the model declined: text, no image) and
``moderation`` (403, the prompt flagged).

Example::

    with FakeOpenRouterServer() as server:
        server.inject(Fault.text_only("I can't draw that."))
        ...  # generate with --model openrouter:google/gemini-2.5-flash-image --base-url server.url
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amvicc.testing.fake_openai import FakeOpenAIServer, grey_png

CHAT_IMAGE_TEXT = "Here is the image you asked for."


@dataclass(frozen=True)
class ChatImage:
    """What the fake answers to one image request.

    Attributes:
        images: the encoded images of the reply (PNG bytes); empty for a text-only reply.
        text: the assistant's text beside them.
    """

    images: tuple[bytes, ...]
    text: str = CHAT_IMAGE_TEXT


ChatImageHandler = Callable[[dict[str, Any]], ChatImage]


def one_grey_image(request: dict[str, Any]) -> ChatImage:
    """A default image reply: one small grey PNG and a sentence."""
    return ChatImage((grey_png(request),))


def prompt_of(request: dict[str, Any]) -> str:
    """The user message of a chat image request (the generation prompt)."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class FakeOpenRouterServer(FakeOpenAIServer):
    """OpenRouter's chat completions on 127.0.0.1 (see the module docstring).

    Attributes:
        chat_images: request body -> the reply to an image request.
    """

    chat_images: ChatImageHandler = one_grey_image
    prefix: str = "/api/v1"

    def _respond(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        modalities = body.get("modalities") or []
        if path == f"{self.prefix}/chat/completions" and "image" in modalities:
            handler._json(200, chat_image_completion(body, self.chat_images(body)))
            return
        super()._respond(handler, path, body)


def chat_image_completion(request: dict[str, Any], reply: ChatImage) -> dict[str, Any]:
    """A chat completion carrying images the way OpenRouter returns them."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.images:
        message["images"] = [
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()},
            }
            for data in reply.images
        ]
    return {
        "id": f"gen-fake-{time.time_ns()}",
        "provider": "Google",
        "model": request.get("model", "fake"),
        "object": "chat.completion",
        "created": int(time.time()),
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": "stop",
                "native_finish_reason": "STOP",
                "message": message,
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1290, "total_tokens": 1302},
    }
