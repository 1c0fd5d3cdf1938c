"""A local OpenAI-compatible server for tests, benchmarks and trying amvicc without keys.

It answers ``POST /v1/chat/completions`` and ``POST /v1/images/generations`` on 127.0.0.1 with
replies chosen by Python callables, and can inject the faults real APIs produce: 429 with
``Retry-After``, 5xx, hung requests (client timeouts), malformed bodies and content-policy
refusals. Threaded, HTTP/1.1 keep-alive, with a deep listen backlog so it is not the bottleneck
of a throughput benchmark.

Example::

    with FakeOpenAIServer(chat=lambda request: "(a)") as server:
        server.inject(Fault.http(429, retry_after=0.1), Fault.http(500))
        ...  # point a client at server.url
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ChatHandler = Callable[[dict[str, Any]], str]
ImageHandler = Callable[[dict[str, Any]], bytes]


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour, consumed by the next matching request.

    Attributes:
        kind: ``status`` (an HTTP error), ``hang`` (reply after ``delay`` seconds, longer than
            the client's timeout), ``malformed`` (200 with a body that is not JSON),
            ``refusal`` (400 ``content_policy_violation``), ``text_only`` (200 chat reply with
            ``message`` as its text and no image: how chat image models decline),
            ``moderation`` (403, the prompt flagged), ``filtered`` (Stability AI's
            ``CONTENT_FILTERED`` finish reason with a placeholder image), ``bad_request``
            (400 with an ``errors`` list naming a field) or ``echo`` (an error whose body and
            message repeat the request's ``Authorization`` header, as careless servers and
            proxies do).
        path: only requests to this path consume the fault (None: any).
    """

    kind: str
    status: int = 500
    retry_after: float | None = None
    delay: float = 0.0
    message: str = "injected fault"
    path: str | None = None

    @classmethod
    def http(
        cls, status: int, *, retry_after: float | None = None, path: str | None = None
    ) -> Fault:
        """An HTTP error status, optionally with ``Retry-After`` seconds."""
        return cls("status", status=status, retry_after=retry_after, path=path)

    @classmethod
    def hang(cls, delay: float, *, path: str | None = None) -> Fault:
        """Hold the request for ``delay`` seconds before answering normally."""
        return cls("hang", delay=delay, path=path)

    @classmethod
    def malformed(cls, *, path: str | None = None) -> Fault:
        """Answer 200 with a body that is not JSON."""
        return cls("malformed", path=path)

    @classmethod
    def refusal(cls, message: str = "Your request was rejected by the safety system.") -> Fault:
        """Refuse an image request as a content-policy violation (400)."""
        return cls("refusal", status=400, message=message, path="/v1/images/generations")

    @classmethod
    def text_only(
        cls, message: str = "I can't create that image.", *, path: str | None = None
    ) -> Fault:
        """Answer a chat image request with text and no image (the model declined)."""
        return cls("text_only", status=200, message=message, path=path)

    @classmethod
    def moderation(
        cls, message: str = "Your input was flagged by moderation.", *, path: str | None = None
    ) -> Fault:
        """Refuse one prompt as flagged by the provider's moderation (403)."""
        return cls("moderation", status=403, message=message, path=path)

    @classmethod
    def filtered(cls, *, path: str | None = None) -> Fault:
        """Reply 200 with a blurred placeholder and finish reason ``CONTENT_FILTERED``."""
        return cls("filtered", status=200, message="CONTENT_FILTERED", path=path)

    @classmethod
    def echo(cls, status: int, *, path: str | None = None) -> Fault:
        """Answer ``status`` with the request's ``Authorization`` header in the error body."""
        return cls("echo", status=status, path=path)

    @classmethod
    def bad_request(cls, message: str, *, path: str | None = None) -> Fault:
        """Reply 400 with ``message`` in an ``errors`` list (Stability AI's shape)."""
        return cls("bad_request", status=400, message=message, path=path)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received (headers without ``Authorization``)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    authorization: str | None
    received_at: float


def echo_first_option(request: dict[str, Any]) -> str:
    """A default chat reply: ``(a)``."""
    return "(a)"


