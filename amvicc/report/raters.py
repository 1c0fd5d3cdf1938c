"""How far raters agree with each other, and automatic image judges with them.

- :func:`rater_agreement`: between human raters of the same items, per model: percent
  agreement and Cohen's κ for each pair of raters, Fleiss' κ when three or more rated the same
  items.
- :func:`judge_agreement_table`: every automatic image judge against the resolved human
  verdicts, per model and category (accuracy, κ, false-positive rate, recall).
- :func:`judge_metric_table`: the image models' accuracies as each judge alone would give them.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from amvicc.agreement import cohen_kappa_from_table, fleiss_kappa_from_counts
from amvicc.report.items import Items, category_sort_key
from amvicc.report.metrics import ALL, ALL_MODELS, metric_table
from amvicc.report.options import HUMAN_VERDICTS, ReportOptions
from amvicc.report.subjects import SubjectCodes, subject_codes
from amvicc.report.verdicts import image_values, roles
from amvicc.store import source_role

# --- agreement -------------------------------------------------------------------------------


def _human_votes(codes: SubjectCodes) -> tuple[Any, Any, Any, list[str], list[str]]:
    """Human raters' verdicts on the items (image verdicts, then answers'), as codes.

    Adjudications and ``undecided`` are left out. Returns per vote its subject's number, its
    rater's and its value's codes, and the raters' and values' names.
    """
    subjects, raters, values = [], [], []
    rater_names: list[str] = []
    value_names: list[str] = []
    for coded in (codes.image, codes.response):
        human = np.array([source_role(s) == "rater" for s in coded.sources] + [False])
        decided = np.array([v != "undecided" for v in coded.values] + [False])
        keep = human[coded.source] & decided[coded.value] & (coded.subject >= 0)
        rater_map = np.array([_number(rater_names, s) for s in coded.sources] + [-1])
        value_map = np.array([_number(value_names, v) for v in coded.values] + [-1])
        subjects.append(coded.subject[keep])
        raters.append(rater_map[coded.source[keep]])
        values.append(value_map[coded.value[keep]])
    return (
        np.concatenate(subjects),
        np.concatenate(raters),
        np.concatenate(values),
        rater_names,
        value_names,
    )


def _number(names: list[str], name: str) -> int:
    """``name``'s position in ``names``, appended when new."""
    if name not in names:
        names.append(name)
    return names.index(name)


def _subjects(items: Items) -> pd.DataFrame:
    f = items.frame
    return f.loc[
        f["subject_id"] != "", ["subject_id", "entry", "label", "modality", "category"]
    ].drop_duplicates("subject_id")


