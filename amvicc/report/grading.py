"""How far the VLM numbers can be trusted: grading procedures, grader agreement, audited errors.

Three tables, all about VLM answers scored on MMVP's own image:

- :func:`procedure_table`: each VLM under the three-stage grading (human audit, else the
  extractor, else the LLM judges) and under each grading procedure stored beside it (AMVICC's
  own GPT-4 grader: every reply judged yes/no), with the missing items of each.
- :func:`grading_agreement_table`: every pair of graders (the extractor, each LLM judge and
  procedure, the human audit) on the replies both decided: percent agreement, Cohen's κ and the
  disagreeing items. They are compared on correctness under the report's label policy, the only
  scale a yes/no grader and an option reader share.
- :func:`audit_error_table`: each automatic stage's error rate in the human audit sample
  (``amvicc grade`` draws it; people audit it in ``amvicc score``), with Wilson intervals, for
  the report's answers and for the same models' ladder runs (``amvicc answer --ladder``).
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from amvicc.agreement import cohen_kappa_from_table
from amvicc.report.items import Items, answer_column, source_answer_items
from amvicc.report.metrics import ALL_MODELS, metric_table
from amvicc.report.options import ReportOptions
from amvicc.report.verdicts import DECIDED_ANSWERS, answer_values, resolve_votes, roles
from amvicc.store import AuditSampleRecord, Store

THREE_STAGE = "three-stage grading"
HUMAN_AUDIT = "human audit"
EXTRACTOR = "extractor"
# Disagreeing items listed per pair of graders (all are counted).
SHOWN_DISAGREEMENTS = 20


def _vlm_items(items: Items) -> pd.DataFrame:
    return items.frame[items.frame["modality"] == "vlm"]


def procedure_sources(items: Items) -> list[str]:
    """The grading procedures (``procedure:<name>:<model>``) that graded the report's answers."""
    verdicts = items.response_verdicts
    return sorted(verdicts.loc[roles(verdicts) == "procedure", "source"].unique())


def procedure_table(items: Items, options: ReportOptions) -> pd.DataFrame:
    """Each VLM's overall accuracy under the three-stage grading and under each procedure.

    Returns:
        Columns ``label, grading, metric, value, correct, total, missing``: one row per
        (model, grading, ``individual`` / ``pair``); empty when no procedure was run.
    """
    columns = ["label", "grading", "metric", "value", "correct", "total", "missing"]
    sources = procedure_sources(items)
    vlm = _vlm_items(items)
    if not sources or vlm.empty:
        return pd.DataFrame(columns=columns)
    entries = tuple(e for e in items.entries if e.modality == "vlm")
    rows = []
    for grading, frame in [(THREE_STAGE, vlm)] + [
        (s, source_answer_items(items, s)) for s in sources
    ]:
        sub = replace(items, entries=entries, frame=frame)
        table = metric_table(sub, _no_bootstrap(options))
        table = table[table["category"] == "all"].assign(grading=grading)
        rows.append(table)
    return pd.concat(rows, ignore_index=True)[columns]


def _no_bootstrap(options: ReportOptions) -> ReportOptions:
    return replace(options, bootstrap=0)


def _correctness(values: pd.Series, answers: pd.Series) -> pd.Series:
    """True / False / NaN per subject: was the decided value the answer?"""
    values = values.astype("object")
    right = values == answers
    denied = values.astype(str).str.startswith("not_")
    out = pd.Series(np.where(right, 1.0, 0.0), index=values.index)
    out[denied & (values != "not_" + answers)] = np.nan
    out[~values.isin(DECIDED_ANSWERS)] = np.nan
    return out


