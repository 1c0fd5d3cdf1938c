"""Which verdict decides an image or an answer: raters' majority, adjudication, judges.

- images: under ``--verdicts human`` an adjudication if there is one, else the majority of the
  human raters (``human:*`` and ``sheet:*`` sources), else the item is unresolved (a tie).
  ``cant_tell`` counts as a vote that the image is *not* correct, so two raters saying
  ``incorrect`` and ``cant_tell`` agree that it fails, and ``correct`` against ``cant_tell`` is
  a tie. ``undecided`` is no vote. Under ``--verdicts judge:<method>:<model>`` that automatic
  judge decides; under ``any`` humans decide where they resolve the item and the automatic
  judges' majority elsewhere.
- answers: the option chosen comes from a human audit (adjudicated, else the auditors'
  majority), else the extractor, else the LLM judges' majority.

Everything works on all subjects at once (the rule of :func:`amvicc.agreement.resolve`, checked
against it in the tests), so 360,000 verdicts take well under a second.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from amvicc.report.options import ANY_VERDICTS, HUMAN_VERDICTS
from amvicc.store import DECIDING_ANSWERS, ImageVerdictCodes, source_role

DECIDED_ANSWERS = DECIDING_ANSWERS


def roles(verdicts: pd.DataFrame) -> pd.Series:
    """Each verdict's :func:`~amvicc.store.source_role` (its ``role`` column when it has one)."""
    if "role" in verdicts.columns:
        return verdicts["role"]
    codes, sources = pd.factorize(verdicts["source"])
    table = np.array([source_role(str(s)) for s in sources] + ["other"], dtype=object)
    return pd.Series(table[codes], index=verdicts.index, dtype=object)


def resolve_votes(votes: pd.DataFrame, adjudicated: pd.Series | None = None) -> pd.DataFrame:
    """:func:`amvicc.agreement.resolve` for many subjects at once.

    Args:
        votes: one row per rater verdict: ``subject_id`` and ``value``.
        adjudicated: the adjudicated value per subject id, which overrides the raters.

    Returns:
        One row per subject (index ``subject_id``): ``value`` (None on a tie), ``how``
        (``adjudicated``, ``unanimous``, ``majority`` or ``tie``) and ``raters``.
    """
    value_codes, values = pd.factorize(votes["value"])
    return _resolve(votes["subject_id"].to_numpy(), value_codes, np.asarray(values), adjudicated)


def _resolve(
    subject_ids: np.ndarray,
    value_codes: np.ndarray,
    values: np.ndarray,
    adjudicated: pd.Series | None = None,
) -> pd.DataFrame:
    """:func:`resolve_votes` of votes given as subject ids and codes into ``values``.

    The order of ``values`` does not matter: a value wins only when no other has as many
    votes, and a value nobody gave has none.
    """
    subject_codes, subjects = pd.factorize(subject_ids)
    if len(subject_codes):
        width = len(values)
        # counts[s, v]: how many raters gave subject s the value v.
        counts = np.bincount(
            subject_codes * width + value_codes, minlength=len(subjects) * width
        ).reshape(len(subjects), width)
        top = counts.max(axis=1, initial=0)
        leaders = (counts == top[:, None]).sum(axis=1)
        distinct = (counts > 0).sum(axis=1)
        winner = np.asarray(values, dtype=object)[counts.argmax(axis=1)]
        result = pd.DataFrame(
            {
                "value": np.where(leaders == 1, winner, None),
                "how": np.where(
                    leaders > 1, "tie", np.where(distinct == 1, "unanimous", "majority")
                ),
                "raters": counts.sum(axis=1).astype("int64"),
            },
            index=pd.Index(subjects, name="subject_id", dtype=object),
        ).astype({"value": "object", "how": "object"})
    else:  # no rater's vote: only adjudications decide
        result = pd.DataFrame(
            {"value": [], "how": [], "raters": []}, index=pd.Index([], name="subject_id")
        ).astype({"value": "object", "how": "object", "raters": "int64"})
    if adjudicated is not None and not adjudicated.empty:
        result = result.reindex(result.index.union(adjudicated.index))
        result.loc[adjudicated.index, "value"] = adjudicated.astype("object")
        result.loc[adjudicated.index, "how"] = "adjudicated"
        result["raters"] = result["raters"].fillna(0).astype("int64")
    result.index.name = "subject_id"
    return result


def latest_per_subject(rows: pd.DataFrame) -> pd.Series:
    """The value of the latest of these verdicts on each subject (index ``subject_id``)."""
    latest = rows.sort_values("verdict_id").drop_duplicates("subject_id", keep="last")
    return latest.set_index("subject_id")["value"].astype("object")


def _as_correct(values: pd.Series) -> pd.Series:
    """``correct`` stays; ``incorrect`` and ``cant_tell`` are not correct."""
    return values.where(values == "correct", "incorrect").astype("object")


