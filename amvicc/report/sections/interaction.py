"""Interaction and robustness: GRIP's challenges, and accuracy under perturbation.

Two tables per model. Challenges (``amvicc challenge``): capitulation (right → wrong) and
correction (wrong → right) per arm, raw and minus the control arm, with the counts behind them
(:mod:`amvicc.report.interaction`). Perturbations (``amvicc answer --perturb``): each perturbed
run beside its clean run on the same items, and the drop with a paired interval
(:mod:`amvicc.report.robustness`), drawn as a curve over the levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from amvicc.report.interaction import (
    ARM_ORDER,
    INTERACTION_METRICS,
    INTERACTION_NAMES,
    Interaction,
    empty_interaction,
    interaction_table,
)
from amvicc.report.metrics import ALL, METRIC_COLUMNS, SHORT_NAMES, chance
from amvicc.report.robustness import robustness_table
from amvicc.report.rows import empty_rows, metric_rows
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import bracket, interval
from amvicc.report.values import DASH, json_value, missing, number, records


@dataclass(frozen=True, eq=False)
class Challenges:
    """The challenge arms and the perturbed runs of a part's VLMs."""

    interaction: Interaction
    robustness: pd.DataFrame


def _compute(part: Part) -> Challenges | None:
    if part.items is None:
        return None
    interaction = interaction_table(part.store, part.items, part.options)
    return Challenges(interaction, robustness_table(part.items, part.options))


def _rows(data: Challenges) -> pd.DataFrame:
    rates = data.interaction.metrics
    return empty_rows() if rates.empty else metric_rows(rates[list(METRIC_COLUMNS)])


def _document(data: Challenges) -> dict[str, Any]:
    rates = data.interaction.metrics
    return {
        "metrics": [] if rates.empty else records(rates[list(METRIC_COLUMNS)]),
        "interaction": records(data.interaction.counts),
        "robustness": records(data.robustness, drop=("entry", "clean_entry")),
    }


def _rate_cell(cell: dict[str, Any] | None, metric: str, level: int) -> dict[str, str]:
    if cell is None:
        return {"text": DASH, "title": ""}
    adjusted = metric.endswith("_adjusted")
    title = [
        ""
        if adjusted or missing(cell["total"])
        else f"{int(cell['correct'])}/{int(cell['total'])}",
        interval(cell["ci_low"], cell["ci_high"], level),
        ""
        if adjusted or missing(cell["missing"]) or not cell["missing"]
        else f"{int(cell['missing'])} undecided second turn(s)",
    ]
    text = number(cell["value"])
    if adjusted and not missing(cell["value"]) and float(cell["value"]) > 0:
        text = "+" + text
    return {"text": text, "title": " · ".join(t for t in title if t)}


def _interaction_tables(interaction: Interaction, page: Page) -> list[dict[str, Any]]:
    """Per (model, challenged run): rows (arm, metric) × columns (categories, all), and counts."""
    metrics, counts = interaction.metrics, interaction.counts
    if metrics.empty:
        return []
    columns = [*page.part.categories, ALL]
    tables = []
    for (label, challenged), part in metrics.groupby(["label", "challenged_run"], sort=False):
        cells = {(r["entry"], r["metric"], r["category"]): r for r in records(part, drop=())}
        rows = []
        for entry in dict.fromkeys(part["entry"]):
            mine = part[part["entry"] == entry]
            names = [m for m in INTERACTION_METRICS if m in set(mine["metric"])]
            for index, metric in enumerate(names):
                rows.append(
                    {
                        "arm": str(mine["condition"].iloc[0]),
                        "first": index == 0,
                        "span": len(names),
                        "metric": INTERACTION_NAMES[metric],
                        "cells": [
                            _rate_cell(cells.get((entry, metric, c)), metric, page.level)
                            for c in columns
                        ],
                        "ci": bracket(cells.get((entry, metric, ALL))),
                    }
                )
        smoke = bool(part["smoke"].any())
        mine_counts = counts[(counts["label"] == label) & (counts["challenged_run"] == challenged)]
        tables.append(
            {
                "name": page.name(str(label), smoke),
                "smoke": smoke,
                "challenged_run": challenged,
                "columns": columns,
                "rows": rows,
                "counts": [
                    {k: json_value(v) for k, v in row.items()}
                    for row in records(mine_counts, drop=())
                ],
                "arms": [a for a in ARM_ORDER if a in set(part["condition"])],
            }
        )
    return tables


