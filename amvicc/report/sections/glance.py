"""At a glance: AMVICC's answer on the first screen.

Per modality, a model × category matrix of individual and pair accuracy (for image models, one
line per prompt kind), failure modes marked by colour and by a symbol (never colour alone);
then the cross-modal line: the categories where both modalities fail and, when both have
items, the item-level concordance of their pair outcomes. Everything else is one click away
in the table of contents.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.codes import derived
from amvicc.report.metrics import ALL, SHORT_NAMES, plain
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import (
    MODALITY_TITLES,
    SMOKE_TITLES,
    failing,
    first_rows,
    interval,
    unused,
)
from amvicc.report.values import missing, number, p_value, percent, records

#: The symbol that marks a failure mode wherever colour marks it too.
FAIL_MARK = "▼"
# Per modality: (line name, individual metric, pair metric).
LINES = {
    "igm": (
        ("Im", "individual_implicit", "pair_implicit"),
        ("Ex", "individual_explicit", "pair_explicit"),
    ),
    "vlm": (("", "individual", "pair"),),
}


def _compute(part: Part) -> pd.DataFrame | None:
    return part.metrics


def _number(cells: dict[tuple[str, str, str], dict[str, Any]], key: tuple[str, str, str],
            page: Page) -> dict[str, Any]:  # fmt: skip
    _, metric, category = key
    cell = cells.get(key)
    if cell is None:
        return {"text": "–", "failing": False, "title": ""}
    bad = failing(cell["value"], cell["total"], metric, category, page.options)
    title = [
        f"{SHORT_NAMES[metric]} {number(cell['value'])}",
        f"{int(cell['correct'])}/{int(cell['total'])}",
        interval(cell["ci_low"], cell["ci_high"], page.level),
        f"{int(cell['missing'])} missing" if cell["missing"] else "",
        "failure mode" if bad else "",
    ]
    return {
        "text": number(cell["value"], 2),
        "failing": bad,
        "title": " · ".join(t for t in title if t),
    }


def _matrix(metrics: pd.DataFrame, modality: str, page: Page) -> dict[str, Any] | None:
    mine = metrics[metrics["modality"] == modality]
    if mine.empty:
        return None
    columns = [*page.part.categories, ALL]
    found = records(mine, drop=unused(mine))
    cells = {(r["entry"], r["metric"], r["category"]): r for r in found}
    rows = []
    for entry, first in first_rows(found).items():
        for index, (line, individual, pair) in enumerate(LINES[modality]):
            rows.append(
                {
                    "name": page.name(str(first["label"]), bool(first["smoke"])),
                    "first": index == 0,
                    "span": len(LINES[modality]),
                    "line": line,
                    "cells": [
                        (
                            _number(cells, (entry, individual, c), page),
                            _number(cells, (entry, pair, c), page),
                        )
                        for c in columns
                    ],
                }
            )
    return {
        "modality": modality,
        "title": (SMOKE_TITLES if page.smoke else MODALITY_TITLES)[modality],
        "columns": [
            (c, CATEGORY_BY_CODE[c].name if c in CATEGORY_BY_CODE else "all categories")
            for c in columns
        ],
        "rows": rows,
        "lines": len(LINES[modality]) > 1,
    }


def _crossmodal(page: Page) -> dict[str, Any]:
    """The categories both modalities fail, and the pooled concordance over all pairs."""
    shared = page.part["shared-failure-modes"]
    both = [] if shared is None else [c for c in shared.itertuples() if c.cross_modal]
    concordance = page.part["concordance"]
    headline = None
    if concordance is not None and not concordance.empty:
        pooled = concordance[(concordance["scope"] == "pooled") & (concordance["category"] == ALL)]
        if not pooled.empty:
            row = pooled.iloc[0]
            headline = {
                "title": f"{row['vlm']} × {row['igm']}",
                "pairs": int(row["pairs"]),
                "both_fail": int(row["both_fail"]),
                "agreement": percent(row["agreement"]),
                "kappa": number(row["kappa"]),
                "kappa_ci": ""
                if missing(row["kappa_low"])
                else f"[{number(row['kappa_low'])}, {number(row['kappa_high'])}]",
                "odds_ratio": number(row["odds_ratio"], 2),
                "fisher_p": p_value(row["fisher_p"]),
            }
    return {
        "both": [(c.category, CATEGORY_BY_CODE[c.category].name) for c in both],
        "modalities": {
            m for m in ("igm", "vlm") if any(e.modality == m for e in page.part.entries)
        },
        "concordance": headline,
    }


def _view(metrics: pd.DataFrame, page: Page) -> dict[str, Any]:
    # Made once: a page rendered while the second process computes the concordance asks
    # again once it is here (the cross-modal line needs it), and the matrices are ready.
    matrices = derived(
        metrics, f"glance matrices, html {page.html}", lambda: _matrices(metrics, page)
    )
    return {"matrices": matrices, "crossmodal": _crossmodal(page), "mark": FAIL_MARK}


def _matrices(metrics: pd.DataFrame, page: Page) -> list[dict[str, Any]]:
    plain_metrics = plain(metrics)
    matrices = [_matrix(plain_metrics, m, page) for m in ("igm", "vlm")]
    return [m for m in matrices if m is not None]


SECTION = Section(
    key="glance",
    title="At a glance",
    compute=_compute,
    view=_view,
    folds=False,
)
