"""API access shared by generation, answering and the judges: endpoints, keys, retries.

The ``openai`` client already retries 408/409/429/5xx responses, connection errors and timeouts
with exponential backoff and jitter, honouring ``Retry-After``; amvicc only sets how often and
how long. Routes that do not speak OpenAI's protocol (Stability AI's REST API) use
:func:`retry_delay` for the same schedule. Keys come from the environment and are never stored,
logged or put in a report.

A *preset* (:class:`ApiPreset`) is what a route prefix such as ``openrouter:`` or
``stability:`` implies: its endpoint, the environment variable of its key and the headers it
recommends. :meth:`ApiSettings.with_preset` fills in only what the user left unset, so
``--base-url`` (a local fake server, a proxy) and ``--api-key-env`` still win.
"""

from __future__ import annotations

import os
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from amvicc.errors import UserError
from amvicc.redaction import redact_url, remember_secret

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from tqdm import tqdm

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# vLLM, Ollama and SGLang servers accept any key; the client insists on one.
KEYLESS_PLACEHOLDER = "EMPTY"

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class ApiPreset:
    """What a route prefix implies about reaching its provider.

    Attributes:
        name: the prefix, e.g. ``openrouter``.
        base_url: the provider's endpoint.
        key_env: the environment variable its key is read from by default.
        headers: headers the provider asks clients to send (never secrets).
    """

    name: str
    base_url: str
    key_env: str
    headers: tuple[tuple[str, str], ...] = ()


PROJECT_URL = "https://github.com/amvicc/amvicc"
# OpenRouter attributes requests to an app by these two headers (its "app attribution").
OPENROUTER = ApiPreset(
    name="openrouter",
    base_url="https://openrouter.ai/api/v1",
    key_env="OPENROUTER_API_KEY",
    headers=(("HTTP-Referer", PROJECT_URL), ("X-Title", "amvicc")),
)
STABILITY = ApiPreset(
    name="stability", base_url="https://api.stability.ai", key_env="STABILITY_API_KEY"
)
PRESETS: dict[str, ApiPreset] = {p.name: p for p in (OPENROUTER, STABILITY)}


@dataclass(frozen=True)
class ApiSettings:
    """How to reach an API endpoint (never the key itself).

    Attributes:
        base_url: the endpoint, e.g. ``http://127.0.0.1:8000/v1``; None for the route's own
            (OpenAI, or a preset's).
        api_key_env: the environment variable holding the key; None for the route's default
            (``OPENAI_API_KEY``, or a preset's such as ``OPENROUTER_API_KEY``).
        max_connections: requests in flight at once.
        timeout: seconds per request attempt.
        max_retries: attempts after the first on 429, 5xx, timeouts and connection errors.
        headers: extra headers sent with every request (a preset's; never secrets).
    """

    base_url: str | None = None
    api_key_env: str | None = None
    max_connections: int = 16
    timeout: float = 120.0
    max_retries: int = 6
    headers: tuple[tuple[str, str], ...] = field(default=())

    @property
    def key_env(self) -> str:
        """The environment variable the key is read from."""
        return self.api_key_env or DEFAULT_KEY_ENV

    def with_preset(self, preset: ApiPreset) -> ApiSettings:
        """These settings for a preset's provider: its endpoint, key variable and headers.

        What the user set (``--base-url``, ``--api-key-env``) is kept; the preset fills in the
        rest.
        """
        return replace(
            self,
            base_url=self.base_url or preset.base_url,
            api_key_env=self.api_key_env or preset.key_env,
            headers=tuple({**dict(preset.headers), **dict(self.headers)}.items()),
        )

    def api_key(self) -> str:
        """The key from the environment, remembered for redaction.

        A server that echoes the key back in an error gets it stored and printed as
        ``[redacted]`` (:func:`amvicc.redaction.remember_secret`).

        Raises:
            UserError: no key is set and the endpoint needs one (OpenAI's own, or a route
                whose key variable is named).
        """
        key = os.environ.get(self.key_env)
        if key:
            remember_secret(key)
            return key
        if self.base_url is not None and self.api_key_env in (None, DEFAULT_KEY_ENV):
            return KEYLESS_PLACEHOLDER
        raise UserError(
            f"environment variable {self.key_env} is not set; export your API key in it "
            "(or name another variable with --api-key-env)"
        )

    def async_client(self) -> AsyncOpenAI:
        """An ``AsyncOpenAI`` client with these settings."""
        from openai import AsyncOpenAI

        # The client's own pool allows far more connections than max_connections; callers
        # bound concurrency with gather_bounded.
        return AsyncOpenAI(
            api_key=self.api_key(),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            default_headers=dict(self.headers) or None,
        )

    def public(self) -> dict[str, object]:
        """What a run may record: everything but the key (a key inside the URL redacted)."""
        public: dict[str, object] = {
            "base_url": redact_url(self.base_url) if self.base_url else None,
            "api_key_env": self.key_env,
            "max_connections": self.max_connections,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
        }
        if self.headers:
            public["headers"] = dict(self.headers)
        return public


