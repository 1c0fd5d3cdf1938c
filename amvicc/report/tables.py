"""Accuracy tables as the templates draw them: model × metric rows, category columns.

Several sections show accuracies the same way (the results, other catalogues, the judges'
accuracies): a row per (model, metric), a column per category and ``all``, a cell with the
value, whether it is a failure mode, its count, interval and missing items. They build their
tables here and draw them with the ``metric_table`` macro of ``templates/macros.*.jinja``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from amvicc.report.metrics import ALL, IGM_METRICS, SHORT_NAMES, VLM_METRICS, threshold
from amvicc.report.options import ReportOptions
from amvicc.report.values import DASH, missing, number, records

if TYPE_CHECKING:
    from amvicc.report.section import Page

MODALITY_TITLES = {"igm": "Image generation models (IGMs)", "vlm": "Vision-language models (VLMs)"}
SMOKE_TITLES = {
    "igm": "Smoke-test image models (random weights: the numbers mean nothing)",
    "vlm": "Smoke-test VLMs (random weights: the numbers mean nothing)",
}
#: The columns of a metric table that its cells and model names need.
CELL_COLUMNS = ("entry", "label", "smoke", "metric", "category", "value", "correct", "total",
                "missing", "ci_low", "ci_high")  # fmt: skip
NO_CELL: dict[str, Any] = {"text": DASH, "ci": "", "failing": False, "count": "", "missing": 0}


def unused(metrics: pd.DataFrame) -> tuple[str, ...]:
    """The columns of a metric table that no cell or model name reads (not worth converting)."""
    return tuple(str(c) for c in metrics.columns if c not in CELL_COLUMNS)


def interval(low: Any, high: Any, level: int) -> str:
    """``95% CI 0.700–0.900``, or an empty string without an interval."""
    return "" if missing(low) else f"{level}% CI {number(low)}–{number(high)}"


def bracket(cell: Mapping[Any, Any] | None) -> str:
    """A cell's interval as ``[low, high]``, or an empty string without one."""
    if cell is None or missing(cell["ci_low"]):
        return ""
    return f"[{number(cell['ci_low'])}, {number(cell['ci_high'])}]"


def failing(value: Any, total: Any, metric: str, category: str, options: ReportOptions) -> bool:
    """Whether an accuracy is a failure mode (a category's, below its metric's threshold)."""
    if category == ALL or missing(value) or missing(total) or not total:
        return False
    return bool(float(value) < threshold(metric, options))


def accuracy_cell(
    cell: Mapping[Any, Any] | None, metric: str, category: str, options: ReportOptions
) -> dict[str, Any]:
    """One accuracy as a table shows it: the value, failing or not, count, interval, missing."""
    if cell is None:
        return dict(NO_CELL)
    level = round(100 * options.confidence)
    return {
        "text": number(cell["value"]),
        "ci": interval(cell["ci_low"], cell["ci_high"], level),
        "failing": failing(cell["value"], cell["total"], metric, category, options),
        "count": f"{int(cell['correct'])}/{int(cell['total'])}",
        "missing": int(cell["missing"]),
    }


def table(
    modality: str, smoke: bool, columns: list[str], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """A table of the metric-table macro: one modality's real or smoke-test models."""
    return {
        "modality": modality,
        "smoke": smoke,
        "title": (SMOKE_TITLES if smoke else MODALITY_TITLES)[modality],
        "columns": columns,
        "rows": rows,
    }


def metric_tables(
    metrics: pd.DataFrame, page: Page, categories: list[str] | None = None
) -> list[dict[str, Any]]:
    """Per modality: rows (model, metric) × columns (categories, all), with flags.

    The columns are the report's categories unless ``categories`` (another catalogue's) are
    given. A part holds real or smoke-test models only, so a table never mixes them.
    """
    tables = []
    columns = [*(page.part.categories if categories is None else categories), ALL]
    smoke_column = metrics["smoke"].astype(bool)
    for smoke, (modality, names) in itertools.product(
        (False, True), (("igm", IGM_METRICS), ("vlm", VLM_METRICS))
    ):
        part = metrics[(metrics["modality"] == modality) & (smoke_column == smoke)]
        if part.empty:
            continue
        found = records(part, drop=unused(part))
        cells = {(r["entry"], r["metric"], r["category"]): r for r in found}
        firsts = first_rows(found)
        rows = []
        for entry, first in firsts.items():
            for index, metric in enumerate(names):
                row_cells = [
                    accuracy_cell(cells.get((entry, metric, c)), metric, c, page.options)
                    for c in columns
                ]
                rows.append(
                    {
                        "name": page.name(str(first["label"]), bool(first["smoke"])),
                        "smoke": bool(first["smoke"]),
                        "first": index == 0,
                        "span": len(names),
                        "metric": metric,
                        "short": SHORT_NAMES[metric],
                        "cells": row_cells,
                    }
                )
        tables.append(
            {
                **table(modality, smoke, columns, rows),
                "metrics": [(SHORT_NAMES[m], m) for m in names],
            }
        )
    return tables


# Diverging colours for differences: red (negative) through white to blue (positive).
_NEGATIVE, _WHITE, _POSITIVE = (178, 24, 43), (247, 247, 247), (33, 102, 172)


def diverging(value: Any, limit: float = 0.5) -> str:
    """A CSS colour for a difference in [-limit, limit] (grey when missing)."""
    if missing(value):
        return "#e0e0e0"
    share = max(-1.0, min(1.0, float(value) / limit))
    end = _POSITIVE if share > 0 else _NEGATIVE
    mix = [round(w + (e - w) * abs(share)) for w, e in zip(_WHITE, end, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def first_rows(rows: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Each entry's first row, entries in the order first met (a table's models, in order)."""
    firsts: dict[Any, dict[str, Any]] = {}
    for row in rows:
        firsts.setdefault(row["entry"], row)
    return firsts
