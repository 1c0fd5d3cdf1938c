"""Explicit − implicit gain: does naming the feature in the prompt help an image model?

AMVICC's instruction-following contrast, per image model and category: I Ex − I Im and
P Ex − P Im on the same questions, with a paired interval, McNemar's p (Holm across
categories) and the pairs gained and lost (:func:`amvicc.report.comparisons.explicit_gains`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.codes import remembered
from amvicc.report.comparisons import comparison_rows, explicit_gains, pair_gains
from amvicc.report.metrics import ALL
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import DASH, number, p_value, records, signed


@dataclass(frozen=True, eq=False)
class Gains:
    """The gains per model and category (``table``) and per model and pair (``pairs``)."""

    table: pd.DataFrame
    pairs: pd.DataFrame


def _compute(part: Part) -> Gains | None:
    if part.outcomes is None:
        return None
    return Gains(explicit_gains(part.outcomes, part.resampler), pair_gains(part.outcomes))


def _category_name(code: str) -> str:
    return "all categories" if code == ALL else CATEGORY_BY_CODE[code].name


def _view(data: Gains, page: Page) -> dict[str, Any]:
    """Per image model: the overall gains, and per category one row of texts."""
    models: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for row in records(data.table):
        model = models.setdefault(
            row["model"], {"model": row["model"], "smoke": False, "overall": None, "categories": []}
        )
        model["smoke"] = model["smoke"] or bool(row["smoke"])
        key = (row["model"], row["category"])
        if key not in cells:
            cells[key] = {
                "category": row["category"],
                "name": _category_name(row["category"]),
                "individual": None,
                "pair": None,
            }
            if row["category"] == ALL:
                model["overall"] = cells[key]
            else:
                model["categories"].append(cells[key])
        cells[key]["individual" if row["metric"] == "individual_gain" else "pair"] = row
    texts = _Texts()
    for model in models.values():
        model["name"] = page.name(model["model"], model["smoke"])
        model["categories"] = [texts.category(cell) for cell in model["categories"]]
    return {"models": list(models.values())}


class _Texts:
    """A per-category row as the page writes it, each distinct number formatted once."""

    def __init__(self) -> None:
        self.number = remembered(number)
        self.signed = remembered(signed)
        self.p_value = remembered(p_value)

    def interval(self, row: dict[str, Any]) -> str:
        """``[low, high]``, or – without an interval (the ``ci`` macro's text)."""
        low, high = row["ci_low"], row["ci_high"]
        if low is None or high is None:
            return DASH
        return f"[{self.number(low)}, {self.number(high)}]"

    def category(self, cell: dict[str, Any]) -> tuple[Any, ...]:
        """Category, then per metric: before → after, gain, interval, p (Holm), then pairs."""
        out: list[Any] = [cell["category"], cell["name"]]
        for metric in (cell["individual"], cell["pair"]):
            out += [
                self.number(metric["versus_value"]),
                self.number(metric["value"]),
                self.signed(metric["difference"]),
                self.interval(metric),
                self.p_value(metric["p_holm"]),
            ]
        return (*out, cell["pair"]["model_only"], cell["pair"]["versus_only"])


SECTION = Section(
    key="gains",
    title="Explicit − implicit gain",
    compute=_compute,
    rows=lambda data: comparison_rows(data.table, "", versus=False),
    document=lambda data: {
        "analyses": {
            "explicit_implicit_gains": records(data.table),
            "explicit_implicit_pairs": records(data.pairs),
        }
    },
    view=_view,
    empty=lambda data: data.table.empty,
    exports={
        "analyses.gains": lambda part: None if part["gains"] is None else part["gains"].table,
        "analyses.pair_gains": lambda part: None if part["gains"] is None else part["gains"].pairs,
    },
    apart=True,
)
