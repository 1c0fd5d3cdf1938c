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
        ids: the subject ids of the items' frame, numbered in the order first met.
        rows: per row of the items' frame, its subject's number (-1: no subject).
        first_row: per subject number, the position of its first row in the frame.
        image: the image verdicts, coded.
        response: the response verdicts, coded.
    """

    ids: _Array
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
    subject_ids = items.frame["subject_id"].to_numpy(dtype=object)
    codes, ids = pd.factorize(subject_ids)
    ids = np.asarray(ids, dtype=object)
    blank = np.flatnonzero(ids == "")
    if len(blank):  # rows without a subject get -1; later numbers close the gap
        codes = np.where(codes == blank[0], -1, codes - (codes > blank[0]))
        ids = np.delete(ids, blank[0])
    first_row = np.zeros(len(ids), dtype="int64")
    present = np.flatnonzero(codes >= 0)
    # assigning in reverse leaves each subject's first row
    first_row[codes[present[::-1]]] = present[::-1]
    index = pd.Index(ids, dtype=object)
    return SubjectCodes(
        ids=ids,
        rows=codes,
        first_row=first_row,
        image=_coded(items.image_verdicts, index),
        response=_coded(items.response_verdicts, index),
    )


def _coded(verdicts: pd.DataFrame, index: pd.Index) -> CodedVerdicts:
    subject = index.get_indexer(verdicts["subject_id"].to_numpy(dtype=object))
    source, sources = pd.factorize(verdicts["source"].to_numpy(dtype=object))
    value, values = pd.factorize(verdicts["value"].to_numpy(dtype=object))
    return CodedVerdicts(
        subject=subject,
        source=source,
        sources=[str(s) for s in sources],
        value=value,
        values=[str(v) for v in values],
    )
