"""Deterministic image perturbations: what a model sees when its input is degraded on purpose.

GRIP measures how accuracy falls as grain is added to the same images; ``amvicc answer
--perturb grain:0.05,0.1,0.2`` asks the same questions about perturbed copies, one run per
level. Every kind is a pure function of the image's bytes, the kind, the level and a seed: the
same image always gets the same pixels (numpy's PCG64 stream is stable across versions; the
encoded file, hence its hash, is byte-identical for the same Pillow and zlib build). Replies are
slotted by question, not by the perturbed file, so a rerun resumes either way:

- ``grain:S``: additive Gaussian noise with standard deviation ``S × 255`` per colour channel
  and pixel, rounded and clipped to 0..255 (GRIP's grain; ``S × 65535`` and 0..65535 for a
  16-bit image). The noise is seeded by the image's
  SHA-256 and the seed only, not by the level: every level scales the same standard normal
  field, so a curve over levels compares like with like (common random numbers);
- ``blur:R``: Gaussian blur of radius ``R`` pixels (Pillow's; scipy's for 16-bit grey, which
  Pillow's blur does not take);
- ``jpeg:Q``: re-encoded as JPEG at quality ``Q`` (1..95);
- ``downscale:F``: resized to ``F`` times its width and height (0 < F < 1, Lanczos); the model
  is sent the smaller image.

Perturbed images are PNG (JPEG for ``jpeg``), so no later compression hides the perturbation;
the answering stage stores each one content-addressed in the workspace (``inputs/<sha256>``),
so a reader can see exactly what the model saw.

A perturbation changes what it says and nothing else. The image's EXIF orientation is applied
first, as the clean run sends it (:func:`amvicc.vlm.images.upright`: a model is sent the
image as a viewer shows it, whether or not it reads EXIF). Its mode and depth are kept: grey
stays grey, alpha stays alpha (grain leaves it alone), a 16-bit image stays 16-bit (grain is
then ``S × 65535``). What a format cannot hold is converted explicitly, and the reply records
it (:attr:`Perturbed.conversion`): JPEG holds 8 bits and no alpha (16-bit grey is scaled to 8
bits, never clipped); a palette becomes RGB or RGBA before pixels are touched.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from amvicc.errors import UserError
from amvicc.provenance import derive_seed
from amvicc.vlm.base import EncodedImage

if TYPE_CHECKING:
    from PIL import Image

PerturbationKind = Literal["grain", "blur", "jpeg", "downscale"]
PERTURBATION_KINDS: tuple[PerturbationKind, ...] = get_args(PerturbationKind)

# What each kind's level means and which values it takes (for messages and --help).
LEVEL_HELP: dict[PerturbationKind, str] = {
    "grain": "noise standard deviation as a fraction of 255, above 0 and at most 1",
    "blur": "Gaussian blur radius in pixels, above 0 and at most 100",
    "jpeg": "JPEG quality, a whole number from 1 to 95",
    "downscale": "scale factor, above 0 and below 1",
}


# Modes kept as they are; 16-bit grey under any of Pillow's names becomes "I;16".
_KEPT_MODES = frozenset({"L", "LA", "RGB", "RGBA", "I;16"})
_SIXTEEN_BITS = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I"})
# What JPEG cannot hold, and what it gets instead.
_JPEG_MODES = {"LA": "L", "RGBA": "RGB", "I;16": "L"}


@dataclass(frozen=True)
class Perturbed:
    """A perturbed image, and the mode conversion it needed (None: the mode was kept)."""

    image: EncodedImage
    conversion: str | None = None


@dataclass(frozen=True)
class Perturbation:
    """One perturbation at one level.

    Attributes:
        kind: ``grain``, ``blur``, ``jpeg`` or ``downscale``.
        level: the kind's strength (see :data:`LEVEL_HELP`).
        seed: seeds the grain together with each image's hash (the other kinds ignore it).
    """

    kind: PerturbationKind
    level: float
    seed: int = 0

    def __post_init__(self) -> None:
        check_level(self.kind, self.level)

    @property
    def condition(self) -> str:
        """The run's condition as reports write it, e.g. ``grain=0.1``."""
        return f"{self.kind}={format_level(self.level)}"

    def describe(self) -> dict[str, Any]:
        """What a run records (part of its identity)."""
        return {"kind": self.kind, "level": self.level, "seed": self.seed}

    def apply(self, image: EncodedImage) -> EncodedImage:
        """The perturbed copy of an image (see :meth:`perturb`)."""
        return self.perturb(image).image

    def perturb(self, image: EncodedImage) -> Perturbed:
        """The perturbed copy of an image, upright, in its own mode where the format allows.

        Raises:
            UserError: the image cannot be decoded.
        """
        from PIL import Image, ImageFilter, ImageOps, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(image.data)) as opened:
                pixels = ImageOps.exif_transpose(opened)
        except (UnidentifiedImageError, OSError) as err:
            raise UserError(f"cannot perturb an image that does not decode: {err}") from None
        pixels, conversion = _working_mode(pixels)
        if self.kind == "grain":
            pixels = self._grain(pixels, derive_seed(self.seed, "grain", image.sha256))
        elif self.kind == "blur":
            if pixels.mode == "I;16":
                pixels = _blur_16_bit(pixels, self.level)
            else:
                pixels = pixels.filter(ImageFilter.GaussianBlur(radius=self.level))
        elif self.kind == "downscale":
            width = max(1, round(pixels.width * self.level))
            height = max(1, round(pixels.height * self.level))
            if pixels.mode == "I;16":
                pixels = _resize_16_bit(pixels, (width, height))
            else:
                pixels = pixels.resize((width, height), Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        if self.kind == "jpeg":
            pixels, forced = _for_jpeg(pixels)
            conversion = conversion or forced
            pixels.save(buffer, format="JPEG", quality=int(self.level))
        else:
            pixels.save(buffer, format="PNG")
        mime = "image/jpeg" if self.kind == "jpeg" else "image/png"
        return Perturbed(EncodedImage(buffer.getvalue(), mime), conversion)

    def _grain(self, image: Image.Image, seed: int) -> Image.Image:
        """Noise on the colour channels (alpha untouched), in the image's own range."""
        import numpy as np
        from PIL import Image

        full = 65535.0 if image.mode == "I;16" else 255.0
        pixels = np.asarray(image, dtype=np.float64)
        alpha = image.mode in ("LA", "RGBA")
        colour = pixels[..., :-1] if alpha else pixels
        if image.mode == "LA":
            colour = colour[..., 0]
        noise = np.random.default_rng(seed).standard_normal(colour.shape)
        noisy = np.clip(np.rint(colour + noise * (self.level * full)), 0, full)
        if image.mode == "LA":
            noisy = noisy[..., None]
        if alpha:
            noisy = np.concatenate([noisy, pixels[..., -1:]], axis=-1)
        dtype = np.uint16 if image.mode == "I;16" else np.uint8
        return Image.fromarray(noisy.astype(dtype))  # the same mode: L, LA, RGB, RGBA, I;16


def _working_mode(image: Image.Image) -> tuple[Image.Image, str | None]:
    """The image in a mode the perturbations keep, and the conversion that took (or None).

    Grey, grey with alpha, RGB, RGBA and 16-bit grey are kept; a palette becomes RGB (RGBA
    with transparency), other modes (CMYK, bilevel...) become RGB or grey explicitly.
    """
    import numpy as np
    from PIL import Image

    if image.mode in _KEPT_MODES:
        return image, None
    if image.mode in _SIXTEEN_BITS:  # Pillow's other names of 16-bit grey ("I" from PNG)
        values = np.clip(np.asarray(image), 0, 65535).astype(np.uint16)
        return Image.fromarray(values), None  # uint16: I;16
    transparent = image.mode in ("PA", "La") or "transparency" in image.info
    target = "L" if image.mode in ("1", "F") else "RGBA" if transparent else "RGB"
    return image.convert(target), f"{image.mode} -> {target}"


def _for_jpeg(image: Image.Image) -> tuple[Image.Image, str | None]:
    """What JPEG can hold: 8 bits per channel, no alpha (16-bit grey scaled, never clipped)."""
    import numpy as np
    from PIL import Image

    target = _JPEG_MODES.get(image.mode)
    if target is None:
        return image, None
    if image.mode == "I;16":
        scaled = np.rint(np.asarray(image, dtype=np.float64) / 257.0).astype(np.uint8)
        converted = Image.fromarray(scaled)  # uint8: L
        why = "JPEG holds 8 bits per channel"
    else:
        converted = image.convert(target)
        why = "JPEG holds no alpha"
    return converted, f"{image.mode} -> {target} ({why})"


def _blur_16_bit(image: Image.Image, radius: float) -> Image.Image:
    """A Gaussian blur of 16-bit grey (Pillow's blur takes 8-bit modes only)."""
    import numpy as np
    from PIL import Image
    from scipy.ndimage import gaussian_filter

    blurred = gaussian_filter(np.asarray(image, dtype=np.float64), sigma=radius, mode="nearest")
    return Image.fromarray(np.clip(np.rint(blurred), 0, 65535).astype(np.uint16))


def _resize_16_bit(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Lanczos on 16-bit grey, through 32-bit float.

    Pillow before 10.1 resizes I;16 with nearest and box filters only ("image has wrong
    mode"); float keeps every level on every version.
    """
    import numpy as np
    from PIL import Image

    as_float = Image.fromarray(np.asarray(image, dtype=np.float32))  # F
    resized = np.asarray(as_float.resize(size, Image.Resampling.LANCZOS))
    return Image.fromarray(np.clip(np.rint(resized), 0, 65535).astype(np.uint16))


def format_level(level: float) -> str:
    """A level as conditions and run ids write it: ``0.1``, ``30``, ``2.5``."""
    return f"{level:g}"


def check_level(kind: str, level: float) -> None:
    """Refuse a kind or a level the perturbation cannot take.

    Raises:
        UserError: an unknown kind, or a level out of the kind's range.
    """
    if kind not in PERTURBATION_KINDS:
        raise UserError(
            f"unknown perturbation {kind!r}; use one of {', '.join(PERTURBATION_KINDS)}"
        )
    fits = (
        math.isfinite(level)
        and {
            "grain": 0 < level <= 1,
            "blur": 0 < level <= 100,
            "jpeg": level == int(level) and 1 <= level <= 95,
            "downscale": 0 < level < 1,
        }[kind]
    )
    if not fits:
        help_text = LEVEL_HELP[kind]
        raise UserError(f"{kind} level {format_level(level)} is out of range: {help_text}")


def parse_perturbations(text: str, *, seed: int = 0) -> tuple[Perturbation, ...]:
    """``KIND:LEVEL[,LEVEL...]`` (``grain:0.05,0.1,0.2``) as perturbations, in order.

    Raises:
        UserError: no colon, an unknown kind, a level that is not a number or out of range.
    """
    kind, sep, levels = text.partition(":")
    kind = kind.strip().lower()
    if not sep or not levels.strip():
        raise UserError(
            f"--perturb {text!r} names no level; write KIND:LEVEL[,LEVEL...], "
            "e.g. grain:0.05,0.1,0.2"
        )
    if kind not in PERTURBATION_KINDS:
        raise UserError(
            f"unknown perturbation {kind!r}; use one of {', '.join(PERTURBATION_KINDS)}"
        )
    found: list[Perturbation] = []
    for raw in levels.split(","):
        if not raw.strip():
            continue
        try:
            level = float(raw)
        except ValueError:
            raise UserError(f"{kind} level {raw.strip()!r} is not a number") from None
        perturbation = Perturbation(kind, level, seed)
        if perturbation not in found:
            found.append(perturbation)
    return tuple(found)
