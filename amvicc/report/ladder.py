"""GRIP's question ladder in the report: accuracy per level, where each chain breaks, baselines.

A ladder run (``amvicc answer --ladder``) asks five rungs of rising competence about every
procedural scene image (see :mod:`amvicc.ladder`). Each rung's reply has its final verdict by
the grading stage's rule (a person's audit, else the typed comparator, else the LLM judges'
majority); ``correct`` and ``incorrect`` decide it, anything else (a failed request, a reply no
grader could read, no answer, a rung never asked) makes it *missing*, counted as wrong under
``--missing fail`` and left out under ``exclude``, and always counted.

Three tables per model:

- accuracy per level, over all categories and per category, with its Wilson interval and
  the number missing, beside the level's **constant-answer baseline**: the accuracy of always
  giving the level's commonest answer on the same rungs (a level whose baseline is high says
  little when a model matches it);
- **where the chain breaks**: per image (and sample), the first level answered wrongly; a
  chain whose first unsettled rung is missing before any wrong one is ``unknown``, never
  counted as a break at that level; ``none``: all five right.

The ladder is reported per ladder run configuration (model and options), whatever catalogue
the report is on: its rungs carry their own answers; the table names the scene set it was
asked about. ``--index`` selects questions of the report's catalogue and does not apply here.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from amvicc.catalogue import parse_categories
from amvicc.report.entries import recorded_catalogue_name
from amvicc.report.metrics import ALL
from amvicc.report.options import ReportOptions
from amvicc.report.rows import ROW_COLUMNS
from amvicc.store import Store

if TYPE_CHECKING:
    from amvicc.ladder import LadderQuestion

UNKNOWN = "unknown"
NO_BREAK = "none"
# Levels, then chains without a break, then chains broken by a missing rung.
LEVELS = (1, 2, 3, 4, 5)
CHAIN_ORDER = [*(str(level) for level in LEVELS), NO_BREAK, UNKNOWN]


@dataclass(frozen=True)
class LadderEntry:
    """One ladder configuration: a model with its options, and the scene set it was asked about.

    ``catalogue`` names the scene set's catalogue as every report row does (``scenes``).
    """

    key: str
    label: str
    model: str
    smoke: bool
    catalogue: str
    run_ids: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class LadderTables:
    """The ladder's numbers.

    Attributes:
        entries: the ladder configurations, by label.
        items: one row per rung asked or due: ``entry``, ``question_index``, ``sample``,
            ``level``, ``category``, ``answer`` (the rung's), ``outcome`` (``correct``,
            ``incorrect``, ``missing``) and ``reason``.
        levels: per entry, level and category (``all`` too): ``correct``, ``incorrect``,
            ``missing``, ``total``, ``accuracy``, ``ci_low``, ``ci_high`` and ``baseline``.
        chains: per entry and first failed level (``1``..``5``, ``none``, ``unknown``):
            ``count`` and ``share`` of the chains.
    """

    entries: tuple[LadderEntry, ...] = ()
    items: pd.DataFrame = field(default_factory=pd.DataFrame)
    levels: pd.DataFrame = field(default_factory=pd.DataFrame)
    chains: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def empty(self) -> bool:
        """No ladder run in the report."""
        return not self.entries


def ladder_tables(
    store: Store, options: ReportOptions, *, smoke: bool | None = None
) -> LadderTables:
    """Read every ladder run of the selected models and count it (see the module docstring).

    Args:
        store: the workspace.
        options: the selection (``--models``, ``--categories``) and how to count.
        smoke: only the smoke-test models' ladders (True) or only the real ones' (False).
    """
    entries = [e for e in _entries(store, options.models) if smoke is None or e.smoke == smoke]
    if not entries:
        return LadderTables()
    rows: list[dict[str, Any]] = []
    for entry in entries:
        rows.extend(_entry_items(store, entry))
    items = pd.DataFrame(rows)
    if options.categories:
        items = items[items["category"].isin(parse_categories(options.categories))]
    if items.empty:
        return LadderTables()
    return LadderTables(
        entries=tuple(entries),
        items=items.reset_index(drop=True),
        levels=_levels(items, options),
        chains=_chains(items),
    )


def _entries(store: Store, patterns: tuple[str, ...] | None) -> list[LadderEntry]:
    runs = store.runs(stage="ladder")
    by_key: dict[str, list[Any]] = {}
    for run in runs:
        by_key.setdefault(run.config_key, []).append(run)
    per_model = Counter(group[-1].model + group[-1].condition for group in by_key.values())
    entries = []
    for key, group in by_key.items():
        last = group[-1]
        label = last.model + (f" [{last.condition}]" if last.condition else "")
        if per_model[last.model + last.condition] > 1:
            label = f"{label} [{group[0].run_id}]"
        if patterns and not any(
            fnmatch.fnmatchcase(last.model, p) or fnmatch.fnmatchcase(label, p) for p in patterns
        ):
            continue
        entries.append(
            LadderEntry(
                key=key,
                label=label,
                model=last.model,
                smoke=any(bool(r.smoke) for r in group),
                catalogue=recorded_catalogue_name(
                    last.config.get("catalogue"), last.catalogue_sha256 or ""
                ),
                run_ids=tuple(r.run_id for r in group),
            )
        )
    return sorted(entries, key=lambda e: e.label.casefold())


def _entry_items(store: Store, entry: LadderEntry) -> list[dict[str, Any]]:
    """One row per rung of every image the entry was asked about (a rung never asked: missing)."""
    # The ladder's rungs and its reply reader load the extractor: only with ladder runs.
    from amvicc.ladder import LadderQuestion
    from amvicc.vlm.replies import final_verdict

    verdicts: dict[str, list[Any]] = {}
    for run_id in entry.run_ids:
        verdicts.update(store.latest_verdicts_by_response(run_id))
    rows: dict[tuple[int, int, int], dict[str, Any]] = {}
    images: dict[tuple[int, int], str] = {}
    rungs: dict[tuple[int, int], dict[int, LadderQuestion]] = {}
    for response in store.responses(config_key=entry.key):
        request = json.loads(response.request_json)
        if "rung" not in request:
            continue
        rung = LadderQuestion.from_manifest(request["rung"])
        image = (response.question_index, response.sample)
        images[image] = str(request.get("category", "?"))
        rungs.setdefault(image, {})[rung.level] = rung
        if response.status != "ok":
            outcome, reason = "missing", "error"
        else:
            value, _ = final_verdict(verdicts.get(response.response_id, []))
            outcome, reason = (
                (value, "") if value in ("correct", "incorrect") else ("missing", value)
            )
        rows[(*image, rung.level)] = {
            "entry": entry.label,
            "question_index": response.question_index,
            "sample": response.sample,
            "level": rung.level,
            "category": images[image],
            "answer": rung.answer,
            "outcome": outcome,
            "reason": reason,
        }
    for (index, sample), category in images.items():
        for level in LEVELS:
            rows.setdefault(
                (index, sample, level),
                {
                    "entry": entry.label,
                    "question_index": index,
                    "sample": sample,
                    "level": level,
                    "category": category,
                    "answer": None,
                    "outcome": "missing",
                    "reason": "not_answered",
                },
            )
    return [rows[k] for k in sorted(rows)]


def _levels(items: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    from statsmodels.stats.proportion import proportion_confint

    rows = []
    everything = items.assign(category=ALL)
    for (entry, level, category), part in pd.concat([items, everything]).groupby(
        ["entry", "level", "category"], sort=False
    ):
        outcomes = Counter(part["outcome"])
        correct, incorrect, missing = (outcomes[o] for o in ("correct", "incorrect", "missing"))
        total = correct + incorrect + (missing if options.missing == "fail" else 0)
        low, high = (
            proportion_confint(correct, total, alpha=1 - options.confidence, method="wilson")
            if total
            else (float("nan"), float("nan"))
        )
        answers = part["answer"].dropna()
        baseline = answers.value_counts().iloc[0] / len(answers) if len(answers) else float("nan")
        rows.append(
            {
                "entry": entry,
                "level": int(str(level)),
                "category": category,
                "correct": correct,
                "incorrect": incorrect,
                "missing": missing,
                "total": total,
                "accuracy": correct / total if total else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "baseline": baseline,
            }
        )
    return pd.DataFrame(rows)


def first_failed_level(outcomes: dict[int, str]) -> str:
    """Where one chain breaks: the first level answered wrongly, ``none`` or ``unknown``."""
    for level in LEVELS:
        outcome = outcomes.get(level, "missing")
        if outcome == "incorrect":
            return str(level)
        if outcome != "correct":
            return UNKNOWN
    return NO_BREAK


def _chains(items: pd.DataFrame) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for entry, part in items.groupby("entry", sort=False):
        breaks: Counter[str] = Counter()
        for _, chain in part.groupby(["question_index", "sample"]):
            breaks[
                first_failed_level(dict(zip(chain["level"], chain["outcome"], strict=True)))
            ] += 1
        total = sum(breaks.values())
        rows.extend(
            {
                "entry": entry,
                "first_failed": key,
                "count": breaks[key],
                "share": breaks[key] / total,
            }
            for key in CHAIN_ORDER
        )
    return pd.DataFrame(rows)


def ladder_rows(tables: LadderTables) -> pd.DataFrame:
    """The ladder's numbers in the CSV's columns (``condition`` ``ladder``).

    ``metric`` ``ladder L<n>``: accuracy (``correct`` of ``total``, interval); ``ladder L<n>
    missing``: how many rungs were missing; ``ladder L<n> baseline``: the constant-answer
    baseline; ``ladder first failed <n|none|unknown>``: the share of chains (``correct``:
    how many, ``total``: all chains).
    """
    if tables.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    levels = tables.levels
    names = {e.label: e.catalogue for e in tables.entries}
    frames = []
    for suffix, value, correct in (
        ("", levels["accuracy"], levels["correct"]),
        (" missing", levels["missing"], levels["missing"]),
        (" baseline", levels["baseline"], None),
    ):
        frames.append(
            pd.DataFrame(
                {
                    "model": levels["entry"],
                    "modality": "vlm",
                    "category": levels["category"],
                    "metric": [f"ladder L{level}{suffix}" for level in levels["level"]],
                    "value": value,
                    "correct": correct,
                    "total": levels["total"],
                    "ci_low": levels["ci_low"] if not suffix else None,
                    "ci_high": levels["ci_high"] if not suffix else None,
                    "condition": "ladder",
                    "catalogue": levels["entry"].map(names),
                }
            )
        )
    chains = tables.chains
    totals = chains.groupby("entry")["count"].transform("sum")
    frames.append(
        pd.DataFrame(
            {
                "model": chains["entry"],
                "modality": "vlm",
                "category": ALL,
                "metric": [f"ladder first failed {k}" for k in chains["first_failed"]],
                "value": chains["share"],
                "correct": chains["count"],
                "total": totals,
                "condition": "ladder",
                "catalogue": chains["entry"].map(names),
            }
        )
    )
    return pd.concat(frames, ignore_index=True).reindex(columns=ROW_COLUMNS)
