"""The extractor against 300+ hand-written replies: never a wrong decision."""

from __future__ import annotations

from collections import Counter

import pytest

from amvicc.catalogue import Catalogue
from amvicc.extract import EXTRACTOR_VERSION, extract_choice
from tests.extractor_replies import TABLE


def _score(catalogue: Catalogue) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    wrong: list[str] = []
    for index, reply, expected in TABLE:
        result = extract_choice(reply, catalogue.question(index))
        if result.choice is None:
            counts["undecided" if expected is not None else "right"] += 1
            if expected is None:
                counts["right-undecided"] += 1
        elif result.choice == expected:
            counts["right"] += 1
        else:
            counts["wrong"] += 1
            wrong.append(f"q{index} {reply!r}: meant {expected}, read {result}")
    return counts, wrong


def test_the_table_has_300_replies_of_every_style() -> None:
    assert len(TABLE) >= 300
    assert len({(i, r) for i, r, _ in TABLE}) == len(TABLE), "a reply is listed twice"
    assert sum(expected is None for _, _, expected in TABLE) >= 80


def test_no_reply_is_decided_wrongly(
    catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    counts, wrong = _score(catalogue)
    decidable = sum(expected is not None for _, _, expected in TABLE)
    with capsys.disabled():
        print(
            f"\nextractor v{EXTRACTOR_VERSION} on {len(TABLE)} replies: right {counts['right']} "
            f"(of which correctly undecided {counts['right-undecided']}), wrong "
            f"{counts['wrong']}, undecided {counts['undecided']} of {decidable} decidable"
        )
    assert not wrong, "\n".join(wrong)
    # Deciding nothing would never be wrong: most clear replies must be decided too.
    assert counts["undecided"] <= 0.1 * decidable
