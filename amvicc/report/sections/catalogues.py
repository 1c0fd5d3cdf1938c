"""Other catalogues: runs on another catalogue (a scene set), scored apart and side by side.

A scene set's question 5 is not MMVP's question 5, so those runs never enter the main tables:
they are scored here against the catalogue file they recorded
(:mod:`amvicc.report.catalogues`), each model with results on several catalogues is put side
by side, and a run whose file is gone or changed is listed as not scored, with the reason.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORIES
from amvicc.report.catalogues import Catalogues, other_catalogues
from amvicc.report.metrics import ALL, METRIC_COLUMNS, SHORT_NAMES, plain
from amvicc.report.rows import metric_rows
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import NO_CELL, accuracy_cell, metric_tables, table
from amvicc.report.values import missing, records


def _compute(part: Part) -> Catalogues | None:
    if part.items is None and not part.elsewhere:
        return None
    metrics = part.metrics if part.metrics is not None else pd.DataFrame(columns=METRIC_COLUMNS)
    return other_catalogues(part.store, part.options, part.catalogue, part.elsewhere, metrics)


def _rows(catalogues: Catalogues) -> pd.DataFrame:
    return metric_rows(catalogues.metrics)


def _document(catalogues: Catalogues) -> dict[str, Any]:
    return {
        "metrics": records(catalogues.metrics) if catalogues.others else [],
        "other_catalogues": {
            "catalogues": [
                {
                    "name": other.name,
                    "source": other.items.catalogue.source,
                    "sha256": other.items.catalogue.sha256,
                    "categories": other.categories,
                    "models": [e.label for e in other.items.entries],
                }
                for other in catalogues.others
            ],
            "side_by_side": records(catalogues.side_by_side, drop=()),
            "not_scored": [asdict(row) for row in catalogues.not_scored],
        },
    }


def _side_by_side_lines(mine: pd.DataFrame, columns: list[str], page: Page) -> list[dict[str, Any]]:
    """One model's lines: per metric, its accuracy on each catalogue, then the differences."""
    cells = {(r["metric"], r["catalogue"], r["category"]): r for r in records(mine, drop=())}
    lines: list[dict[str, Any]] = []
    for metric in dict.fromkeys(mine["metric"]):
        rows = mine[mine["metric"] == metric]
        reference = str(rows["reference"].iloc[0])
        names = [str(c) for c in dict.fromkeys(rows["catalogue"])]
        short = SHORT_NAMES[metric]
        for name in names:
            lines.append(
                {
                    "metric": metric,
                    "short": f"{short} · {name}",
                    "cells": [
                        accuracy_cell(cells.get((metric, name, c)), metric, c, page.options)
                        for c in columns
                    ],
                }
            )
        for name in names:
            if name == reference:
                continue
            differences = [cells.get((metric, name, c)) for c in columns]
            lines.append(
                {
                    "metric": f"{metric}: {name} − {reference}",
                    "short": f"Δ{short} {name} − {reference}",
                    "cells": [
                        dict(NO_CELL)
                        if d is None or missing(d["difference"])
                        else {**NO_CELL, "text": f"{float(d['difference']):+.3f}"}
                        for d in differences
                    ],
                }
            )
    return lines


def _side_by_side_tables(side: pd.DataFrame, page: Page) -> list[dict[str, Any]]:
    """Per modality: each model's rows (metric, catalogue) and differences × categories."""
    if side.empty:
        return []
    present = set(side["category"])
    columns = [c.code for c in CATEGORIES if c.code in present] + [ALL]
    tables = []
    for smoke, modality in itertools.product((False, True), ("igm", "vlm")):
        part = side[(side["modality"] == modality) & (side["smoke"].astype(bool) == smoke)]
        if part.empty:
            continue
        rows = []
        for label in dict.fromkeys(part["label"]):
            lines = _side_by_side_lines(part[part["label"] == label], columns, page)
            rows += [
                {
                    **line,
                    "name": page.name(str(label), smoke),
                    "smoke": smoke,
                    "first": index == 0,
                    "span": len(lines),
                }
                for index, line in enumerate(lines)
            ]
        tables.append(table(modality, smoke, columns, rows))
    return tables


def _view(catalogues: Catalogues, page: Page) -> dict[str, Any]:
    return {
        "name": catalogues.name,
        "others": [
            {
                "name": other.name,
                "source": other.items.catalogue.source,
                "sha256": other.items.catalogue.sha256,
                "questions": len(other.items.catalogue),
                "tables": metric_tables(plain(other.metrics), page, other.categories),
            }
            for other in catalogues.others
        ],
        "side_by_side": _side_by_side_tables(catalogues.side_by_side, page),
        "not_scored": [
            {**asdict(row), "name": page.name(row.label, row.smoke), "runs": ", ".join(row.runs)}
            for row in catalogues.not_scored
        ],
    }


def _title(part: Part, text: Callable[[str], str]) -> str:
    return f"{text(part.catalogue_name)} and other catalogues"


SECTION = Section(
    key="catalogues",
    title="MMVP and other catalogues",
    toc="Other catalogues",
    compute=_compute,
    rows=_rows,
    document=_document,
    view=_view,
    empty=lambda catalogues: not catalogues.any,
    hides=True,
    heading=_title,
    exports={"catalogues": lambda part: part["catalogues"]},
)
