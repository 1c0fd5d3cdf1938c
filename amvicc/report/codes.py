"""Text columns made from integer codes: a few distinct texts repeated over many rows.

pandas' default ``str`` columns are Arrow arrays; made from a numpy array of Python strings,
each string is checked and copied again (a few milliseconds per fifty thousand rows). The
report's large tables repeat a few hundred labels: taking them by code from one small Arrow
array makes the same column several times faster.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def text_column(texts: np.ndarray[Any, Any], codes: np.ndarray[Any, Any]) -> Any:
    """``texts[codes]`` as a pandas ``str`` array (what ``pd.Series(texts[codes])`` makes)."""
    dtype = pd.StringDtype(na_value=np.nan)
    if dtype.storage != "pyarrow":  # pragma: no cover - pandas without pyarrow
        return pd.array(np.asarray(texts, dtype=object)[codes], dtype=dtype)
    import pyarrow as pa  # type: ignore[import-untyped]

    values = pa.array([str(t) for t in texts], type=pa.large_string())
    return pd.array(values.take(pa.array(codes)), dtype=dtype)


def ranks(texts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each text's rank among the distinct texts: Python's string order, as pandas sorts."""
    _, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return np.asarray(inverse)
