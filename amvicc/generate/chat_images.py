"""Images through chat completions: OpenRouter (Gemini 2.5 Flash Image...) and compatible servers.

OpenRouter serves image models through ``POST {base}/chat/completions``: the prompt is the user
message, ``"modalities": ["image", "text"]`` asks for an image, and the reply's
``choices[0].message.images[i].image_url.url`` holds it as a ``data:`` URL beside the model's
text (``message.content``). One request makes one image, so ``--num-images K`` sends K
requests. The models take no seed: images record none, and the run says seeds are not
controllable.

Requests go through the ``openai`` client's raw ``post`` (its retries of 429 honouring
``Retry-After``, 5xx, timeouts and connection errors with exponential backoff; the preset's
``HTTP-Referer`` and ``X-Title`` headers) and the body is read here. A reply without an image —
the model declined, or answered in text only — is a **refusal** recorded with the model's text
as the reason, never an image and never a crash. A request still failing after the retries is
recorded as ``failed`` (the next run retries it); a mistake no retry can fix (key refused,
unknown model, a parameter the server rejects, no credits) stops the run with one line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from amvicc.api import OPENROUTER, gather_bounded, raw_response_type
from amvicc.errors import UserError
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions
from amvicc.generate.plan import ImageJob
from amvicc.generate.remote import (
    SEEDS_NOT_CONTROLLABLE,
    RemoteBackend,
    decode_image,
    fetch_image_url,
)
from amvicc.generate.sink import ImageSink
from amvicc.generate.specs import ChatImageSpec

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

MODALITIES = ("image", "text")
# Words of a 403 that flags one prompt (OpenRouter's moderation) rather than the key.
_MODERATION_WORDS = ("moderation", "flagged")


class ChatImageBackend(RemoteBackend):
    """Makes images by asking a chat-completions endpoint for image output."""

    def __init__(self, spec: ChatImageSpec, options: GenerationOptions, layout: ProcessLayout):
        super().__init__(
            spec.name,
            options,
            layout,
            refused={"--width": options.width, "--height": options.height},
            advice="the chat route takes no size; pass request parameters with --option, e.g. "
            "--option 'image_config={aspect_ratio: \"16:9\"}'",
        )
        self.spec = spec
        api = replace(options.api, base_url=spec.base_url)
        if spec.preset == OPENROUTER.name:
            api = api.with_preset(OPENROUTER)
        if api.base_url is None:  # resolve_model never makes such a spec; a caller might
            raise UserError(f"{spec.name}: the chat image route needs --base-url")
        self.api = api
        self.endpoint = api.base_url
        self.request_options = {**spec.options, **options.extra}
        self.outputs = {
            "backend": "chat-images",
            "endpoint": self.endpoint,
            "api_model": spec.api_model,
            "modalities": list(MODALITIES),
            "options": self.request_options,
        }
        self.settings = {
            "api": api.public(),
            "processes": layout.count,
            "seeds": SEEDS_NOT_CONTROLLABLE,
        }

    def describe(self) -> str:
        """The model as one log line."""
        return f"{self.spec.name}: {self.spec.api_model} at {self.endpoint} (chat completions)"

    async def _run(self, jobs: Sequence[ImageJob], sink: ImageSink) -> None:
        response_type = raw_response_type()
        async with self.api.async_client() as client:
            await gather_bounded(
                jobs,
                partial(self._one, client, response_type, sink),
                limit=self.api.max_connections,
            )

    async def _one(
        self, client: AsyncOpenAI, response_type: type[Any], sink: ImageSink, job: ImageJob
    ) -> None:
        import openai

        body = {
            "model": self.spec.api_model,
            "messages": [{"role": "user", "content": job.prompt.text}],
            "modalities": list(MODALITIES),
            **self.request_options,
        }
        try:
            response = await client.post("/chat/completions", cast_to=response_type, body=body)
        except openai.PermissionDeniedError as err:
            message = _message(err)
            if any(word in message.lower() for word in _MODERATION_WORDS):
                sink.reject(job, "refused", f"moderation: {message}")
                return
            raise self._key_refused(err) from None
        except openai.AuthenticationError as err:
            raise self._key_refused(err) from None
        except openai.NotFoundError as err:
            raise UserError(
                f"{self.endpoint} has no model {self.spec.api_model!r} or no chat completions "
                f"endpoint (404: {_message(err)}); check --model and --base-url"
            ) from None
        except openai.BadRequestError as err:
            raise UserError(
                f"{self.endpoint} rejected the request for {self.spec.api_model}: "
                f"{_message(err)} (does the model make images?)"
            ) from None
        except openai.APIStatusError as err:
            if err.status_code == 402:
                raise UserError(
                    f"{self.endpoint} asks for payment (402: {_message(err)}); add credits to "
                    f"the account of the key in {self.api.key_env}"
                ) from None
            sink.reject(job, "failed", f"HTTP {err.status_code}: {_message(err)}")
            return
        except openai.APIError as err:
            # timeouts and connection errors left after the client's retries
            sink.reject(job, "failed", f"{type(err).__name__}: {_message(err)}")
            return
        await self._read(job, sink, response.content)

    async def _read(self, job: ImageJob, sink: ImageSink, raw: bytes) -> None:
        """Store the reply's first image, or record the refusal or failure it is."""
        try:
            body = json.loads(raw)
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                error = body["error"]
                sink.reject(job, "failed", f"error in the reply: {error.get('message', error)}")
                return
            choice = body["choices"][0]
            message = choice["message"]
            text = _text(message.get("content"))
            images = message.get("images") or []
            if not isinstance(images, list):
                raise TypeError("message.images is not a list")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
            sink.reject(job, "failed", f"malformed reply ({type(err).__name__}: {err})"[:300])
            return
        finish = choice.get("native_finish_reason") or choice.get("finish_reason")
        details: dict[str, Any] = {
            "reply_text": text,
            "finish_reason": finish,
            "reply_id": body.get("id"),
            "served_model": body.get("model"),
        }
        if not images:
            reason = text.strip() or f"no image and no text in the reply (finish reason {finish})"
            sink.reject(job, "refused", reason, **details)
            return
        try:
            url = images[0]["image_url"]["url"]
            image = decode_image(await fetch_image_url(str(url), self.api.timeout))
        except (KeyError, TypeError, ValueError, OSError) as err:
            sink.reject(job, "failed", f"the reply's image is unreadable ({err})"[:300], **details)
            return
        sink.save(job, image, images_in_reply=len(images), **details)

    def _key_refused(self, err: Any) -> UserError:
        return UserError(
            f"{self.endpoint} refused the API key in {self.api.key_env} "
            f"({err.status_code}: {_message(err)}); check the key and its access to "
            f"{self.spec.api_model}"
        )


def _text(content: object) -> str:
    """The text of a message's content (a string, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise TypeError("message content is neither text nor parts")


def _message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        message = body.get("message")
        if message is None and isinstance(body.get("error"), dict):
            message = body["error"].get("message")
        if message:
            return str(message)[:300]
    return str(getattr(err, "message", err))[:300]
