"""How the extractor's time grows with the length of a reply.

Reasoning models write traces of tens of thousands of characters, and grading reads every
reply (and reads them all again when the extractor changes). Each kind of reply below is read
at 2,000 and at 32,000 characters: a chain of thought that mentions both options and ends with
its answer, a run of labels, a run of both options' words, a reply of one line per label. A
reader that looks back over the whole reply at each mention takes about 16 times longer per
character on the long one; one that looks only as far as a word can matter, about 1. The last
line is ``worst_growth_per_char: X``, the largest ratio of time per character, long to short
(target: at most 2). The table's 600 replies are timed too (``ms_per_table_reply``).

    python benchmarks/extract_scale.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

from amvicc.catalogue import load_catalogue
from amvicc.extract import extract_choice
from tests.extractor_replies import TABLE

SHORT, LONG = 2_000, 32_000

KINDS: dict[str, Callable[[int], str]] = {
    "chain of thought": lambda n: (
        "Let me look. The dog sits on the grass, its tail on the left and its snout on the "
        "right, so it faces right. " * (n // 110) + "Final answer: B"
    ),
    "labels": lambda n: "(a) " * (n // 4),
    "option words": lambda n: "left right " * (n // 11),
    "one label a line": lambda n: "A\n" * (n // 2),
}


def seconds(reply: str, repeat: int) -> float:
    """The best of ``repeat`` timings of reading ``reply`` for MMVP question 5 (left/right)."""
    question = load_catalogue().question(5)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        extract_choice(reply, question)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    catalogue = load_catalogue()
    start = time.perf_counter()
    for index, reply, _ in TABLE:
        extract_choice(reply, catalogue.question(index))
    per_reply = (time.perf_counter() - start) / len(TABLE)
    print(f"ms_per_table_reply: {per_reply * 1e3:.2f}")
    worst = 0.0
    for kind, make in KINDS.items():
        short, long = make(SHORT), make(LONG)
        ratio = (seconds(long, 2) / len(long)) / (seconds(short, 5) / len(short))
        worst = max(worst, ratio)
        print(f"{kind:18} time per character, {LONG} vs {SHORT} characters: {ratio:.2f}")
    print(f"worst_growth_per_char: {worst:.2f}")


if __name__ == "__main__":
    main()
