"""How the report writes values: the fast JSON writer and records of text columns."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from amvicc.report.values import json_text, records


def _dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)


DOCUMENTS: list[Any] = [
    {},
    [],
    (),
    0,
    "text",
    None,
    {"a": 1},
    [1.5, -0.0, 1e-05, 1e16, 3, True, False, None, 'quote " and \\ and \n and é <b>'],
    {
        "empty": [],
        "nothing": {},
        "records": [{"x": 1, "y": None}, {"x": 2.25, "y": "b"}, {}],
        "deep": {"deeper": [[], [[1]], {"k": ({"z": "a: b"},)}]},
        1: "int key",
        2.5: "float key",
        False: "bool key",
        None: "null key",
        "a: b": [np.float64(0.1), np.float64(2.0)],
    },
    [{"tuple": (1, 2)}, [np.float64(0.3), 1], ("t", ["u"])],
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_json_text_is_what_json_dumps_writes(document: Any) -> None:
    assert json_text(document) == _dumps(document)


@pytest.mark.parametrize(
    "bad", [float("nan"), {"a": [float("inf")]}, [{"b": {1, 2}}], [np.int64(1)]]
)
def test_json_text_refuses_what_json_dumps_refuses(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError)) as dumps_error:
        _dumps(bad)
    with pytest.raises(dumps_error.type):
        json_text(bad)


@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_records_give_missing_text_as_none(storage: str) -> None:
    frame = pd.DataFrame(
        {"name": pd.Series(["a", None, ""], dtype=pd.StringDtype(storage)), "n": [1, 2, 3]}
    )
    assert records(frame) == [
        {"name": "a", "n": 1},
        {"name": None, "n": 2},
        {"name": "", "n": 3},
    ]
