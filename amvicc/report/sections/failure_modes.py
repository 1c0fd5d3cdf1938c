"""Failure modes: per modality, which metrics of each model fail in each category.

A category is a failure mode for a model when an individual accuracy is below
``--threshold-individual`` (0.8) or a pair accuracy below ``--threshold-pair`` (0.7). The HTML
and Markdown show one matrix per modality — a row per model, a column per category, each cell
naming the failing metrics (I Im / I Ex / P Im / P Ex, or I / P) with their values on hover —
so a reader sees every model's blind spots at once; the JSON keeps one row per failing
(model, category, metric).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.metrics import IGM_METRICS, SHORT_NAMES, VLM_METRICS, failure_modes, plain
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import MODALITY_TITLES, SMOKE_TITLES, first_rows
from amvicc.report.values import number, records


def _compute(part: Part) -> pd.DataFrame | None:
    if part.metrics is None:
        return None
    return failure_modes(plain(part.metrics), part.options)


def _view(failures: pd.DataFrame, page: Page) -> dict[str, Any]:
    metrics = plain(page.part["results"])
    categories = page.part.categories  # a property that scans the catalogue: read once
    matrices = []
    for modality, names in (("igm", IGM_METRICS), ("vlm", VLM_METRICS)):
        mine = metrics[metrics["modality"] == modality]
        if mine.empty:
            continue
        failing = failures[failures["modality"] == modality]
        cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in records(failing, drop=()):
            cells.setdefault((row["entry"], row["category"]), []).append(row)
        rows = []
        for entry, first in first_rows(records(mine[["entry", "label", "smoke"]], drop=())).items():
            row_cells = []
            for category in categories:
                found = sorted(
                    cells.get((entry, category), []), key=lambda r: names.index(r["metric"])
                )
                row_cells.append(
                    {
                        "short": " · ".join(SHORT_NAMES[r["metric"]] for r in found),
                        "title": "; ".join(
                            f"{SHORT_NAMES[r['metric']]} {number(r['value'])} "
                            f"({int(r['correct'])}/{int(r['total'])}) < {r['threshold']}"
                            for r in found
                        ),
                    }
                )
            rows.append(
                {
                    "name": page.name(str(first["label"]), bool(first["smoke"])),
                    "cells": row_cells,
                    "count": sum(1 for c in row_cells if c["short"]),
                }
            )
        matrices.append(
            {
                "title": (SMOKE_TITLES if page.smoke else MODALITY_TITLES)[modality],
                "metrics": ", ".join(SHORT_NAMES[m] for m in names),
                "rows": rows,
            }
        )
    return {
        "matrices": matrices,
        "columns": [(c, CATEGORY_BY_CODE[c].name) for c in categories],
        "count": len(failures),
    }


SECTION = Section(
    key="failure-modes",
    title="Failure modes",
    compute=_compute,
    document=lambda failures: {"failure_modes": records(failures)},
    view=_view,
    exports={"failures": lambda part: part["failure-modes"]},
    opens=True,
)
