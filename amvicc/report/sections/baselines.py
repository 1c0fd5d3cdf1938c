"""Constant-answer baselines: what always answering (a), or (b), scores, next to chance.

From the answer key of the report's catalogue (:mod:`amvicc.report.baselines`): a VLM's
accuracy means something only above both.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.baselines import constant_baselines
from amvicc.report.metrics import ALL
from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    """The catalogue's baselines, once: in the real part, when any model is on the catalogue."""
    smoke = part.smoke_part
    if part.smoke or (part.items is None and (smoke is None or smoke.items is None)):
        return None
    return constant_baselines(part.catalogue)


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return empty_rows()
    return row_frame(
        model=table["baseline"],
        modality="vlm",
        category=table["category"],
        metric=table["metric"],
        value=table["value"],
        correct=table["correct"],
        total=table["total"],
        condition="baseline",
    )


def _view(table: pd.DataFrame, page: Page) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for row in records(table):
        category = row["category"]
        name = "all categories" if category == ALL else CATEGORY_BY_CODE[category].name
        entry = out.setdefault(category, {"category": category, "name": name, "values": {}})
        entry["values"][(row["baseline"], row["metric"])] = row
    return {"rows": list(out.values())}


SECTION = Section(
    key="baselines",
    title="Constant-answer baselines (VLMs)",
    toc="Constant-answer baselines",
    compute=_compute,
    rows=_rows,
    document=lambda table: {"analyses": {"constant_baselines": records(table)}},
    view=_view,
    exports={"analyses.baselines": lambda part: part["baselines"]},
)
