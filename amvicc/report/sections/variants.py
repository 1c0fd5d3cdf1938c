"""Prompt variants: a model's images from reworded prompts against its baseline.

AMVICC's wording ablation: a variant (imported with ``--variant``) is an entry of its own,
compared item by item with the same model's images from the catalogue's prompts
(:func:`amvicc.report.comparisons.variant_comparisons`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amvicc.report.comparisons import comparison_rows, variant_comparisons
from amvicc.report.metrics import SHORT_NAMES
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records


def _compute(part: Part) -> pd.DataFrame | None:
    if part.outcomes is None:
        return None
    return variant_comparisons(part.outcomes, part.resampler)


def _view(variants: pd.DataFrame, page: Page) -> dict[str, Any]:
    return {
        "rows": [
            {**row, "short": SHORT_NAMES.get(row["metric"], row["metric"])}
            for row in records(variants)
        ]
    }


SECTION = Section(
    key="ablations",
    title="Ablations: prompt variants",
    toc="Prompt variants",
    compute=_compute,
    rows=lambda table: comparison_rows(table, "_difference", versus=True),
    document=lambda table: {"analyses": {"prompt_variants": records(table)}},
    view=_view,
    exports={"analyses.variants": lambda part: part["ablations"]},
)
