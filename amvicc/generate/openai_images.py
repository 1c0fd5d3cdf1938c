"""API image models: OpenAI's images endpoint and any OpenAI-compatible one.

Requests run concurrently (at most ``--max-connections`` in flight) through the ``openai`` async
client, which retries 408/409/429/5xx answers, connection errors and timeouts with exponential
backoff honouring ``Retry-After``. Each image is stored as soon as it arrives. A content-policy
refusal is recorded as ``refused`` with the reason; an attempt that still fails after the
retries is recorded as ``failed`` (the next run retries it); a mistake that would fail every
request (bad key, unknown model, bad parameter) stops the run with one line.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

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
from amvicc.generate.specs import ApiModelSpec
from amvicc.redaction import redact_config, redact_url

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from PIL import Image

log = logging.getLogger(__name__)

OPENAI_ENDPOINT = "https://api.openai.com/v1"
# The codes OpenAI's images endpoint gives a prompt its safety system rejects.
REFUSAL_CODES = frozenset({"content_policy_violation", "moderation_blocked"})


class ApiImageBackend(RemoteBackend):
    """Makes images by calling an OpenAI-compatible images endpoint."""

    def __init__(self, spec: ApiModelSpec, options: GenerationOptions, layout: ProcessLayout):
        super().__init__(
            spec.name,
            options,
            layout,
            advice="use --option KEY=VALUE for request parameters such as quality",
        )
        self.spec = spec
        self.size = self._size()
        self.request_options = {**spec.options, **options.extra}
        self.api = replace(options.api, base_url=spec.base_url)
        # What is recorded, logged and named in messages: credentials in the URL or the
        # options redacted (the requests themselves use the real values).
        self.endpoint = redact_url(spec.base_url or OPENAI_ENDPOINT)
        self.outputs: dict[str, Any] = {
            "backend": "openai-images",
            "endpoint": self.endpoint,
            "api_model": spec.api_model,
            "size": self.size,
            "options": redact_config(self.request_options),
        }
        self.settings = {
            "api": self.api.public(),
            "processes": layout.count,
            "seeds": SEEDS_NOT_CONTROLLABLE,
        }

    def _size(self) -> str:
        options = self.options
        if options.width is None and options.height is None:
            return self.spec.size
        default_width, _, default_height = self.spec.size.partition("x")
        size = f"{options.width or default_width}x{options.height or default_height}"
        if self.spec.sizes and size not in self.spec.sizes:
            raise UserError(
                f"{self.spec.name} cannot make {size} images; it takes "
                f"{', '.join(self.spec.sizes)} (--width/--height)"
            )
        return size

    def describe(self) -> str:
        """The model as one log line."""
        return f"{self.spec.name}: {self.spec.api_model} at {self.endpoint}, {self.size}"

    async def _run(self, jobs: Sequence[ImageJob], sink: ImageSink) -> None:
        feed = _ListFeed(jobs)
        async with self.api.async_client() as client:

            async def worker() -> None:
                while (job := feed.take_one()) is not None:
                    await self._one(client, sink, job)

            await asyncio.gather(*(worker() for _ in range(self.api.max_connections)))

    async def _one(self, client: AsyncOpenAI, sink: ImageSink, job: ImageJob) -> None:
        import openai

        request = self.request(job.prompt.text)
        try:
            response = await client.images.generate(**request)
        except openai.BadRequestError as err:
            if err.code in REFUSAL_CODES:
                sink.reject(job, "refused", _message(err))
                return
            raise UserError(
                f"{self.endpoint} rejected the request for {self.spec.api_model}: {_message(err)}"
            ) from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
            raise UserError(
                f"{self.endpoint} refused the API key in {self.api.key_env} "
                f"({err.status_code}: {_message(err)}); check the key and its access to "
                f"{self.spec.api_model}"
            ) from None
        except openai.NotFoundError as err:
            raise UserError(
                f"{self.endpoint} has no image model {self.spec.api_model!r} or no images "
                f"endpoint (404: {_message(err)}); check --model and --base-url"
            ) from None
        except (openai.APIError, ValueError) as err:
            # 429/5xx/timeouts/connection errors left after the client's retries; a body that
            # is not JSON (ValueError) or not an images response.
            sink.reject(job, "failed", f"{type(err).__name__}: {_message(err)}")
            return
        try:
            image, details = await self._image(response)
        except (OSError, ValueError) as err:
            sink.reject(job, "failed", f"the endpoint returned no readable image ({err})")
            return
        sink.save(job, image, **details)

    def request(self, prompt: str) -> dict[str, Any]:
        """The keyword arguments of ``client.images.generate`` for one prompt.

        Options the ``openai`` client names go as its arguments; any other (a parameter of an
        OpenAI-compatible server, e.g. ``num_inference_steps``) goes in the request body as
        ``extra_body``, which the client sends unchanged.
        """
        known = images_parameters()
        direct = {k: v for k, v in self.request_options.items() if k in known}
        extra = {k: v for k, v in self.request_options.items() if k not in known}
        request: dict[str, Any] = {
            "model": self.spec.api_model,
            "prompt": prompt,
            "n": 1,
            "size": self.size,
            **direct,
        }
        if self.spec.response_format is not None:
            request["response_format"] = self.spec.response_format
        if extra:
            request["extra_body"] = extra
        return request

    async def _image(self, response: Any) -> tuple[Image.Image, dict[str, Any]]:
        data = response.data or []
        if not data:
            raise ValueError("empty data")
        item = data[0]
        if item.b64_json:
            raw = base64.b64decode(item.b64_json)
        elif item.url:
            raw = await fetch_image_url(item.url, self.api.timeout)
        else:
            raise ValueError("neither b64_json nor url")
        image = decode_image(raw)
        details = {"revised_prompt": item.revised_prompt} if item.revised_prompt else {}
        return image, details


class _ListFeed:
    """A fixed list of jobs, handed out one at a time (what a :class:`ClaimFeed` does too)."""

    def __init__(self, jobs: Sequence[ImageJob]) -> None:
        self._jobs = iter(list(jobs))

    def take_one(self) -> ImageJob | None:
        return next(self._jobs, None)


@cache
def images_parameters() -> frozenset[str]:
    """The request parameters the installed ``openai`` client's ``images.generate`` names.

    Its transport options (``extra_body``, ``extra_headers``, ``timeout``...) are left out: a
    user's ``--option`` never sets them.
    """
    from openai.resources.images import AsyncImages

    names = inspect.signature(AsyncImages.generate).parameters
    return frozenset(n for n in names if n != "self" and not n.startswith("extra_")) - {"timeout"}


def _message(err: Exception) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(getattr(err, "message", err))
