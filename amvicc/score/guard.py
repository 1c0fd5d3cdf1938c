"""What the scoring server refuses before Gradio sees a request: uploads and password guessing.

The app takes no file from a rater, so upload routes answer 403 whatever their size (Gradio's
own ``max_file_size`` is set tiny as well). Failed logins from one address are slowed down: after
a few, each further attempt waits longer before it is even checked (1 s, 2 s, 4 s... up to
30 s), so guessing a password costs hours instead of seconds, while a rater who mistypes once
notices nothing. A successful login clears the address's count.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FREE_FAILURES = 3
MAX_DELAY_S = 30.0
FORGET_AFTER_S = 900.0


@dataclass
class LoginThrottle:
    """Failed logins per client address, and how long the next attempt must wait.

    Args:
        free: failures allowed before attempts are slowed down.
        base_delay: the first delay, in seconds; it doubles with each further failure.
        max_delay: the longest delay.
        forget_after: seconds after the last failure when an address starts afresh.
    """

    free: int = FREE_FAILURES
    base_delay: float = 1.0
    max_delay: float = MAX_DELAY_S
    forget_after: float = FORGET_AFTER_S
    _failures: dict[str, tuple[int, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def delay(self, client: str) -> float:
        """Seconds the next login attempt from ``client`` waits before it is checked."""
        with self._lock:
            count, last = self._failures.get(client, (0, 0.0))
            if time.monotonic() - last > self.forget_after:
                return 0.0
        if count < self.free:
            return 0.0
        return float(min(self.max_delay, self.base_delay * 2 ** (count - self.free)))

    def failed(self, client: str) -> None:
        """Count a failed attempt."""
        now = time.monotonic()
        with self._lock:
            count, last = self._failures.get(client, (0, 0.0))
            if now - last > self.forget_after:
                count = 0
            self._failures[client] = (count + 1, now)
            if len(self._failures) > 10_000:  # addresses that stopped trying
                stale = [c for c, (_, t) in self._failures.items() if now - t > self.forget_after]
                for old in stale:
                    del self._failures[old]

    def succeeded(self, client: str) -> None:
        """Forget the client's failures."""
        with self._lock:
            self._failures.pop(client, None)


class RequestGuard:
    """ASGI middleware: no uploads, and failed logins slowed down per client address.

    Args:
        app: the application it guards (Gradio's).
        throttle: the failed-login bookkeeping (shared so tests can look at it).
    """

    def __init__(self, app: ASGIApp, throttle: LoginThrottle | None = None) -> None:
        self.app = app
        self.throttle = throttle or LoginThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse uploads, slow down password guessing, pass everything else through."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", "")).rstrip("/")
        if path.endswith("/upload"):
            await _plain(send, 403, b"this app takes no uploads")
            return
        if not path.endswith("/login"):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.throttle.delay(client)
        if wait:
            await asyncio.sleep(wait)

        async def watch(message: Message) -> None:
            # Counted before the answer leaves: the next attempt always sees this one.
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if status < 300:
                    self.throttle.succeeded(client)
                elif status in (400, 401, 403):
                    self.throttle.failed(client)
            await send(message)

        await self.app(scope, receive, watch)


async def _plain(send: Send, code: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": code,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})
