"""Questions × models: every item's outcome, for every model of both modalities.

One row per model (image models' explicit images, then VLMs' answers; each model's first
sample), one column per question in AMVICC's category order, the categories in labelled bands:
a model's blind spots and the questions every model fails show as vertical red stripes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.outcomes import ABSENT, Outcomes
from amvicc.report.pixels import cell_strip
from amvicc.report.section import Page, Part, Section

# Palette indices: 0 white (outside the model's scope, and the gaps), then missing, wrong, right.
PALETTE = [(255, 255, 255), (189, 189, 189), (216, 67, 21), (67, 160, 71)]


def _compute(part: Part) -> Outcomes | None:
    return part.outcomes


def _layout(outcomes: Outcomes) -> tuple[pd.DataFrame, np.ndarray[Any, Any]]:
    """The models drawn (image models' explicit column, then VLMs') and their codes."""
    columns = outcomes.columns
    chosen = pd.concat(
        [
            columns[(columns["modality"] == "igm") & (columns["kind"] == "explicit")],
            columns[(columns["modality"] == "vlm") & (columns["kind"] == "answer")],
        ]
    )
    codes = outcomes.codes[chosen.index.to_numpy()].reshape(len(chosen), -1)
    return chosen, codes


def _view(outcomes: Outcomes, page: Page) -> dict[str, Any]:
    chosen, codes = _layout(outcomes)
    if not len(chosen) or not page.html:
        return {"strip": None, "labels": [], "count": len(chosen)}
    keep = ~(codes == ABSENT).all(axis=0)  # questions outside every model's scope leave
    categories = np.repeat(outcomes.pairs["category"].to_numpy(dtype=object), 2)[keep]
    codes = codes[:, keep]
    groups = []
    for code in dict.fromkeys(categories):
        name = CATEGORY_BY_CODE[code].name
        count = int((categories == code).sum())
        groups.append((f"{code} · {name}", f"{code} · {name}: {count} questions", count))
    strip = cell_strip(np.clip(codes + 2, 0, 3), groups, PALETTE)
    labels = [
        page.name(str(label), bool(smoke))
        for label, smoke in zip(chosen["label"], chosen["smoke"], strict=True)
    ]
    return {"strip": strip, "labels": labels, "count": len(chosen)}


SECTION = Section(
    key="item-heatmap",
    title="Questions × models",
    compute=_compute,
    view=_view,
    empty=lambda outcomes: outcomes.columns.empty,
)
