"""A local Stability AI REST API for tests: ``POST /v2beta/stable-image/generate/{route}``.

It reads the ``multipart/form-data`` request as the real API does (``prompt``, ``model``,
``seed``, ``output_format``, ``aspect_ratio``...) and answers as it does: with ``Accept:
image/*`` the raw image bytes and ``finish-reason`` / ``seed`` headers, with ``Accept:
application/json`` (or ``json_replies=True``) a JSON body with ``image`` in base64,
``finish_reason`` and ``seed``; errors as ``{"id", "name", "errors": [...]}``. Faults are
those of :class:`~amvicc.testing.fake_openai.Fault`: 429 with ``Retry-After``, 5xx, hung
requests, ``filtered`` (``CONTENT_FILTERED`` with a blurred placeholder), ``moderation`` (403
``content_moderation``) and ``bad_request`` (400 naming a field).

Example::

    with FakeStabilityServer() as server:
        server.inject(Fault.filtered())
        ...  # generate with --model stability:sd3.5-large --base-url server.url
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from amvicc.testing.fake_openai import Fault, RecordedRequest, _Server, grey_png, read_body

ROUTES = ("sd3", "ultra", "core")
PATH = "/v2beta/stable-image/generate/"

FormImageHandler = Callable[[dict[str, str]], bytes]


def read_form(content_type: str, raw: bytes) -> dict[str, str]:
    """The fields of a ``multipart/form-data`` body (what the real API accepts).

    Raises:
        ValueError: the body is not multipart form data.
    """
    if not content_type.startswith("multipart/form-data"):
        raise ValueError(f"content-type must be multipart/form-data, got {content_type!r}")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    if not message.is_multipart():
        raise ValueError("the body has no parts")
    fields: dict[str, str] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload.decode()
    return fields


def blurred_placeholder(form: dict[str, str]) -> bytes:
    """What the real API returns for a filtered image: a blur (here, a flat grey)."""
    return grey_png(form)


@dataclass
class FakeStabilityServer:
    """Stability AI's image generation endpoints on 127.0.0.1 (see the module docstring).

    Attributes:
        images: the request's form -> PNG bytes.
        json_replies: answer in JSON whatever the ``Accept`` header asks.
        port: 0 picks a free port.
    """

    images: FormImageHandler = grey_png
    json_replies: bool = False
    port: int = 0
    requests: list[RecordedRequest] = field(default_factory=list)
    _faults: deque[Fault] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: _Server | None = None

    @property
    def url(self) -> str:
        """The base URL to give ``--base-url``, e.g. ``http://127.0.0.1:50123``."""
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

    def start(self) -> FakeStabilityServer:
        """Start serving in a background thread."""
        server = _Server(("127.0.0.1", self.port), _handler_for(self))
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeStabilityServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(fake: FakeStabilityServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            """Silence the per-request log lines."""

        def do_POST(self) -> None:
            raw = read_body(self)
            if raw is None:
                return
            route = self.path.removeprefix(PATH)
            if not self.path.startswith(PATH) or route not in ROUTES:
                self._error(404, "not_found", f"no route {self.path}")
                return
            try:
                form = read_form(self.headers.get("Content-Type", ""), raw)
            except ValueError as err:
                self._error(400, "bad_request", str(err))
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            fake.requests.append(
                RecordedRequest(
                    self.path, form, headers, self.headers.get("Authorization"), time.time()
                )
            )
            if not form.get("prompt"):
                self._error(400, "bad_request", "prompt: cannot be empty")
                return
            fault = fake._take_fault(self.path)
            if fault is not None and fault.kind == "hang":
                time.sleep(fault.delay)
                fault = None
            if fault is not None and fault.kind != "filtered":
                self._fault(fault)
                return
            filtered = fault is not None
            image = blurred_placeholder(form) if filtered else fake.images(form)
            self._image(image, "CONTENT_FILTERED" if filtered else "SUCCESS", form)

        def _fault(self, fault: Fault) -> None:
            if fault.kind == "moderation":
                self._error(403, "content_moderation", fault.message)
            elif fault.kind == "bad_request":
                self._error(400, "bad_request", fault.message)
            elif fault.kind == "malformed":
                self._send(200, b"{not json", "application/json")
            else:
                extra = {}
                if fault.retry_after is not None:
                    extra["Retry-After"] = f"{fault.retry_after:g}"
                names = {429: "rate_limit_exceeded", 401: "unauthorized", 402: "payment_required"}
                self._error(
                    fault.status, names.get(fault.status, "server_error"), fault.message, extra
                )

        def _image(self, image: bytes, finish: str, form: dict[str, str]) -> None:
            seed = form.get("seed", "0")
            if fake.json_replies or "application/json" in self.headers.get("Accept", ""):
                body: dict[str, Any] = {
                    "image": base64.b64encode(image).decode(),
                    "finish_reason": finish,
                    "seed": int(seed),
                }
                self._send(200, json.dumps(body).encode(), "application/json")
                return
            self._send(200, image, "image/png", {"finish-reason": finish, "seed": seed})

        def _error(
            self, status: int, name: str, message: str, extra: dict[str, str] | None = None
        ) -> None:
            body = {"id": uuid.uuid4().hex, "name": name, "errors": [message]}
            self._send(status, json.dumps(body).encode(), "application/json", extra)

        def _send(
            self, status: int, data: bytes, content_type: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
