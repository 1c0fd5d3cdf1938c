"""The OCR judge for Text prompts: read the image, look for the text the prompt demands.

A real offline OCR model (RapidOCR's PP-OCR ONNX weights, shipped in its wheel) reads the
image; no network, no GPU. What to look for comes from the explicit prompt and its pair:

- quoted text (``the word “SUGAR”``) must appear;
- a key (``the Z key clearly visible``) must appear, or must not when the prompt hides it
  (``where the Z key is hidden``);
- ``no text`` demands the absence of the text the pair's other prompt demands;
- when the pair's other prompt demands a longer text containing this one (``OK`` vs
  ``OK/SELECT``, ``UGA`` vs ``SUGAR``), finding that longer text is a failure, since it
  contains ours.

Texts are compared after lower-casing and removing white space, as the issue asks; nothing
else is forgiven (``Happy Easter!`` needs its ``!``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from amvicc.catalogue import Prompt

if TYPE_CHECKING:
    from rapidocr import RapidOCR

OCR_MODEL = "rapidocr"
# Boxes the recogniser is less sure of than this are ignored.
MIN_SCORE = 0.5

_QUOTED = re.compile(r"[\"“”]([^\"“”]+)[\"“”]")
_KEY = re.compile(r"\b([A-Z0-9]) key\b")
_HIDDEN = re.compile(r"\b(hidden|obscured|not visible|invisible|covered)\b", re.IGNORECASE)
_NO_TEXT = re.compile(r"\b(no|without)\s+(any\s+)?text\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """Lower-case and drop white space: ``Happy  Easter`` -> ``happyeaster``."""
    return "".join(text.lower().split())


@dataclass(frozen=True)
class TextExpectation:
    """What an image must (or must not) contain for its prompt to be met.

    Attributes:
        text: the demanded text, as written in the prompt.
        present: True when it must appear, False when it must not.
        unlike: longer texts (from the pair's other prompt) that contain ``text``; finding one
            means the image shows the other prompt's text.
    """

    text: str
    present: bool
    unlike: tuple[str, ...] = ()


def _demanded(prompt_text: str) -> tuple[str, bool] | None:
    quoted = _QUOTED.search(prompt_text)
    if quoted:
        return quoted.group(1).strip(), True
    key = _KEY.search(prompt_text)
    if key:
        return key.group(1), _HIDDEN.search(prompt_text) is None
    return None


def text_expectation(prompt: Prompt, partner: Prompt | None) -> TextExpectation | None:
    """What the OCR judge checks for an explicit prompt, or None when it cannot judge it.

    Args:
        prompt: the explicit prompt the image was made from.
        partner: the explicit prompt of the other question of the pair.
    """
    if prompt.kind != "explicit":
        return None
    other = _demanded(partner.text) if partner is not None else None
    own = _demanded(prompt.text)
    if own is None:
        if other is not None and other[1] and _NO_TEXT.search(prompt.text):
            return TextExpectation(other[0], present=False)
        return None
    text, present = own
    unlike: tuple[str, ...] = ()
    if other is not None and other[1] and present:
        longer = normalise(other[0])
        if longer != normalise(text) and normalise(text) in longer:
            unlike = (other[0],)
    return TextExpectation(text, present, unlike)


@dataclass(frozen=True)
class OcrReading:
    """The text boxes OCR found in an image, with their confidences."""

    texts: tuple[str, ...]
    scores: tuple[float, ...]

    @property
    def normalised(self) -> str:
        """All confident boxes, normalised and joined."""
        return "".join(
            normalise(t) for t, s in zip(self.texts, self.scores, strict=True) if s >= MIN_SCORE
        )

    def contains(self, text: str) -> bool:
        """Whether ``text`` appears (case and spacing aside)."""
        return normalise(text) in self.normalised


def judge_reading(reading: OcrReading, expectation: TextExpectation) -> bool:
    """Whether what OCR read meets the expectation (True: correct)."""
    found = reading.contains(expectation.text)
    if not expectation.present:
        return not found
    return found and not any(reading.contains(longer) for longer in expectation.unlike)


@cache
def _engine() -> RapidOCR:
    import logging

    from rapidocr import RapidOCR

    # Its warnings (e.g. "text detection result is empty") are expected results here.
    engine = RapidOCR(params={"Global.log_level": "error"})
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return engine


def read_text(image_bytes: bytes) -> OcrReading:
    """Run OCR on an encoded image (PNG, JPEG).

    Raises:
        ValueError: the bytes are not a readable image.
    """
    import io

    import numpy as np
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(image_bytes)) as image:
            # RapidOCR takes OpenCV's BGR order for arrays.
            pixels = np.asarray(image.convert("RGB"))[:, :, ::-1].copy()
    except (UnidentifiedImageError, OSError) as err:
        raise ValueError(f"not a readable image ({err})") from None
    output = _engine()(pixels)
    texts = getattr(output, "txts", None) or ()
    scores = getattr(output, "scores", None) or ()
    return OcrReading(tuple(texts), tuple(float(s) for s in scores))
