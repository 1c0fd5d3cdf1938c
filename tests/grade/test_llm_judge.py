"""Reading the LLM judge's replies: only a clear answer counts, anything else stays undecided."""

from __future__ import annotations

import pytest

from amvicc.grade.llm_judge import parse_choice, parse_yes_no


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes", True),
        ("Yes.", True),
        ("**No**", False),
        ("no", False),
        ("  YES\n", True),
        ("No, the response picks (b).", False),
        ("Yes, it matches the correct answer.", True),
        ("", None),
        ("The response is correct.", None),
        ("Yes and no.", None),
        ("yes... actually no", None),
        ("I cannot judge this.", None),
        ("Nope", None),
    ],
)
def test_parse_yes_no(reply: str, expected: bool | None) -> None:
    assert parse_yes_no(reply) is expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("A", "a"),
        ("b", "b"),
        ("(B)", "b"),
        ("**A**", "a"),
        ("NONE", "no_answer"),
        ("none.", "no_answer"),
        ("B\nThe response says closed.", "b"),
        ("A response that hedges", None),  # an article, not a choice
        ("The response chooses A.", None),
        ("A or B", None),
        ("C", None),
        ("", None),
    ],
)
def test_parse_choice(reply: str, expected: str | None) -> None:
    assert parse_choice(reply) == expected
