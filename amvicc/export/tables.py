"""The study's tables, read from the workspace: images, answers, verdicts (and the runs).

What a dataset must never carry is left out here, before anything is written: raters' names
(each is a stable pseudonym, ``rater-<n>`` in the order they first gave a verdict in the
workspace, unless asked to keep them), grade-sheet file names (they often name the rater),
stored request bodies and verdict details (verbatim API traffic), and anything that looks like
a credential (URLs are redacted, and the value of every credential-named environment variable
is masked wherever it appears).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.redaction import redact_text, remember_environment_secrets
from amvicc.store import Store, source_rater, source_role
from amvicc.vlm.replies import final_verdict, run_catalogue

if TYPE_CHECKING:
    import pandas as pd

#: Answer runs whose replies go into ``answers`` (ladder rungs have typed answers of their own).
ANSWER_STAGES = ("answer", "challenge")


@dataclass(frozen=True)
class StudyTables:
    """The tables to export; ``images`` keeps each image's file path in ``file``."""

    images: pd.DataFrame
    answers: pd.DataFrame
    verdicts: pd.DataFrame
    runs: pd.DataFrame


def study_tables(
    store: Store,
    catalogue: Catalogue,
    *,
    run_ids: tuple[str, ...] | None,
    keep_rater_names: bool,
) -> StudyTables:
    """Every table, restricted to ``run_ids`` (None: every run).

    Raises:
        UserError: a run asked for is not in the workspace.
    """
    runs = store.runs_frame()
    if run_ids is not None:
        unknown = sorted(set(run_ids) - set(runs["run_id"]))
        if unknown:
            known = ", ".join(runs["run_id"]) or "none"
            raise UserError(f"no run {unknown[0]!r} in {store.root}; known runs: {known}")
        runs = runs[runs["run_id"].isin(run_ids)].reset_index(drop=True)
    chosen = set(runs["run_id"])
    remember_environment_secrets()
    return StudyTables(
        images=_images(store, catalogue, chosen),
        answers=_answers(store, runs),
        verdicts=_verdicts(store, catalogue, chosen, keep_rater_names),
        runs=runs,
    )


def mask(text: Any) -> Any:
    """A published cell without credentials: URLs' user info, tokens and every key value."""
    return redact_text(text) if isinstance(text, str) else text


def _categories(catalogue: Catalogue) -> dict[int, str]:
    return {q.index: q.category.code for q in catalogue}


def _images(store: Store, catalogue: Catalogue, runs: set[str]) -> pd.DataFrame:
    """Generated images with a file (images graded elsewhere have none to publish)."""
    import pandas as pd

    frame = store.images_frame()
    frame = frame[frame["run_id"].isin(runs) & (frame["status"] == "ok") & frame["path"].notna()]
    codes = _categories(catalogue)
    return pd.DataFrame(
        {
            "image_id": frame["image_id"],
            "run_id": frame["run_id"],
            "model": frame["model"],
            "question": frame["question_index"].astype("int32"),
            "category": frame["question_index"].map(codes),
            "kind": frame["prompt_kind"],
            "prompt": frame["prompt"],
            "sample": frame["sample"].astype("int32"),
            "seed": frame["seed"].astype("Int64"),
            "smoke": frame["smoke"].astype(bool),
            "file": [str(store.path(p)) for p in frame["path"]],
        }
    ).reset_index(drop=True)


