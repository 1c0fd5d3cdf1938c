"""Perturbations: deterministic per image, GRIP's grain statistics, levels in range."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from amvicc.errors import UserError
from amvicc.vlm.base import EncodedImage
from amvicc.vlm.perturb import Perturbation, parse_perturbations


def grey(size: tuple[int, int] = (200, 150), value: int = 128) -> EncodedImage:
    buffer = io.BytesIO()
    Image.new("RGB", size, (value, value, value)).save(buffer, format="PNG")
    return EncodedImage.from_bytes(buffer.getvalue())


def pixels(image: EncodedImage) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(image.data)).convert("RGB"), dtype=np.float64)


def test_grain_is_gaussian_noise_of_level_times_255_clipped() -> None:
    image = grey()
    for level in (0.05, 0.1, 0.2):
        noisy = Perturbation("grain", level).apply(image)
        assert noisy.mime == "image/png"
        noise = pixels(noisy) - 128.0
        assert abs(noise.mean()) < 0.5
        assert noise.std() == pytest.approx(level * 255, rel=0.02)
        # per channel: three independent fields
        channels = noise.reshape(-1, 3).T
        assert abs(np.corrcoef(channels)[0, 1]) < 0.05
    clipped = pixels(Perturbation("grain", 1.0).apply(grey(value=250)))
    assert clipped.max() == 255 and clipped.min() == 0


def test_the_same_image_always_gets_the_same_noise() -> None:
    image = grey()
    grain = Perturbation("grain", 0.1)
    assert grain.apply(image).data == grain.apply(EncodedImage(image.data, image.mime)).data
    assert grain.apply(image).data != Perturbation("grain", 0.1, seed=1).apply(image).data
    # another image gets another noise field
    other = pixels(grain.apply(grey(value=127))) - 127.0
    assert not np.array_equal(other, pixels(grain.apply(image)) - 128.0)
    # the levels scale one standard normal field (common random numbers)
    low = pixels(grain.apply(image)) - 128.0
    high = pixels(Perturbation("grain", 0.2).apply(image)) - 128.0
    inside = (high > -128) & (high < 127)  # away from the clipping
    assert inside.mean() > 0.95
    assert np.abs(high - 2 * low)[inside].max() <= 1.5  # rounding only


def test_blur_jpeg_and_downscale_are_deterministic() -> None:
    buffer = io.BytesIO()
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)).save(buffer, "PNG")
    image = EncodedImage.from_bytes(buffer.getvalue())
    for text in ("blur:2", "jpeg:30", "downscale:0.5"):
        (perturbation,) = parse_perturbations(text)
        first, second = perturbation.apply(image), perturbation.apply(image)
        assert first.data == second.data and first.data != image.data
    assert parse_perturbations("jpeg:30")[0].apply(image).mime == "image/jpeg"
    small = parse_perturbations("downscale:0.5")[0].apply(image)
    assert Image.open(io.BytesIO(small.data)).size == (40, 32)
    blurred = pixels(parse_perturbations("blur:2")[0].apply(image))
    assert blurred.std() < pixels(image).std()


def test_conditions_and_levels() -> None:
    levels = parse_perturbations("grain:0.05,0.1,0.2,0.1")
    assert [p.condition for p in levels] == ["grain=0.05", "grain=0.1", "grain=0.2"]
    assert parse_perturbations("JPEG:30")[0].condition == "jpeg=30"
    assert parse_perturbations("blur:2.5", seed=3)[0].describe() == {
        "kind": "blur",
        "level": 2.5,
        "seed": 3,
    }


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("grain", "names no level"),
        ("grain:", "names no level"),
        ("noise:0.1", "unknown perturbation 'noise'"),
        ("grain:abc", "grain level 'abc' is not a number"),
        ("grain:0", "grain level 0 is out of range"),
        ("grain:1.5", "grain level 1.5 is out of range"),
        ("grain:nan", "out of range"),
        ("jpeg:50.5", "a whole number from 1 to 95"),
        ("jpeg:0", "jpeg level 0 is out of range"),
        ("downscale:1", "below 1"),
        ("blur:-1", "blur level -1 is out of range"),
    ],
)
def test_bad_perturbations_say_why(text: str, fragment: str) -> None:
    with pytest.raises(UserError, match=re.escape(fragment)):
        parse_perturbations(text)
