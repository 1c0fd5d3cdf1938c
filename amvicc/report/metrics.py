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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import format_index_ranges
from amvicc.report.codes import text_column
from amvicc.report.entries import VARIANT_CONDITION
from amvicc.report.items import Items, category_sort_key
from amvicc.report.options import (
    CHANCE_INDIVIDUAL,
    CHANCE_PAIR,
    ReportOptions,
)
from amvicc.report.stats import Resampler

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


# --- the six metrics -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Units:
    """One entry per (model, kind, category, pair), summed over samples: the bootstrap's unit.

    ``group`` numbers the (model, kind, category) of each unit, its ``category`` ``all`` for
    the copy of every unit in its model's and kind's ``all`` group (:func:`_units`); ``sums``
    holds ``ic`` / ``it`` (correct and counted items), ``pc`` / ``pt`` (correct and counted
    pairs, one per sample), ``im`` (missing items) and ``pm`` (pairs with a missing item).
    """

    pair: np.ndarray[Any, Any]
    group: np.ndarray[Any, Any]
    sums: dict[str, np.ndarray[Any, Any]]
    group_entry: np.ndarray[Any, Any]
    group_kind: np.ndarray[Any, Any]
    group_category: np.ndarray[Any, Any]
    entries: np.ndarray[Any, Any]
    kinds: np.ndarray[Any, Any]
    categories: np.ndarray[Any, Any]


def _codes(column: pd.Series) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    codes, uniques = pd.factorize(column)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


