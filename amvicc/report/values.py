"""Missing values and records, written one way everywhere in the report.

A number the report cannot give (nothing counted, no interval without a bootstrap, an odds ratio
of an empty table) is ``None``, ``NaN`` or pandas' ``NA`` depending on where it was made. Every
renderer asks :func:`missing` whether a value is one of them, shows it as :data:`DASH` in
tables, and writes it as ``null`` in JSON (:func:`json_value`, :func:`records`), so that the
three idioms never drift apart.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

#: How a table shows a number the report cannot give.
DASH = "–"


def missing(value: Any) -> bool:
    """Whether ``value`` is a missing number: None, NaN (Python or numpy) or pandas' NA."""
    if value is None or value is pd.NA:
        return True
    try:
        return bool(value != value)  # NaN is the only value unequal to itself
    except (TypeError, ValueError):
        return False


def json_value(value: Any) -> Any:
    """A cell as JSON writes it: missing as None, ±inf as a string, numpy scalars as Python's.

    An infinite odds ratio (an empty cell of a 2×2 table) is ``"inf"``: JSON has no infinity.
    """
    if hasattr(value, "item") and not isinstance(value, str | list | tuple | dict):
        value = value.item()
    if missing(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def records(frame: pd.DataFrame, drop: tuple[str, ...] = ("entry",)) -> list[dict[str, Any]]:
    """The rows of ``frame`` as JSON-ready dicts, without the columns in ``drop``.

    Every renderer and every section reads tables through this one helper: numbers are Python
    numbers and missing ones None (:func:`json_value`). Converted column by column (a float
    column in one numpy pass), as reports hold tables of tens of thousands of rows.
    """
    if frame.empty:
        return []
    kept = frame.drop(columns=[c for c in drop if c in frame.columns])
    names = [str(c) for c in kept.columns]
    columns = [_json_column(kept.iloc[:, i]) for i in range(kept.shape[1])]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _json_column(column: pd.Series) -> list[Any]:
    """One column's values as :func:`json_value` gives them."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biu":
        return list(column.tolist())
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = column.to_numpy()
        out: list[Any] = values.tolist()
        odd = ~np.isfinite(values)
        for position in np.flatnonzero(odd).tolist():
            out[position] = json_value(values[position])
        return out
    if isinstance(dtype, pd.StringDtype):
        texts = column.astype(object)
        return list(texts.where(texts.notna(), None).tolist())
    return [json_value(v) for v in column.tolist()]


def number(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals, or :data:`DASH`."""
    return DASH if missing(value) else f"{float(value):.{digits}f}"


def percent(value: Any) -> str:
    """A share as a percentage with one decimal, or :data:`DASH`."""
    return DASH if missing(value) else f"{100 * float(value):.1f}%"


def signed(value: Any) -> str:
    """A difference with its sign and three decimals, or :data:`DASH`."""
    return DASH if missing(value) else f"{float(value):+.3f}"


def p_value(value: Any) -> str:
    """A p-value as a table shows it (``< 0.001`` below that), or :data:`DASH`."""
    if missing(value):
        return DASH
    return "< 0.001" if float(value) < 0.001 else f"{float(value):.3f}"
