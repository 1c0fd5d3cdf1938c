"""Blinding and the login hold (issue 23.3): served images are pixels only; before a login
every route but the login page's answers 401; oversized request lines and headers are refused
at once."""

from __future__ import annotations

import asyncio
import io
import struct
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from gradio_client import Client
from PIL import Image, ImageOps
from PIL.PngImagePlugin import PngInfo
from starlette.requests import Request

from amvicc.catalogue import Catalogue
from amvicc.score.app import ScoringApp
from amvicc.score.desk import ScoringDesk
from amvicc.score.guard import RequestGuard
from amvicc.score.server import ScoringServer, serve

SECRETS = ("secret-model-xyz", "https://api.example.test/v1", "config-key-0123", "Canon EOS")
PIXEL_CHUNKS = {b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS"}


def tagged_png(number: int) -> bytes:
    """A PNG carrying what a generator writes and a viewer shows: text chunks, EXIF, ICC."""
    image = Image.new("RGB", (24, 16), ((number * 67) % 256, 20, 200))
    image.putpixel((3, 2), (1, 2, 3))
    info = PngInfo()
    info.add_text("amvicc", '{"model": "secret-model-xyz", "config_key": "config-key-0123"}')
    info.add_itxt("Description", "made at https://api.example.test/v1", zip=False)
    info.add_text("Comment", "secret-model-xyz", zip=True)
    exif = Image.Exif()
    exif[0x0110] = "Canon EOS"  # camera model
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", pnginfo=info, exif=exif, icc_profile=b"\0" * 128)
    return buffer.getvalue()


def tagged_jpeg() -> bytes:
    """A JPEG with EXIF (camera, orientation 6), XMP and a comment."""
    image = Image.new("RGB", (30, 20), (200, 100, 50))
    image.paste((0, 0, 255), (0, 0, 10, 5))
    exif = Image.Exif()
    exif[0x0110] = "Canon EOS"
    exif[0x0112] = 6  # shown turned 90° clockwise
    buffer = io.BytesIO()
    xmp = b'<x:xmpmeta xmlns:x="adobe:ns:meta/">secret-model-xyz</x:xmpmeta>'
    image.save(buffer, format="JPEG", exif=exif, xmp=xmp, comment=b"secret-model-xyz")
    return buffer.getvalue()


def metadata_of(data: bytes) -> list[str]:
    """What an image file carries besides its pixels: PNG chunks, JPEG APP/COM segments."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        found, offset = [], 8
        while offset < len(data):
            (length,) = struct.unpack(">I", data[offset : offset + 4])
            kind = data[offset + 4 : offset + 8]
            if kind not in PIXEL_CHUNKS:
                found.append(kind.decode("latin-1"))
            offset += 12 + length
        return found
    if data.startswith(b"\xff\xd8"):
        found, offset = [], 2
        while offset + 4 <= len(data) and data[offset] == 0xFF:
            marker = data[offset + 1]
            if marker == 0xDA:  # start of scan: pixels follow
                break
            (length,) = struct.unpack(">H", data[offset + 2 : offset + 4])
            if 0xE1 <= marker <= 0xEF or marker == 0xFE:
                found.append(f"APP{marker - 0xE0}" if marker != 0xFE else "COM")
            offset += 2 + length
        return found
    return ["not a PNG or JPEG"]


def pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(ImageOps.exif_transpose(image).convert("RGB"))


@pytest.fixture
def tagged(workspace: Any) -> Any:
    """The fixture workspace with every stored image file carrying metadata."""
    store = workspace.store
    for number, image_id in enumerate(workspace.image_ids):
        (store.root / (store.image(image_id).path or "")).write_bytes(tagged_png(number))
    for response in store.responses():
        if response.input_path:
            (store.root / response.input_path).write_bytes(tagged_jpeg())
    return workspace


def _served(app: ScoringApp, subject: str) -> bytes:
    """The image route's answer for a subject, with the signature the page would carry."""
    signature = app.links.url(subject).rpartition("sig=")[2]
    scope = {
        "type": "http",
        "method": "GET",
        "path": f"/amvicc/image/{subject}",
        "path_params": {"subject": subject},
        "query_string": f"sig={signature}".encode(),
        "headers": [],
    }
    response: Any = app.image_response(Request(scope))
    assert response.status_code == 200
    body = getattr(response, "body", None)
    return body if body is not None else Path(response.path).read_bytes()


def test_every_served_image_is_pixels_only(tagged: Any, catalogue: Catalogue) -> None:
    store = tagged.store
    desk = ScoringDesk(store, catalogue)
    app = ScoringApp(desk, login=False)
    subjects = [*tagged.image_ids, *tagged.response_ids]
    assert desk.image_path(tagged.response_ids[0]).startswith("inputs/")  # an audited JPEG
    for subject in subjects:
        stored = (store.root / desk.image_path(subject)).read_bytes()
        assert metadata_of(stored), subject  # the stored file keeps its provenance
        served = _served(app, subject)
        assert metadata_of(served) == [], subject
        for secret in SECRETS:
            assert secret.encode() not in served, (subject, secret)
        # the pixels a rater sees are the stored ones, turned as a viewer turns them
        assert np.array_equal(pixels(served), pixels(stored)), subject


def test_the_running_server_serves_blinded_bytes(
    tagged: Any, catalogue: Catalogue, build: Any
) -> None:
    running = serve(ScoringDesk(tagged.store, catalogue), port=build.free_port(), quiet=True)
    try:
        client = Client(running.url, verbose=False)
        page = client.predict("alice", api_name="/sign_in")[2]
        link = page.split('src="', 1)[1].split('"', 1)[0]
        served = httpx.get(running.url + link.replace("&amp;", "&"))
        assert served.status_code == 200 and served.headers["content-type"] == "image/png"
        assert metadata_of(served.content) == []
        assert b"secret-model-xyz" not in served.content
    finally:
        running.close()


# --- the login holds every route ---------------------------------------------------------------


CLOSED = [
    ("POST", "gradio_api/cancel"),
    ("POST", "gradio_api/reset"),
    ("GET", "openapi.json"),
    ("GET", "gradio_api/openapi.json"),
    ("GET", "gradio_api/heartbeat/any-session"),
    ("GET", "gradio_api/app_id"),
    ("GET", "gradio_api/token"),
    ("GET", "gradio_api/user"),
    ("GET", "gradio_api/queue/data?session_hash=x"),
    ("POST", "gradio_api/stream/x"),
    ("POST", "gradio_api/vibe-edit"),
    ("GET", "gradio_api/info"),
    ("GET", "config"),
    ("GET", "monitoring/x"),
]


@pytest.mark.parametrize(("method", "route"), CLOSED, ids=[r for _, r in CLOSED])
def test_routes_not_needed_before_login_answer_401(
    login_server: ScoringServer, method: str, route: str
) -> None:
    started = time.monotonic()
    with httpx.Client(timeout=5) as anonymous:
        response = anonymous.request(method, login_server.url + route)
    assert response.status_code == 401, (route, response.status_code, response.text[:200])
    assert time.monotonic() - started < 4


@pytest.mark.parametrize(
    ("client", "server", "status"),
    [
        ("127.0.0.1", "127.0.0.1", 200),  # launch on localhost (0.0.0.0 is called as this)
        ("::1", "::1", 200),
        ("::ffff:127.0.0.1", "::", 200),  # IPv4 loopback through a dual-stack socket
        ("10.1.2.3", "10.1.2.3", 200),  # launch on a given address calls itself there
        ("10.9.9.9", "10.1.2.3", 401),  # anyone else, before signing in
        ("", "10.1.2.3", 401),
    ],
)
def test_startup_events_are_open_to_the_servers_own_host_only(
    client: str, server: str, status: int
) -> None:
    """Gradio's launch calls ``startup-events`` on itself before anyone signs in."""

    async def gradio(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"true"})

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    path = "/gradio_api/startup-events"
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": [], "client": (client, 50_000),
             "server": (server, 7860)}  # fmt: skip
    asyncio.run(RequestGuard(gradio, login=True)(scope, receive, send))
    assert sent[0]["status"] == status


