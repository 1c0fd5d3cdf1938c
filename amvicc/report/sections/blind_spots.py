"""Shared blind spots: the pairs every pooled model of both modalities fails.

All of them are in the JSON; the page shows the first ones with each model's explicit images
and replies one click away (:func:`amvicc.report.crossmodal.blind_spot_evidence`).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import pandas as pd

from amvicc.report.crossmodal import BlindSpot, blind_spot_evidence, blind_spots
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records

# Shared blind spots shown with their images and replies in the HTML (all are in the JSON).
SHOWN = 30


class BlindSpots:
    """The blind-spot pairs, and (read on first use) the evidence of the first ones."""

    def __init__(self, table: pd.DataFrame, part: Part) -> None:
        """Keep the table; the images and replies are read only when a page shows them."""
        self.table = table
        self._part = part

    @cached_property
    def evidence(self) -> tuple[BlindSpot, ...]:
        """The first :data:`SHOWN` blind spots with each pooled model's images or replies."""
        part = self._part
        if part.plain_items is None:
            return ()
        return tuple(blind_spot_evidence(part.store, part.plain_items, self.table, limit=SHOWN))


def _compute(part: Part) -> BlindSpots | None:
    if part.outcomes is None:
        return None
    return BlindSpots(blind_spots(part.outcomes), part)


def _view(data: BlindSpots, page: Page) -> dict[str, Any]:
    table = data.table
    return {
        "spots": data.evidence,
        "count": len(table),
        "models": (
            (list(table["igms"].iloc[0]), list(table["vlms"].iloc[0]))
            if not table.empty
            else ([], [])
        ),
        "both": page.part["concordance"] is not None and not page.part["concordance"].empty,
    }


SECTION = Section(
    key="blind-spots",
    title="Shared blind spots",
    compute=_compute,
    document=lambda data: {"analyses": {"shared_blind_spots": records(data.table)}},
    view=_view,
    empty=lambda data: data.table.empty,
    exports={
        "blind_spots": lambda part: (
            () if part["blind-spots"] is None else part["blind-spots"].evidence
        ),
        "analyses.blind_spots": lambda part: (
            None if part["blind-spots"] is None else part["blind-spots"].table
        ),
    },
)
