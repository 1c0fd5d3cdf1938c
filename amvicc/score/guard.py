"""What the scoring server refuses before Gradio sees a request.

- **Oversized requests**: a request target (path and query) over 8 KiB answers 414 and headers
  over 16 KiB (or one over 8 KiB) answer 431, at once: the server's own limits start higher,
  and some routes (Gradio's queue stream) would otherwise hold such a request open.
- **Anonymous requests, with a login**: only what the login page needs is served before a
  rater signs in (the page itself, its scripts, styles and icons, the login and logout routes);
  every other route, Gradio's included (``/gradio_api/cancel``, ``/reset``, ``/heartbeat/*``,
  ``/queue/data``, ``/user``...), answers 401. Gradio's ``startup-events``, which its launch
  calls on itself, is open to the server's own host only.
- **Uploads**: the app takes no file from a rater, so upload routes answer 403 whatever their
  size (Gradio's own ``max_file_size`` is set tiny as well).
- **Password guessing**: failed logins from one address are slowed down: after a few, each
  further attempt waits longer before it is even checked (1 s, 2 s, 4 s... up to 30 s), so
  guessing a password costs hours instead of seconds, while a rater who mistypes once notices
  nothing. A successful login clears the address's count.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FREE_FAILURES = 3
MAX_DELAY_S = 30.0
FORGET_AFTER_S = 900.0
MAX_TARGET_BYTES = 8 << 10
MAX_HEADER_BYTES = 8 << 10
MAX_HEADERS_BYTES = 16 << 10
# What the login page loads before anyone signs in: the page, its assets, the login itself.
OPEN_BEFORE_LOGIN = re.compile(
    r"^/(|login/?|logout/?|favicon\.ico|manifest\.json|robots\.txt|(gradio_api/)?theme\.css"
    r"|pwa_icon(/\d+)?|(assets|static|svelte)/.+)$"
)
# Gradio's launch calls this on itself, from the server's own host, before anyone signs in
# (it runs the app's startup events once); nobody else needs it.
STARTUP_EVENTS = "/gradio_api/startup-events"


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


def signed_in_user(connection: HTTPConnection) -> str | None:
    """The user a request's Gradio session belongs to, or None when it is not signed in.

    Gradio keeps sessions as ``access-token-<cookie id>`` cookies mapped to user names in its
    app; the guard and the routes added beside Gradio's (the image route) check them the same
    way.
    """
    app = connection.scope.get("app")
    tokens = getattr(app, "tokens", None)
    cookie_id = getattr(app, "cookie_id", None)
    if not isinstance(tokens, dict) or cookie_id is None:
        return None
    token = connection.cookies.get(f"access-token-{cookie_id}") or connection.cookies.get(
        f"access-token-unsecure-{cookie_id}"
    )
    user = tokens.get(token) if token else None
    return str(user) if user else None


def oversized(scope: Scope) -> int | None:
    """414 or 431 when a request's target or headers are over the limits, else None."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    if target > MAX_TARGET_BYTES:
        return 414
    sizes = [len(name) + len(value) for name, value in scope.get("headers") or ()]
    if sum(sizes) > MAX_HEADERS_BYTES or any(size > MAX_HEADER_BYTES for size in sizes):
        return 431
    return None


class RequestGuard:
    """ASGI middleware: size limits, the login over every route, no uploads, slow guessing.

    Args:
        app: the application it guards (Gradio's).
        throttle: the failed-login bookkeeping (shared so tests can look at it).
        login: the app has logins: only :data:`OPEN_BEFORE_LOGIN` is served without one.
    """

    def __init__(
        self, app: ASGIApp, throttle: LoginThrottle | None = None, *, login: bool = False
    ) -> None:
        self.app = app
        self.throttle = throttle or LoginThrottle()
        self.login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what is refused (see the module docstring); pass the rest through."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = oversized(scope)
        if refused is None and self.login and not self._open(scope):
            refused = 401
        if refused is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _plain(send, refused, _REASONS[refused])
            return
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

    def _open(self, scope: Scope) -> bool:
        """Whether a request may pass with this app's login: signed in, or the login page's."""
        if scope["type"] == "http":
            path = str(scope.get("path", ""))
            if OPEN_BEFORE_LOGIN.match(path) or (path == STARTUP_EVENTS and _from_own_host(scope)):
                return True
        return signed_in_user(HTTPConnection(scope)) is not None


def _from_own_host(scope: Scope) -> bool:
    """Whether a request comes from the server's own host: a loopback or the served address."""
    client = (scope.get("client") or ("", 0))[0]
    server = (scope.get("server") or ("", 0))[0]
    try:
        address = ipaddress.ip_address(client)
    except ValueError:  # not an address (a Unix socket's peer): not the launch's own call
        return False
    # ::ffff:127.0.0.1, an IPv4 client of a dual-stack socket, is a loopback too
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback or client == server


_REASONS = {
    401: b"sign in first",
    414: b"request target too long",
    431: b"request headers too large",
}


async def _plain(send: Send, code: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": code,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})