def _robustness_rows(part: pd.DataFrame, columns: list[str], level: int) -> list[dict[str, Any]]:
    cells = {(r["condition"], r["metric"], r["category"]): r for r in records(part, drop=())}
    rows = []
    for condition in dict.fromkeys(part["condition"]):
        for metric in ("individual", "pair"):
            short = SHORT_NAMES[metric]
            for what in ("clean", "perturbed", "drop"):
                row_cells = []
                for category in columns:
                    cell = cells.get((condition, metric, category))
                    if cell is None:
                        row_cells.append({"text": DASH, "title": ""})
                        continue
                    title = f"{int(cell['total'])} {'pairs' if metric == 'pair' else 'items'}"
                    if what == "drop":
                        bounds = interval(cell["ci_low"], cell["ci_high"], level)
                        title = f"{title} · {bounds}" if bounds else title
                    row_cells.append({"text": number(cell[what]), "title": title})
                rows.append(
                    {
                        "condition": condition,
                        "first": metric == "individual" and what == "clean",
                        "span": 6,
                        "metric": {
                            "clean": f"{short} clean",
                            "perturbed": f"{short} perturbed",
                            "drop": f"Δ{short} (clean − perturbed)",
                        }[what],
                        "drop": what == "drop",
                        "cells": row_cells,
                        "ci": bracket(cells.get((condition, metric, ALL)))
                        if what == "drop"
                        else "",
                    }
                )
    return rows


def _curve(part: pd.DataFrame, kind: str) -> dict[str, Any]:
    """One perturbation's accuracy over its levels (level 0: the clean run), as SVG points."""
    rows = part[(part["kind"] == kind) & (part["category"] == ALL)].sort_values("level")
    top = max(float(rows["level"].max()), 1e-9)
    lines = []
    for metric in ("individual", "pair"):
        mine = rows[rows["metric"] == metric]
        if mine.empty:
            continue
        points = [(0.0, float(mine["clean"].iloc[0]))]
        points += list(
            zip(mine["level"].astype(float), mine["perturbed"].astype(float), strict=True)
        )
        lines.append(
            {
                "metric": SHORT_NAMES[metric],
                "points": [
                    (round(40 + 260 * x / top, 1), round(150 - 130 * y, 1), f"{x:g}: {y:.3f}")
                    for x, y in points
                    if not missing(y)
                ],
            }
        )
    return {
        "kind": kind,
        "lines": lines,
        "top": f"{top:g}",
        "chance": 150 - 130 * chance("individual"),
    }


def _robustness_tables(robustness: pd.DataFrame, page: Page) -> list[dict[str, Any]]:
    """Per model and clean run: rows (condition, clean / perturbed / drop) × categories, all."""
    if robustness.empty:
        return []
    columns = [*page.part.categories, ALL]
    tables = []
    for (label, _clean), part in robustness.groupby(["label", "clean_entry"], sort=False):
        smoke = bool(part["smoke"].any())
        tables.append(
            {
                "name": page.name(str(label), smoke),
                "smoke": smoke,
                "columns": columns,
                "rows": _robustness_rows(part, columns, page.level),
                "curves": [_curve(part, kind) for kind in dict.fromkeys(part["kind"])],
            }
        )
    return tables


def _view(data: Challenges, page: Page) -> dict[str, Any]:
    return {
        "interaction": _interaction_tables(data.interaction, page),
        "robustness": _robustness_tables(data.robustness, page),
    }


def _empty(data: Challenges | None) -> bool:
    return data is None or (data.interaction.counts.empty and data.robustness.empty)


def _interaction(part: Part) -> Interaction:
    data = part["interaction-robustness"]
    return data.interaction if data is not None else empty_interaction()


SECTION = Section(
    key="interaction-robustness",
    title="Interaction and robustness",
    compute=_compute,
    rows=_rows,
    document=_document,
    view=_view,
    empty=_empty,
    exports={
        "interaction": _interaction,
        "robustness": lambda part: (
            None
            if part["interaction-robustness"] is None
            else part["interaction-robustness"].robustness
        ),
    },
)
