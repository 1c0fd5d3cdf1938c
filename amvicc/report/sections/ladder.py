"""Question ladder: GRIP's five questions of rising competence about each procedural scene.

Per model and options: accuracy at each level over all categories and per category (with the
number missing and a Wilson interval), the level's constant-answer baseline, and where each
image's chain breaks (:mod:`amvicc.report.ladder`). The ladder carries its own answers, so a
workspace of ladder runs alone is reported as this section alone.
"""

from __future__ import annotations

from typing import Any

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.ladder import LEVELS, LadderTables, ladder_rows, ladder_tables
from amvicc.report.metrics import ALL
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import DASH, missing, records


def _compute(part: Part) -> LadderTables:
    return ladder_tables(part.store, part.options, smoke=part.smoke)


def _document(tables: LadderTables) -> dict[str, Any]:
    if tables.empty:
        return {"ladder": {"entries": [], "levels": [], "chains": []}}
    return {
        "ladder": {
            "entries": [
                {
                    "label": e.label,
                    "model": e.model,
                    "smoke": e.smoke,
                    "catalogue": e.catalogue,
                    "runs": list(e.run_ids),
                }
                for e in tables.entries
            ],
            "levels": records(tables.levels, drop=()),
            "chains": records(tables.chains, drop=()),
        }
    }


def _percent(value: Any) -> str:
    return DASH if missing(value) else f"{100 * float(value):.1f}"


def _rows(tables: LadderTables, label: str, columns: list[str], page: Page) -> list[dict[str, Any]]:
    levels = tables.levels[tables.levels["entry"] == label]
    cells = {(int(r["level"]), r["category"]): r for r in records(levels, drop=())}
    rows = []
    from amvicc.ladder import LEVEL_NAMES

    for level in LEVELS:
        overall = cells.get((level, ALL))
        if overall is None:
            continue
        row_cells = []
        for category in columns:
            cell = cells.get((level, category))
            if cell is None:
                row_cells.append({"text": DASH, "title": ""})
                continue
            row_cells.append(
                {
                    "text": _percent(cell["accuracy"]),
                    "title": f"{cell['correct']}/{cell['total']} right, {cell['missing']} missing",
                }
            )
        low, high = overall["ci_low"], overall["ci_high"]
        rows.append(
            {
                "level": level,
                "name": LEVEL_NAMES[level],
                "cells": row_cells,
                "baseline": _percent(overall["baseline"]),
                "missing": int(overall["missing"]),
                "ci": ""
                if missing(low)
                else f"{page.level}% CI [{100 * low:.1f}, {100 * high:.1f}]",
            }
        )
    return rows


def _view(tables: LadderTables, page: Page) -> dict[str, Any]:
    """Per model: levels × categories, the baseline, and where the chains break."""
    views = []
    for entry in tables.entries:
        levels = tables.levels[tables.levels["entry"] == entry.label]
        if levels.empty:
            continue
        columns = [*(c for c in dict.fromkeys(levels["category"]) if c != ALL), ALL]
        chains = tables.chains[tables.chains["entry"] == entry.label]
        views.append(
            {
                "name": page.name(entry.label, entry.smoke),
                "smoke": entry.smoke,
                "catalogue": entry.catalogue,
                "runs": ", ".join(entry.run_ids),
                "columns": columns,
                "column_names": [
                    CATEGORY_BY_CODE[c].name if c in CATEGORY_BY_CODE else c for c in columns
                ],
                "rows": _rows(tables, entry.label, columns, page),
                "chains": [
                    {
                        "first_failed": row["first_failed"],
                        "count": int(row["count"]),
                        "share": _percent(row["share"]),
                    }
                    for row in records(chains, drop=())
                ],
                "chain_total": int(chains["count"].sum()),
            }
        )
    return {"tables": views}


SECTION = Section(
    key="ladder",
    title="Question ladder (procedural scenes)",
    toc="Question ladder",
    compute=_compute,
    rows=ladder_rows,
    document=_document,
    view=_view,
    empty=lambda tables: tables.empty,
    exports={"ladder": lambda part: part["ladder"]},
)
