"""The pair explorer's data: every pair, with what each model made of it, for an offline browser.

The HTML report's explorer (section ``explorer``) shows one MMVP pair at a time: its two
questions with the benchmark's (or a scene set's) images when the workspace has copies of
them, every VLM's reply and the option read from it, and each image model's implicit and
explicit images with every human and judge verdict. It filters by category, model and outcome
(both modalities fail, only the VLMs pass, only the image models pass, both pass) in the
reader's browser, without a server: the data are one JSON document embedded in the page,
written compactly (models, verdict sources and thumbnails by number) so that fifty models stay
a few megabytes, and thumbnails small (:data:`THUMBNAIL_PIXELS`) so that three image models ×
600 images stay well under 15 MB.

Each model contributes its first sample (as in the other item-level sections); a pair's
outcome on each side is the pooled one of :mod:`amvicc.report.crossmodal` (a modality passes a
pair when more than half of its models do), or one model's when the reader picks one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.gallery import cut, embedded_image
from amvicc.report.items import Items
from amvicc.report.outcomes import Outcomes, considered
from amvicc.report.subjects import subject_codes
from amvicc.store import Store

THUMBNAIL_PIXELS = 96
THUMBNAIL_QUALITY = 70
REPLY_CHARACTERS = 600
# One letter per outcome in the page's data.
OUTCOME_CODES = {"correct": "c", "incorrect": "w", "missing": "m"}


@dataclass(frozen=True, eq=False)
class ExplorerData:
    """The explorer's document, written, and what it holds.

    The document is kept as its JSON text: a report's second process sends it to the first
    as one string, where the nested lists took a tenth of a second to unpickle.

    Attributes:
        text: the JSON the page's script reads (see :func:`explorer_data`), safe inside a
            ``<script>`` element (no ``<``, ``>``, ``&``).
        categories: the document's ``categories`` ([code, name]).
        models: the document's ``models`` ([label, modality]).
        pairs: how many pairs it holds.
        thumbnails: how many distinct images it embeds.
        modalities: the modalities present (``igm``, ``vlm``).
    """

    text: str
    categories: list[list[str]]
    models: list[list[str]]
    pairs: int
    thumbnails: int
    modalities: tuple[str, ...]


def _script_safe(document: dict[str, Any]) -> str:
    """A document as JSON safe inside a ``<script>`` element (no ``<``, ``>``, ``&``)."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def explorer_data(
    store: Store,
    items: Items,
    outcomes: Outcomes,
    read_paths: Callable[[], Mapping[str, str]] | None = None,
) -> ExplorerData:
    """Lay out every pair of the part with each model's items (first sample).

    The document: ``categories`` ([code, name]), ``models`` ([label, modality]), ``sources``
    (verdict sources), ``thumbs`` (``data:`` URIs), and ``pairs``: per pair ``p`` (its number),
    ``c`` (category), ``v`` / ``i`` (the pooled VLM / image-model pair outcome: 1 pass, 0 fail,
    null none), ``q`` (its questions: [index, text, options, answer, thumb or -1]) and ``m``
    (per model: [model, pair outcome, cells]); a VLM's cells are per question [outcome,
    option read, reply], an image model's per question and prompt kind [kind, outcome, thumb,
    verdicts as ``source:value`` numbers].

    ``read_paths``: every stored image's file by id (:meth:`Store.stored_image_paths`), when
    the caller shares one read of it.
    """
    first = items.frame["sample"].to_numpy() == 0
    labels = list(dict.fromkeys(e.label for e in items.entries))
    modality = {e.label: e.modality for e in items.entries}
    passes = _model_passes(outcomes)
    pooled = {m: _pooled(outcomes, m) for m in ("vlm", "igm")}
    thumbs = _Thumbnails(store)
    inputs = _input_images(
        store, items.frame.loc[first, ["modality", "subject_id", "question_index"]], thumbs
    )
    sources, verdicts = _verdicts(items, first)
    cells = _cells(store, items, first, thumbs, verdicts, read_paths or store.stored_image_paths)
    pairs = []
    for position, (number, category, first_index, second_index) in enumerate(
        zip(
            outcomes.pairs["pair"].tolist(),
            outcomes.pairs["category"].tolist(),
            outcomes.pairs["first"].tolist(),
            outcomes.pairs["second"].tolist(),
            strict=True,
        )
    ):
        questions: list[list[Any]] = []
        for index in (first_index, second_index):
            question = items.catalogue.question(index)
            questions.append(
                [
                    index,
                    question.text,
                    question.options_text,
                    question.answer,
                    inputs.get(index, -1),
                ]
            )
        models = []
        first_cells, second_cells = cells.get(first_index, {}), cells.get(second_index, {})
        for model, label in enumerate(labels):
            mine = [first_cells.get(label), second_cells.get(label)]
            if mine[0] is None and mine[1] is None:
                continue
            passed = passes.get(label)
            models.append([model, passed[position] if passed is not None else None, mine])
        pairs.append(
            {
                "p": int(number),
                "c": str(category),
                "v": pooled["vlm"][position],
                "i": pooled["igm"][position],
                "q": questions,
                "m": models,
            }
        )
    thumbnails = thumbs.resolve()
    categories = [
        [str(code), CATEGORY_BY_CODE[code].name]
        for code in dict.fromkeys(outcomes.pairs["category"])
    ]
    model_names = [[label, modality[label]] for label in labels]
    document = {
        "categories": categories,
        "models": model_names,
        "sources": sources,
        "thumbs": thumbnails,
        "pairs": pairs,
    }
    present = tuple(m for m in ("igm", "vlm") if m in set(modality.values()))
    return ExplorerData(
        text=_script_safe(document),
        categories=categories,
        models=model_names,
        pairs=len(pairs),
        thumbnails=len(thumbnails),
        modalities=present,
    )


