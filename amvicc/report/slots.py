"""The grid of items a report counts, and the rules that give each item its outcome.

Every slot the catalogue asks a model to fill gets a row — an image per (question, prompt
kind, sample), an answer per (question, sample) — and the slot's stored image or response, if
any, is attached to it. The rules then say whether it is correct, wrong or missing (and why).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from amvicc.catalogue import PROMPT_KINDS, Catalogue, LabelPolicy, load_catalogue
from amvicc.report.entries import ModelEntry
from amvicc.report.options import HUMAN_VERDICTS
from amvicc.report.verdicts import answer_values, human_image_decisions, image_values
from amvicc.store import ImageSlots, ImageVerdictCodes


def questions_frame(catalogue: Catalogue) -> pd.DataFrame:
    """One row per question: ``question_index``, ``pair`` and ``category``."""
    return pd.DataFrame(
        {
            "question_index": [q.index for q in catalogue],
            "pair": [q.pair for q in catalogue],
            "category": [q.category.code for q in catalogue],
        }
    )


def answer_keys(policies: set[LabelPolicy], selected: Catalogue) -> dict[LabelPolicy, pd.Series]:
    """Each label policy's answer per question index."""
    out: dict[LabelPolicy, pd.Series] = {}
    for policy in policies:
        catalogue = (
            selected
            if policy == selected.label_policy
            else load_catalogue(selected.source, labels=policy)
        )
        out[policy] = pd.Series({q.index: q.answer for q in catalogue}, dtype="object")
    return out


