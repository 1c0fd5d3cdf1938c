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

import warnings
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import format_index_ranges
from amvicc.report.entries import VARIANT_CONDITION
from amvicc.report.items import Items, category_sort_key
from amvicc.report.options import (
    CHANCE_INDIVIDUAL,
    CHANCE_PAIR,
    ReportOptions,
)

ALL = "all"
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


def _entry_columns(items: Items) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "entry": [e.key for e in items.entries],
            "label": [e.label for e in items.entries],
            "model": [e.model for e in items.entries],
            "modality": [e.modality for e in items.entries],
            "condition": [e.row_condition for e in items.entries],
            "smoke": [e.smoke for e in items.entries],
            "samples": [e.samples for e in items.entries],
        }
    )


# --- the six metrics -------------------------------------------------------------------------


def pair_units(items: Items, options: ReportOptions) -> pd.DataFrame:
    """One row per (model, kind, category, pair), summed over samples: the bootstrap's unit.

    Columns ``ic`` / ``it``: correct items and counted items; ``pc`` / ``pt``: correct pairs
    and counted pairs (one pair per sample); ``im``: missing items; ``pm``: pairs (per sample)
    with a missing item.
    """
    f = items.frame
    slots = (
        f.assign(
            c=(f["outcome"] == "correct").astype("int64"),
            m=(f["outcome"] == "missing").astype("int64"),
        )
        .groupby(["entry", "kind", "category", "pair", "sample"], sort=False)
        .agg(c=("c", "sum"), m=("m", "sum"), n=("c", "size"))
    )
    exclude = options.missing == "exclude"
    slots["it"] = slots["n"] - slots["m"] if exclude else slots["n"]
    slots["pc"] = ((slots["c"] == slots["n"]) & (slots["n"] == 2)).astype("int64")
    slots["pt"] = (slots["m"] == 0).astype("int64") if exclude else 1
    slots["pm"] = (slots["m"] > 0).astype("int64")
    units = (
        slots.rename(columns={"c": "ic", "m": "im"})
        .groupby(["entry", "kind", "category", "pair"], sort=False)[
            ["ic", "it", "pc", "pt", "im", "pm"]
        ]
        .sum()
        .reset_index()
    )
    return units


def metric_table(items: Items, options: ReportOptions) -> pd.DataFrame:
    """Every metric of every model, per category and ``all``, tidy.

    Returns:
        Columns ``entry, label, model, modality, condition, catalogue, smoke, samples,
        category, metric, value, correct, total, missing, ci_low, ci_high`` (``value`` =
        correct / total, NaN when nothing was counted; the interval is NaN without bootstrap;
        ``condition`` empty for a plain run, e.g. ``grain=0.1`` for a perturbed one,
        ``variant=<name>`` for a prompt variant's images; ``catalogue`` the items' catalogue's
        short name, :attr:`Items.catalogue_name`).
    """
    units = pair_units(items, options)
    both = pd.concat([units, units.assign(category=ALL)], ignore_index=True)
    cells = both.groupby(["entry", "kind", "category"], sort=False)[
        ["ic", "it", "pc", "pt", "im", "pm"]
    ].sum()
    intervals = bootstrap_intervals(both, options)
    rows = []
    for which, (correct, total, missing, low, high) in enumerate(
        (("ic", "it", "im", "ind_low", "ind_high"), ("pc", "pt", "pm", "pair_low", "pair_high"))
    ):
        part = cells[[correct, total, missing]].set_axis(["correct", "total", "missing"], axis=1)
        part = part.join(
            intervals[[low, high]].set_axis(["ci_low", "ci_high"], axis=1), how="left"
        ).reset_index()
        part["metric"] = part["kind"].map(lambda kind, i=which: METRICS_BY_KIND[kind][i])
        rows.append(part)
    table = pd.concat(rows, ignore_index=True)
    counted = table["total"].to_numpy(dtype="float64")
    table["value"] = np.divide(
        table["correct"].to_numpy(dtype="float64"),
        counted,
        out=np.full(len(table), np.nan),
        where=counted > 0,
    )
    table = table.merge(_entry_columns(items), on="entry", how="left")
    table["catalogue"] = items.catalogue_name
    table = _sorted(table)
    return table[list(METRIC_COLUMNS)].reset_index(drop=True)


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