def grey_png(request: dict[str, Any]) -> bytes:
    """A default image: a small grey PNG."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (128, 128, 128)).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass
class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 (see the module docstring).

    Attributes:
        chat: request body -> reply text for chat completions.
        images: request body -> PNG bytes for image generations (one per requested ``n``).
        latency: seconds every request waits before answering (simulated model time).
        port: 0 picks a free port.
        prefix: the path the API lives under (``/v1``; OpenRouter's is ``/api/v1``).
    """

    chat: ChatHandler = echo_first_option
    images: ImageHandler = grey_png
    latency: float = 0.0
    port: int = 0
    prefix: str = "/v1"
    requests: list[RecordedRequest] = field(default_factory=list)
    _faults: deque[Fault] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give a client, e.g. ``http://127.0.0.1:50123/v1``."""
        return f"{self.root}{self.prefix}"

    @property
    def root(self) -> str:
        """The server's address without the API prefix, e.g. ``http://127.0.0.1:50123``."""
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each is used once, by the next request it matches."""
        with self._lock:
            self._faults.extend(faults)

    def pending_faults(self) -> int:
        """How many injected faults have not been used yet."""
        with self._lock:
            return len(self._faults)

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.path is None or fault.path == path:
                    self._faults.remove(fault)
                    return fault
        return None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _parse(self, handler: Any, raw: bytes) -> dict[str, Any] | None:
        """The request body as a dict; None (after answering 400) when it cannot be read."""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            handler._json(400, {"error": {"message": "body is not JSON"}})
            return None
        return dict(body)

    def _respond(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        """Answer a request no fault took (subclasses add their routes)."""
        if path == f"{self.prefix}/chat/completions":
            handler._json(200, _chat_completion(body, self.chat(body)))
        elif path == f"{self.prefix}/images/generations":
            count = int(body.get("n") or 1)
            data = [
                {"b64_json": base64.b64encode(self.images(body)).decode()} for _ in range(count)
            ]
            handler._json(200, {"created": int(time.time()), "data": data})
        else:
            handler._json(404, {"error": {"message": f"no route {path}"}})

    def _apply(self, handler: Any, fault: Fault, body: dict[str, Any]) -> bool:
        """Carry out a fault; False when the request should then be answered normally."""
        if fault.kind == "hang":
            time.sleep(fault.delay)
            return False
        if fault.kind == "malformed":
            handler._send(200, b"{this is not json", "application/json")
            return True
        if fault.kind == "refusal":
            error = {
                "message": fault.message,
                "type": "invalid_request_error",
                "code": "content_policy_violation",
                "param": None,
            }
            handler._json(400, {"error": error})
            return True
        if fault.kind == "text_only":
            handler._json(200, _chat_completion(body, fault.message))
            return True
        if fault.kind == "moderation":
            flagged: dict[str, object] = {
                "message": fault.message,
                "code": 403,
                "metadata": {"reasons": ["flagged"]},
            }
            handler._json(403, {"error": flagged})
            return True
        if fault.kind == "echo":
            sent = handler.headers.get("Authorization", "")
            echoed = {
                "message": f"invalid credentials: {sent}",
                "type": "server_error",
                "request_headers": {"Authorization": sent, "X-Api-Key": sent.split()[-1:]},
            }
            handler._json(fault.status, {"error": echoed})
            return True
        extra = {}
        if fault.retry_after is not None:
            extra["Retry-After"] = f"{fault.retry_after:g}"
        error = {"message": fault.message, "type": "server_error", "code": None}
        handler._json(fault.status, {"error": error}, extra)
        return True

    def start(self) -> FakeOpenAIServer:
        """Start serving in a background thread."""
        server = _Server(("127.0.0.1", self.port), _handler_for(self))
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # listen backlog: a burst of connections is never refused

    def handle_error(self, request: object, client_address: object) -> None:
        """Stay quiet when a client gives up on a request (a timeout test does that)."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def read_body(handler: BaseHTTPRequestHandler) -> bytes | None:
    """A request's body; None when its client went away before sending all of it (killed).

    Such a request never arrived, as on a real server: it is not recorded, and the connection
    is closed.
    """
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length)
    if len(raw) < length:
        handler.close_connection = True
        return None
    return raw


def _handler_for(fake: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def log_message(self, format: str, *args: object) -> None:
            """Silence the per-request log lines."""

        def do_GET(self) -> None:
            if self.path.rstrip("/") == f"{fake.prefix}/models":
                self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            raw = read_body(self)
            if raw is None:
                return
            body = fake._parse(self, raw)
            if body is None:
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            fake._record(
                RecordedRequest(
                    self.path, body, headers, self.headers.get("Authorization"), time.time()
                )
            )
            fault = fake._take_fault(self.path)
            if fake.latency:
                time.sleep(fake.latency)
            if fault is not None and fake._apply(self, fault, body):
                return
            fake._respond(self, self.path, body)

        def _json(self, status: int, payload: object, extra: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json", extra)

        def _send(
            self, status: int, data: bytes, content_type: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            # Tell the client to retry only where a real API would.
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _chat_completion(request: dict[str, Any], text: str) -> dict[str, Any]:
    prompt_chars = len(json.dumps(request.get("messages", [])))
    return {
        "id": f"chatcmpl-fake-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": prompt_chars // 4 + max(1, len(text) // 4),
        },
    }


def last_user_text(request: dict[str, Any]) -> str:
    """The text parts of the last user message of a chat request (for reply rules)."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return ""


def iter_image_parts(request: dict[str, Any]) -> Iterator[str]:
    """The ``image_url`` URLs (data URLs) of a chat request."""
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    yield part["image_url"]["url"]
