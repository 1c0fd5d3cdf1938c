"""Deterministic image perturbations: what a model sees when its input is degraded on purpose.

GRIP measures how accuracy falls as grain is added to the same images; ``amvicc answer
--perturb grain:0.05,0.1,0.2`` asks the same questions about perturbed copies, one run per
level. Every kind is a pure function of the image's bytes, the kind, the level and a seed: the
same image always gets the same pixels (numpy's PCG64 stream is stable across versions; the
encoded file, hence its hash, is byte-identical for the same Pillow and zlib build). Replies are
slotted by question, not by the perturbed file, so a rerun resumes either way:

- ``grain:S``: additive Gaussian noise with standard deviation ``S × 255`` per channel and
  pixel, rounded and clipped to 0..255 (GRIP's grain). The noise is seeded by the image's
  SHA-256 and the seed only, not by the level: every level scales the same standard normal
  field, so a curve over levels compares like with like (common random numbers);
- ``blur:R``: Gaussian blur of radius ``R`` pixels;
- ``jpeg:Q``: re-encoded as JPEG at quality ``Q`` (1..95);
- ``downscale:F``: resized to ``F`` times its width and height (0 < F < 1, Lanczos); the model
  is sent the smaller image.

Perturbed images are PNG (JPEG for ``jpeg``), so no later compression hides the perturbation;
the answering stage stores each one content-addressed in the workspace (``inputs/<sha256>``),
so a reader can see exactly what the model saw.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

from amvicc.errors import UserError
from amvicc.provenance import derive_seed
from amvicc.vlm.base import EncodedImage

PerturbationKind = Literal["grain", "blur", "jpeg", "downscale"]
PERTURBATION_KINDS: tuple[PerturbationKind, ...] = get_args(PerturbationKind)

# What each kind's level means and which values it takes (for messages and --help).
LEVEL_HELP: dict[PerturbationKind, str] = {
    "grain": "noise standard deviation as a fraction of 255, above 0 and at most 1",
    "blur": "Gaussian blur radius in pixels, above 0 and at most 100",
    "jpeg": "JPEG quality, a whole number from 1 to 95",
    "downscale": "scale factor, above 0 and below 1",
}


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
        """The perturbed copy of an image.

        Raises:
            UserError: the image cannot be decoded.
        """
        from PIL import Image, ImageFilter, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(image.data)) as opened:
                rgb = opened.convert("RGB")
        except (UnidentifiedImageError, OSError) as err:
            raise UserError(f"cannot perturb an image that does not decode: {err}") from None
        if self.kind == "grain":
            rgb = self._grain(rgb, derive_seed(self.seed, "grain", image.sha256))
        elif self.kind == "blur":
            rgb = rgb.filter(ImageFilter.GaussianBlur(radius=self.level))
        elif self.kind == "downscale":
            width = max(1, round(rgb.width * self.level))
            height = max(1, round(rgb.height * self.level))
            rgb = rgb.resize((width, height), Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        if self.kind == "jpeg":
            rgb.save(buffer, format="JPEG", quality=int(self.level))
        else:
            rgb.save(buffer, format="PNG")
        return EncodedImage(buffer.getvalue(), "image/jpeg" if self.kind == "jpeg" else "image/png")

    def _grain(self, rgb: Any, seed: int) -> Any:
        import numpy as np
        from PIL import Image

        pixels = np.asarray(rgb, dtype=np.float64)
        noise = np.random.default_rng(seed).standard_normal(pixels.shape)
        noisy = np.clip(np.rint(pixels + noise * (self.level * 255.0)), 0, 255)
        return Image.fromarray(noisy.astype(np.uint8), "RGB")


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