def _units(items: Items, options: ReportOptions) -> _Units:
    """:class:`_Units` of the items, on integer codes (no string is hashed twice)."""
    f = items.frame
    entry, entries = _codes(f["entry"])
    kind, kinds = _codes(f["kind"])
    category, categories = _codes(f["category"])
    pair = f["pair"].to_numpy(dtype=np.int64)
    sample = f["sample"].to_numpy(dtype=np.int64)
    outcome = f["outcome"]
    correct = (outcome == "correct").to_numpy(dtype=bool)
    missing = (outcome == "missing").to_numpy(dtype=bool)
    low = int(pair.min()) if len(pair) else 0
    span = int(pair.max()) - low + 1 if len(pair) else 1
    unit_key = ((entry * len(kinds) + kind) * len(categories) + category) * span + (pair - low)
    unit_keys, unit = np.unique(unit_key, return_inverse=True)
    samples = int(sample.max(initial=0)) + 1
    slot_keys, slot = np.unique(unit * samples + sample, return_inverse=True)
    slot_unit = slot_keys // samples
    c = np.bincount(slot, weights=correct, minlength=len(slot_keys)).astype(np.int64)
    m = np.bincount(slot, weights=missing, minlength=len(slot_keys)).astype(np.int64)
    n = np.bincount(slot, minlength=len(slot_keys))
    exclude = options.missing == "exclude"
    per_slot = {
        "ic": c,
        "it": n - m if exclude else n,
        "pc": ((c == n) & (n == 2)).astype(np.int64),
        "pt": (m == 0).astype(np.int64) if exclude else np.ones(len(n), dtype=np.int64),
        "im": m,
        "pm": (m > 0).astype(np.int64),
    }
    count = len(unit_keys)
    sums = {
        name: np.bincount(slot_unit, weights=x, minlength=count).astype(np.int64)
        for name, x in per_slot.items()
    }
    unit_group = unit_keys // span  # (entry, kind, category)
    all_group = unit_group // len(categories)  # (entry, kind)
    groups, group = np.unique(
        np.concatenate([unit_group * 2, all_group * 2 + 1]), return_inverse=True
    )
    is_all = groups % 2 == 1
    halves = groups // 2
    group_category = np.where(is_all, len(categories), halves % len(categories))
    entry_kind = np.where(is_all, halves, halves // len(categories))
    return _Units(
        pair=np.concatenate([unit_keys % span + low] * 2),
        group=group,
        sums={name: np.concatenate([x, x]) for name, x in sums.items()},
        group_entry=entry_kind // len(kinds),
        group_kind=entry_kind % len(kinds),
        group_category=group_category,
        entries=entries,
        kinds=kinds,
        categories=np.append(categories, ALL).astype(object),
    )


def pair_units(items: Items, options: ReportOptions) -> pd.DataFrame:
    """One row per (model, kind, category, pair), summed over samples: the bootstrap's unit.

    Columns ``ic`` / ``it``: correct items and counted items; ``pc`` / ``pt``: correct pairs
    and counted pairs (one pair per sample); ``im``: missing items; ``pm``: pairs (per sample)
    with a missing item.
    """
    units = _units(items, options)
    real = units.group_category[units.group] < len(units.categories) - 1  # not the ``all`` copy
    group = units.group[real]
    return pd.DataFrame(
        {
            "entry": units.entries[units.group_entry[group]],
            "kind": units.kinds[units.group_kind[group]],
            "category": units.categories[units.group_category[group]],
            "pair": units.pair[real],
            **{name: x[real] for name, x in units.sums.items()},
        }
    )


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
    units = _units(items, options)
    groups = len(units.group_entry)
    cells = {
        name: np.bincount(units.group, weights=x, minlength=groups).astype(np.int64)
        for name, x in units.sums.items()
    }
    intervals = _intervals(units.pair, units.group, units.sums, options, resampler)
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
            _ranks([label.casefold() for label in labels])[entry],
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


def _ranks(texts: list[str]) -> np.ndarray[Any, Any]:
    _, inverse = np.unique(np.array(texts, dtype=object), return_inverse=True)
    return np.asarray(inverse)


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
    drawn from a generator seeded by ``(options.seed, n)`` (:class:`Resampler`'s): the same
    data and seed give the same interval whatever else is in the report.

    Args:
        units: one row per (model, kind, category, pair), as :func:`pair_units` gives.
        options: resamples, seed and confidence.

    Returns:
        Index ``(entry, kind, category)``; ``ind_low, ind_high, pair_low, pair_high``.
    """
    keys = ["entry", "kind", "category"]
    group, firsts = pd.MultiIndex.from_frame(units[keys]).factorize()
    sums = {name: units[name].to_numpy(dtype=np.int64) for name in ("ic", "it", "pc", "pt")}
    ind, pair = _intervals(units["pair"].to_numpy(), np.asarray(group), sums, options)
    return pd.DataFrame(
        {"ind_low": ind[0], "ind_high": ind[1], "pair_low": pair[0], "pair_high": pair[1]},
        index=firsts,
    )


def _intervals(
    pair: np.ndarray[Any, Any],
    group: np.ndarray[Any, Any],
    sums: dict[str, np.ndarray[Any, Any]],
    options: ReportOptions,
    resampler: Resampler | None = None,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """:func:`bootstrap_intervals` on arrays: ``(low, high)`` × groups, individual and pair.

    The groups of one size are resampled together, each group's pairs in order.
    """
    groups = int(group.max()) + 1 if len(group) else 0
    out = (np.full((2, groups), np.nan), np.full((2, groups), np.nan))
    if resampler is None:
        resampler = Resampler(options.bootstrap, options.seed, options.confidence)
    if options.bootstrap <= 0 or not groups:
        return out
    ordered = np.lexsort((pair, group))
    sizes = np.bincount(group, minlength=groups)
    tail = (1.0 - options.confidence) / 2 * 100
    for n in np.unique(sizes[sizes > 0]).tolist():
        chosen = np.flatnonzero(sizes == n)
        rows = ordered[np.isin(group[ordered], chosen)]
        weights = resampler.weights(n)
        assert weights is not None
        for which, (correct, total) in enumerate((("ic", "it"), ("pc", "pt"))):
            num = weights @ sums[correct][rows].astype("float64").reshape(len(chosen), n).T
            den = weights @ sums[total][rows].astype("float64").reshape(len(chosen), n).T
            ratio = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
            if np.isnan(ratio).any():  # a resample with nothing counted (exclude policy)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN groups stay NaN
                    bounds = np.nanpercentile(ratio, [tail, 100 - tail], axis=0)
            else:
                bounds = np.percentile(ratio, [tail, 100 - tail], axis=0)
            out[which][:, chosen] = bounds
    return out


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
