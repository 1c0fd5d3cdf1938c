"""What an import found wrong with a file's records, summarised so that nothing is lost.

A file of 300 records whose prompts all differ from the catalogue's would otherwise print 300
lines. Findings are grouped by kind: the terminal gets one line per kind with its count and up
to three examples, and the full list is kept with the run (``amvicc runs --show RUN``). Long
texts are elided in the middle, never cut at the end, and widened until two different texts
never print the same: a prompt that differs from the catalogue's only after its first 60
characters must not look identical to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Kinds of finding that mean a record disagrees with the question it names: the record is
#: listed and not imported unless ``--accept-mismatch`` is given.
MISMATCH_KINDS = ("question text", "options", "answer key", "index")
ELLIPSIS = "…"
SHOWN = 60


@dataclass(frozen=True)
class Note:
    """One thing a record says that disagrees with the catalogue.

    Attributes:
        kind: what disagrees (``question text``, ``options``, ``answer key``, ``index``: a
            mismatch; ``prompt``, ``category``: a warning, the record still imports).
        where: the record (``line 7``).
        stated: what the record says.
        expected: what the catalogue's question has ("" when there is nothing to show).
        question: the question the record names.
    """

    kind: str
    where: str
    stated: str
    expected: str
    question: int

    @property
    def mismatch(self) -> bool:
        """Whether the record disagrees with the question it names (held back by default)."""
        return self.kind in MISMATCH_KINDS

    def full(self) -> str:
        """The note with nothing elided (for the list kept with the run)."""
        return self._text(self.stated, self.expected)

    def short(self, width: int = SHOWN) -> str:
        """The note with its texts elided in the middle, still telling them apart."""
        shown = elide_distinct([self.stated, self.expected], width)
        return self._text(shown[0], shown[1])

    def _text(self, stated: str, expected: str) -> str:
        against = f" is not question {self.question}'s {expected!r}" if self.expected else ""
        return f"{self.where}: {self.kind} {stated!r}{against}"


def elide(text: str, width: int = SHOWN) -> str:
    """``text`` with its middle replaced by an ellipsis when longer than ``width``."""
    if len(text) <= width:
        return text
    head = (width + 1) // 2
    tail = width - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def elide_distinct(texts: Sequence[str], width: int = SHOWN) -> list[str]:
    """Elide each text, widening all of them until different texts print differently."""
    distinct = len(set(texts))
    while True:
        shown = [elide(text, width) for text in texts]
        if len(set(shown)) == distinct:
            return shown
        width *= 2


def summary(notes: Iterable[Note], *, examples: int = 3) -> list[str]:
    """One line per kind of note: how many, and up to ``examples`` of them."""
    by_kind: dict[str, list[Note]] = {}
    for note in notes:
        by_kind.setdefault(note.kind, []).append(note)
    lines = []
    for kind, found in by_kind.items():
        what = "disagree with the question they name" if found[0].mismatch else "differ"
        line = f"{kind}: {len(found)} record(s) {what}"
        if examples:
            # Each example names its record, and elides its own texts apart from each other.
            shown = [note.short() for note in found[:examples]]
            more = f" (and {len(found) - examples} more)" if len(found) > examples else ""
            line += ", e.g. " + "; ".join(shown) + more
        lines.append(line)
    return lines
