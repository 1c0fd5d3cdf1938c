"""MMVP index ranges as users type them (``1-20,99,279-280``), parsed and written back.

A range is kept as its two ends, never expanded into every index it covers: ``1-99999999999999``
is two numbers until it is checked against a catalogue (:func:`check_index_ranges`), which
refuses indices the catalogue does not have before anything walks through them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Set

from amvicc.errors import UserError

# Python refuses to read integers with more than 4300 digits; an index this long is a typo.
MAX_INDEX_DIGITS = 100


class IndexRanges(Set[int]):
    """A set of indices stored as sorted, merged, inclusive ``(first, last)`` spans.

    Membership and size are computed from the spans, so a huge range costs nothing until
    someone iterates over it; compare it with sets as with any set (``== {1, 2, 3}``).

    Args:
        spans: inclusive ``(first, last)`` pairs, in any order, overlapping or not.
    """

    __slots__ = ("_starts", "spans")

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for first, last in sorted(spans):
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        self.spans: tuple[tuple[int, int], ...] = tuple(merged)
        self._starts = [first for first, _ in self.spans]

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        position = bisect_right(self._starts, value) - 1
        return position >= 0 and value <= self.spans[position][1]

    def __bool__(self) -> bool:
        return bool(self.spans)

    def __len__(self) -> int:
        return sum(last - first + 1 for first, last in self.spans)

    def __iter__(self) -> Iterator[int]:
        for first, last in self.spans:
            yield from range(first, last + 1)

    def __hash__(self) -> int:
        return hash(self.spans)

    def __repr__(self) -> str:
        return f"IndexRanges({format_spans(self.spans)!r})"

    @property
    def highest(self) -> int:
        """The largest index (0 when empty)."""
        return self.spans[-1][1] if self.spans else 0

    def __str__(self) -> str:
        return format_spans(self.spans)


def parse_index_ranges(text: str) -> IndexRanges:
    """Parse ``1-20,99,279-280`` into :class:`IndexRanges` (nothing is expanded).

    Raises:
        UserError: a part is not an index or an increasing range of indices from 1 up.
    """
    spans: list[tuple[int, int]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        low, high = low.strip(), (high or low).strip()
        if not all(end.isascii() and end.isdigit() for end in (low, high)):
            raise UserError(f"{part!r} is not an index or a range like 1-20")
        if max(len(low.lstrip("0")), len(high.lstrip("0"))) > MAX_INDEX_DIGITS:
            raise UserError(f"{part!r} has an index far beyond any benchmark's; check the range")
        start, stop = int(low), int(high)
        if start < 1 or stop < start:
            raise UserError(f"{part!r} is not a range of indices from 1 up")
        spans.append((start, stop))
    if not spans:
        raise UserError("no index given")
    return IndexRanges(spans)


def check_index_ranges(indices: Collection[int], available: Collection[int], source: str) -> None:
    """Refuse index ranges that reach beyond the catalogue, before anything expands them.

    Args:
        indices: the indices asked for (an :class:`IndexRanges` is checked by its ends only).
        available: the catalogue's indices.
        source: the catalogue's file, named in the message.

    Raises:
        UserError: an index is larger than the catalogue's largest.
    """
    if not available or (isinstance(indices, IndexRanges) and not indices.spans):
        return
    highest = max(available)
    asked = indices.highest if isinstance(indices, IndexRanges) else max(indices)
    if asked > highest:
        shown = str(indices) if isinstance(indices, IndexRanges) else str(asked)
        raise UserError(
            f"--index {shown} reaches index {asked}, beyond the catalogue {source}, whose "
            f"indices run from {min(available)} to {highest}; narrow the range"
        )


def format_index_ranges(indices: Iterable[int], *, separator: str = ",") -> str:
    """The inverse of :func:`parse_index_ranges`: ``{1, 2, 3, 7}`` -> ``1-3,7``."""
    if isinstance(indices, IndexRanges):
        return format_spans(indices.spans, separator=separator)
    ordered = sorted(set(indices))
    spans: list[tuple[int, int]] = []
    for index in ordered:
        if spans and index == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], index)
        else:
            spans.append((index, index))
    return format_spans(spans, separator=separator)


def format_spans(spans: Iterable[tuple[int, int]], *, separator: str = ",") -> str:
    """``[(1, 3), (7, 7)]`` -> ``1-3,7``."""
    return separator.join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
