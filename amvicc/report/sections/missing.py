"""Missing items: how many items had no usable verdict, why, and which questions.

Counted as wrong under ``--missing fail`` (AMVICC's rule), left out of the totals under
``exclude``; every accuracy also shows its number missing (:func:`~amvicc.report.metrics.missing_summary`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.report.metrics import missing_summary
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    return None if part.plain_items is None else missing_summary(part.plain_items)


def _view(table: pd.DataFrame, page: Page) -> dict[str, Any]:
    return {
        "rows": page.labelled(table),
        "total": int(table["count"].sum()) if not table.empty else 0,
    }


SECTION = Section(
    key="missing",
    title="Missing items",
    compute=_compute,
    document=lambda table: {"missing": records(table)},
    view=_view,
    exports={"missing": lambda part: part["missing"]},
)
