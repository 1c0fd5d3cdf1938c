"""AMVICC's metrics, failure modes, confidence intervals, samples and agreement, from items.

Definitions (per model, per category and over all categories):

- image models: ``individual_implicit`` / ``individual_explicit`` = correct images / images;
  ``pair_implicit`` / ``pair_explicit`` = pairs whose two images are both correct / pairs
  (AMVICC's I Im, I Ex, P Im, P Ex);
- VLMs: ``individual`` = correct answers / questions, ``pair`` = pairs with both answers
  correct / pairs.

With k samples per slot the numbers count every (item, sample) (that is mean@k) and a pair is
the two items' answers at the same sample; pass@k (an item passes when any of its k samples is
correct, a pair when both its items pass) is reported beside them. Missing items count as
wrong under ``--missing fail`` (AMVICC's rule) and leave the totals under ``exclude``, taking
their pair with them. Intervals: percentile bootstrap over *pairs* (the two items of a pair
share a question, so they are resampled together), seeded.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import format_index_ranges
from amvicc.report.codes import ranks, text_column
from amvicc.report.entries import VARIANT_CONDITION
from amvicc.report.items import Items, category_sort_key
from amvicc.report.options import (
    CHANCE_INDIVIDUAL,
    CHANCE_PAIR,
    ReportOptions,
)
from amvicc.report.stats import Resampler
from amvicc.report.units import ALL as ALL  # the name every section imports from here
from amvicc.report.units import combined, item_units, key_codes, resampled_intervals, split

# (item kind) -> (individual metric, pair metric)
METRICS_BY_KIND: dict[str, tuple[str, str]] = {
    "implicit": ("individual_implicit", "pair_implicit"),
    "explicit": ("individual_explicit", "pair_explicit"),
    "answer": ("individual", "pair"),
}
METRIC_ORDER = (
    "individual_implicit",
    "individual_explicit",
    "pair_implicit",
    "pair_explicit",
    "individual",
    "pair",
)
IGM_METRICS = METRIC_ORDER[:4]
VLM_METRICS = METRIC_ORDER[4:]
# AMVICC's column names.
SHORT_NAMES = {
    "individual_implicit": "I Im",
    "individual_explicit": "I Ex",
    "pair_implicit": "P Im",
    "pair_explicit": "P Ex",
    "individual": "I",
    "pair": "P",
}
ALL_MODELS = "all models"


def is_pair_metric(metric: str) -> bool:
    """Whether a metric counts pairs (else items)."""
    return metric.startswith("pair")


def chance(metric: str) -> float:
    """The accuracy of guessing one of two options: 0.5 per item, 0.25 per pair."""
    return CHANCE_PAIR if is_pair_metric(metric) else CHANCE_INDIVIDUAL


def threshold(metric: str, options: ReportOptions) -> float:
    """The failure-mode threshold of a metric."""
    return options.threshold_pair if is_pair_metric(metric) else options.threshold_individual


# --- the six metrics -------------------------------------------------------------------------


def metric_table(
    items: Items, options: ReportOptions, resampler: Resampler | None = None
) -> pd.DataFrame:
    """Every metric of every model, per category and ``all``, tidy.

    ``resampler``: the report's, whose weights the item-level sections reuse (the same
    matrices: a new one is made from ``options`` without it).

    Returns:
        Columns ``entry, label, model, modality, condition, catalogue, smoke, samples,
        category, metric, value, correct, total, missing, ci_low, ci_high`` (``value`` =
        correct / total, NaN when nothing was counted; the interval is NaN without bootstrap;
        ``condition`` empty for a plain run, e.g. ``grain=0.1`` for a perturbed one,
        ``variant=<name>`` for a prompt variant's images; ``catalogue`` the items' catalogue's
        short name, :attr:`Items.catalogue_name`).
    """
    if items.frame.empty:
        return pd.DataFrame(columns=list(METRIC_COLUMNS))
    units = item_units(items, options)
    groups = len(units.group_entry)
    cells = {
        name: np.bincount(units.group, weights=x, minlength=groups).astype(np.int64)
        for name, x in units.sums.items()
    }
    intervals = resampled_intervals(units.pair, units.group, units.sums, options, resampler)
    by_key = {e.key: e for e in items.entries}
    entries = [by_key[str(key)] for key in units.entries]
    kind_metrics = [METRICS_BY_KIND[str(kind)] for kind in units.kinds]
    # Rows: every group's individual metric, then every group's pair metric.
    group = np.tile(np.arange(groups), 2)
    which = np.repeat([0, 1], groups)
    entry = units.group_entry[group]
    metric_names = np.array(METRIC_ORDER, dtype=object)
    metric = np.array(
        [[METRIC_ORDER.index(m[i]) for m in kind_metrics] for i in (0, 1)], dtype=np.int64
    )[which, units.group_kind[group]]
    category = units.group_category[group]
    labels = np.array([e.label for e in entries], dtype=object)
    category_key = category_sort_key(pd.Series(units.categories)).to_numpy()
    order = np.lexsort(
        (
            metric,
            category_key[category],
            entry,
            ranks(np.array([label.casefold() for label in labels], dtype=object))[entry],
            np.array([e.modality != "igm" for e in entries])[entry],
        )
    )
    group, which, entry, metric, category = (
        x[order] for x in (group, which, entry, metric, category)
    )
    counted = {
        name: np.where(which == 0, cells[ind][group], cells[pair][group])
        for name, ind, pair in (
            ("correct", "ic", "pc"),
            ("total", "it", "pt"),
            ("missing", "im", "pm"),
        )
    }
    total = counted["total"].astype("float64")
    value = np.divide(
        counted["correct"].astype("float64"),
        total,
        out=np.full(len(total), np.nan),
        where=total > 0,
    )
    bounds = np.where(which == 0, intervals[0][:, group], intervals[1][:, group])
    return pd.DataFrame(
        {
            "entry": text_column(units.entries, entry),
            "label": text_column(labels, entry),
            "model": text_column(np.array([e.model for e in entries], dtype=object), entry),
            "modality": text_column(np.array([e.modality for e in entries], dtype=object), entry),
            "condition": text_column(
                np.array([e.row_condition for e in entries], dtype=object), entry
            ),
            "catalogue": text_column(
                np.array([items.catalogue_name], dtype=object), np.zeros(len(entry), dtype=np.int64)
            ),
            "smoke": np.array([e.smoke for e in entries], dtype=bool)[entry],
            "samples": np.array([e.samples for e in entries], dtype=np.int64)[entry],
            "category": text_column(units.categories, category),
            "metric": text_column(metric_names, metric),
            "value": value,
            **counted,
            "ci_low": bounds[0],
            "ci_high": bounds[1],
        }
    )


#: The columns of :func:`metric_table` (and of every table of numbers the CSV is made of).
METRIC_COLUMNS = (
    "entry",
    "label",
    "model",
    "modality",
    "condition",
    "catalogue",
    "smoke",
    "samples",
    "category",
    "metric",
    "value",
    "correct",
    "total",
    "missing",
    "ci_low",
    "ci_high",
)


def plain(table: pd.DataFrame) -> pd.DataFrame:
    """The rows the main tables show: plain runs and prompt variants, not perturbed runs.

    A prompt variant is a model of its own (other prompts, other images); a perturbed answer
    run is the same model on degraded inputs, shown beside its clean run in the robustness
    section instead.
    """
    if "condition" not in table.columns:
        return table
    condition = table["condition"].fillna("").astype(str)
    return table[(condition == "") | condition.str.startswith(VARIANT_CONDITION)]


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    order = {key: i for i, key in enumerate(table["entry"].drop_duplicates())}
    return table.assign(
        _modality=table["modality"] != "igm",
        _label=table["label"].str.casefold(),
        _category=category_sort_key(table["category"]),
        _metric=table["metric"].map(METRIC_ORDER.index),
        _entry=table["entry"].map(order),
    ).sort_values(["_modality", "_label", "_entry", "_category", "_metric"])[table.columns]


# --- failure modes ---------------------------------------------------------------------------


def failure_modes(metrics: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    """The (model, category, metric) cells below their threshold (categories only).

    Returns:
        The failing metric rows with a ``threshold`` column.
    """
    rows = metrics[(metrics["category"] != ALL) & (metrics["total"] > 0)].copy()
    # float even when no row is left (every item missing under --missing exclude)
    rows["threshold"] = rows["metric"].map(lambda m: threshold(m, options)).astype(float)
    failing = rows[rows["value"] < rows["threshold"]]
    return failing.reset_index(drop=True)


def shared_failure_modes(
    metrics: pd.DataFrame, failures: pd.DataFrame, categories: list[str]
) -> pd.DataFrame:
    """Per category, which models of each modality fail there (AMVICC's cross-modal table).

    Returns:
        One row per category: ``category``, ``igm_failing`` / ``vlm_failing`` (labels),
        ``igm_models`` / ``vlm_models`` (models with data there), ``modalities`` (which
        modalities have a failing model) and ``cross_modal`` (both do).
    """
    rated = metrics[(metrics["category"] != ALL) & (metrics["total"] > 0)]
    models = rated.groupby(["category", "modality"])["entry"].nunique().to_dict()
    failing: dict[tuple[str, str], list[str]] = {}
    for code, modality, label in zip(
        failures["category"], failures["modality"], failures["label"], strict=True
    ):
        failing.setdefault((str(code), str(modality)), []).append(str(label))
    rows = []
    for code in categories:
        row: dict[str, object] = {"category": code}
        failing_modalities = []
        for modality in ("igm", "vlm"):
            labels = list(dict.fromkeys(failing.get((code, modality), [])))
            row[f"{modality}_failing"] = labels
            row[f"{modality}_models"] = int(models.get((code, modality), 0))
            if labels:
                failing_modalities.append(modality)
        row["modalities"] = "+".join(failing_modalities)
        row["cross_modal"] = len(failing_modalities) == 2
        rows.append(row)
    return pd.DataFrame(rows)


# --- missing items ---------------------------------------------------------------------------


def missing_summary(items: Items) -> pd.DataFrame:
    """How many items are missing, why and where (question indices per category).

    Returns:
        One row per (model, kind, category, reason): ``count`` and ``indices`` (compact
        ranges such as ``1-4, 9``).
    """
    f = items.frame
    missing = f[f["outcome"] == "missing"]
    columns = ["label", "modality", "kind", "category", "reason", "count", "indices"]
    if missing.empty:
        return pd.DataFrame(columns=columns)
    grouped = missing.groupby(["entry", "label", "modality", "kind", "category", "reason"])
    table = grouped.size().rename("count").reset_index()
    # Each group's questions in one sort, not a Python function per group (hundreds of them).
    group = grouped.ngroup().to_numpy()
    question = missing["question_index"].to_numpy()
    order = np.lexsort((question, group))
    group, question = group[order], question[order]
    bounds = np.searchsorted(group, np.arange(len(table) + 1))
    table["indices"] = [
        format_index_ranges(question[start:end].tolist(), separator=", ")
        for start, end in pairwise(bounds.tolist())
    ]
    table = table.assign(_c=category_sort_key(table["category"])).sort_values(
        ["modality", "label", "kind", "_c", "reason"]
    )
    return table[columns].reset_index(drop=True)


# --- samples ---------------------------------------------------------------------------------


def samples_table(items: Items, metrics: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    """mean@k and pass@k for models with k > 1 samples per slot.

    pass@k: an item passes when any of its k samples is correct, a pair when both its items
    pass. Under ``exclude`` an item all of whose samples are missing is left out, with its
    pair.

    Returns:
        Columns ``entry, label, modality, smoke, category, metric, k, mean_at_k, pass_at_k,
        pass_correct, pass_total``.
    """
    many = {e.key for e in items.entries if e.samples > 1}
    columns = [
        "entry",
        "label",
        "modality",
        "smoke",
        "category",
        "metric",
        "k",
        "mean_at_k",
        "pass_at_k",
        "pass_correct",
        "pass_total",
    ]
    f = items.frame
    keys_of = key_codes(f)
    entry, entries = keys_of.entry, keys_of.entries
    chosen = np.flatnonzero(np.isin(entries, list(many)))
    keep = np.isin(entry, chosen)
    if not keep.any():
        return pd.DataFrame(columns=columns)
    kind, kinds = keys_of.kind, keys_of.kinds
    category, categories = keys_of.category, keys_of.categories
    pair = f["pair"].to_numpy(dtype=np.int64)
    question = f["question_index"].to_numpy(dtype=np.int64)
    outcome = f["outcome"]
    # Per item (its samples together), then per pair (its items together).
    key, radices = combined(
        entry[keep],
        kind[keep],
        category[keep],
        pair[keep] - pair.min(),
        question[keep] - question.min(),
    )
    item_keys, item = np.unique(key, return_inverse=True)
    passed = np.bincount(item, weights=(outcome == "correct").to_numpy(dtype=bool)[keep]) > 0
    usable = np.bincount(item, weights=(outcome != "missing").to_numpy(dtype=bool)[keep]) > 0
    counted = usable | passed if options.missing == "exclude" else np.ones(len(passed), bool)
    pair_keys, in_pair = np.unique(item_keys // radices[-1], return_inverse=True)
    items_per_pair = np.bincount(in_pair)
    pair_passed = np.bincount(in_pair, weights=passed) == items_per_pair
    pair_counted = np.bincount(in_pair, weights=counted) == items_per_pair
    groups = [len(entries), len(kinds), len(categories) + 1]
    parts = []
    for which, (keys, ok, right) in enumerate(
        (
            (item_keys // (radices[-1] * radices[-2]), counted, passed),
            (pair_keys // radices[-2], pair_counted, pair_passed),
        )
    ):
        e, k, c = split(keys[ok], radices[:3])
        group, _ = combined(
            np.concatenate([e, e]),
            np.concatenate([k, k]),
            np.concatenate([c, np.full(len(c), len(categories))]),
            radices=groups,
        )
        totals = np.bincount(group, minlength=int(np.prod(groups)))
        hits = np.bincount(group, weights=np.concatenate([right[ok]] * 2), minlength=len(totals))
        present = np.flatnonzero(totals)
        e, k, c = split(present, groups)
        parts.append(
            pd.DataFrame(
                {
                    "entry": text_column(entries, e),
                    "kind": text_column(kinds, k),
                    "category": text_column(np.append(categories, ALL), c),
                    "pass_correct": hits[present].astype(np.int64),
                    "pass_total": totals[present].astype(np.int64),
                    "metric": [METRICS_BY_KIND[str(kinds[x])][which] for x in k],
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    table["pass_at_k"] = table["pass_correct"] / table["pass_total"]
    table = table.merge(
        metrics[["entry", "category", "metric", "value", "label", "modality", "smoke", "samples"]],
        on=["entry", "category", "metric"],
        how="left",
    ).rename(columns={"value": "mean_at_k", "samples": "k"})
    return _sorted(table[columns]).reset_index(drop=True)


def with_interaction(metrics: pd.DataFrame, rates: Any) -> pd.DataFrame:
    """The metric rows, then the challenge rates in the same columns (the CSV's rows).

    Counts stay whole numbers (nullable: an adjusted rate, a difference, has none).

    Args:
        metrics: :func:`metric_table`'s rows.
        rates: the challenge rates (:class:`~amvicc.report.interaction.Interaction`, or its
            ``metrics`` table).
    """
    table: pd.DataFrame = getattr(rates, "metrics", rates)
    if table.empty:
        return metrics
    combined = pd.concat([metrics, table[list(metrics.columns)]], ignore_index=True)
    return combined.astype({"correct": "Int64", "total": "Int64", "missing": "Int64"})