def image_grid(
    entries: list[ModelEntry], questions: pd.DataFrame, images: ImageSlots
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every image slot of these image models (kind, sample, question) with its stored image.

    Outcomes are not decided yet (:func:`decide_images`): the grid is laid out while the
    verdicts are still being read.

    Args:
        entries: the image models.
        questions: :func:`questions_frame`.
        images: the current image of each slot, as codes (no key is hashed per image).

    Returns:
        The grid, and per grid row its image's place in ``images`` (-1: none).
    """
    frame = _image_grid(entries, questions)
    found = _image_positions(entries, questions, images)
    have = found >= 0
    row = np.full(len(frame), -1)
    row[found[have]] = np.flatnonzero(have)
    # -1 takes the last value: "" (no image)
    frame["subject_id"] = _taken([*images.image_ids.tolist(), ""], row)
    statuses = np.append(images.status_codes, len(images.statuses))
    frame["status"] = _taken([*images.statuses, ""], statuses[row])
    frame["modality"] = "igm"
    return frame, row


def decide_images(
    frame: pd.DataFrame,
    row: np.ndarray,
    verdicts: pd.DataFrame,
    basis: str,
    codes: ImageVerdictCodes,
) -> None:
    """Decide the outcome of each slot of :func:`image_grid` by ``basis`` (in place).

    Args:
        frame: the grid.
        row: per grid row, its image's row in the images (from :func:`image_grid`).
        verdicts: each source's latest verdict on these images.
        basis: whose verdicts decide.
        codes: the same verdicts as codes, each one's image given as its row in the images:
            the votes are counted on integers (hashing 32-character ids was the cost).
    """
    mask = (frame["modality"] == "igm").to_numpy()
    if basis == HUMAN_VERDICTS:
        count = max(int(row.max(initial=-1)), int(codes.image_rows.max(initial=-1))) + 1
        value, rated = human_image_decisions(codes, count)
        # row -1 (no image) takes the value appended: none, not rated
        _fill_image_outcomes(
            frame, mask, np.append(value, [None])[row], np.append(rated, False)[row]
        )
        return
    decided = image_values(verdicts.assign(subject_id=codes.image_rows), basis)
    decided.index = decided.index.astype(np.int64)
    apply_image_outcomes(frame, mask, decided, keys=row)


def _image_grid(entries: list[ModelEntry], questions: pd.DataFrame) -> pd.DataFrame:
    """One row per image slot: each entry's kinds, each kind's samples, each sample's questions.

    Laid out arithmetically (entry, then kind, then sample, then question), so a stored image
    finds its row by :func:`_image_positions` without hashing any key.
    """
    n, kinds = len(questions), len(PROMPT_KINDS)
    samples = np.array([e.samples for e in entries], dtype=np.int64)
    entry = np.repeat(np.arange(len(entries)), kinds * samples * n)
    kind = np.concatenate([np.repeat(np.arange(kinds), k * n) for k in samples])
    sample = np.concatenate([np.tile(np.repeat(np.arange(k), n), kinds) for k in samples])
    question = np.tile(np.arange(n), int(kinds * samples.sum()))
    return pd.DataFrame(
        {
            "entry": _taken([e.key for e in entries], entry),
            "label": _taken([e.label for e in entries], entry),
            "kind": _taken(list(PROMPT_KINDS), kind),
            "sample": sample.astype(np.int64),
            "question_index": questions["question_index"].to_numpy()[question],
            "pair": questions["pair"].to_numpy()[question],
            "category": questions["category"].array.take(question),
        }
    )


def _image_positions(
    entries: list[ModelEntry], questions: pd.DataFrame, images: ImageSlots
) -> np.ndarray:
    """Each stored image's row in :func:`_image_grid` (-1: no slot of the report's)."""
    n, kinds = len(questions), len(PROMPT_KINDS)
    samples = np.array([e.samples for e in entries], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(kinds * samples * n)[:-1]]).astype(np.int64)
    # Each code's place among the entries and the prompt kinds (-1: none), then looked up.
    places = {e.key: number for number, e in enumerate(entries)}
    entry = np.array([places.get(key, -1) for key in images.config_keys] + [-1])[
        images.config_codes
    ]
    kind = np.array(
        [PROMPT_KINDS.index(k) if k in PROMPT_KINDS else -1 for k in images.kinds] + [-1]
    )[images.kind_codes]
    question = pd.Index(questions["question_index"]).get_indexer(images.question_indices)
    sample = images.samples
    known = (entry >= 0) & (question >= 0) & (kind >= 0) & (sample >= 0)
    known[known] &= sample[known] < samples[entry[known]]
    position = np.full(len(known), -1, dtype=np.int64)
    e = entry[known]
    position[known] = starts[e] + (kind[known] * samples[e] + sample[known]) * n + question[known]
    return position


def _taken(values: list[str], codes: np.ndarray) -> pd.Series:
    """``values[codes]`` as a column of pandas' default string type, taken, not converted.

    Only the distinct values are converted (pandas infers their type as for any list); the
    rows are a take of them: converting a hundred thousand strings costs ten times more.
    """
    return pd.Series(pd.Series(values).array.take(codes))


def _attach(grid: pd.DataFrame, found: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Give each slot of ``grid`` the ``subject_id`` and ``status`` of its stored row.

    A left merge on the key columns, done on one integer code per slot: merging on the long
    configuration keys takes seconds at 120,000 slots.
    """
    both = pd.concat([grid[keys], found[keys]], ignore_index=True)
    codes = [pd.factorize(both[k])[0] for k in keys]
    slot = np.ravel_multi_index(codes, [int(c.max()) + 1 for c in codes])
    position = pd.Index(slot[len(grid) :]).get_indexer(pd.Index(slot[: len(grid)]))
    have = position >= 0
    frame = grid.copy()
    for column in ("subject_id", "status"):
        values = np.full(len(grid), "", dtype=object)
        values[have] = found[column].to_numpy(dtype=object)[position[have]]
        frame[column] = values
    return frame


def blank_cells(frame: pd.DataFrame, imported: set[str]) -> None:
    """An imported model's item without an image is a blank sheet cell, not a failed run."""
    blank = frame["entry"].isin(imported) & (frame["reason"] == "not_generated")
    frame.loc[blank, "reason"] = "blank_in_sheet"


#: Why an image item is missing, by the code :func:`apply_image_outcomes` works out ("": not).
_IMAGE_REASONS = ["", "not_generated", "failed", "refused", "not_rated", "unresolved"]


def apply_image_outcomes(
    frame: pd.DataFrame,
    rows: pd.Series | np.ndarray,
    decided: pd.DataFrame,
    keys: np.ndarray | None = None,
) -> None:
    """Fill ``value``, ``outcome`` and ``reason`` of the image items selected by ``rows``.

    On arrays, and each string column made from its few distinct values
    (:func:`_taken`): converting a hundred thousand strings, three times, was the cost.

    Args:
        frame: the items.
        rows: which of them are image items.
        decided: :func:`~amvicc.report.verdicts.image_values`.
        keys: each selected row's image as ``decided`` indexes it (None: its ``subject_id``).
    """
    mask = np.asarray(rows, dtype=bool)
    if keys is None:
        keys = frame["subject_id"].to_numpy(dtype=object)[mask]
    position = decided.index.get_indexer(pd.Index(keys, dtype=keys.dtype))
    found = position >= 0
    value = np.full(len(position), None, dtype=object)
    value[found] = decided["value"].to_numpy(dtype=object)[position[found]]
    how = np.full(len(position), None, dtype=object)
    how[found] = decided["how"].to_numpy(dtype=object)[position[found]]
    _fill_image_outcomes(frame, mask, value, ~pd.isna(how))