def grader_correctness(items: Items) -> pd.DataFrame:
    """Per graded VLM answer: each grader's verdict on whether it was correct (1, 0, NaN).

    Columns: ``subject_id, label, question_index, sample`` and one per grader: ``extractor``,
    each LLM judge and procedure source, ``human audit``.
    """
    vlm = _vlm_items(items)
    if vlm.empty:
        return pd.DataFrame(columns=["subject_id", "label", "question_index", "sample"])
    vlm = vlm.assign(answer=answer_column(items))
    vlm = vlm[vlm["subject_id"] != ""]
    base = vlm[["subject_id", "label", "question_index", "sample", "answer"]].set_index(
        "subject_id"
    )
    verdicts = items.response_verdicts
    verdicts = verdicts[verdicts["subject_id"].isin(base.index)]
    role = roles(verdicts)
    answers = base["answer"].astype("object")
    graders: dict[str, pd.Series] = {}

    def latest(rows: pd.DataFrame) -> pd.Series:
        ordered = rows.sort_values("verdict_id").drop_duplicates("subject_id", keep="last")
        return ordered.set_index("subject_id")["value"]

    graders[EXTRACTOR] = latest(verdicts[role == "extractor"])
    for source in sorted(verdicts.loc[role.isin(["llm-judge", "procedure"]), "source"].unique()):
        graders[str(source)] = latest(verdicts[verdicts["source"] == source])
    decided = verdicts[verdicts["value"].isin(DECIDED_ANSWERS)]
    drole = roles(decided)
    human = resolve_votes(
        decided[drole == "rater"],
        latest(decided[drole == "adjudication"]),
    )["value"].dropna()
    graders[HUMAN_AUDIT] = human
    out = base.drop(columns=["answer"]).copy()
    for name, values in graders.items():
        aligned = values.reindex(base.index)
        out[name] = _correctness(aligned, answers)
    return out.reset_index()


