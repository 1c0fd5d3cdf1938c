"""Tokens and cost: every stored request of a model on the report's questions.

Tokens where the route reports them; with ``--prices FILE`` the cost (amvicc ships no prices;
see :mod:`amvicc.report.usage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.usage import load_prices, usage_table
from amvicc.report.values import records


@dataclass(frozen=True, eq=False)
class Usage:
    """Requests, tokens and cost per model, and the prices' currency ("" without prices)."""

    table: pd.DataFrame
    currency: str


def _compute(part: Part) -> Usage | None:
    if part.items is None:
        return None
    options = part.options
    prices = load_prices(options.prices) if options.prices is not None else None
    return Usage(
        usage_table(part.shared_read("usage_frame"), part.items, prices),
        prices.currency if prices is not None else "",
    )


def _rows(data: Usage) -> pd.DataFrame:
    table = data.table
    if table.empty:
        return empty_rows()
    common: dict[str, Any] = {
        "model": table["label"],
        "modality": table["modality"],
        "category": "all",
        "condition": "usage",
    }
    return pd.concat(
        [
            row_frame(
                **common, metric="requests", value=table["requests"], total=table["requests"]
            ),
            row_frame(
                **common,
                metric="prompt_tokens",
                value=table["prompt_tokens"],
                correct=table["with_usage"],
                total=table["requests"],
            ),
            row_frame(
                **common,
                metric="completion_tokens",
                value=table["completion_tokens"],
                correct=table["with_usage"],
                total=table["requests"],
            ),
            row_frame(
                **common,
                metric="cost",
                value=table["cost"],
                correct=table["cost_requests"],
                total=table["requests"],
            ),
        ],
        ignore_index=True,
    )


def _view(data: Usage, page: Page) -> dict[str, Any]:
    return {
        "rows": page.labelled(data.table),
        "currency": data.currency,
    }


SECTION = Section(
    key="usage",
    title="Tokens and cost",
    compute=_compute,
    rows=_rows,
    document=lambda data: {"analyses": {"usage": records(data.table), "currency": data.currency}},
    view=_view,
    empty=lambda data: data.table.empty,
    exports={
        "analyses.usage": lambda part: None if part["usage"] is None else part["usage"].table,
        "analyses.currency": lambda part: None if part["usage"] is None else part["usage"].currency,
    },
)
