"""How each automatic image judge turns what it saw into a verdict.

- ``rubric``: a VLM reads the prompt, the category's rubric and the image, and ends its reply
  with ``GRADE: C`` or ``GRADE: I``.
- ``question``: the cross-modal closed loop; a VLM answers the image's MMVP question, and the
  explicit image is correct when the answer (read by the answering stage's extractor) is the
  option its prompt asked the image to show.
- ``ocr``: see :mod:`amvicc.judge.ocr`.

A reply that does not parse is ``undecided``, never ``incorrect``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from amvicc.catalogue import Prompt
from amvicc.rubrics import Rubric

Method = Literal["rubric", "question", "ocr"]
METHODS: tuple[Method, ...] = get_args(Method)
VerdictValue = Literal["correct", "incorrect", "undecided"]

RUBRIC_TEMPLATE = "judge_rubric.jinja"
_GRADE = re.compile(r"GRADE\s*[:=]\s*\**\s*\(?\s*([CI])\b", re.IGNORECASE)


@dataclass(frozen=True)
class Decision:
    """A judge's verdict on one image and the rule that reached it."""

    value: VerdictValue
    rule: str


def rubric_context(prompt: Prompt, rubric: Rubric) -> dict[str, object]:
    """The variables of the rubric judge's template for one image."""
    question = prompt.question
    return {
        "prompt": prompt.text,
        "kind": prompt.kind,
        "category": question.category.name,
        "criteria": rubric.criteria(prompt.kind),
        "failures": rubric.failures,
        "question": question.text if prompt.shows else None,
        "shows": f"({prompt.shows}) {question.option(prompt.shows).text}" if prompt.shows else None,
    }


def decide_rubric(reply: str | None) -> Decision:
    """Read the last ``GRADE: C`` / ``GRADE: I`` of a rubric judge's reply."""
    grades = _GRADE.findall(reply or "")
    if not grades:
        return Decision("undecided", "no-grade")
    grade = grades[-1].upper()
    return Decision("correct" if grade == "C" else "incorrect", f"grade-{grade}")


def decide_question(reply: str | None, prompt: Prompt) -> Decision:
    """Whether the VLM's answer about an explicit image is the option its prompt asked for."""
    if prompt.shows is None:
        raise ValueError("the question judge needs an explicit prompt")
    # Imported here: every command's parser reads METHODS, and the extractor's patterns take
    # a start-up 40 ms that only judging needs.
    from amvicc.extract import extract_choice

    extraction = extract_choice(reply, prompt.question)
    if extraction.choice is None:
        return Decision("undecided", extraction.rule)
    correct = extraction.choice == prompt.shows
    return Decision("correct" if correct else "incorrect", f"chose-{extraction.choice}")
