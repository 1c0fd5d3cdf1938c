"""Test helpers for VLM stages: MMVP-style image folders and replies keyed by image.

Each image's colour encodes its MMVP index, so a fake server (see
:mod:`amvicc.testing.fake_openai`) can tell which question it is asked about and answer by
rule — the way the answering and judge tests script a model's behaviour per question.

A colour does not survive noise, so the robustness tests use *coded* images instead
(:func:`coded_image_bytes`): the index in binary as grey stripes far apart (64 or 192), read
back by each stripe's median, which grain, blur, JPEG and downscaling leave on the right side
of 128; and the noise level read back from the spread around those medians, so a scripted
model can "see" grain and answer worse the more there is.
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


# Coded images: 9 bit stripes (index < 512), then a reference stripe of 128.
CODE_BITS = 9
CODE_STRIPES = CODE_BITS + 1
CODE_LOW, CODE_HIGH, CODE_REFERENCE = 64, 192, 128
STRIPE_WIDTH, CODE_HEIGHT = 8, 64


def coded_image_bytes(index: int) -> bytes:
    """An 80 x 64 PNG whose grey stripes spell ``index`` in binary (lowest bit first)."""
    from PIL import Image

    if not 0 <= index < 2**CODE_BITS:
        raise ValueError(f"index {index} does not fit in {CODE_BITS} bits")
    image = Image.new("RGB", (CODE_STRIPES * STRIPE_WIDTH, CODE_HEIGHT))
    for stripe in range(CODE_STRIPES):
        if stripe == CODE_BITS:
            value = CODE_REFERENCE
        else:
            value = CODE_HIGH if index >> stripe & 1 else CODE_LOW
        box = (stripe * STRIPE_WIDTH, 0, (stripe + 1) * STRIPE_WIDTH, CODE_HEIGHT)
        image.paste((value, value, value), box)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_coded_images(folder: Path, indices: Iterable[int]) -> Path:
    """Write ``<index>.png`` coded images (see :func:`coded_image_bytes`); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in indices:
        (folder / f"{index}.png").write_bytes(coded_image_bytes(index))
    return folder


def read_coded_image(data: bytes) -> tuple[int, float]:
    """The index a coded image spells, and the grain it carries (noise std / 255).

    Each stripe is read over its middle half (away from edges a blur or a resize smears):
    its median gives the bit, the median absolute deviation around it (x 1.4826, the normal
    distribution's factor) the noise; the grain is the median over the stripes. A clean
    image reads 0 exactly.
    """
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float64)
    width = pixels.shape[1] / CODE_STRIPES
    index = 0
    spreads = []
    for stripe in range(CODE_STRIPES):
        left = round((stripe + 0.25) * width)
        right = max(left + 1, round((stripe + 0.75) * width))
        values = pixels[:, left:right, :].ravel()
        middle = float(np.median(values))
        spreads.append(1.4826 * float(np.median(np.abs(values - middle))))
        if stripe < CODE_BITS and middle > CODE_REFERENCE:
            index |= 1 << stripe
    return index, float(np.median(spreads)) / 255.0