def bootstrap_intervals(units: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    """Percentile bootstrap intervals, resampling pairs within each (model, kind, category).

    Each group of n pairs is resampled ``options.bootstrap`` times with multinomial weights
    drawn from a generator seeded by ``(options.seed, n)``: the same data and seed give the
    same interval whatever else is in the report.

    Returns:
        Index ``(entry, kind, category)``; ``ind_low, ind_high, pair_low, pair_high``.
    """
    keys = ["entry", "kind", "category"]
    columns = ["ind_low", "ind_high", "pair_low", "pair_high"]
    if options.bootstrap <= 0 or units.empty:
        index = pd.MultiIndex.from_frame(units[keys].drop_duplicates())
        return pd.DataFrame(np.nan, index=index, columns=columns)
    ordered = units.sort_values([*keys, "pair"], kind="stable").reset_index(drop=True)
    group = ordered.groupby(keys, sort=False).ngroup()
    size = group.map(group.value_counts())
    tail = (1.0 - options.confidence) / 2 * 100
    parts = []
    for n, block in ordered.groupby(size, sort=True):
        block_groups = group[block.index]
        count = block_groups.nunique()
        rng = np.random.default_rng([options.seed, int(n)])
        weights = rng.multinomial(int(n), np.full(int(n), 1.0 / int(n)), size=options.bootstrap)
        weights = weights.astype("float64")
        bounds = []
        for correct, total in (("ic", "it"), ("pc", "pt")):
            num = weights @ block[correct].to_numpy("float64").reshape(count, int(n)).T
            den = weights @ block[total].to_numpy("float64").reshape(count, int(n)).T
            ratio = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
            if np.isnan(ratio).any():  # a resample with nothing counted (exclude policy)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN groups stay NaN
                    bounds.append(np.nanpercentile(ratio, [tail, 100 - tail], axis=0))
            else:
                bounds.append(np.percentile(ratio, [tail, 100 - tail], axis=0))
        firsts = block.drop_duplicates(keys)[keys]
        parts.append(
            firsts.assign(
                ind_low=bounds[0][0],
                ind_high=bounds[0][1],
                pair_low=bounds[1][0],
                pair_high=bounds[1][1],
            )
        )
    return pd.concat(parts).set_index(keys)[columns]


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
    table = grouped.agg(
        count=("question_index", "size"),
        indices=(
            "question_index",
            lambda s: format_index_ranges([int(v) for v in s.unique()], separator=", "),
        ),
    ).reset_index()
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
    f = items.frame[items.frame["entry"].isin(many)]
    if f.empty:
        return pd.DataFrame(columns=columns)
    per_item = (
        f.assign(c=f["outcome"] == "correct", u=f["outcome"] != "missing")
        .groupby(["entry", "kind", "category", "pair", "question_index"], sort=False)
        .agg(passed=("c", "any"), usable=("u", "any"))
        .reset_index()
    )
    exclude = options.missing == "exclude"
    per_item["counted"] = per_item["usable"] | per_item["passed"] if exclude else True
    per_pair = per_item.groupby(["entry", "kind", "category", "pair"], sort=False).agg(
        passed=("passed", "all"), counted=("counted", "all")
    )
    per_pair = per_pair.reset_index()
    rows = []
    for which, frame in enumerate((per_item, per_pair)):
        counted = frame[frame["counted"]]
        both = pd.concat([counted, counted.assign(category=ALL)])
        agg = both.groupby(["entry", "kind", "category"], sort=False).agg(
            pass_correct=("passed", "sum"), pass_total=("passed", "size")
        )
        agg = agg.reset_index()
        agg["metric"] = agg["kind"].map(lambda kind, i=which: METRICS_BY_KIND[kind][i])
        rows.append(agg)
    table = pd.concat(rows, ignore_index=True)
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
