"""Stability AI's REST API: ``stability:sd3.5-large`` and its siblings, over plain httpx.

One request per image: ``POST {base}/v2beta/stable-image/generate/{sd3|ultra|core}`` as
``multipart/form-data`` with ``prompt``, ``model`` (the ``sd3`` route), ``seed``,
``output_format=png`` and ``aspect_ratio``, ``Authorization: Bearer <key>`` and ``Accept:
image/*``. The image comes back as raw bytes with ``finish-reason`` and ``seed`` headers; a
JSON reply (``image`` in base64, ``finish_reason``, ``seed``) is read as well, whatever the
``Accept`` header got.

The API takes a seed (0 to 4294967294): each image's derived seed is folded into that range,
sent, and the seed the API reports is the one stored. ``finish-reason: CONTENT_FILTERED`` means
the returned image is a blurred placeholder: it is recorded as a **refusal**, never stored as an
image; so is a 403 ``content_moderation`` (the prompt was flagged). 429, 5xx, timeouts and
connection errors are retried with the openai client's schedule (:func:`amvicc.api.retry_delay`,
``Retry-After`` honoured); what still fails is recorded as ``failed`` for the next run. A 400
(its ``errors`` list names the field), a refused key, an unknown route or no credits stop the
run with one line.

httpx is used directly, not Stability's SDK (its gRPC one is unmaintained, and this is one
multipart POST).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from amvicc.api import RETRYABLE_STATUS, STABILITY, gather_bounded, retry_delay
from amvicc.errors import UserError
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions
from amvicc.generate.plan import ImageJob
from amvicc.generate.remote import RemoteBackend, decode_image
from amvicc.generate.sink import ImageSink
from amvicc.generate.specs import StabilitySpec

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

API_PATH = "/v2beta/stable-image/generate/"
# The aspect ratios the API takes.
ASPECT_RATIOS = ("16:9", "1:1", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21")
DEFAULT_ASPECT_RATIO = "1:1"
SEED_LIMIT = 4294967295  # seeds are 0 .. 4294967294
FILTERED = "CONTENT_FILTERED"


class StabilityBackend(RemoteBackend):
    """Makes images through Stability AI's ``stable-image/generate`` endpoints."""

    seeded = True

    def __init__(self, spec: StabilitySpec, options: GenerationOptions, layout: ProcessLayout):
        super().__init__(
            spec.name,
            options,
            layout,
            advice="pass request fields with --option, e.g. --option negative_prompt=blurry "
            "--option cfg_scale=4.5",
        )
        self.spec = spec
        self.api = options.api.with_preset(STABILITY)
        assert self.api.base_url is not None  # the preset sets one
        self.endpoint = f"{self.api.base_url.rstrip('/')}{API_PATH}{spec.route}"
        extra = dict(options.extra)
        self.aspect_ratio = _aspect_ratio(spec.name, extra.pop("aspect_ratio", None), options)
        fields: dict[str, str] = {}
        if spec.api_model is not None:
            fields["model"] = spec.api_model
        fields["output_format"] = "png"
        fields["aspect_ratio"] = self.aspect_ratio
        fields.update({key: _form_value(value) for key, value in extra.items()})
        for reserved in ("prompt", "seed"):
            if reserved in fields:
                raise UserError(
                    f"--option {reserved}=... is not allowed: amvicc sends each image's "
                    f"{reserved} itself (the base seed is --seed)"
                )
        self.fields = fields
        self.outputs = {
            "backend": "stability",
            "endpoint": self.endpoint,
            "api_model": spec.api_model or spec.route,
            "fields": fields,
        }
        self.settings = {"api": self.api.public(), "processes": layout.count}

    def describe(self) -> str:
        """The model as one log line."""
        return f"{self.spec.name}: {self.endpoint}, aspect ratio {self.aspect_ratio}"

    async def _run(self, jobs: Sequence[ImageJob], sink: ImageSink) -> None:
        import httpx

        headers = {
            "Authorization": f"Bearer {self.api.api_key()}",
            "Accept": "image/*",
            **dict(self.api.headers),
        }
        limits = httpx.Limits(max_connections=self.api.max_connections)
        async with httpx.AsyncClient(
            headers=headers, timeout=self.api.timeout, limits=limits
        ) as client:
            await gather_bounded(
                jobs, partial(self._one, client, sink), limit=self.api.max_connections
            )

    async def _one(self, client: httpx.AsyncClient, sink: ImageSink, job: ImageJob) -> None:
        seed = job.seed % SEED_LIMIT
        form = {**self.fields, "prompt": job.prompt.text, "seed": str(seed)}
        response = await self._post(client, form)
        if isinstance(response, str):
            sink.reject(job, "failed", response)
            return
        status = response.status_code
        if status == 200:
            await self._read(job, sink, response, seed)
            return
        name, message = _error(response)
        if status == 403 and name == "content_moderation":
            sink.reject(job, "refused", f"content_moderation: {message}")
            return
        if status == 400:
            raise UserError(f"{self.endpoint} rejected the request for {self.spec.name}: {message}")
        if status == 401 or status == 403:
            raise UserError(
                f"{self.endpoint} refused the API key in {self.api.key_env} ({status}: "
                f"{message}); check the key"
            )
        if status == 402:
            raise UserError(
                f"{self.endpoint} asks for payment (402: {message}); add credits to the account "
                f"of the key in {self.api.key_env}"
            )
        if status == 404:
            raise UserError(
                f"{self.endpoint} does not exist (404: {message}); check --model and --base-url"
            )
        sink.reject(job, "failed", f"HTTP {status}: {message}")

    async def _post(
        self, client: httpx.AsyncClient, form: Mapping[str, str]
    ) -> httpx.Response | str:
        """POST the form, retrying 429, 5xx, timeouts and connection errors.

        Returns:
            The response to the last attempt, or why the last attempt got none.
        """
        import httpx

        # Each field as a form part with no file name: the API insists on multipart.
        parts = {key: (None, value) for key, value in form.items()}
        failure = ""
        for attempt in range(self.api.max_retries + 1):
            headers: Mapping[str, str] | None = None
            try:
                response = await client.post(self.endpoint, files=parts)
            except httpx.TimeoutException:
                failure = f"timed out after {self.api.timeout:g} s per attempt"
            except httpx.TransportError as err:
                failure = f"connection failed: {err}"
            else:
                if response.status_code not in RETRYABLE_STATUS:
                    return response
                failure = f"HTTP {response.status_code}: {_error(response)[1]}"
                headers = response.headers
            if attempt < self.api.max_retries:
                await asyncio.sleep(retry_delay(attempt, headers))
        return f"{failure} ({self.api.max_retries + 1} attempts)"

    async def _read(
        self, job: ImageJob, sink: ImageSink, response: httpx.Response, sent_seed: int
    ) -> None:
        """Store the image of a 200 reply, or record the refusal or failure it is."""
        content_type = response.headers.get("content-type", "")
        try:
            if content_type.startswith("application/json"):
                body = response.json()
                finish = str(body.get("finish_reason") or "")
                reported = body.get("seed")
                raw = base64.b64decode(body.get("image") or "", validate=True)
            else:
                finish = response.headers.get("finish-reason", "")
                reported = response.headers.get("seed")
                raw = response.content
        except (ValueError, AttributeError, binascii.Error) as err:
            sink.reject(job, "failed", f"malformed reply ({type(err).__name__}: {err})"[:300])
            return
        details = {"finish_reason": finish or None, "sent_seed": sent_seed}
        if finish == FILTERED:
            sink.reject(
                job,
                "refused",
                f"{FILTERED}: Stability AI's filter replaced the image with a blurred "
                "placeholder (not stored)",
                **details,
            )
            return
        try:
            image = decode_image(raw)
        except OSError as err:
            sink.reject(job, "failed", f"the reply's image is unreadable ({err})"[:300], **details)
            return
        seed = _seed(reported, sent_seed)
        if seed != sent_seed:
            log.warning("%s: sent seed %d, the API reports %d", job.prompt.key, sent_seed, seed)
        sink.save(job, image, seed=seed, **details)


