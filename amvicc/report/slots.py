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
from amvicc.report.verdicts import answer_values, image_values


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


def image_items(
    entries: list[ModelEntry],
    questions: pd.DataFrame,
    images: pd.DataFrame,
    verdicts: pd.DataFrame,
    basis: str,
) -> pd.DataFrame:
    """Every image slot of these image models (kind, sample, question), decided by ``basis``."""
    slots = [
        (e.key, e.label, kind, sample)
        for e in entries
        for kind in PROMPT_KINDS
        for sample in range(e.samples)
    ]
    grid = pd.DataFrame(slots, columns=["entry", "label", "kind", "sample"]).merge(
        questions, how="cross"
    )
    found = images.rename(
        columns={"config_key": "entry", "prompt_kind": "kind", "image_id": "subject_id"}
    )
    frame = _attach(grid, found, ["entry", "question_index", "kind", "sample"])
    frame["modality"] = "igm"
    apply_image_outcomes(frame, frame["modality"] == "igm", image_values(verdicts, basis))
    return frame


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


def apply_image_outcomes(frame: pd.DataFrame, rows: pd.Series, decided: pd.DataFrame) -> None:
    """Fill ``value``, ``outcome`` and ``reason`` of the image items selected by ``rows``."""
    images = frame.loc[rows]
    subject = images["subject_id"]
    position = decided.index.get_indexer(pd.Index(subject))
    found = position >= 0
    value = pd.Series(None, index=images.index, dtype=object)
    value[found] = decided["value"].to_numpy(dtype=object)[position[found]]
    how = pd.Series(None, index=images.index, dtype=object)
    how[found] = decided["how"].to_numpy(dtype=object)[position[found]]
    status = images["status"]
    reason = np.select(
        [
            subject == "",
            status == "failed",
            status == "refused",
            how.isna(),
            value.isna(),
        ],
        ["not_generated", "failed", "refused", "not_rated", "unresolved"],
        "",
    )
    outcome = np.where(reason != "", "missing", value.fillna("").astype(str))
    frame.loc[rows, "value"] = value.where(reason == "", None).astype("object")
    frame.loc[rows, "outcome"] = outcome
    frame.loc[rows, "reason"] = reason


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
