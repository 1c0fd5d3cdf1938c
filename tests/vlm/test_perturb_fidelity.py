"""Perturbations change what they say and nothing else (issue 23.5).

A 16-bit PNG keeps its 16 bits (it used to be clipped to 99.6 % white); grey stays grey,
alpha stays alpha; a conversion a format forces (JPEG holds 8 bits) is explicit and recorded.
An EXIF-rotated photo is perturbed upright, as the clean run sends it, so both runs show the
model the same orientation whether or not it reads EXIF.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.vlm.base import EncodedImage
from amvicc.vlm.images import folder_images
from amvicc.vlm.perturb import Perturbation

KINDS = [("grain", 0.05), ("blur", 1.5), ("downscale", 0.5)]


def encoded(image: Image.Image, fmt: str = "PNG", **save: object) -> EncodedImage:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **save)
    return EncodedImage.from_bytes(buffer.getvalue())


def decoded(image: EncodedImage) -> Image.Image:
    opened = Image.open(io.BytesIO(image.data))
    opened.load()
    return opened


def png_depth(image: EncodedImage) -> tuple[int, int]:
    """Bit depth and colour type from the PNG header: Pillow names 16-bit grey "I" or "I;16"
    depending on its version, the file itself does not."""
    assert image.data[:8] == b"\x89PNG\r\n\x1a\n"
    return image.data[24], image.data[25]


def sixteen_bit() -> EncodedImage:
    """A 16-bit grey ramp over the whole range, as scanners and medical images come."""
    ramp = np.linspace(0, 65535, 96 * 64).reshape(64, 96).astype(np.uint16)
    return encoded(Image.fromarray(ramp))


@pytest.mark.parametrize(("kind", "level"), KINDS)
def test_a_16_bit_png_keeps_its_depth_and_is_not_clipped(kind: str, level: float) -> None:
    source = sixteen_bit()
    assert png_depth(source) == (16, 0)  # 16-bit grey
    perturbation = Perturbation(kind, level)  # type: ignore[arg-type]
    perturbed = perturbation.apply(source)
    out = decoded(perturbed)
    values = np.asarray(out, dtype=np.float64)
    original = np.asarray(decoded(source), dtype=np.float64)
    assert (values >= values.max()).mean() < 0.05  # not clipped to white
    assert values.mean() == pytest.approx(original.mean(), rel=0.03)
    assert png_depth(perturbed) == (16, 0) and len(np.unique(values)) > 1000  # 8 bits would not
    assert perturbation.perturb(source).conversion is None


def test_grain_on_16_bits_is_level_times_the_full_range() -> None:
    flat = encoded(Image.fromarray(np.full((120, 160), 30000, dtype=np.uint16)))
    noisy = np.asarray(decoded(Perturbation("grain", 0.05).apply(flat)), dtype=np.float64)
    assert (noisy - 30000).std() == pytest.approx(0.05 * 65535, rel=0.03)


@pytest.mark.parametrize("mode", ["L", "LA", "RGBA"])
@pytest.mark.parametrize(("kind", "level"), KINDS)
def test_grey_and_alpha_are_kept(mode: str, kind: str, level: float) -> None:
    image = Image.new(mode, (40, 30), (90, 200)[: len(mode)] if mode == "LA" else None)
    if mode == "RGBA":
        image = Image.new("RGBA", (40, 30), (10, 120, 230, 128))
    elif mode == "L":
        image = Image.new("L", (40, 30), 90)
    perturbation = Perturbation(kind, level)  # type: ignore[arg-type]
    out = decoded(perturbation.apply(encoded(image)))
    assert out.mode == mode
    assert perturbation.perturb(encoded(image)).conversion is None
    if "A" in mode:  # grain leaves transparency alone
        alpha = np.asarray(out.getchannel("A"))
        assert (
            np.all(alpha == alpha.flat[0])
            and abs(int(alpha.flat[0]) - (200 if mode == "LA" else 128)) <= 1
        )


def test_a_format_that_cannot_hold_the_mode_converts_explicitly() -> None:
    result = Perturbation("jpeg", 80).perturb(sixteen_bit())
    out = decoded(result.image)
    assert out.mode == "L" and result.conversion == "I;16 -> L (JPEG holds 8 bits per channel)"
    # scaled, not clipped: the ramp still spans black to white
    values = np.asarray(out, dtype=np.float64)
    assert values.min() < 10 and values.max() > 245 and 100 < values.mean() < 155
    palette = Image.new("P", (20, 20))
    palette.putpalette([0, 0, 0, 255, 0, 0] * 128)
    result = Perturbation("grain", 0.1).perturb(encoded(palette))
    assert decoded(result.image).mode == "RGB" and result.conversion == "P -> RGB"


def test_rgb_is_unchanged_by_the_fix() -> None:
    """RGB images, the common case, get the bytes they always got (runs stay comparable)."""
    rng = np.random.default_rng(3)
    image = encoded(Image.fromarray(rng.integers(0, 256, (50, 70, 3), dtype=np.uint8)))
    rgb = decoded(image).convert("RGB")
    for kind, level in [*KINDS, ("jpeg", 60)]:
        result = Perturbation(kind, level).perturb(image)  # type: ignore[arg-type]
        assert result.conversion is None
        assert decoded(result.image).mode == "RGB"
    blurred = decoded(Perturbation("blur", 1.5).apply(image))
    assert np.array_equal(np.asarray(blurred), np.asarray(rgb.filter(_blur(1.5))))


def _blur(radius: float) -> object:
    from PIL import ImageFilter

    return ImageFilter.GaussianBlur(radius=radius)


# --- EXIF orientation ----------------------------------------------------------------------------


def rotated_photo() -> bytes:
    """A 60x30 JPEG tagged orientation 6: a viewer shows it 30 wide and 60 tall."""
    image = Image.new("RGB", (60, 30), (200, 200, 200))
    image.paste((255, 0, 0), (0, 0, 12, 12))  # a red square in the stored top-left corner
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", exif=exif, quality=95)
    return buffer.getvalue()


def shown(data: bytes) -> np.ndarray:
    """The pixels as a viewer (or a model that reads EXIF) shows them."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(ImageOps.exif_transpose(image).convert("RGB"), dtype=np.float64)