def _aspect_ratio(name: str, chosen: object, options: GenerationOptions) -> str:
    """The aspect ratio: ``--option aspect_ratio=...``, else ``--width``/``--height``, else 1:1.

    Raises:
        UserError: a ratio the API does not take (the message lists those it does).
    """
    allowed = ", ".join(ASPECT_RATIOS)
    if chosen is not None:
        ratio = str(chosen)
        if ratio not in ASPECT_RATIOS:
            raise UserError(f"{name} takes aspect_ratio {allowed}; got {ratio!r}")
        if options.width is not None or options.height is not None:
            raise UserError(f"{name}: give --option aspect_ratio or --width/--height, not both")
        return ratio
    if options.width is None and options.height is None:
        return DEFAULT_ASPECT_RATIO
    if options.width is None or options.height is None:
        raise UserError(
            f"{name} makes images by aspect ratio: give both --width and --height (or "
            "--option aspect_ratio=W:H)"
        )
    divisor = math.gcd(options.width, options.height)
    ratio = f"{options.width // divisor}:{options.height // divisor}"
    if ratio not in ASPECT_RATIOS:
        raise UserError(
            f"{name} cannot make {options.width}x{options.height} images: their aspect ratio "
            f"{ratio} is not one it takes ({allowed})"
        )
    return ratio


def _form_value(value: object) -> str:
    """A request parameter as a form field (numbers as written, booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _seed(reported: object, sent: int) -> int:
    """The seed the API reports it used (the one sent when it reports none)."""
    try:
        return int(str(reported)) if reported not in (None, "") else sent
    except ValueError:
        return sent


def _error(response: httpx.Response) -> tuple[str, str]:
    """An error reply's ``name`` and its ``errors`` as one line (they name the field)."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return "", response.text[:300] or response.reason_phrase
    if not isinstance(body, dict):
        return "", str(body)[:300]
    errors = body.get("errors")
    if isinstance(errors, list) and errors:
        message = "; ".join(str(e) for e in errors)
    else:
        message = str(body.get("message") or body.get("name") or body)
    return str(body.get("name") or ""), message[:300]
