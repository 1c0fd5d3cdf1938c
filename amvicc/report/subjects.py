"""The report's verdicts as integer codes against its items, made once per set of items.

Several sections (rater agreement, judge validation, the pair explorer) join the verdicts to
the items they judge by subject id. Hashing 360,000 verdicts' 32-character ids costs tenths of
a second each time, so :func:`subject_codes` does it once per :class:`Items` and each section
works on the integer codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.codes import derived
from amvicc.report.items import Items

try:  # pandas' default string storage when installed
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - pandas without pyarrow: its hash tables, same codes
    pa = pc = None

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True, eq=False)
class Encoded:
    """A column of strings as integer codes: each distinct string numbered as first met.

    Attributes:
        codes: per element, its string's number (-1: missing).
        uniques: the distinct strings (an Arrow array, or a pandas Index without pyarrow).
    """

    codes: _Array
    uniques: Any

    def __len__(self) -> int:
        """How many distinct strings."""
        return len(self.uniques)

    def names(self) -> list[str]:
        """The distinct strings, by number."""
        values = list(self.uniques) if self._hashed else self.uniques.to_pylist()
        return [str(v) for v in values]

    @property
    def _hashed(self) -> bool:
        """Whether pandas' hash table numbered the strings (else Arrow did)."""
        return isinstance(self.uniques, pd.Index)

    def ranks(self) -> _Array:
        """Per element, its string's rank in sorted order (``pd.factorize(sort=True)``)."""
        names = self.names()
        rank = np.empty(len(names) + 1, dtype="int64")
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        rank[-1] = -1  # a missing string
        ranked: _Array = rank[self.codes]
        return ranked

    def number(self, name: str) -> int:
        """``name``'s number (-1: not among them)."""
        if self._hashed:
            return int(self.uniques.get_indexer([name])[0])
        found: int = pc.index(self.uniques, name).as_py()
        return found

    def find(self, column: pd.Series) -> _Array:
        """The number of each string of another column (-1: not among these)."""
        if self._hashed:
            return np.asarray(self.uniques.get_indexer(column.to_numpy(dtype=object)))
        return _numbers(pc.index_in(_arrow(column), value_set=self.uniques))


def encode(column: pd.Series) -> Encoded:
    """A column of strings as integer codes, each distinct string numbered as first met.

    A column of Python strings (``object``) is hashed by pandas, which reuses each string's
    cached hash: twice as fast as copying them into Arrow. Arrow hashes a column of pandas'
    Arrow-backed string type in its own buffers, without a Python object per string (and
    without pyarrow, pandas' hash table gives the same codes).
    """
    if pa is None or column.dtype == object:
        codes, uniques = pd.factorize(column.to_numpy(dtype=object))
        return Encoded(codes.astype("int64"), pd.Index(uniques, dtype=object))
    encoded = _arrow(column).dictionary_encode()
    return Encoded(_numbers(encoded.indices), encoded.dictionary)


def count_strings(column: pd.Series) -> dict[str, int]:
    """How many times each string occurs in a column (missing ones left out), as first met."""
    if pa is None or column.dtype == object:
        encoded = encode(column)
        counts = np.bincount(encoded.codes[encoded.codes >= 0], minlength=len(encoded))
        return dict(zip(encoded.names(), counts.tolist(), strict=True))
    return {
        str(found["values"]): int(found["counts"])
        for found in pc.value_counts(_arrow(column)).to_pylist()
        if found["values"] is not None
    }


def _arrow(column: pd.Series) -> Any:
    """A column of strings as one Arrow array (no copy when it is Arrow-backed already)."""
    array = pa.array(column, type=pa.large_string(), from_pandas=True)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _numbers(indices: Any) -> _Array:
    """Arrow indices as int64 numbers, -1 for null."""
    numbers: _Array = indices.fill_null(-1).to_numpy().astype("int64")
    return numbers


@dataclass(frozen=True, eq=False)
class CodedVerdicts:
    """One verdict table (image or response verdicts) as integer codes.

    Attributes:
        subject: per verdict, its subject's number in :attr:`SubjectCodes.ids` (-1: no item
            of these refers to it, e.g. a superseded image).
        source: per verdict, its source's code in ``sources``.
        sources: the verdict sources, in the order first met.
        value: per verdict, its value's code in ``values``.
        values: the verdict values, in the order first met.
    """

    subject: _Array
    source: _Array
    sources: list[str]
    value: _Array
    values: list[str]


@dataclass(frozen=True, eq=False)
class SubjectCodes:
    """The items' subjects (images and responses) by number, and the verdicts on them.

    Attributes:
        ids: the subject ids of the items' frame, numbered in the order first met (the
            blank id of rows without a subject keeps its number, unused).
        rows: per row of the items' frame, its subject's number (-1: no subject).
        first_row: per subject number, the position of its first row in the frame.
        image: the image verdicts, coded.
        response: the response verdicts, coded.
    """

    ids: Encoded
    rows: _Array
    first_row: _Array
    image: CodedVerdicts
    response: CodedVerdicts


def subject_codes(items: Items) -> SubjectCodes:
    """The items' subjects and verdicts as integer codes (computed once per ``items``)."""
    return derived(items, "subjects", lambda: _code(items))


def _code(items: Items) -> SubjectCodes:
    ids = encode(items.frame["subject_id"])
    blank = ids.number("")  # a row without a subject: -1, like no row at all
    codes = _unblank(ids.codes, blank)
    first_row = np.zeros(len(ids), dtype="int64")
    present = np.flatnonzero(codes >= 0)
    # assigning in reverse leaves each subject's first row
    first_row[codes[present[::-1]]] = present[::-1]
    return SubjectCodes(
        ids=ids,
        rows=codes,
        first_row=first_row,
        image=_coded(items.image_verdicts, ids, blank, codes, items.image_verdict_rows()),
        response=_coded(items.response_verdicts, ids, blank),
    )


def _unblank(numbers: _Array, blank: int) -> _Array:
    if blank >= 0:
        numbers = np.where(numbers == blank, -1, numbers)
    return numbers


def _coded(
    verdicts: pd.DataFrame,
    ids: Encoded,
    blank: int,
    numbers: _Array | None = None,
    rows: _Array | None = None,
) -> CodedVerdicts:
    """One verdict table as codes.

    Args:
        verdicts: the verdicts.
        ids: the items' subject ids, encoded.
        blank: the number of the blank id (-1: none).
        numbers: per row of the items' frame, its subject's number.
        rows: per verdict, the row of its subject's item (-1: none), when known
            (:meth:`~amvicc.report.items.Items.image_verdict_rows`): its subject's number is
            then taken from that row, not found by hashing its id.
    """
    source = encode(verdicts["source"])
    value = encode(verdicts["value"])
    if numbers is not None and rows is not None:
        subject = np.append(numbers, -1)[rows]  # row -1 (no item): no subject
    else:
        subject = _unblank(ids.find(verdicts["subject_id"]), blank)
    return CodedVerdicts(
        subject=subject,
        source=source.codes,
        sources=source.names(),
        value=value.codes,
        values=value.names(),
    )
