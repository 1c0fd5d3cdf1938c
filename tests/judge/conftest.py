"""Fixture generation runs for the judge tests."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable

from PIL import Image, ImageDraw, ImageFont

from amvicc.catalogue import Catalogue, PromptKind
from amvicc.store import ImageRecord, RunSpec, Store, new_id
from amvicc.testing.mmvp_images import image_bytes


def text_png(text: str) -> bytes:
    image = Image.new("RGB", (640, 200), "white")
    ImageDraw.Draw(image).text((40, 60), text, fill="black", font=ImageFont.load_default(size=64))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def add_generation(
    store: Store,
    catalogue: Catalogue,
    slots: Iterable[tuple[int, PromptKind]],
    *,
    model: str = "fixture-igm",
    draw: Callable[[int, PromptKind], bytes] = lambda index, kind: image_bytes(index),
) -> tuple[str, dict[tuple[int, str], str]]:
    """A generation run with one image per (index, kind); returns the run id and image ids."""
    run = store.start_run(
        RunSpec(
            stage="generate",
            model=model,
            outputs={"fixture": model},
            catalogue_sha256=catalogue.sha256,
        )
    )
    prompts = {(p.question.index, p.kind): p for p in catalogue.prompts()}
    ids = {}
    for index, kind in slots:
        record = ImageRecord(
            image_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=index,
            prompt_kind=kind,
            sample=0,
            prompt=prompts[(index, kind)].text,
            seed=index,
            status="ok",
        )
        store.add_image(record, draw(index, kind))
        ids[(index, kind)] = record.image_id
    store.finish_run(run.run_id, "finished")
    return run.run_id, ids
