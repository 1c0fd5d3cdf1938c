from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from amvicc.catalogue import Catalogue, Prompt
from amvicc.judge.ocr import (
    OcrReading,
    TextExpectation,
    judge_reading,
    read_text,
    text_expectation,
)


def _explicit(catalogue: Catalogue) -> dict[int, Prompt]:
    return {p.question.index: p for p in catalogue.prompts(["explicit"])}


def _partner(index: int) -> int:
    return index + 1 if index % 2 else index - 1


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (9, TextExpectation("Z", True)),
        (10, TextExpectation("Z", False)),
        (62, TextExpectation("J", False)),
        (65, TextExpectation("D", False)),
        (91, TextExpectation("POLICE", True)),
        (92, TextExpectation("POLICE", False)),
        (133, TextExpectation("OK/SELECT", True)),
        (134, TextExpectation("OK", True, unlike=("OK/SELECT",))),
        (201, TextExpectation("Happy Easter", True, unlike=("Happy Easter!",))),
        (202, TextExpectation("Happy Easter!", True)),
        (278, TextExpectation("UGA", True, unlike=("SUGAR",))),
    ],
)
def test_expectations_of_the_text_prompts(
    catalogue: Catalogue, index: int, expected: TextExpectation
) -> None:
    prompts = _explicit(catalogue)
    assert text_expectation(prompts[index], prompts[_partner(index)]) == expected


def test_every_text_prompt_is_judgeable_and_implicit_ones_are_not(catalogue: Catalogue) -> None:
    prompts = _explicit(catalogue)
    text = [q.index for q in catalogue if q.category.code == "tx"]
    assert all(text_expectation(prompts[i], prompts[_partner(i)]) for i in text)
    implicit = catalogue.prompts(["implicit"])[0]
    assert text_expectation(implicit, None) is None


@pytest.mark.parametrize(
    ("texts", "expectation", "correct"),
    [
        (("HAPPY  easter",), TextExpectation("Happy Easter", True), True),
        (("Happy Easter",), TextExpectation("Happy Easter!", True), False),
        (("OK/SELECT",), TextExpectation("OK", True, unlike=("OK/SELECT",)), False),
        (("OK",), TextExpectation("OK", True, unlike=("OK/SELECT",)), True),
        (("POLICE",), TextExpectation("POLICE", False), False),
        ((), TextExpectation("POLICE", False), True),
    ],
)
def test_judging_a_reading(
    texts: tuple[str, ...], expectation: TextExpectation, correct: bool
) -> None:
    assert judge_reading(OcrReading(texts, (0.99,) * len(texts)), expectation) is correct


def test_unsure_boxes_are_ignored() -> None:
    reading = OcrReading(("SUGAR", "UGA"), (0.2, 0.9))
    assert not reading.contains("SUGAR")
    assert reading.contains("uga")


def _render(text: str) -> bytes:
    image = Image.new("RGB", (640, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((40, 60), text, fill="black", font=ImageFont.load_default(size=64))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.slow
def test_real_ocr_reads_rendered_text_present_absent_and_misspelt() -> None:
    sugar = TextExpectation("SUGAR", True)
    assert judge_reading(read_text(_render("SUGAR")), sugar)
    assert not judge_reading(read_text(_render("SUGR")), sugar)  # misspelt
    assert not judge_reading(read_text(_render("")), sugar)  # absent
    police_absent = TextExpectation("POLICE", False)
    assert judge_reading(read_text(_render("")), police_absent)
    assert not judge_reading(read_text(_render("POLICE")), police_absent)


def test_unreadable_image_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a readable image"):
        read_text(b"not an image")