def rater_agreement(items: Items) -> pd.DataFrame:
    """Agreement between human raters, per model.

    Percent agreement and Cohen's κ for each pair of raters; Fleiss' κ when three or more
    raters rated the same items. Image verdicts compare as given (correct / incorrect /
    cant_tell); answers as the option chosen. Adjudications are decisions, not raters, and are
    left out. κ comes from contingency counts (:mod:`amvicc.agreement`), so thousands of items
    take milliseconds.

    Returns:
        Columns ``label, modality, statistic, raters, items, percent, kappa``.
    """
    columns = ["label", "modality", "statistic", "raters", "items", "percent", "kappa"]
    codes = subject_codes(items)
    subject, rater, value, rater_names, values = _human_votes(codes)
    if not len(subject):
        return pd.DataFrame(columns=columns)
    # Each value's code among the values given, in sorted order.
    labels = sorted(values[v] for v in np.unique(value).tolist())
    size = len(labels)
    sorted_codes = np.array([labels.index(v) if v in labels else -1 for v in values])[value]
    # One row per subject (each belongs to one model), one column per rater, the label's
    # code or NaN: a numpy matrix filled by position, as a pandas pivot of 360,000 string
    # keys takes seconds; each model's subjects are one block of rows. Subjects are numbered
    # in the order first met (integers: the ids were hashed once, in subject_codes).
    subject_codes_, subject_numbers = pd.factorize(subject)
    matrix = np.full((len(subject_numbers), len(rater_names)), np.nan)
    matrix[subject_codes_, rater] = sorted_codes
    entry_of = items.frame["entry"].to_numpy(dtype=object)[codes.first_row[subject_numbers]]
    entry_codes, entry_keys = pd.factorize(entry_of)  # models in the order first met
    order = np.argsort(entry_codes, kind="stable")
    ends = np.cumsum(np.bincount(entry_codes, minlength=len(entry_keys)))
    starts = np.r_[0, ends[:-1]]
    names = {e.key: (e.label, e.modality) for e in items.entries}
    rows = []
    for group, entry in enumerate(entry_keys):
        label, modality = names[str(entry)]
        block = matrix[order[starts[group] : ends[group]]]
        rated = np.flatnonzero(~np.isnan(block).all(axis=0))
        raters = sorted((str(rater_names[j]), int(j)) for j in rated)
        rows += _pairwise(block, raters, size, label, modality)
        complete = block[:, [j for _, j in raters]]
        complete = complete[~np.isnan(complete).any(axis=1)].astype("int64")
        if len(raters) >= 3 and len(complete):
            counts = np.stack([(complete == code).sum(axis=1) for code in range(size)], axis=1)
            rows.append(
                {
                    "label": label,
                    "modality": modality,
                    "statistic": "Fleiss' κ",
                    "raters": ", ".join(name for name, _ in raters),
                    "items": len(complete),
                    "percent": float((counts.max(axis=1) == len(raters)).mean()),
                    "kappa": fleiss_kappa_from_counts(counts),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def _pairwise(
    block: np.ndarray[Any, Any], raters: list[tuple[str, int]], size: int, label: str, modality: str
) -> list[dict[str, Any]]:
    """Percent agreement and Cohen's κ of every two raters of one model's subjects."""
    rows = []
    for (first, a), (second, b) in itertools.combinations(raters, 2):
        both = ~np.isnan(block[:, a]) & ~np.isnan(block[:, b])
        if not both.any():
            continue
        pairs = block[both, a].astype("int64") * size + block[both, b]
        table = np.bincount(pairs.astype("int64"), minlength=size * size).reshape(size, size)
        rows.append(
            {
                "label": label,
                "modality": modality,
                "statistic": "Cohen's κ",
                "raters": f"{first} vs {second}",
                "items": int(both.sum()),
                "percent": float(np.trace(table) / both.sum()),
                "kappa": cohen_kappa_from_table(table),
            }
        )
    return rows


def judge_agreement_table(items: Items) -> pd.DataFrame:
    """How well each automatic image judge agrees with the resolved human verdicts.

    For every judge source and every image model (and all models together), overall and per
    category: ``items`` judged by both, ``accuracy`` (same verdict), Cohen's ``kappa``,
    ``false_positive_rate`` (the judge says correct where humans say not: the error that
    inflates a model's score) and ``recall`` (the judge says correct where humans do). A
    ``cant_tell`` on either side counts as not correct.

    Returns:
        Columns ``judge, label, category, items, accuracy, kappa, false_positive_rate,
        recall, tp, fp, tn, fn``.
    """
    columns = [
        "judge",
        "label",
        "category",
        "items",
        "accuracy",
        "kappa",
        "false_positive_rate",
        "recall",
        "tp",
        "fp",
        "tn",
        "fn",
    ]
    if not judge_sources(items):
        return pd.DataFrame(columns=columns)
    verdicts = items.image_verdicts
    judged = verdicts[(roles(verdicts) == "judge") & (verdicts["value"] != "undecided")]
    if judged.empty:  # no automatic judge: nothing to resolve the human verdicts for
        return pd.DataFrame(columns=columns)
    resolved = image_values(verdicts, HUMAN_VERDICTS)["value"].dropna()
    human = pd.DataFrame({"subject_id": resolved.index, "human": resolved.to_numpy()})
    judged = judged.assign(
        judge=judged["source"],
        said=np.where(judged["value"] == "correct", "correct", "incorrect"),
    )
    both = judged.merge(human, on="subject_id").merge(_subjects(items), on="subject_id")
    if both.empty:
        return pd.DataFrame(columns=columns)
    scopes = [
        both,
        both.assign(category=ALL),
        both.assign(label=ALL_MODELS),
        both.assign(label=ALL_MODELS, category=ALL),
    ]
    pooled = pd.concat(scopes, ignore_index=True)
    rows = []
    for (judge, label, category), group in pooled.groupby(
        ["judge", "label", "category"], sort=False
    ):
        said = (group["said"] == "correct").to_numpy()
        truth = (group["human"] == "correct").to_numpy()
        tp, fp = int((said & truth).sum()), int((said & ~truth).sum())
        tn, fn = int((~said & ~truth).sum()), int((~said & truth).sum())
        rows.append(
            {
                "judge": judge,
                "label": label,
                "category": category,
                "items": len(group),
                "accuracy": (tp + tn) / len(group),
                "kappa": cohen_kappa_from_table([[tp, fp], [fn, tn]]),
                "false_positive_rate": fp / (fp + tn) if fp + tn else np.nan,
                "recall": tp / (tp + fn) if tp + fn else np.nan,
                "tp": tp,
                "fp": fp,
                "tn": tn,
                "fn": fn,
            }
        )
    table = pd.DataFrame(rows, columns=columns)
    table = table.assign(
        _all=table["label"] == ALL_MODELS,
        _label=table["label"].str.casefold(),
        _c=category_sort_key(table["category"]),
    ).sort_values(["judge", "_all", "_label", "_c"])
    return table[columns].reset_index(drop=True)


def judge_sources(items: Items) -> list[str]:
    """:meth:`Items.judge_sources`, from the verdicts' codes (no pass over every verdict)."""
    return sorted(s for s in subject_codes(items).image.sources if source_role(s) == "judge")


def judge_metric_table(items: Items, options: ReportOptions) -> pd.DataFrame:
    """The image models' metrics as each automatic judge alone would give them.

    Returns:
        :func:`metric_table`'s columns plus ``judge``; image models only.
    """
    tables = []
    for judge in items.judge_sources():
        judged = items.with_basis(judge)
        table = metric_table(judged, options)
        tables.append(table[table["modality"] == "igm"].assign(judge=judge))
    if not tables:
        return pd.DataFrame()
    return pd.concat(tables, ignore_index=True)
