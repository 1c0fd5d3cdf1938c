"""Cross-modal chart: the mean accuracy per category of the VLMs beside the image models'.

Drawn as bars in HTML (no figure to render), with chance marked; the means are over the
part's models only, so smoke-test models never move a real model's mean.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.metrics import ALL, chance, plain
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import missing, number

# (modality, metric, legend), individual then pair.
SERIES = (
    ("vlm", "individual", "VLM I"),
    ("igm", "individual_implicit", "IGM I Im"),
    ("igm", "individual_explicit", "IGM I Ex"),
    ("vlm", "pair", "VLM P"),
    ("igm", "pair_implicit", "IGM P Im"),
    ("igm", "pair_explicit", "IGM P Ex"),
)


def _compute(part: Part) -> pd.DataFrame | None:
    if part.metrics is None:
        return None
    metrics = plain(part.metrics)
    return metrics[metrics["category"] != ALL]


def _view(metrics: pd.DataFrame, page: Page) -> dict[str, Any]:
    means = metrics.groupby(["metric", "category"])["value"].mean()
    present = [s for s in SERIES if s[1] in set(metrics["metric"])]
    counts = {
        modality: int(metrics.loc[metrics["modality"] == modality, "entry"].nunique())
        for modality in ("igm", "vlm")
    }
    groups = []
    for pair in (False, True):
        series = [s for s in present if s[1].startswith("pair") == pair]
        if not series:
            continue
        rows = []
        for category in page.part.categories:
            bars = []
            for _, metric, legend in series:
                value = means.get((metric, category))
                bars.append(
                    {
                        "legend": legend,
                        "text": number(value, 2),
                        "width": 0.0 if value is None or missing(value) else 100 * float(value),
                        "kind": legend.replace(" ", "-").lower(),
                    }
                )
            rows.append((category, CATEGORY_BY_CODE[category].name, bars))
        groups.append(
            {
                "title": "Pair accuracy" if pair else "Individual accuracy",
                "chance": 100 * chance("pair" if pair else "individual"),
                "legends": [s[2] for s in series],
                "rows": rows,
            }
        )
    return {
        "groups": groups,
        "caption": " and ".join(
            f"{n} {modality.upper()}{'s' if n != 1 else ''}" for modality, n in counts.items() if n
        ),
    }


SECTION = Section(key="cross-modal", title="Cross-modal chart", compute=_compute, view=_view)
