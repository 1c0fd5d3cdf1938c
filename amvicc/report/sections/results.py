"""Results: AMVICC's accuracies per category for every model, with intervals and missing items.

Its rows open the CSV (condition empty for a plain run, ``grain=0.1`` for a perturbed run's
``individual`` / ``pair`` rows, ``variant=<name>`` for a prompt variant's images); the tables
show plain runs and prompt variants, failure modes highlighted.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.report.metrics import plain, with_interaction
from amvicc.report.rows import metric_rows
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import metric_tables
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    return part.metrics


def _view(metrics: pd.DataFrame, page: Page) -> dict[str, Any]:
    sheets = page.part["sheets"]
    return {
        "tables": metric_tables(plain(metrics), page),
        "sheets": sorted(sheets.sources.items()) if sheets is not None else [],
        "raw_cells": 0 if sheets is None else len(sheets.raw_cells),
    }


def _metrics(part: Part) -> pd.DataFrame | None:
    """The API's metric table: the accuracies, then the challenge rates."""
    if part.metrics is None:
        return None
    return with_interaction(part.metrics, part["interaction-robustness"].interaction)


SECTION = Section(
    key="results",
    title="Results",
    compute=_compute,
    rows=metric_rows,
    document=lambda metrics: {"metrics": records(metrics)},
    view=_view,
    exports={"metrics": _metrics},
    opens=True,
)
