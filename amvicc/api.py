"""OpenAI-compatible API access shared by generation, answering and the judges.

The ``openai`` client already retries 408/409/429/5xx responses, connection errors and timeouts
with exponential backoff and jitter, honouring ``Retry-After``; amvicc only sets how often and
how long. Keys come from the environment and are never stored, logged or put in a report.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from amvicc.errors import UserError
from amvicc.redaction import redact_url

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from tqdm import tqdm

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# vLLM, Ollama and SGLang servers accept any key; the client insists on one.
KEYLESS_PLACEHOLDER = "EMPTY"

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class ApiSettings:
    """How to reach an OpenAI-compatible endpoint (never the key itself).

    Attributes:
        base_url: the endpoint, e.g. ``http://127.0.0.1:8000/v1``; None for OpenAI.
        api_key_env: the environment variable holding the key.
        max_connections: requests in flight at once.
        timeout: seconds per request attempt.
        max_retries: attempts after the first on 429, 5xx, timeouts and connection errors.
    """

    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    max_connections: int = 16
    timeout: float = 120.0
    max_retries: int = 6

    def api_key(self) -> str:
        """The key from the environment.

        Raises:
            UserError: no key is set and the endpoint is OpenAI's own.
        """
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.base_url is not None and self.api_key_env == DEFAULT_KEY_ENV:
            return KEYLESS_PLACEHOLDER
        raise UserError(
            f"environment variable {self.api_key_env} is not set; export your API key in it "
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
        )

    def public(self) -> dict[str, object]:
        """What a run may record: everything but the key (a key inside the URL redacted)."""
        return {
            "base_url": redact_url(self.base_url) if self.base_url else None,
            "api_key_env": self.api_key_env,
            "max_connections": self.max_connections,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
        }


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
    semaphore = asyncio.Semaphore(limit)

    async def one(item: ItemT) -> ResultT:
        async with semaphore:
            result = await worker(item)
        if progress is not None:
            progress.update(1)
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))
