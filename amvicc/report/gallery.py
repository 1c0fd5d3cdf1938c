"""Failure galleries: the failing images and answers a reader should look at.

Per model, a few items judged wrong, spread across categories (one per category in turn), with
what a reviewer needs beside them: the image as a small embedded thumbnail with its prompt and
every verdict, or the VLM's raw reply with the question and the option it chose.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import OptionLabel, Question
from amvicc.report.items import Items, category_sort_key
from amvicc.report.subjects import Encoded, encode
from amvicc.store import Store

THUMBNAIL_PIXELS = 224
RESPONSE_CHARACTERS = 1200


@dataclass(frozen=True)
class GalleryItem:
    """One failing image or answer, ready to show.

    Attributes:
        label: the model as the report names it.
        modality: ``igm`` or ``vlm``.
        kind: ``implicit``, ``explicit`` or ``answer``.
        question: the MMVP question, options and answer of the item.
        prompt: the image prompt (images) or the prompt sent to the VLM (answers).
        shows: for explicit images, the option the image had to show.
        thumbnail: a ``data:`` URI of a small JPEG, None when no readable file exists.
        note: why there is no thumbnail.
        verdicts: ``source: value (comment)`` for every verdict on the item.
        response: the VLM's raw reply (cut to a readable length).
        chosen: the option the graders read in the reply.
    """

    label: str
    modality: str
    smoke: bool
    category: str
    question_index: int
    kind: str
    sample: int
    question: str
    options: str
    answer: str
    prompt: str
    shows: str | None
    thumbnail: str | None
    note: str | None
    verdicts: tuple[str, ...]
    response: str | None
    chosen: str | None


def failing_examples(store: Store, items: Items, per_model: int) -> list[GalleryItem]:
    """Up to ``per_model`` failing items per model, round-robin over categories."""
    chosen = _choose(items, per_model)
    if chosen.empty:
        return []
    smoke = {e.key: e.smoke for e in items.entries}
    images = store.images_by_id(_subjects(chosen, "igm"))
    responses = store.responses_by_id(_subjects(chosen, "vlm"))
    verdicts = _verdict_lines(store, [str(s) for s in chosen["subject_id"] if s])
    out: list[GalleryItem] = []
    for row in chosen.to_dict(orient="records"):
        question = items.catalogue.question(int(row["question_index"]))
        subject = str(row["subject_id"])
        image = row["modality"] == "igm"
        shows: str | None = None
        thumbnail = note = response = chosen_option = None
        if image:
            stored_image = images.get(subject)
            prompt = stored_image.prompt if stored_image else ""
            thumbnail, note = embedded_image(store, stored_image.path if stored_image else None)
            if row["kind"] == "explicit" and question.explicit_answer:
                shows = _option(question, question.explicit_answer)
        else:
            stored_response = responses.get(subject)
            prompt = stored_response.prompt if stored_response else ""
            response = cut(stored_response.text if stored_response else None)
            value = row["value"] if isinstance(row["value"], str) else None
            chosen_option = _option(question, value) if value in ("a", "b") else value
        out.append(
            GalleryItem(
                label=str(row["label"]),
                modality=str(row["modality"]),
                smoke=smoke[str(row["entry"])],
                category=question.category.code,
                question_index=question.index,
                kind=str(row["kind"]),
                sample=int(row["sample"]),
                question=question.text,
                options=question.options_text,
                answer=_option(question, question.answer),
                prompt=str(prompt),
                shows=shows,
                thumbnail=thumbnail,
                note=note,
                verdicts=tuple(verdicts.get(subject, ())),
                response=response,
                chosen=chosen_option,
            )
        )
    return out


def _choose(items: Items, per_model: int) -> pd.DataFrame:
    """The failing items shown: up to ``per_model`` per model, round-robin over categories.

    Per model, sorted by category (AMVICC's order), question, kind and sample, each category's
    first, then each one's second, ... (the ``turn``); the models in the report's order. Sorted
    on integer codes of the failing rows only, and the frame's rows taken once at the end.
    """
    f = items.frame
    wrong = np.flatnonzero((f["outcome"] == "incorrect").to_numpy(dtype=bool, na_value=False))
    if not len(wrong) or per_model <= 0:
        return f.iloc[:0]

    def column(name: str) -> Encoded:
        return encode(f[name].iloc[wrong])

    entries = column("entry")
    entry = entries.ranks()
    categories = column("category")
    category_order = category_sort_key(pd.Series(categories.names(), dtype=object)).to_numpy()
    category = category_order[categories.codes]
    category_codes = categories.codes
    question = f["question_index"].to_numpy()[wrong]
    kind = column("kind").ranks()
    sample = f["sample"].to_numpy()[wrong]
    # np.lexsort: stable, the last key first (as pandas' sort on several columns).
    order = np.lexsort((sample, kind, question, category, entry))
    turn = np.empty(len(order), dtype="int64")
    turn[order] = _cumcount(entry[order] * len(categories) + category_codes[order])
    order = order[np.lexsort((question[order], category[order], turn[order]))]
    kept = order[_cumcount(entry[order]) < per_model]
    position = {e.key: i for i, e in enumerate(items.entries)}
    names = entries.names()
    model = np.array([position[names[k]] for k in entries.codes[kept].tolist()])
    kept = kept[np.lexsort((sample[kept], kind[kept], question[kept], category[kept], model))]
    return f.iloc[wrong[kept]]


def _cumcount(groups: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each element's number among the earlier elements of its group (0, 1, ...)."""
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    steps = np.arange(len(order))
    starts = np.where(np.r_[True, ordered[1:] != ordered[:-1]], steps, 0)
    counts = np.empty(len(order), dtype="int64")
    counts[order] = steps - np.maximum.accumulate(starts)
    return counts


def _option(question: Question, label: OptionLabel | str | None) -> str:
    if label not in ("a", "b"):
        return str(label)
    return f"({label}) {question.option('a' if label == 'a' else 'b').text}"


def _subjects(chosen: pd.DataFrame, modality: str) -> list[str]:
    return [str(s) for s in chosen.loc[chosen["modality"] == modality, "subject_id"] if s]


def _verdict_lines(store: Store, subjects: list[str]) -> dict[str, list[str]]:
    """``source: value (comment)`` of each source's latest verdict on each subject."""
    lines: dict[str, list[str]] = {}
    for verdict in store.latest_verdicts_on(subjects):
        note = f" ({verdict.comment})" if verdict.comment else ""
        subject = verdict.image_id or verdict.response_id or ""
        lines.setdefault(subject, []).append(f"{verdict.source}: {verdict.value}{note}")
    return lines


def embedded_image(
    store: Store, path: object, pixels: int = THUMBNAIL_PIXELS, quality: int = 80
) -> tuple[str | None, str | None]:
    """A small JPEG of the image as a data URI, or why there is none.

    Args:
        store: the workspace.
        path: the image's file, relative to the workspace.
        pixels: the thumbnail's longer side.
        quality: its JPEG quality.
    """
    if not isinstance(path, str) or not path:
        return None, "no image file in the workspace (e.g. graded elsewhere)"
    file = store.path(path)
    if not file.is_file():
        return None, f"image file {path} is missing from the workspace"
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(file) as image:
            image.draft("RGB", (2 * pixels, 2 * pixels))  # a JPEG decodes at a smaller scale
            image.thumbnail((pixels, pixels))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    except (OSError, UnidentifiedImageError, ValueError):
        return None, f"image file {path} cannot be read"
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode(), None


def cut(text: object, limit: int = RESPONSE_CHARACTERS) -> str | None:
    """A reply cut to ``limit`` characters, saying how many more there were (None: no text)."""
    if not isinstance(text, str):
        return None
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters]"