def grading_agreement_table(items: Items, graders: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every pair of graders on the answers both decided, per model and over all models.

    Returns:
        Columns ``label, first, second, items, percent, kappa, disagreements`` (the number)
        and ``disagreeing`` (up to :data:`SHOWN_DISAGREEMENTS` items as ``q<index>#<sample>``,
        with what each said: ✓ correct, ✗ wrong).
    """
    columns = [
        "label",
        "first",
        "second",
        "items",
        "percent",
        "kappa",
        "disagreements",
        "disagreeing",
    ]
    table = grader_correctness(items) if graders is None else graders
    names = [
        c for c in table.columns if c not in ("subject_id", "label", "question_index", "sample")
    ]
    names = [g for g in names if table[g].notna().any()]
    if len(names) < 2:
        return pd.DataFrame(columns=columns)
    rows = []
    groups = [(str(label), part) for label, part in table.groupby("label", sort=True)]
    if len(groups) > 1:
        groups.append((ALL_MODELS, table))
    for label, part in groups:
        for first, second in itertools.combinations(names, 2):
            both = part[part[first].notna() & part[second].notna()]
            if both.empty:
                continue
            a = both[first].astype(int).to_numpy()
            b = both[second].astype(int).to_numpy()
            counts = np.zeros((2, 2))
            np.add.at(counts, (a, b), 1)
            differ = both[a != b]
            shown = [
                f"{r['label'] + ' ' if label == ALL_MODELS else ''}q{int(r['question_index'])}#{int(r['sample'])}"
                f" ({'✓' if r[first] else '✗'}/{'✓' if r[second] else '✗'})"
                for _, r in differ.head(SHOWN_DISAGREEMENTS).iterrows()
            ]
            rows.append(
                {
                    "label": label,
                    "first": first,
                    "second": second,
                    "items": len(both),
                    "percent": float((a == b).mean()),
                    "kappa": cohen_kappa_from_table(counts),
                    "disagreements": len(differ),
                    "disagreeing": ", ".join(shown)
                    + (" …" if len(differ) > SHOWN_DISAGREEMENTS else ""),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def audit_error_table(
    store: Store,
    items: Items,
    confidence: float = 0.95,
    models: Sequence[str] | None = None,
    *,
    smoke: bool | None = None,
) -> pd.DataFrame:
    """Each automatic stage's audited error rate, per model, with its Wilson interval.

    Over the audit sample of the report's answers: ``sampled`` decisions drawn, ``audited``
    the ones people have decided since, ``errors`` those where the people chose another
    option than the stage (for a yes/no judge's ``not_x``: the people chose x). Ladder runs
    (which are not items of the report) get rows of their own, labelled ``<model> · ladder``:
    there the stage and the people say ``correct``, ``incorrect`` or ``no_answer``, and an
    error is any difference.

    Args:
        store: the workspace.
        items: the report's items.
        confidence: the intervals' coverage.
        models: the report's ``--models`` patterns; only ladder runs of matching models are
            counted (None: every ladder run).
        smoke: only the smoke-test models' ladder runs (True) or only the real ones' (False).

    Returns:
        Columns ``label, stage, sampled, audited, errors, rate, ci_low, ci_high``.
    """
    columns = ["label", "stage", "sampled", "audited", "errors", "rate", "ci_low", "ci_high"]
    vlm = _vlm_items(items)
    subjects = vlm.set_index("subject_id")["label"]
    run_ids = [r for e in items.entries if e.modality == "vlm" for r in e.run_ids]
    sample = [s for s in store.audit_samples(run_ids) if s.response_id in subjects.index]
    labels: dict[str, str] = {s.response_id: str(subjects[s.response_id]) for s in sample}
    verdicts = items.response_verdicts
    ladder_sample, ladder_labels = _ladder_sample(store, models, smoke)
    if ladder_sample:
        sample += ladder_sample
        labels.update(ladder_labels)
        ladder_verdicts = store.latest_verdict_values(
            "response", [s.response_id for s in ladder_sample]
        )
        ladder_verdicts["role"] = roles(ladder_verdicts)
        verdicts = pd.concat([verdicts, ladder_verdicts], ignore_index=True)
    if not sample:
        return pd.DataFrame(columns=columns)
    # statsmodels imports scipy.stats: a good half second, only when there is a sample.
    from statsmodels.stats.proportion import proportion_confint

    decided = verdicts[verdicts["value"].isin(DECIDED_ANSWERS)]
    role = roles(decided)
    human = resolve_votes(
        decided[role == "rater"],
        decided[role == "adjudication"]
        .sort_values("verdict_id")
        .drop_duplicates("subject_id", keep="last")
        .set_index("subject_id")["value"],
    )["value"].dropna()
    automatic = answer_values(verdicts[~roles(verdicts).isin(["rater", "adjudication"])])
    rows: dict[tuple[str, str], list[int]] = {}
    for record in sample:
        key = (labels[record.response_id], record.stratum)
        counts = rows.setdefault(key, [0, 0, 0])
        counts[0] += 1
        person = human.get(record.response_id)
        stage = automatic.get(record.response_id, record.value)
        if person is None:
            continue
        counts[1] += 1
        wrong = person == stage[4:] if str(stage).startswith("not_") else person != stage
        counts[2] += int(wrong)
    out = []
    for (label, stage), (sampled, audited, errors) in sorted(rows.items()):
        low, high = (
            proportion_confint(errors, audited, alpha=1 - confidence, method="wilson")
            if audited
            else (np.nan, np.nan)
        )
        out.append(
            {
                "label": label,
                "stage": stage,
                "sampled": sampled,
                "audited": audited,
                "errors": errors,
                "rate": errors / audited if audited else np.nan,
                "ci_low": float(low),
                "ci_high": float(high),
            }
        )
    return pd.DataFrame(out, columns=columns)


LADDER_LABEL = "{model} · ladder"


def _ladder_sample(
    store: Store, models: Sequence[str] | None, smoke: bool | None = None
) -> tuple[list[AuditSampleRecord], dict[str, str]]:
    """The audit sample of the ladder runs of the selected models, and each response's label.

    A model with several ladder configurations (another ladder, other settings) gets one
    label per configuration, told apart by its first run's id, as the report's models are.
    """
    runs = store.runs_frame(stages=("ladder",))
    if smoke is not None and not runs.empty:
        runs = runs[runs["smoke"].astype(bool) == smoke]
    if runs.empty:
        return [], {}
    if models:
        chosen = runs["model"].map(
            lambda m: any(fnmatch.fnmatchcase(str(m), pattern) for pattern in models)
        )
        runs = runs[chosen]
    run_labels: dict[str, str] = {}
    for model, group in runs.groupby("model", sort=False):
        configs = group.groupby("config_key", sort=False)["run_id"]
        for _, run_ids in configs:
            label = LADDER_LABEL.format(model=model)
            if configs.ngroups > 1:
                label = f"{label} [{run_ids.iloc[0]}]"
            run_labels.update((str(r), label) for r in run_ids)
    if not run_labels:
        return [], {}
    sample = store.audit_samples(list(run_labels))
    return sample, {s.response_id: run_labels[s.run_id] for s in sample}
