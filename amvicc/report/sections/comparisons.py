"""Paired comparisons: every two models of a modality on the same items.

Per metric and category: the difference in accuracy with a paired bootstrap interval and
McNemar's exact p on the discordant items, Holm-adjusted across categories
(:mod:`amvicc.report.comparisons`). Every row is in the CSV and JSON; the page shows the overall
differences as a models × models matrix: numbers up to ten models, colours beyond.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from amvicc.report.codes import remembered
from amvicc.report.comparisons import comparison_rows, model_comparisons
from amvicc.report.metrics import ALL, METRIC_ORDER, SHORT_NAMES
from amvicc.report.section import Page, Part, Section
from amvicc.report.tables import diverging
from amvicc.report.values import number, p_value, records, signed

# Matrices are number tables up to this many models, colour grids beyond.
MATRIX_TABLE_MODELS = 10
# The metrics drawn as colour grids: the explicit prompts (the cross-modal contrast), the VLMs'.
GRID_METRICS = ("individual_explicit", "pair_explicit", "individual", "pair")


def _compute(part: Part) -> pd.DataFrame | None:
    if part.outcomes is None:
        return None
    return model_comparisons(part.outcomes, part.resampler)


class _Cell(NamedTuple):
    """One cell of a matrix (a tuple: the page reads its fields as attributes, quickly)."""

    difference: float | None
    text: str
    colour: str
    title: str
    significant: bool


def _cells(rows: pd.DataFrame) -> dict[tuple[str, str], _Cell]:
    """Both directions of each comparison: row − column and its mirror."""
    show_signed, show_number, show_p, colour = (
        remembered(signed),
        remembered(number),
        remembered(p_value),
        remembered(diverging),
    )
    columns = {
        name: [None if v != v else v for v in rows[name].to_numpy(dtype="float64").tolist()]
        for name in ("difference", "ci_low", "ci_high", "p_value")
    }
    cells: dict[tuple[str, str], _Cell] = {}
    for model, versus, difference, ci_low, ci_high, p, units, missing in zip(
        rows["model"].tolist(),
        rows["versus"].tolist(),
        columns["difference"],
        columns["ci_low"],
        columns["ci_high"],
        columns["p_value"],
        rows["units"].tolist(),
        rows["missing"].tolist(),
        strict=True,
    ):
        significant = p is not None and p < 0.05
        tail = f" · McNemar p {show_p(p)} · {units} compared, {missing} with a missing item"
        for first, second, sign in ((model, versus, 1), (versus, model, -1)):
            low, high = ci_low, ci_high
            if sign < 0 and low is not None and high is not None:
                low, high = -high, -low
            shown = None if difference is None else sign * difference
            text = show_signed(shown)
            cells[(first, second)] = _Cell(
                difference=shown,
                text=text + ("*" if significant else ""),
                colour=colour(shown),
                title=f"{first} − {second}: {text} [{show_number(low)}, {show_number(high)}]"
                + tail,
                significant=significant,
            )
    return cells


def _matrices(comparisons: pd.DataFrame, page: Page) -> list[dict[str, Any]]:
    """Per metric, the models × models matrix of overall differences."""
    smoke = {e.label: e.smoke for e in page.part.entries}
    overall = comparisons[comparisons["category"] == ALL]
    out = []
    for metric in METRIC_ORDER:
        rows = overall[overall["metric"] == metric]
        if rows.empty:
            continue
        labels = list(dict.fromkeys([*rows["model"], *rows["versus"]]))
        grid = len(labels) > MATRIX_TABLE_MODELS
        if grid and metric not in GRID_METRICS:
            continue
        cells = _cells(rows)
        names = [page.name(label, smoke.get(label, False)) for label in labels]
        out.append(
            {
                "metric": metric,
                "short": SHORT_NAMES[metric],
                "grid": grid,
                "labels": names,
                "rows": [
                    (name, [cells.get((label, other)) for other in labels])
                    for label, name in zip(labels, names, strict=True)
                ],
            }
        )
    return out


def _view(comparisons: pd.DataFrame, page: Page) -> dict[str, Any]:
    return {"matrices": _matrices(comparisons, page), "count": int(comparisons.shape[0])}


SECTION = Section(
    key="comparisons",
    title="Paired comparisons between models",
    toc="Paired comparisons",
    compute=_compute,
    rows=lambda table: comparison_rows(table, "_difference", versus=False),
    document=lambda table: {"analyses": {"comparisons": records(table)}},
    view=_view,
    exports={"analyses.comparisons": lambda part: part["comparisons"]},
    apart=True,
)
