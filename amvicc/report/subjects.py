"""The report's verdicts as integer codes against its items, made once per set of items.

Several sections (rater agreement, judge validation, the pair explorer) join the verdicts to
the items they judge by subject id. Hashing 360,000 verdicts' 32-character ids costs tenths of
a second each time, so :func:`subject_codes` does it once per :class:`Items` and each section
works on the integer codes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from amvicc.report.items import Items

_Array = np.ndarray[Any, Any]


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
        ids: the subject ids of the items' frame, numbered in the order first met (an
            Arrow array; the blank id of rows without a subject stays, unused).
        rows: per row of the items' frame, its subject's number (-1: no subject).
        first_row: per subject number, the position of its first row in the frame.
        image: the image verdicts, coded.
        response: the response verdicts, coded.
    """

    ids: pa.Array
    rows: _Array
    first_row: _Array
    image: CodedVerdicts
    response: CodedVerdicts


_CACHE: weakref.WeakKeyDictionary[Items, SubjectCodes] = weakref.WeakKeyDictionary()


def subject_codes(items: Items) -> SubjectCodes:
    """The items' subjects and verdicts as integer codes (computed once per ``items``)."""
    found = _CACHE.get(items)
    if found is None:
        found = _CACHE[items] = _code(items)
    return found


def _code(items: Items) -> SubjectCodes:
    # Arrow hashes the ids in its own buffers: several times faster than pandas' object
    # hash table on Python strings.
    encoded = arrow_strings(items.frame["subject_id"]).dictionary_encode()
    ids = encoded.dictionary
    blank = pc.index(ids, "").as_py()  # a row without a subject: -1, like no row at all
    codes = _numbers(encoded.indices, blank)
    first_row = np.zeros(len(ids), dtype="int64")
    present = np.flatnonzero(codes >= 0)
    # assigning in reverse leaves each subject's first row
    first_row[codes[present[::-1]]] = present[::-1]
    return SubjectCodes(
        ids=ids,
        rows=codes,
        first_row=first_row,
        image=_coded(items.image_verdicts, ids, blank),
        response=_coded(items.response_verdicts, ids, blank),
    )


def arrow_strings(column: pd.Series) -> pa.Array:
    """A column of strings as one Arrow array (no copy when it is Arrow-backed already)."""
    array = pa.array(column, type=pa.large_string(), from_pandas=True)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _numbers(indices: pa.Array, blank: int) -> _Array:
    """Arrow indices as int64 numbers, -1 for none (null, or the blank subject's)."""
    numbers: _Array = indices.fill_null(-1).to_numpy().astype("int64")
    if blank >= 0:
        numbers[numbers == blank] = -1
    return numbers


def _coded(verdicts: pd.DataFrame, ids: pa.Array, blank: int) -> CodedVerdicts:
    subject = _numbers(pc.index_in(arrow_strings(verdicts["subject_id"]), value_set=ids), blank)
    source = arrow_strings(verdicts["source"]).dictionary_encode()
    value = arrow_strings(verdicts["value"]).dictionary_encode()
    return CodedVerdicts(
        subject=subject,
        source=_numbers(source.indices, -1),
        sources=[str(s) for s in source.dictionary.to_pylist()],
        value=_numbers(value.indices, -1),
        values=[str(v) for v in value.dictionary.to_pylist()],
    )
