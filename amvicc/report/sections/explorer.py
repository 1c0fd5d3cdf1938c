"""Pair explorer: browse every pair with what each model made of it, offline, in the page.

Filters for category, model and outcome run in the reader's browser on data embedded in the
page (:mod:`amvicc.report.explorer`); each pair shown is an element with ``data-category``.
HTML only: the Markdown says where to find it.
"""

from __future__ import annotations

from typing import Any

from amvicc.report.explorer import ExplorerData, explorer_data
from amvicc.report.section import Page, Part, Section

# The outcome filter's choices: (value, label, the modalities it needs).
OUTCOMES = (
    ("both-fail", "both modalities fail", ("igm", "vlm")),
    ("vlm-only", "only the VLMs pass (image models fail)", ("igm", "vlm")),
    ("igm-only", "only the image models pass (VLMs fail)", ("igm", "vlm")),
    ("both-pass", "both modalities pass", ("igm", "vlm")),
    ("vlm-fail", "VLMs fail", ("vlm",)),
    ("igm-fail", "image models fail", ("igm",)),
)


def _compute(part: Part) -> ExplorerData | None:
    if part.plain_items is None or part.outcomes is None:
        return None
    store = part.store
    return explorer_data(
        store,
        part.plain_items,
        part.outcomes,
        lambda: part.shared_read("image_paths"),
    )


def _view(data: ExplorerData, page: Page) -> dict[str, Any]:
    return {
        "json": data.text if page.html else "",
        "categories": data.categories,
        "models": data.models,
        "outcomes": [
            (value, label) for value, label, needs in OUTCOMES if set(needs) <= set(data.modalities)
        ],
        "pairs": data.pairs,
        "thumbnails": data.thumbnails,
    }


SECTION = Section(
    key="explorer",
    title="Pair explorer",
    compute=_compute,
    view=_view,
    empty=lambda data: data.pairs == 0,
    opens=True,
    apart=True,
)