def _answers(store: Store, runs: pd.DataFrame) -> pd.DataFrame:
    """Every current reply of an answer or challenge run, with how it was decided."""
    import pandas as pd

    chosen = runs[runs["stage"].isin(ANSWER_STAGES)]
    frame = store.responses_frame()
    frame = frame[frame["run_id"].isin(set(chosen["run_id"]))].reset_index(drop=True)
    conditions = dict(zip(chosen["run_id"], chosen["condition"].fillna(""), strict=True))
    decided: dict[str, tuple[str, str | None]] = {}
    answers: dict[str, tuple[dict[int, str], dict[int, str]]] = {}
    for run_id in chosen["run_id"]:
        latest = store.latest_verdicts_by_response(run_id)
        decided.update({rid: final_verdict(verdicts) for rid, verdicts in latest.items()})
        answers[run_id] = _keys(store, run_id)
    rows = []
    for row in frame.to_dict(orient="records"):
        value, source = decided.get(str(row["response_id"]), ("undecided", None))
        keys, codes = answers[str(row["run_id"])]
        index = int(row["question_index"])
        failed = row["status"] != "ok"
        rows.append(
            {
                "response_id": row["response_id"],
                "run_id": row["run_id"],
                "model": row["model"],
                "condition": conditions.get(str(row["run_id"]), ""),
                "question": index,
                "category": codes.get(index),
                "image": row["image_key"],
                "sample": int(row["sample"]),
                "prompt": mask(row["prompt"]),
                "reply": mask(row["text"]) if isinstance(row["text"], str) else None,
                "status": row["status"],
                "error": mask(row["error"]) if isinstance(row["error"], str) else None,
                "decision": "failed" if failed else value,
                "decided_by": None if failed else source,
                "answer": keys.get(index),
                "correct": None if failed or value not in ("a", "b") else value == keys.get(index),
                "prompt_tokens": _integer(row["prompt_tokens"]),
                "completion_tokens": _integer(row["completion_tokens"]),
                "smoke": bool(row["smoke"]),
            }
        )
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


ANSWER_COLUMNS = (
    "response_id", "run_id", "model", "condition", "question", "category", "image", "sample",
    "prompt", "reply", "status", "error", "decision", "decided_by", "answer", "correct",
    "prompt_tokens", "completion_tokens", "smoke",
)  # fmt: skip


def _keys(store: Store, run_id: str) -> tuple[dict[int, str], dict[int, str]]:
    """A run's answer keys (under its own label policy) and categories, by question index."""
    try:
        catalogue = run_catalogue(store.run(run_id))
    except UserError:  # its catalogue file is gone or changed: no key to show
        return {}, {}
    return {q.index: q.answer for q in catalogue}, _categories(catalogue)


def _integer(value: Any) -> int | None:
    """A token count as an int; None for a missing one (None or NaN)."""
    if value is None or value != value:  # NaN != NaN
        return None
    return int(value)


def _verdicts(
    store: Store, catalogue: Catalogue, runs: set[str], keep_rater_names: bool
) -> pd.DataFrame:
    """Every verdict on the chosen runs' images and replies, history included."""
    import pandas as pd

    history = store.verdict_history_frame()
    names = pseudonyms(list(history["source"]))
    frame = history[history["subject_run_id"].isin(runs)].reset_index(drop=True)
    codes = _categories(catalogue)
    who = [_who(s, names, keep_rater_names) for s in frame["source"]]
    return pd.DataFrame(
        {
            "verdict_id": frame["verdict_id"].astype("int64"),
            "subject": frame["subject"],
            "image_id": frame["image_id"],
            "response_id": frame["response_id"],
            "run_id": frame["subject_run_id"],
            "model": frame["model"],
            "question": frame["question_index"].astype("int32"),
            "category": frame["question_index"].map(codes),
            "kind": frame["prompt_kind"],
            "sample": frame["sample"].astype("int32"),
            "decided_by": [role for role, _, _ in who],
            "decider": [decider for _, decider, _ in who],
            "source": [source for _, _, source in who],
            "value": frame["value"],
            "comment": frame["comment"],
            "rubric_version": frame["rubric_version"],
            "created_at": frame["created_at"],
            "current": frame["current"].astype(bool),
        }
    )


def pseudonyms(sources: list[str]) -> dict[str, str]:
    """A stable pseudonym per rater: ``rater-<n>`` in the order of their first verdict.

    Computed over the whole workspace's history (oldest first), so a rater keeps the same
    pseudonym in every export of the workspace, whatever runs each export selects.
    """
    names: dict[str, str] = {}
    for source in sources:
        rater = source_rater(source)
        if rater is not None and rater not in names:
            names[rater] = f"rater-{len(names) + 1}"
    return names


def _who(source: str, names: dict[str, str], keep: bool) -> tuple[str, str, str]:
    """(role, decider, source) with the rater named or pseudonymous, sheet files left out."""
    role = source_role(source)
    rater = source_rater(source)
    if rater is not None:
        shown = rater if keep else names[rater]
        kind = source.partition(":")[0]
        return role, shown, f"{kind}:{shown}"
    return role, source.partition(":")[2] or source, source