def stored(data: bytes) -> np.ndarray:
    """The pixels as a model that ignores EXIF sees them."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.float64)


def test_clean_and_perturbed_runs_send_the_same_orientation(tmp_path: Path) -> None:
    (tmp_path / "1.jpg").write_bytes(rotated_photo())
    (clean,) = folder_images(tmp_path, [1]).images
    for kind, level in [*KINDS, ("jpeg", 90)]:
        perturbed = Perturbation(kind, level).apply(clean.image)  # type: ignore[arg-type]
        for view in (shown, stored):  # a model that reads EXIF, and one that does not
            a, b = view(clean.image.data), view(perturbed.data)
            scale = a.shape[0] / b.shape[0]
            assert a.shape[1] / b.shape[1] == pytest.approx(scale, rel=0.05), (kind, view)
            assert a.shape[0] > a.shape[1], (kind, view)  # upright: taller than wide
    # perturbing the tagged file itself turns it upright first, the same way
    direct = Perturbation("blur", 1.0).apply(EncodedImage.from_bytes(rotated_photo()))
    assert stored(direct.data).shape == shown(rotated_photo()).shape


def test_the_clean_run_sends_a_tagged_photo_upright_and_records_it(tmp_path: Path) -> None:
    folder = tmp_path / "mmvp"
    folder.mkdir()
    (folder / "1.jpg").write_bytes(rotated_photo())
    plain = Image.new("RGB", (20, 10), (1, 2, 3))
    plain.save(folder / "2.jpg", format="JPEG")
    one, two = folder_images(folder, [1, 2]).images
    assert stored(one.image.data).shape == shown(rotated_photo()).shape == (60, 30, 3)
    assert one.converted is not None and "orientation 6" in one.converted
    assert two.image.data == (folder / "2.jpg").read_bytes() and two.converted is None
    with FakeOpenAIServer() as server:
        from amvicc.cli import main
        from amvicc.store import Store

        store = tmp_path / "ws"
        args = ["answer", "--model", "m", "--base-url", server.url, "--images", str(folder)]
        assert main([*args, "--index", "1-2", "--store", str(store), "-q"]) == 0
        with Store(store) as opened:
            requests = {r.question_index: r.request_json or "" for r in opened.responses()}
        assert "orientation 6" in requests[1] and "orientation" not in requests[2]
