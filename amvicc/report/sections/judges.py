"""Judge validation: every automatic image judge against the resolved human verdicts.

Per judge and image model (and all models), overall and per category: accuracy, Cohen's κ,
false-positive rate and recall (:func:`amvicc.report.raters.judge_agreement_table`), and the
accuracies each judge alone would give (:func:`amvicc.report.raters.judge_metric_table`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from amvicc.report.items import Items
from amvicc.report.raters import judge_agreement_table, judge_metric_table, judge_sources
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import metric_tables
from amvicc.report.values import records


@dataclass(frozen=True, eq=False)
class Judges:
    """Each judge against humans (``table``), and the metrics each judge alone gives."""

    table: pd.DataFrame
    metrics: pd.DataFrame


def _images_only(items: Items) -> Items:
    frame = items.frame[items.frame["modality"] == "igm"]
    entries = tuple(e for e in items.entries if e.modality == "igm")
    return replace(items, frame=frame, entries=entries)


def _compute(part: Part) -> Judges | None:
    items = part.items
    if items is None:
        return None
    if not judge_sources(items):  # no automatic judge: skip copying the image items
        return Judges(judge_agreement_table(items), pd.DataFrame())
    return Judges(
        judge_agreement_table(items),
        judge_metric_table(_images_only(items), part.options),
    )


def _view(data: Judges, page: Page) -> dict[str, Any]:
    return {
        "rows": page.labelled(data.table),
        "tables": [
            (judge, metric_tables(group, page))
            for judge, group in (
                data.metrics.groupby("judge", sort=True) if not data.metrics.empty else []
            )
        ],
    }


SECTION = Section(
    key="judges",
    title="Judge validation",
    apart=True,
    compute=_compute,
    document=lambda data: {
        "judge_validation": records(data.table),
        "judge_metrics": records(data.metrics),
    },
    view=_view,
    empty=lambda data: data.table.empty,
    exports={
        "judges": lambda part: None if part["judges"] is None else part["judges"].table,
        "judge_metrics": lambda part: None if part["judges"] is None else part["judges"].metrics,
    },
)
