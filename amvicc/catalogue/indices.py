"""MMVP index ranges as users type them (``1-20,99,279-280``), parsed and written back."""

from __future__ import annotations

from collections.abc import Iterable

from amvicc.errors import UserError


def parse_index_ranges(text: str) -> frozenset[int]:
    """Parse ``1-20,99,279-280`` into a set of indices.

    Raises:
        UserError: a part is not an index or an increasing range of indices from 1 up.
    """
    indices: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            start, stop = int(low), int(high or low)
        except ValueError:
            raise UserError(f"{part!r} is not an index or a range like 1-20") from None
        if start < 1 or stop < start:
            raise UserError(f"{part!r} is not a range of indices from 1 up")
        indices.update(range(start, stop + 1))
    if not indices:
        raise UserError("no index given")
    return frozenset(indices)


def format_index_ranges(indices: Iterable[int], *, separator: str = ",") -> str:
    """The inverse of :func:`parse_index_ranges`: ``{1, 2, 3, 7}`` -> ``1-3,7``."""
    ordered = sorted(set(indices))
    runs: list[str] = []
    start = previous = None
    for index in [*ordered, None]:
        if index is not None and previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    return separator.join(runs)
