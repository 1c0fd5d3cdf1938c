"""Shared failure modes: per category, the models of each modality that fail there.

Categories where both modalities fail are AMVICC's cross-modal finding. Only the models of one
part are pooled here: a smoke-test model never counts as a failing model beside real ones.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.metrics import plain, shared_failure_modes
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    if part.metrics is None:
        return None
    metrics = plain(part.metrics)
    return shared_failure_modes(metrics, part["failure-modes"], part.categories)


def _view(shared: pd.DataFrame, page: Page) -> dict[str, Any]:
    smoke = {e.label: e.smoke for e in page.part.entries}
    return {
        "rows": [
            {
                **row,
                "name": CATEGORY_BY_CODE[row["category"]].name,
                "igm": ", ".join(page.name(x, smoke.get(x, False)) for x in row["igm_failing"]),
                "vlm": ", ".join(page.name(x, smoke.get(x, False)) for x in row["vlm_failing"]),
            }
            for row in records(shared)
        ]
    }


SECTION = Section(
    key="shared-failure-modes",
    title="Shared failure modes",
    compute=_compute,
    document=lambda shared: {"shared_failure_modes": records(shared)},
    view=_view,
    exports={"shared": lambda part: part["shared-failure-modes"]},
)
