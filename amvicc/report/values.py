"""Missing values and records, written one way everywhere in the report.

A number the report cannot give (nothing counted, no interval without a bootstrap, an odds ratio
of an empty table) is ``None``, ``NaN`` or pandas' ``NA`` depending on where it was made. Every
renderer asks :func:`missing` whether a value is one of them, shows it as :data:`DASH` in
tables, and writes it as ``null`` in JSON (:func:`json_value`, :func:`records`), so that the
three idioms never drift apart.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from json import encoder as json_encoder
from typing import Any

import numpy as np
import pandas as pd

#: How a table shows a number the report cannot give.
DASH = "–"


def missing(value: Any) -> bool:
    """Whether ``value`` is a missing number: None, NaN (Python or numpy) or pandas' NA."""
    if type(value) is float:  # the common case first: NaN is the only float unequal to itself
        return value != value
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
    # Column by column, skipping those dropped: a frame's drop copies it, iloc costs more.
    kept = [(str(name), column) for name, column in frame.items() if name not in drop]
    names = [name for name, _ in kept]
    columns = [_json_column(column) for _, column in kept]
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
        return _texts(column, dtype)
    return [json_value(v) for v in column.tolist()]


def _texts(column: pd.Series, dtype: pd.StringDtype) -> list[Any]:
    """A text column's values, missing ones None.

    Arrow-backed text (pandas' default ``str``) converts in one Arrow call: pandas' own
    ``astype(object)`` and ``where`` cost half a millisecond per column, and a report reads
    hundreds of small columns.
    """
    if dtype.storage == "pyarrow":
        import pyarrow  # type: ignore[import-untyped]  # loaded by pandas for such a column

        return list(pyarrow.array(column.array).to_pylist())
    texts = column.astype(object)
    return list(texts.where(texts.notna(), None).tolist())


def json_text(document: Any) -> str:
    """``document`` as ``json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)``.

    The same text, written many times faster: Python's JSON encoder only runs in C without
    ``indent``, and a report's tens of thousands of records through the pure-Python indenting
    encoder take seconds. Here each container of scalars (a record, a list of numbers) is one
    call of the C encoder, whose item separator carries the newline and indent of its depth;
    only the few containers holding containers are walked in Python.
    """
    return "".join(_json_chunks(document, 0))


_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _json_chunks(value: Any, level: int) -> list[str]:
    """The text of ``value`` at nesting ``level`` as json.dumps(indent=2) writes it, in parts."""
    if not isinstance(value, _CONTAINERS) or not value:
        return [_flat_encoder(level)(value)]
    is_dict = isinstance(value, dict)
    children = value.values() if isinstance(value, dict) else value
    if _SCALARS.issuperset(map(type, children)):  # in C: records hold a million values
        text = _flat_encoder(level)(value)
        return [text[0], _indent(level + 1), text[1:-1], _indent(level), text[-1]]
    if not isinstance(value, dict) and all(type(c) is dict and c and _flat(c) for c in value):
        return _records_text(value, level)
    separator = "," + _indent(level + 1)
    chunks = ["{" if is_dict else "[", _indent(level + 1)]
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for index, (key, child) in enumerate(pairs):
        if index:
            chunks.append(separator)
        if is_dict:
            chunks += [_json_key(key), ": "]
        chunks += _json_chunks(child, level + 1)
    chunks += [_indent(level), "}" if is_dict else "]"]
    return chunks


def _flat(record: dict[Any, Any]) -> bool:
    return _SCALARS.issuperset(map(type, record.values()))


def _records_text(records: list[Any] | tuple[Any, ...], level: int) -> list[str]:
    """A list of non-empty records of scalars (a table's rows) in one call of the C encoder.

    Encoded with the records' item separator, the list's own separators come out as
    ``},<newline and record indent>{``; a raw newline is only ever a separator (the encoder
    escapes those in text), so that is a record boundary, rewritten to the list's layout.
    """
    inner, outer = _indent(level + 2), _indent(level + 1)
    text = _flat_encoder(level + 1)(records)[1:-1]
    text = text.replace("}," + inner + "{", outer + "}," + outer + "{" + inner)
    return ["[", outer, "{", inner, text[1:-1], outer, "}", _indent(level), "]"]


def _indent(level: int) -> str:
    return "\n" + "  " * level


def _json_key(key: Any) -> str:
    """A dict key as json.dumps writes it (keys that are not text become text, as there)."""
    text = json.dumps({key: None}, ensure_ascii=False, allow_nan=False)
    return text[1 : text.rindex(": ")]


@cache
def _flat_encoder(level: int) -> Callable[[Any], str]:
    """The encoder of a container of scalars at ``level``: its items one per indented line."""
    separator = "," + _indent(level + 1)
    c_make_encoder = getattr(json_encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - a Python built without _json
        pure = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(separator, ": "))
        return pure.encode
    make = c_make_encoder(
        None,
        _no_default,
        json_encoder.encode_basestring,
        None,
        ": ",
        separator,
        False,
        False,
        False,
    )
    return lambda value: "".join(make(value, 0))


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


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