def _fill_image_outcomes(
    frame: pd.DataFrame, mask: np.ndarray, value: np.ndarray, rated: np.ndarray
) -> None:
    """Fill ``value``, ``outcome`` and ``reason`` of the image items ``mask`` selects.

    Args:
        frame: the items.
        mask: which rows are image items.
        value: per selected row, the deciding value (None on a tie).
        rated: per selected row, whether anyone whose verdicts decide rated its image.
    """
    reason = np.select(
        [
            _equals(frame, "subject_id", "", mask),
            _equals(frame, "status", "failed", mask),
            _equals(frame, "status", "refused", mask),
            ~rated,
            pd.isna(value),
        ],
        range(1, len(_IMAGE_REASONS)),
        0,
    )
    value[reason != 0] = None
    outcome_codes, outcomes = pd.factorize(np.where(reason != 0, "missing", value))
    columns = {
        "value": pd.Series(value, dtype=object),
        "outcome": _taken(list(outcomes), outcome_codes),
        "reason": _taken(_IMAGE_REASONS, reason),
    }
    for column, values in columns.items():
        if mask.all() and column not in frame.columns:
            frame[column] = values.set_axis(frame.index)
        else:
            frame.loc[mask, column] = values.to_numpy()


def _equals(frame: pd.DataFrame, column: str, text: str, rows: np.ndarray) -> np.ndarray:
    """Whether ``column`` is ``text`` on ``rows``, compared in the column's own type.

    A column of pandas' string type compares without making a Python string per row.
    """
    equal: np.ndarray = (frame[column] == text).to_numpy(dtype=bool)[rows]
    return equal


def answer_items(
    entries: list[ModelEntry],
    questions: pd.DataFrame,
    responses: pd.DataFrame,
    verdicts: pd.DataFrame,
    answers: dict[LabelPolicy, pd.Series],
) -> pd.DataFrame:
    """Every answer slot of these VLMs (sample, question), decided by the answer's verdicts."""
    slots = [
        (e.key, e.label, e.label_policy, sample) for e in entries for sample in range(e.samples)
    ]
    grid = pd.DataFrame(slots, columns=["entry", "label", "label_policy", "sample"]).merge(
        questions, how="cross"
    )
    found = responses.rename(columns={"config_key": "entry", "response_id": "subject_id"})
    frame = _attach(grid, found, ["entry", "question_index", "sample"])
    frame["modality"] = "vlm"
    frame["kind"] = "answer"
    chosen = frame["subject_id"].map(answer_values(verdicts))
    graded = frame["subject_id"].isin(set(verdicts["subject_id"]))
    answer = pd.Series("", index=frame.index, dtype="object")
    for policy, series in answers.items():
        mask = frame["label_policy"] == policy
        answer[mask] = frame.loc[mask, "question_index"].map(series).astype("object")
    return answer_outcomes(frame, chosen, graded, answer).drop(columns=["label_policy"])


def answer_outcomes(
    frame: pd.DataFrame, chosen: pd.Series, graded: pd.Series, answer: pd.Series
) -> pd.DataFrame:
    """Fill ``value``, ``outcome`` and ``reason`` of answer items from the option chosen."""
    denied = chosen.astype("object").fillna("").astype(str).str.startswith("not_")
    reason = np.select(
        [
            frame["subject_id"] == "",
            frame["status"] == "error",
            chosen.isna() & ~graded,
            chosen.isna(),
            chosen == "no_answer",
            denied & (chosen != "not_" + answer),
        ],
        ["not_answered", "error", "not_graded", "undecided", "no_answer", "other_labels"],
        "",
    )
    frame["value"] = chosen.where(chosen.notna(), None).astype("object")
    frame["outcome"] = np.where(
        reason != "", "missing", np.where(chosen == answer, "correct", "incorrect")
    )
    frame["reason"] = reason
    return frame
