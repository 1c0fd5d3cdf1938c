"""Agreement between human raters: percent agreement, Cohen's κ and Fleiss' κ per model.

Raters of the same items, per model (:func:`amvicc.report.raters.rater_agreement`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.report.raters import rater_agreement
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    return None if part.plain_items is None else rater_agreement(part.plain_items)


def _view(table: pd.DataFrame, page: Page) -> dict[str, Any]:
    return {"rows": page.labelled(table)}


SECTION = Section(
    key="agreement",
    title="Agreement between human raters",
    toc="Rater agreement",
    apart=True,
    compute=_compute,
    document=lambda table: {"agreement": records(table)},
    view=_view,
    exports={"agreement": lambda part: part["agreement"]},
)