def image_values(verdicts: pd.DataFrame, basis: str = HUMAN_VERDICTS) -> pd.DataFrame:
    """The deciding verdict of each rated image under ``basis``.

    Returns:
        Index ``subject_id``; ``value`` (``correct``, ``incorrect`` or None on a tie) and
        ``how``. Images nobody rated are absent.
    """
    if basis == HUMAN_VERDICTS:
        return _human_image_values(verdicts)
    usable = verdicts[verdicts["value"] != "undecided"]
    if basis == ANY_VERDICTS:
        human = _human_image_values(verdicts)
        judges = usable[roles(usable) == "judge"]
        automatic = resolve_votes(judges.assign(value=_as_correct(judges["value"])))
        automatic["how"] = "judges-" + automatic["how"].astype(str)
        resolved = human[human["value"].notna()]
        rest = automatic[~automatic.index.isin(resolved.index)]
        unresolved = human[human["value"].isna() & ~human.index.isin(rest.index)]
        return pd.concat([resolved, rest, unresolved])
    judged = usable[usable["source"] == basis]
    values = latest_per_subject(judged)
    return pd.DataFrame({"value": _as_correct(values), "how": "judge"}, index=values.index)


def _human_image_values(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The human raters' majority (or the adjudication) on each image they rated.

    Worked out on the columns as arrays: selecting rows of the whole frame, twice, cost more
    than the vote.
    """
    role = roles(verdicts).to_numpy()
    value = verdicts["value"].to_numpy()
    usable = value != "undecided"
    adjudicated = latest_per_subject(verdicts[usable & (role == "adjudication")])
    raters = usable & (role == "rater")
    resolved = _resolve(
        verdicts["subject_id"].to_numpy()[raters],
        (value[raters] != "correct").astype(np.intp),
        np.array(["correct", "incorrect"], dtype=object),
        _as_correct(adjudicated),
    )
    return resolved[["value", "how"]]


def human_image_decisions(codes: ImageVerdictCodes, count: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_human_image_values` of images numbered 0 to ``count`` - 1, on integer codes.

    The same rule, counted with ``bincount`` on the codes the store read: building the
    verdicts' string columns and hashing them again took a report a tenth of a second, while
    the other core had nothing to do.

    Args:
        codes: each source's latest verdict, its image given as its number
            (:attr:`~amvicc.store.ImageVerdictCodes.image_rows`).
        count: how many images.

    Returns:
        Per image: its value (``correct``, ``incorrect``, or None on a tie and for an image
        nobody rated), and whether a human rated or adjudicated it.
    """
    roles_of_sources = [source_role(s) for s in codes.sources]
    rater, adjudication = (
        np.array([r == role for r in roles_of_sources], dtype=bool)[codes.source_codes]
        for role in ("rater", "adjudication")
    )
    named = {value: i for i, value in enumerate(codes.values)}
    usable = codes.value_codes != named.get("undecided", -1)
    correct = codes.value_codes == named.get("correct", -1)
    subject = codes.image_rows
    votes = usable & rater
    # counts[s]: how many raters said image s is correct, and how many that it is not.
    counts = np.bincount(
        subject[votes] * 2 + (~correct[votes]).astype(np.intp), minlength=2 * count
    ).reshape(count, 2)
    value = np.full(count, None, dtype=object)
    value[counts[:, 0] > counts[:, 1]] = "correct"
    value[counts[:, 1] > counts[:, 0]] = "incorrect"
    rated = counts.sum(axis=1) > 0
    adjudications = np.flatnonzero(usable & adjudication)
    if len(adjudications):
        newest_first = adjudications[np.argsort(codes.verdict_ids[adjudications])[::-1]]
        _, first = np.unique(subject[newest_first], return_index=True)
        latest = newest_first[first]
        value[subject[latest]] = np.where(correct[latest], "correct", "incorrect")
        rated[subject[latest]] = True
    return value, rated


def answer_values(verdicts: pd.DataFrame) -> pd.Series:
    """The option each graded response chose: human audit > extractor > LLM judges.

    Returns:
        The decided value (``a``, ``b`` or ``no_answer``) per ``subject_id``; responses
        that no source decided are absent.
    """
    decided = verdicts[verdicts["value"].isin(DECIDED_ANSWERS)]
    role = roles(decided)
    audit = resolve_votes(
        decided[role == "rater"], latest_per_subject(decided[role == "adjudication"])
    )
    extractor = latest_per_subject(decided[role == "extractor"])
    llm = resolve_votes(decided[role == "llm-judge"])
    combined = audit["value"].dropna()
    for fallback in (extractor, llm["value"].dropna()):
        combined = pd.concat([combined, fallback[~fallback.index.isin(combined.index)]])
    return combined.astype("object")