def raw_response_type() -> type[Any]:
    """The ``Response`` class of the openai client's HTTP library (httpx2 or httpx).

    Passed as ``cast_to`` to the client's raw ``post``, it returns the body unparsed, with the
    client's retries, errors and headers, so a reply is stored as it came.
    """
    import sys

    import openai

    library = openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0]
    response: type[Any] = sys.modules[library].Response
    return response


# The openai client's schedule: 0.5 s doubling up to 8 s, with up to 25 % jitter; a server's
# Retry-After is honoured up to a minute.
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 60.0
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def retry_delay(attempt: int, headers: Mapping[str, str] | None = None) -> float:
    """Seconds to wait before retry number ``attempt`` (0 for the first retry).

    A ``Retry-After`` (or ``retry-after-ms``) header of at most a minute is obeyed as is;
    otherwise the delay doubles from half a second up to 8 s, less up to a quarter at random
    so that concurrent requests do not retry in lockstep.
    """
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds <= MAX_RETRY_AFTER:
            return seconds
    delay = min(INITIAL_RETRY_DELAY * 2.0**attempt, MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random.random())


async def gather_bounded(
    items: Sequence[ItemT],
    worker: Callable[[ItemT], Awaitable[ResultT]],
    *,
    limit: int,
    progress: tqdm[object] | None = None,
) -> list[ResultT]:
    """Run ``worker`` on every item with at most ``limit`` at once, in input order.

    The worker is expected to record its own result (so a crash loses nothing already done)
    and to turn expected failures into results; ``progress`` advances as each one finishes.
    """
    import asyncio  # here: every command's parser imports this module; few call an API

    semaphore = asyncio.Semaphore(limit)

    async def one(item: ItemT) -> ResultT:
        async with semaphore:
            result = await worker(item)
        if progress is not None:
            progress.update(1)
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))


async def drain_bounded(
    take: Callable[[], ItemT | None],
    worker: Callable[[ItemT], Awaitable[ResultT]],
    *,
    limit: int,
    progress: tqdm[object] | None = None,
) -> list[ResultT]:
    """Run ``worker`` on what ``take`` hands out until it hands out None, ``limit`` at once.

    :func:`gather_bounded` for a to-do list shared with other processes (a
    :class:`~amvicc.store.ClaimFeed`'s ``take_one``): each of ``limit`` loops takes its next
    item only when it is free, so nothing is claimed long before it is worked on. Results
    come in the order the items finished.
    """
    import asyncio

    results: list[ResultT] = []

    async def loop() -> None:
        while (item := take()) is not None:
            results.append(await worker(item))
            if progress is not None:
                progress.update(1)

    await asyncio.gather(*(loop() for _ in range(limit)))
    return results
