"""The CSV: one row per number, in fixed columns, each section adding its rows in turn.

Columns: ``model,modality,category,metric,value,correct,total`` then ``ci_low,ci_high`` when
intervals were computed, then ``condition,p_value,p_adjusted,catalogue``. Each section of the
report (:mod:`amvicc.report.sections`) turns its numbers into rows of :data:`ROW_COLUMNS`
(:func:`row_frame` helps), and :func:`to_csv` writes them in the sections' order: the accuracies
first, then every other number, ``condition`` saying what a row is.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue.csvtext import excel_safe as excel_safe_cell

ROW_COLUMNS = [
    "model",
    "modality",
    "category",
    "metric",
    "value",
    "correct",
    "total",
    "ci_low",
    "ci_high",
    "condition",
    "p_value",
    "p_adjusted",
    "catalogue",
]
CSV_COLUMNS = ("model", "modality", "category", "metric", "value", "correct", "total")
INTERVAL_COLUMNS = ("ci_low", "ci_high")
CONDITION_COLUMNS = ("condition", "p_value", "p_adjusted")
CATALOGUE_COLUMNS = ("catalogue",)
#: The ``modality`` of a row about a VLM and an image model together (concordance).
CROSS = "vlm×igm"


def empty_rows() -> pd.DataFrame:
    """No rows, in the CSV's columns."""
    return pd.DataFrame(columns=ROW_COLUMNS)


def row_frame(**columns: Any) -> pd.DataFrame:
    """Rows in :data:`ROW_COLUMNS` from columns (sequences) and constants (repeated).

    Columns not given are empty (one column of NaN for them all, built at once); others are
    left out.
    """
    length = max(
        (len(v) for v in columns.values() if isinstance(v, list | np.ndarray | pd.Series)),
        default=0,
    )
    filled = {
        name: (
            value.reset_index(drop=True)
            if isinstance(value, pd.Series)
            else value
            if isinstance(value, list | np.ndarray)
            else [value] * length
        )
        for name, value in columns.items()
    }
    empty = np.full(length, np.nan)
    return pd.DataFrame({name: filled.get(name, empty) for name in ROW_COLUMNS})


def metric_rows(metrics: pd.DataFrame) -> pd.DataFrame:
    """Accuracy rows (:func:`amvicc.report.metrics.metric_table`'s columns) as CSV rows.

    The row's ``model`` is the entry's label; these rows have no p-values.
    """
    if metrics.empty:
        return empty_rows()
    rows = (
        metrics.drop(columns=[c for c in ("model",) if c in metrics.columns])
        .rename(columns={"label": "model"})
        .assign(p_value=np.nan, p_adjusted=np.nan)
    )
    for column in ("condition", "catalogue"):
        if column not in rows.columns:
            rows[column] = ""
    return rows[ROW_COLUMNS]


def to_csv(
    parts: Sequence[pd.DataFrame], *, intervals: bool = True, excel_safe: bool = False
) -> str:
    """The CSV of these row blocks (:data:`ROW_COLUMNS`), in order.

    ``value`` has 6 decimals (empty when nothing was counted). ``excel_safe`` prefixes model
    and catalogue names that a spreadsheet would run as a formula (``=...``) with ``'`` (see
    :func:`amvicc.catalogue.csvtext.excel_safe`).
    """
    return csv_header(intervals=intervals) + "".join(
        csv_lines(p, intervals=intervals, excel_safe=excel_safe) for p in parts
    )


def csv_header(*, intervals: bool) -> str:
    """The CSV's first line (with its line end)."""
    return ",".join(_quoted(list(_csv_columns(intervals)))) + "\n"


def csv_lines(rows: pd.DataFrame, *, intervals: bool, excel_safe: bool) -> str:
    """One block of rows as lines of the CSV (each with its line end; "" for none).

    Each cell is written alone, so a report writes its blocks apart (each process those of
    its sections) and joins them. Formatted column by column: a report of fifty models has
    tens of thousands of comparison rows.
    """
    if rows.empty:
        return ""
    rows = rows[ROW_COLUMNS]
    cells = {
        "model": _text(rows["model"], excel_safe),
        "modality": rows["modality"].astype(str).tolist(),
        "category": rows["category"].astype(str).tolist(),
        "metric": rows["metric"].astype(str).tolist(),
        "value": _formatted(rows["value"], "{:.6f}"),
        "correct": _formatted(rows["correct"], "{:.0f}"),
        "total": _formatted(rows["total"], "{:.0f}"),
        "ci_low": _formatted(rows["ci_low"], "{:.6f}"),
        "ci_high": _formatted(rows["ci_high"], "{:.6f}"),
        # as objects: a block's column of NaN only is float, which takes no "" in place of NaN
        "condition": rows["condition"].astype(object).fillna("").astype(str).tolist(),
        "p_value": _formatted(rows["p_value"], "{:.6g}"),
        "p_adjusted": _formatted(rows["p_adjusted"], "{:.6g}"),
        "catalogue": _text(rows["catalogue"].astype(object).fillna(""), excel_safe),
    }
    for name in _TEXT_COLUMNS:
        cells[name] = _quoted(cells[name])
    lines = map(",".join, zip(*(cells[name] for name in _csv_columns(intervals)), strict=True))
    return "\n".join(lines) + "\n"


def _csv_columns(intervals: bool) -> tuple[str, ...]:
    return (
        CSV_COLUMNS
        + (INTERVAL_COLUMNS if intervals else ())
        + CONDITION_COLUMNS
        + CATALOGUE_COLUMNS
    )


#: The columns that hold text, which the CSV quotes where it must (numbers never need it).
_TEXT_COLUMNS = ("model", "modality", "category", "metric", "condition", "catalogue")


def _quoted(texts: list[str]) -> list[str]:
    """Each text as :mod:`csv` writes it in a row of several fields (quoted where it must be).

    A column holds a few distinct texts (model names, metrics) over tens of thousands of rows:
    each distinct one goes through the csv writer once, and the rows are joined as plain text.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    written: dict[str, str] = {"": ""}  # alone in a row, csv would write "" for it
    for text in set(texts) - {""}:
        out.seek(0)
        out.truncate()
        writer.writerow([text])
        written[text] = out.getvalue()[:-1]
    return list(map(written.__getitem__, texts))


def _text(column: pd.Series, excel_safe: bool) -> list[str]:
    names: list[str] = [str(name) for name in column.astype(str).tolist()]
    return [str(excel_safe_cell(name)) for name in names] if excel_safe else names


def _formatted(column: pd.Series, pattern: str) -> list[str]:
    """Numbers as text with ``pattern``; missing (None, NaN, NA) as an empty cell.

    A column of tens of thousands of numbers holds a few thousand distinct ones: each distinct
    value (told apart by its bits, so ``-0.0`` keeps its sign) is formatted once.
    """
    # na_value: nullable counts (pd.NA) become NaN on every pandas the floor allows.
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    bits, where = np.unique(values.view(np.int64), return_inverse=True)
    text = pattern.format
    distinct = np.array(
        ["" if value != value else text(value) for value in bits.view(np.float64).tolist()],
        dtype=object,
    )
    return list(distinct[where.reshape(-1)].tolist())
