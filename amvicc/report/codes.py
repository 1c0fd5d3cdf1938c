"""Texts repeated over many rows: a few distinct labels or values, written once each.

pandas' default ``str`` columns are Arrow arrays; made from a numpy array of Python strings,
each string is checked and copied again (a few milliseconds per fifty thousand rows). The
report's large tables repeat a few hundred labels: taking them by code from one small Arrow
array makes the same column several times faster (:func:`text_column`). Its pages likewise
show a few hundred distinct numbers in thousands of cells (:func:`remembered`). And codes
derived from the same items by several sections are made once (:func:`derived`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")

# Per object (by identity, while it lives): what several sections derive from it.
_DERIVED: dict[int, tuple[weakref.ref[Any], dict[str, Any]]] = {}


def derived(owner: object, name: str, make: Callable[[], T]) -> T:
    """``make()``, made once per ``owner`` (an items frame, an :class:`Items`) while it lives.

    A report's sections read the same items: hashing their long keys (configuration keys,
    subject ids) is most of the cost of the accuracies, the samples, the rater agreement and
    the explorer, and each derives its numbers from the same codes. Items and their frames
    are never changed once made (the sections take copies), so what is derived from one stays
    true while it lives, and goes with it. Keyed by identity: a frame is not hashable.
    """
    key = id(owner)
    held = _DERIVED.get(key)
    if held is None or held[0]() is not owner:
        held = (weakref.ref(owner, lambda _: _DERIVED.pop(key, None)), {})
        _DERIVED[key] = held
    if name not in held[1]:
        held[1][name] = make()
    value: T = held[1][name]
    return value


def text_column(texts: np.ndarray[Any, Any], codes: np.ndarray[Any, Any]) -> Any:
    """``texts[codes]`` as the column ``pd.Series(texts[codes])`` makes.

    pandas 3 makes a ``str`` column (Arrow-backed where pyarrow is installed); pandas 2 an
    object one, unless its ``future.infer_string`` option is on.
    """
    dtype = _inferred_text_dtype()
    picked = np.asarray(texts, dtype=object)[codes]
    if not isinstance(dtype, pd.StringDtype):
        return picked
    if dtype.storage != "pyarrow":  # pragma: no cover - pandas without pyarrow
        return pd.array(picked, dtype=dtype)
    import pyarrow as pa  # type: ignore[import-untyped]

    values = pa.array([str(t) for t in texts], type=pa.large_string())
    return pd.array(values.take(pa.array(codes)), dtype=dtype)


def _inferred_text_dtype() -> Any:
    """The dtype pandas gives a column of Python strings (it depends on version and options)."""
    return pd.Series(np.array(["text"], dtype=object)).dtype


def ranks(texts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each text's rank among the distinct texts: Python's string order, as pandas sorts."""
    _, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return np.asarray(inverse)


def remembered(format_value: Callable[[Any], str]) -> Callable[[Any], str]:
    """``format_value`` remembering its texts, for a table that repeats a few hundred values.

    Zero is never remembered: ``-0.0`` equals ``0.0`` as a key but is written ``-0.000``.
    """
    texts: dict[Any, str] = {}

    def cached(value: Any) -> str:
        if value is None or value == 0 or value != value:  # NaN is no key
            return format_value(value)
        text = texts.get(value)
        if text is None:
            text = texts[value] = format_value(value)
        return text

    return cached
