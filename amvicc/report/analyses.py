"""The report's item-level sections, computed together, and their rows for the CSV.

Beyond the per-category accuracies (:mod:`amvicc.report.metrics`), a report answers the
cross-modal question item by item and holds AMVICC's ablations:

- concordance of VLM and image-model pair outcomes, and the shared blind spots
  (:mod:`amvicc.report.crossmodal`);
- paired comparisons between models, explicit − implicit gains, prompt variants against
  their baseline (:mod:`amvicc.report.comparisons`);
- each sample's accuracy, mean@k and the spread across samples (:mod:`amvicc.report.ablations`);
- constant-answer baselines (:mod:`amvicc.report.baselines`);
- tokens and cost (:mod:`amvicc.report.usage`);
- imported sheets and the cells a raw reading counts otherwise (:mod:`amvicc.report.sheetnotes`).

All bootstrap intervals share one resampling matrix per group size
(:class:`~amvicc.report.stats.Resampler`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from amvicc.report.ablations import per_sample_accuracy, sample_spread
from amvicc.report.baselines import constant_baselines
from amvicc.report.comparisons import (
    explicit_gains,
    model_comparisons,
    pair_gains,
    variant_comparisons,
)
from amvicc.report.crossmodal import blind_spots, concordance_table
from amvicc.report.items import Items
from amvicc.report.options import ReportOptions
from amvicc.report.outcomes import Outcomes, collect_outcomes
from amvicc.report.sheetnotes import raw_cell_differences, sheet_sources
from amvicc.report.stats import Resampler
from amvicc.report.usage import load_prices, usage_table
from amvicc.store import Store

ROW_COLUMNS = [
    "model",
    "modality",
    "category",
    "metric",
    "value",
    "correct",
    "total",
    "ci_low",
    "ci_high",
    "condition",
    "p_value",
    "p_adjusted",
    "catalogue",
]
CROSS = "vlm×igm"
T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Analyses:
    """Every item-level table of a report.

    Attributes:
        outcomes: the first sample of every item, as an array.
        concordance: VLM × image model pair outcomes, per category (crossmodal).
        blind_spots: pairs every pooled model of both modalities fails.
        comparisons: every pair of models of a modality, per prompt kind.
        gains: explicit − implicit per image model, per category.
        pair_gains: explicit − implicit per image model and pair.
        variants: each prompt variant against its baseline.
        per_sample: each sample's accuracy (models with k > 1).
        spread: mean@k, min, max and standard deviation across samples.
        baselines: always (a), always (b) and chance.
        usage: requests, tokens and cost per model.
        currency: the prices' currency ("" without prices).
        raw_cells: results cells a raw reading of padded sheet cells would change.
        sheets: per imported model, the grade sheets behind it.
        catalogue: the short name of the catalogue the items are on (every row's).
        timings: seconds per section, for the benchmark.
    """

    outcomes: Outcomes
    concordance: pd.DataFrame
    blind_spots: pd.DataFrame
    comparisons: pd.DataFrame
    gains: pd.DataFrame
    pair_gains: pd.DataFrame
    variants: pd.DataFrame
    per_sample: pd.DataFrame
    spread: pd.DataFrame
    baselines: pd.DataFrame
    usage: pd.DataFrame
    currency: str
    raw_cells: pd.DataFrame
    sheets: dict[str, list[str]]
    catalogue: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def compute_analyses(store: Store, items: Items, options: ReportOptions) -> Analyses:
    """Compute every item-level section of the report (no figures).

    Raises:
        UserError: a ``--prices`` file that cannot be used.
    """
    timings: dict[str, float] = {}

    def timed(name: str, make: Callable[[], T]) -> T:
        start = time.perf_counter()
        value = make()
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
        return value

    prices = load_prices(options.prices) if options.prices is not None else None
    resampler = Resampler(options.bootstrap, options.seed, options.confidence)
    outcomes = timed("outcomes", lambda: collect_outcomes(items, options.missing))
    concordance = timed("concordance", lambda: concordance_table(outcomes, resampler))
    spots = timed("concordance", lambda: blind_spots(outcomes))
    comparisons = timed("comparisons", lambda: model_comparisons(outcomes, resampler))
    gains = timed("gains", lambda: explicit_gains(outcomes, resampler))
    per_pair = timed("gains", lambda: pair_gains(outcomes))
    variants = timed("ablations", lambda: variant_comparisons(outcomes, resampler))
    per_sample = timed("ablations", lambda: per_sample_accuracy(items, options))
    spread = timed("ablations", lambda: sample_spread(per_sample))
    baselines = timed("baselines", lambda: constant_baselines(items.catalogue))
    usage = timed("usage", lambda: usage_table(store, items, prices))
    raw_cells = timed("sheets", lambda: raw_cell_differences(store, items, options))
    sheets = timed("sheets", lambda: sheet_sources(items))
    return Analyses(
        outcomes=outcomes,
        concordance=concordance,
        blind_spots=spots,
        comparisons=comparisons,
        gains=gains,
        pair_gains=per_pair,
        variants=variants,
        per_sample=per_sample,
        spread=spread,
        baselines=baselines,
        usage=usage,
        currency=prices.currency if prices is not None else "",
        raw_cells=raw_cells,
        sheets=sheets,
        catalogue=items.catalogue_name,
        timings=timings,
    )


# --- rows for the CSV ------------------------------------------------------------------------


def _frame(**columns: Any) -> pd.DataFrame:
    length = max(
        (len(v) for v in columns.values() if isinstance(v, list | np.ndarray | pd.Series)),
        default=0,
    )
    filled = {
        name: (value if isinstance(value, list | np.ndarray | pd.Series) else [value] * length)
        for name, value in columns.items()
    }
    frame = pd.DataFrame({name: pd.Series(v).reset_index(drop=True) for name, v in filled.items()})
    return frame.reindex(columns=ROW_COLUMNS)


def analysis_rows(analyses: Analyses) -> pd.DataFrame:
    """One row per number of the item-level sections, in the CSV's columns.

    ``condition`` says what a row is beside the plain accuracies: ``sample=2``,
    ``mean@3`` / ``min@3`` / ``max@3`` / ``sd@3``, ``vs=<model>`` (a paired comparison:
    ``value`` is the difference, ``total`` the items or pairs compared, ``p_value``
    McNemar's, ``p_adjusted`` Holm's across categories), ``explicit-implicit`` (the gain),
    ``variant=<name> vs=<baseline>``, ``concordance`` / ``concordance pooled`` (``model``
    is ``<VLM> × <image model>``; ``p_value`` of the odds ratio is Fisher's), ``baseline``,
    ``usage`` and ``raw sheet cells``. Every row is on the report's catalogue
    (``catalogue``).
    """
    parts = [
        _per_sample_rows(analyses.per_sample, analyses.spread),
        _comparison_rows(analyses.comparisons, "_difference", versus=False),
        _comparison_rows(analyses.gains, "", versus=False),
        _comparison_rows(analyses.variants, "_difference", versus=True),
        _concordance_rows(analyses.concordance),
        _baseline_rows(analyses.baselines),
        _usage_rows(analyses.usage),
        _raw_cell_rows(analyses.raw_cells),
    ]
    kept = [p for p in parts if not p.empty]
    if not kept:
        return pd.DataFrame(columns=ROW_COLUMNS)
    rows = pd.concat(kept, ignore_index=True)
    rows["catalogue"] = analyses.catalogue
    return rows[ROW_COLUMNS]


def _per_sample_rows(per_sample: pd.DataFrame, spread: pd.DataFrame) -> pd.DataFrame:
    if per_sample.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    rows = [
        _frame(
            model=per_sample["label"],
            modality=per_sample["modality"],
            category=per_sample["category"],
            metric=per_sample["metric"],
            value=per_sample["value"],
            correct=per_sample["correct"],
            total=per_sample["total"],
            condition=[f"sample={s}" for s in per_sample["sample"]],
        )
    ]
    counts = {
        (str(e), str(c), str(m), int(s)): (int(x), int(t))
        for e, c, m, s, x, t in zip(
            per_sample["entry"],
            per_sample["category"],
            per_sample["metric"],
            per_sample["sample"],
            per_sample["correct"],
            per_sample["total"],
            strict=True,
        )
    }
    for stat in ("mean_at_k", "min", "max", "sd"):
        name = "mean" if stat == "mean_at_k" else stat
        correct: list[object] = [None] * len(spread)
        total: list[object] = [None] * len(spread)
        if stat in ("min", "max"):
            for position, row in enumerate(spread.to_dict(orient="records")):
                which = row[f"{stat}_sample"]
                if isinstance(which, int | np.integer):
                    key = (str(row["entry"]), str(row["category"]), str(row["metric"]), int(which))
                    correct[position], total[position] = counts[key]
        rows.append(
            _frame(
                model=spread["label"],
                modality=spread["modality"],
                category=spread["category"],
                metric=spread["metric"],
                value=spread[stat],
                correct=correct,
                total=total,
                condition=[f"{name}@{k}" for k in spread["k"]],
            )
        )
    return pd.concat(rows, ignore_index=True)


def _comparison_rows(table: pd.DataFrame, suffix: str, versus: bool) -> pd.DataFrame:
    """Comparison rows: ``metric`` + ``suffix``; ``vs=<versus>`` added to the condition."""
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    condition = table["condition"].astype(str)
    if versus:
        condition = condition + " vs=" + table["versus"].astype(str)
    return _frame(
        model=table["model"],
        modality=table["modality"],
        category=table["category"],
        metric=table["metric"].astype(str) + suffix,
        value=table["difference"],
        total=table["units"],
        ci_low=table["ci_low"],
        ci_high=table["ci_high"],
        condition=condition,
        p_value=table["p_value"],
        p_adjusted=table["p_holm"],
    )


def _concordance_rows(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    model = [f"{v} × {i}" for v, i in zip(table["vlm"], table["igm"], strict=True)]
    condition = ["concordance pooled" if s == "pooled" else "concordance" for s in table["scope"]]
    pairs = table["pairs"]
    common: dict[str, Any] = {
        "model": model,
        "modality": CROSS,
        "category": table["category"],
        "condition": condition,
    }
    parts = [
        _frame(
            **common,
            metric="concordance_agreement",
            value=table["agreement"],
            correct=table["both_pass"] + table["both_fail"],
            total=pairs,
            ci_low=table["agreement_low"],
            ci_high=table["agreement_high"],
        ),
        _frame(
            **common,
            metric="concordance_kappa",
            value=table["kappa"],
            total=pairs,
            ci_low=table["kappa_low"],
            ci_high=table["kappa_high"],
        ),
        _frame(
            **common,
            metric="concordance_phi",
            value=table["phi"],
            total=pairs,
            ci_low=table["phi_low"],
            ci_high=table["phi_high"],
        ),
        _frame(
            **common,
            metric="concordance_odds_ratio",
            value=table["odds_ratio"],
            total=pairs,
            p_value=table["fisher_p"],
        ),
    ]
    for cell in ("both_pass", "vlm_only", "igm_only", "both_fail"):
        share = np.divide(
            table[cell].to_numpy("float64"),
            pairs.to_numpy("float64"),
            out=np.full(len(table), np.nan),
            where=pairs.to_numpy() > 0,
        )
        parts.append(
            _frame(
                **common,
                metric=f"concordance_{cell}",
                value=share,
                correct=table[cell],
                total=pairs,
            )
        )
    return pd.concat(parts, ignore_index=True)


def _baseline_rows(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    return _frame(
        model=table["baseline"],
        modality="vlm",
        category=table["category"],
        metric=table["metric"],
        value=table["value"],
        correct=table["correct"],
        total=table["total"],
        condition="baseline",
    )


def _usage_rows(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    common: dict[str, Any] = {
        "model": table["label"],
        "modality": table["modality"],
        "category": "all",
        "condition": "usage",
    }
    return pd.concat(
        [
            _frame(**common, metric="requests", value=table["requests"], total=table["requests"]),
            _frame(
                **common,
                metric="prompt_tokens",
                value=table["prompt_tokens"],
                correct=table["with_usage"],
                total=table["requests"],
            ),
            _frame(
                **common,
                metric="completion_tokens",
                value=table["completion_tokens"],
                correct=table["with_usage"],
                total=table["requests"],
            ),
            _frame(
                **common,
                metric="cost",
                value=table["cost"],
                correct=table["cost_requests"],
                total=table["requests"],
            ),
        ],
        ignore_index=True,
    )


def _raw_cell_rows(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    return _frame(
        model=table["label"],
        modality="igm",
        category=table["category"],
        metric=table["metric"],
        value=table["raw_value"],
        correct=table["raw_correct"],
        total=table["total"],
        condition="raw sheet cells",
    )