def _model_passes(outcomes: Outcomes) -> dict[str, list[int | None]]:
    """Each model's pair outcome (image models: explicit) per pair position: 1, 0 or None."""
    columns = outcomes.columns
    outcome = outcomes.pair_correct().astype("int64").astype(object)
    outcome[~outcomes.pair_counted()] = None
    out: dict[str, list[int | None]] = {}
    for position, (label, kind) in enumerate(
        zip(columns["label"].tolist(), columns["kind"].tolist(), strict=True)
    ):
        if kind != "implicit":
            out[str(label)] = outcome[position].tolist()
    return out


def _pooled(outcomes: Outcomes, modality: str) -> list[int | None]:
    """The modality's pooled pair outcome per pair (majority of its models), as concordance."""
    pool = considered(outcomes.columns, modality, "answer" if modality == "vlm" else "explicit")
    if pool.empty:
        return [None] * len(outcomes.pairs)
    rows = pool.index.to_numpy()
    correct = outcomes.pair_correct()[rows]
    counted = outcomes.pair_counted()[rows]
    votes = (correct & counted).sum(axis=0)
    every = counted.all(axis=0)
    passed = (2 * votes > len(rows)) & every
    return [int(p) if e else None for p, e in zip(passed.tolist(), every.tolist(), strict=True)]


