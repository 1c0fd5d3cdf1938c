"""Failure gallery: failing images and answers to look at, per model.

Up to ``--gallery`` items per model, spread over the categories: an image as a thumbnail with
its prompt and every verdict, an answer with its question, the option chosen and the raw reply
(:mod:`amvicc.report.gallery`). HTML and Markdown only.
"""

from __future__ import annotations

from typing import Any

from amvicc.report.gallery import GalleryItem, failing_examples
from amvicc.report.section import Page, Part, Section


def _compute(part: Part) -> tuple[GalleryItem, ...] | None:
    if part.plain_items is None:
        return None
    return tuple(failing_examples(part.store, part.plain_items, part.options.gallery))


def _view(gallery: tuple[GalleryItem, ...], page: Page) -> dict[str, Any]:
    models: dict[str, dict[str, Any]] = {}
    for item in gallery:
        model = models.setdefault(
            item.label,
            {"name": page.name(item.label, item.smoke), "modality": item.modality, "items": []},
        )
        model["items"].append(item)
    return {"models": list(models.values())}


SECTION = Section(
    key="gallery",
    title="Failure gallery",
    compute=_compute,
    view=_view,
    exports={"gallery": lambda part: part["gallery"] or ()},
    apart=True,
)