def test_the_login_page_still_loads_and_signs_in(login_server: ScoringServer) -> None:
    with httpx.Client(timeout=10) as browser:
        page = browser.get(login_server.url)
        assert page.status_code == 200 and "auth_required" in page.text
        for asset in ("theme.css", "favicon.ico"):
            assert browser.get(login_server.url + asset).status_code == 200, asset
        signed = browser.post(
            login_server.url + "login", data={"username": "alice", "password": "pw-a"}
        )
        assert signed.status_code == 200
        assert browser.post(login_server.url + "gradio_api/cancel", json={}).status_code != 401
        assert browser.get(login_server.url + "config").status_code == 200
        assert browser.get(login_server.url + "openapi.json").status_code in (401, 404)


@pytest.mark.parametrize("size", [9_000, 12_000, 16_000])
def test_oversized_request_lines_and_headers_are_refused_at_once(
    login_server: ScoringServer, size: int
) -> None:
    with httpx.Client(timeout=5) as browser:
        browser.post(login_server.url + "login", data={"username": "alice", "password": "pw-a"})
        started = time.monotonic()
        long_url = browser.get(
            login_server.url + "gradio_api/queue/data?session_hash=" + "a" * size
        )
        assert long_url.status_code == 414
        big_header = browser.get(login_server.url, headers={"X-Padding": "b" * size})
        assert big_header.status_code == 431
        assert time.monotonic() - started < 3