class _Thumbnails:
    """Images to embed, each read once, thumbnailed in parallel when the page is laid out."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._paths: dict[str, int] = {}

    def add(self, path: object) -> int:
        """The number of the image at ``path`` (relative to the workspace), or -1 without one."""
        if not isinstance(path, str) or not path:
            return -1
        return self._paths.setdefault(path, len(self._paths))

    def resolve(self) -> list[str]:
        """Every image added, as a small JPEG ``data:`` URI ("" when it cannot be read)."""
        paths = list(self._paths)
        if not paths:
            return []
        workers = max(1, min(8, os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self._thumbnail, paths))

    def _thumbnail(self, path: str) -> str:
        uri, _ = embedded_image(self._store, path, THUMBNAIL_PIXELS, THUMBNAIL_QUALITY)
        return uri or ""


def _input_images(store: Store, first: pd.DataFrame, thumbs: _Thumbnails) -> dict[int, int]:
    """Per question, the thumbnail of the benchmark image a VLM was shown (if one was copied)."""
    answers = first[(first["modality"] == "vlm") & (first["subject_id"] != "")]
    if answers.empty:
        return {}
    seen = answers.drop_duplicates("question_index")
    found: dict[int, int] = {}
    for response in store.responses_by_id(list(seen["subject_id"])).values():
        number = thumbs.add(response.input_path)
        if number >= 0:
            found.setdefault(response.question_index, number)
    return found


def _verdicts(items: Items, first: np.ndarray[Any, Any]) -> tuple[list[str], list[str]]:
    """The verdict sources, and per subject number its verdicts as ``source:value`` numbers.

    ``first``: which rows of the items' frame are first samples. Works on the subjects'
    integer codes (:func:`~amvicc.report.subjects.subject_codes`), not their ids.
    """
    codes = subject_codes(items)
    images = codes.rows[first & (items.frame["modality"].to_numpy(dtype=object) == "igm")]
    wanted = np.zeros(len(codes.ids) + 1, dtype=bool)  # the last: no subject (-1)
    wanted[images[images >= 0]] = True
    coded = codes.image
    keep = np.flatnonzero(wanted[coded.subject])
    joined = [""] * len(codes.ids)
    if not len(keep):
        return [], joined
    present = np.unique(coded.source[keep]).tolist()
    sources = sorted(coded.sources[c] for c in present)
    # "rank:value" for every (source code, value code): a table read by position.
    width = len(coded.values)
    table = np.array(
        [
            f"{sources.index(name)}:{value}" if name in sources else ""
            for name in coded.sources
            for value in coded.values
        ],
        dtype=object,
    )
    subjects = coded.subject[keep]
    order = np.argsort(subjects, kind="stable")
    texts = table[(coded.source[keep] * width + coded.value[keep])[order]].tolist()
    ordered = subjects[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]).tolist()
    ends = [*starts[1:], len(texts)]
    for start, end, subject in zip(starts, ends, ordered[starts].tolist(), strict=True):
        joined[subject] = " ".join(texts[start:end])
    return sources, joined


def _cells(
    store: Store,
    items: Items,
    first: np.ndarray[Any, Any],
    thumbs: _Thumbnails,
    verdicts: list[str],
    read_paths: Callable[[], Mapping[str, str]],
) -> dict[int, dict[str, Any]]:
    """Per question and model: a VLM's [outcome, option, reply]; an image model's images."""
    frame = items.frame
    chosen = np.flatnonzero(first)

    def column(name: str) -> np.ndarray[Any, Any]:
        return frame[name].take(chosen).to_numpy(dtype=object)

    outcome = np.array([OUTCOME_CODES.get(o, "m") for o in column("outcome").tolist()])
    reason = pd.Series(column("reason"), dtype=object).fillna("").to_numpy(dtype=object)
    # np.char.add: NumPy 1 has no "+" between str arrays.
    codes = np.where(reason != "", np.char.add("m:", reason.astype(str)), outcome).tolist()
    answers = column("modality") == "vlm"
    subjects = column("subject_id")
    labels = [str(label) for label in column("label").tolist()]
    indices = frame["question_index"].to_numpy()[chosen].tolist()
    cells: dict[int, dict[str, Any]] = {}
    vlm = np.flatnonzero(answers).tolist()
    if vlm:
        replies = store.responses_by_id([s for s in subjects[answers] if s])
        values = column("value")
        for row in vlm:
            reply = replies.get(subjects[row])
            text = reply.text if reply is not None and reply.text is not None else None
            value = values[row]
            cells.setdefault(indices[row], {})[labels[row]] = [
                str(codes[row]),
                value if isinstance(value, str) else None,
                cut(text, REPLY_CHARACTERS),
            ]
    igm = np.flatnonzero(~answers)
    if not len(igm):
        return cells
    paths = read_paths()
    # in the frame's order: thumbnails are numbered as first added
    thumbnails = [thumbs.add(paths.get(s)) for s in subjects[igm].tolist()] if paths else None
    texts = np.array([*verdicts, ""], dtype=object)[subject_codes(items).rows[chosen][igm]]
    kinds = column("kind")[igm].tolist()
    for position, (row, kind, text) in enumerate(
        zip(igm.tolist(), kinds, texts.tolist(), strict=True)
    ):
        thumbnail = thumbnails[position] if thumbnails is not None else -1
        cells.setdefault(indices[row], {}).setdefault(labels[row], []).append(
            [str(kind), str(codes[row]), thumbnail, text]
        )
    return cells
