"""Test helpers for VLM stages: MMVP-style image folders and replies keyed by image.

Each image's colour encodes its MMVP index, so a fake server (see
:mod:`amvicc.testing.fake_openai`) can tell which question it is asked about and answer by
rule — the way the answering and judge tests script a model's behaviour per question.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from amvicc.testing.fake_openai import iter_image_parts


def image_bytes(index: int, *, fmt: str = "PNG", size: int = 24) -> bytes:
    """A small image whose colour encodes ``index`` (read back by :func:`index_in_request`)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (size, size), (index % 256, index // 256, 77)).save(buffer, format=fmt)
    return buffer.getvalue()


def write_mmvp_images(folder: Path, indices: Iterable[int], *, suffix: str = ".png") -> Path:
    """Write ``<index><suffix>`` files as in MMVP's image folder; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    fmt = "JPEG" if suffix in (".jpg", ".jpeg") else "PNG"
    for index in indices:
        (folder / f"{index}{suffix}").write_bytes(image_bytes(index, fmt=fmt))
    return folder


def index_in_image(data: bytes) -> int:
    """The index encoded in an image made by :func:`image_bytes`."""
    from PIL import Image

    pixel = Image.open(io.BytesIO(data)).convert("RGB").getpixel((0, 0))
    assert isinstance(pixel, tuple)
    return int(pixel[0]) + 256 * int(pixel[1])


def index_in_request(request: dict[str, Any]) -> int:
    """The index encoded in the first image of a chat request."""
    url = next(iter_image_parts(request))
    return index_in_image(base64.b64decode(url.split(",", 1)[1]))


def reply_by_index(rule: Callable[[int], str]) -> Callable[[dict[str, Any]], str]:
    """A chat handler whose reply depends on the index of the image it is asked about.

    For the ``chat`` of :class:`~amvicc.testing.fake_openai.FakeOpenAIServer`.
    """
    return lambda request: rule(index_in_request(request))
