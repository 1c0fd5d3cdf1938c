"""How the report writes values: the fast JSON writer and records of text columns."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from amvicc.report.rows import ROW_COLUMNS, empty_rows, row_frame, to_csv
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
    {"rows": [{"a": 1, "b": "},\n      {"}, {"a": None, "b": "}, {"}, {"c": 0.5}], "n": 3},
    [{"a": "x"}],
    ({"a": 1}, {"b": 2}),
    [{"a": 1}, {"b": {"c": 2}}],
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


def _arrow_importable() -> bool:
    try:
        import pyarrow  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:  # the lowest versions' NumPy 1 cannot load it
        return False
    return True


@pytest.mark.parametrize(
    "storage",
    [
        pytest.param(
            "pyarrow",
            marks=pytest.mark.skipif(not _arrow_importable(), reason="pyarrow cannot load here"),
        ),
        "python",
    ],
)
def test_records_give_missing_text_as_none(storage: str) -> None:
    frame = pd.DataFrame(
        {"name": pd.Series(["a", None, ""], dtype=pd.StringDtype(storage)), "n": [1, 2, 3]}
    )
    assert records(frame) == [
        {"name": "a", "n": 1},
        {"name": None, "n": 2},
        {"name": "", "n": 3},
    ]


HI = ["grain=0.1", "", "", "MMVP"]


def test_csv_quotes_text_as_the_csv_module_and_formats_each_number() -> None:
    rows = row_frame(
        model=["plain", 'say "hi", then\nleave', "", "=1+1"],
        modality="igm",
        category=["ab", "ab", "all", "ab"],
        metric="individual",
        value=[0.5, -0.0, np.nan, 0.5],
        correct=pd.Series([1, pd.NA, 0, 1], dtype="Int64"),
        total=[2, 2, 0, 2],
        condition=[None, "grain=0.1", "", "a,b"],
        catalogue="MMVP",
    )
    text = to_csv([rows], intervals=False)
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\n")
    writer.writerow([c for c in ROW_COLUMNS if c not in ("ci_low", "ci_high")])
    writer.writerows(
        [
            ["plain", "igm", "ab", "individual", "0.500000", "1", "2", "", "", "", "MMVP"],
            ['say "hi", then\nleave', "igm", "ab", "individual", "-0.000000", "", "2", *HI],
            ["", "igm", "all", "individual", "", "0", "0", "", "", "", "MMVP"],
            ["=1+1", "igm", "ab", "individual", "0.500000", "1", "2", "a,b", "", "", "MMVP"],
        ]
    )
    assert text == expected.getvalue()
    assert to_csv([rows], intervals=False, excel_safe=True).splitlines()[-1].startswith("'=1+1,")


@pytest.mark.filterwarnings("error")  # pandas warns of filling a float column with ""
def test_csv_blocks_written_apart_read_as_all_rows_written_at_once() -> None:
    # Each process writes the lines of its own sections' blocks; joined, they must be what
    # writing every row together gives, whatever each block's column types (a block of
    # counts as int64 beside one with NaN, a condition or catalogue column of NaN only).
    counts = row_frame(
        model=["a", "b"],
        modality="vlm",
        category="all",
        metric="individual",
        value=[0.25, 1.0],
        correct=np.array([1, 4]),
        total=np.array([4, 4]),
        condition="",
        catalogue="MMVP",
    )
    gaps = row_frame(
        model=["c", "d,e"],
        modality="igm",
        category=["tx", "all"],
        metric="pair",
        value=[np.nan, 0.5],
        correct=[np.nan, 1.0],
        total=[0.0, 2.0],
        ci_low=[np.nan, 0.1],
        ci_high=[np.nan, 0.9],
        p_value=[0.0123456789, np.nan],
    )
    for intervals in (True, False):
        apart = to_csv([counts, gaps], intervals=intervals)
        together = to_csv([pd.concat([counts, gaps], ignore_index=True)], intervals=intervals)
        assert apart == together
        assert apart.count("\n") == 5
    assert to_csv([], intervals=True) == to_csv([empty_rows()], intervals=True)


def test_templates_read_dict_keys_as_jinja_does() -> None:
    # The environment reads a dict's key before its attributes, except for a dict's own
    # attributes (its methods), which Jinja's getattr-first lookup finds first.
    from jinja2 import Environment

    from amvicc.report.templating import _environment

    source = "{{ d.name }}|{{ d.items is callable }}|{{ d.get is callable }}|{{ d.missing }}"
    data = {"d": {"name": "x", "items": 1, "missing": None}}
    assert _environment().from_string(source).render(data) == "x|True|True|None"
    assert Environment().from_string(source).render(data) == "x|True|True|None"
    with pytest.raises(Exception, match="has no attribute 'nothing'"):
        _environment().from_string("{{ d.nothing }}").render(data)
