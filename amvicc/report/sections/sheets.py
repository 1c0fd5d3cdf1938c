"""Grade sheets: the sheets behind imported models, and cells a raw reading counts otherwise.

A padded sheet cell (``" Y"``) is read as ``Y``; a script comparing raw cells (AMVICC's own
analysis) counts it as not correct. Where that changes a number of the results, both readings
are given (:mod:`amvicc.report.sheetnotes`): AMVICC's DALL·E 3 ``sc`` I Im is 0.981481 in the
paper and 1.000000 here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from amvicc.report.metrics import SHORT_NAMES
from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.sheetnotes import raw_cell_differences, sheet_sources
from amvicc.report.values import records


@dataclass(frozen=True, eq=False)
class Sheets:
    """Per imported model the grade sheets behind it, and the raw reading's differences."""

    sources: dict[str, list[str]]
    raw_cells: pd.DataFrame


def _compute(part: Part) -> Sheets | None:
    if part.items is None:
        return None
    return Sheets(
        sheet_sources(part.items), raw_cell_differences(part.store, part.items, part.options)
    )


def _rows(data: Sheets) -> pd.DataFrame:
    table = data.raw_cells
    if table.empty:
        return empty_rows()
    return row_frame(
        model=table["label"],
        modality="igm",
        category=table["category"],
        metric=table["metric"],
        value=table["raw_value"],
        correct=table["raw_correct"],
        total=table["total"],
        condition="raw sheet cells",
    )


def _view(data: Sheets, page: Page) -> dict[str, Any]:
    return {
        "sheets": sorted(data.sources.items()),
        "raw_cells": [
            {**row, "short": SHORT_NAMES.get(row["metric"], row["metric"])}
            for row in records(data.raw_cells)
        ],
    }


SECTION = Section(
    key="sheets",
    title="Grade sheets",
    compute=_compute,
    rows=_rows,
    document=lambda data: {
        "analyses": {"raw_sheet_cells": records(data.raw_cells), "grade_sheets": data.sources}
    },
    view=_view,
    empty=lambda data: not data.sources,
    hides=True,
    exports={
        "analyses.raw_cells": lambda part: (
            None if part["sheets"] is None else part["sheets"].raw_cells
        ),
        "analyses.sheets": lambda part: None if part["sheets"] is None else part["sheets"].sources,
    },
)
