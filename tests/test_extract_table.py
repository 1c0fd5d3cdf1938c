"""The extractor against 600 hand-written replies: never a wrong decision."""

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
            counts["undecided" if expected is not None else "right-undecided"] += 1
        elif result.choice == expected:
            counts["right"] += 1
        else:
            # Picking an option where a strict grader reads none is as wrong as the other one.
            kind = "picked-on-none" if expected is None else "wrong"
            counts[kind] += 1
            wrong.append(f"{kind}: q{index} {reply!r}: meant {expected}, read {result}")
    return counts, wrong


def test_the_table_has_600_replies_of_every_style() -> None:
    assert len(TABLE) >= 600
    assert len({(i, r) for i, r, _ in TABLE}) == len(TABLE), "a reply is listed twice"
    assert sum(expected is None for _, _, expected in TABLE) >= 150


def test_no_reply_is_decided_wrongly(
    catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    counts, wrong = _score(catalogue)
    decidable = sum(expected is not None for _, _, expected in TABLE)
    with capsys.disabled():
        print(
            f"\nextractor v{EXTRACTOR_VERSION} on {len(TABLE)} replies: decided {counts['right']} "
            f"of {decidable} decidable (undecided {counts['undecided']}), correctly undecided "
            f"{counts['right-undecided']}, wrong {counts['wrong']}, picked where none "
            f"{counts['picked-on-none']}"
        )
    assert not wrong, "\n".join(wrong)
    # Deciding nothing would never be wrong: most clear replies must be decided too.
    assert counts["undecided"] <= 0.1 * decidable
