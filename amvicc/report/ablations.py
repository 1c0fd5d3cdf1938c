"""AMVICC's randomness ablation: the same prompts k times, and how far the samples spread.

For a model with k samples per slot (AMVICC's sheets write sample k of question N as ``N-k``),
per category and overall and for each metric:

- each sample's own accuracy (a pair is both its questions right *within one sample*);
- mean@k: the mean over samples of those accuracies (under ``--missing fail`` every sample
  has the same denominator, and mean@k equals the pooled accuracy of the results table);
- the spread: the lowest and highest sample and their standard deviation (n − 1 in the
  denominator: the k samples estimate the model's sample-to-sample variation).

pass@k stays in :func:`amvicc.report.metrics.samples_table`. The prompt-wording ablation is a
paired comparison (:func:`amvicc.report.comparisons.variant_comparisons`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.codes import ranks, text_column
from amvicc.report.entries import ModelEntry
from amvicc.report.items import Items, category_sort_key
from amvicc.report.metrics import ALL, METRIC_ORDER, METRICS_BY_KIND
from amvicc.report.options import ReportOptions
from amvicc.report.units import Slots, combined, item_slots, split

PER_SAMPLE_COLUMNS = [
    "entry",
    "label",
    "modality",
    "smoke",
    "category",
    "metric",
    "k",
    "sample",
    "correct",
    "total",
    "value",
]
SPREAD_COLUMNS = [
    "entry",
    "label",
    "modality",
    "smoke",
    "category",
    "metric",
    "k",
    "mean_at_k",
    "min",
    "max",
    "sd",
    "min_sample",
    "max_sample",
]


def per_sample_accuracy(items: Items, options: ReportOptions) -> pd.DataFrame:
    """Each sample's accuracy, for the models with more than one sample per slot.

    Returns:
        :data:`PER_SAMPLE_COLUMNS`; ``sample`` counts from 1 (AMVICC's ``N-k``).
    """
    many = {e.key: e for e in items.entries if e.samples > 1}
    if not many or items.frame.empty:
        return pd.DataFrame(columns=PER_SAMPLE_COLUMNS)
    slots = item_slots(items)
    keep = np.isin(slots.entries, list(many))[slots.entry]
    if not keep.any():
        return pd.DataFrame(columns=PER_SAMPLE_COLUMNS)
    counts = slots.counts(options)
    categories = len(slots.categories)
    entry, kind, category, sample = (
        np.concatenate([x[keep], x[keep]])
        for x in (slots.entry, slots.kind, slots.category, slots.sample)
    )
    category[keep.sum() :] = categories  # every slot again in its ``all`` group
    radices = [len(slots.entries), len(slots.kinds), categories + 1, int(sample.max()) + 1]
    key, _ = combined(entry, kind, category, sample, radices=radices)
    keys, group = np.unique(key, return_inverse=True)
    sums = {
        name: np.bincount(group, weights=np.concatenate([counts[name][keep]] * 2)).astype(np.int64)
        for name in ("ic", "it", "pc", "pt")
    }
    entry, kind, category, sample = split(keys, radices)
    entries = [many[str(key)] for key in slots.entries[np.unique(entry)]]
    by_code = dict(zip(np.unique(entry).tolist(), entries, strict=True))
    return _per_sample_rows(slots, by_code, entry, kind, category, sample, sums)


def _per_sample_rows(
    slots: Slots,
    by_code: dict[int, ModelEntry],
    entry: np.ndarray[Any, Any],
    kind: np.ndarray[Any, Any],
    category: np.ndarray[Any, Any],
    sample: np.ndarray[Any, Any],
    sums: dict[str, np.ndarray[Any, Any]],
) -> pd.DataFrame:
    """The per-sample table from its groups' sums: both metrics, in the report's order."""
    rows = len(entry)
    which = np.repeat([0, 1], rows)
    group = np.tile(np.arange(rows), 2)
    entry, kind, category, sample = (x[group] for x in (entry, kind, category, sample))
    metric = np.array(
        [[METRIC_ORDER.index(METRICS_BY_KIND[str(k)][i]) for k in slots.kinds] for i in (0, 1)]
    )[which, kind]
    correct = np.where(which == 0, sums["ic"][group], sums["pc"][group])
    total = np.where(which == 0, sums["it"][group], sums["pt"][group])
    codes = np.arange(len(slots.entries))
    info = {code: by_code.get(code) for code in codes.tolist()}
    label = np.array([e.label if e else "" for e in info.values()], dtype=object)
    modality = np.array([e.modality if e else "" for e in info.values()], dtype=object)
    names = np.append(slots.categories, ALL).astype(object)
    order = np.lexsort(
        (
            sample,
            metric,
            category_sort_key(pd.Series(names)).to_numpy()[category],
            ranks(slots.entries)[entry],
            ranks(np.array([t.casefold() for t in label], dtype=object))[entry],
            (modality != "igm")[entry],
        )
    )
    entry, category, sample, metric, correct, total = (
        x[order] for x in (entry, category, sample, metric, correct, total)
    )
    return pd.DataFrame(
        {
            "entry": text_column(slots.entries, entry),
            "label": text_column(label, entry),
            "modality": text_column(modality, entry),
            "smoke": np.array([bool(e and e.smoke) for e in info.values()])[entry],
            "category": text_column(names, category),
            "metric": text_column(np.array(METRIC_ORDER, dtype=object), metric),
            "k": np.array([e.samples if e else 0 for e in info.values()], dtype=np.int64)[entry],
            "sample": sample + 1,
            "correct": correct,
            "total": total,
            "value": np.divide(
                correct.astype("float64"),
                total.astype("float64"),
                out=np.full(len(total), np.nan),
                where=total > 0,
            ),
        }
    )


def sample_spread(per_sample: pd.DataFrame) -> pd.DataFrame:
    """mean@k, the lowest and highest sample and the standard deviation across samples.

    Returns:
        :data:`SPREAD_COLUMNS` (``min_sample`` / ``max_sample``: which sample, from 1).
    """
    if per_sample.empty:
        return pd.DataFrame(columns=SPREAD_COLUMNS)
    keys = ["entry", "label", "modality", "smoke", "category", "metric", "k"]
    usable = per_sample[per_sample["value"].notna()]
    groups = usable.groupby(keys, sort=False)["value"]
    table = groups.agg(mean_at_k="mean", min="min", max="max")
    table["sd"] = _standard_deviations(usable["value"].to_numpy("float64"), groups.ngroup())
    samples = usable["sample"]
    table["min_sample"] = samples.loc[groups.idxmin()].to_numpy()
    table["max_sample"] = samples.loc[groups.idxmax()].to_numpy()
    every = per_sample[keys].drop_duplicates()
    return every.merge(table.reset_index(), on=keys, how="left")[SPREAD_COLUMNS].reset_index(
        drop=True
    )


def _standard_deviations(values: np.ndarray[Any, Any], group: pd.Series) -> list[float]:
    """Each group's sample standard deviation (n − 1), in group order.

    pandas' own two-pass formula (``Series.std``: the mean, then the squared deviations).
    Groups of fewer than eight values (k samples; numpy adds so few one after the other)
    are summed a column at a time over a groups × k matrix, every group at once and in
    the same order; larger groups one by one.
    """
    codes = group.to_numpy()
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=int(codes.max(initial=-1)) + 1)
    if not len(counts) or counts.max() >= 8:
        return _standard_deviations_one_by_one(values[order], counts)
    starts = np.cumsum(counts) - counts
    rows = codes[order]
    columns = np.arange(len(order)) - starts[rows]
    matrix = np.zeros((len(counts), int(counts.max())))
    matrix[rows, columns] = values[order]
    inside = np.zeros(matrix.shape, dtype=bool)
    inside[rows, columns] = True
    means = _sequential_sums(matrix) / np.maximum(counts, 1)
    squares = np.where(inside, (means[:, None] - matrix) ** 2, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(_sequential_sums(squares) / (counts - 1))
    out: list[float] = np.where(counts < 2, np.nan, sd).tolist()
    return out


def _sequential_sums(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each row's sum, added left to right from 0.0 (as numpy sums fewer than eight values)."""
    total = np.zeros(matrix.shape[0])
    for column in matrix.T:
        total = total + column
    return total


def _standard_deviations_one_by_one(ordered: np.ndarray[Any, Any], counts: Any) -> list[float]:
    out = []
    start = 0
    for count in counts.tolist():
        chunk = ordered[start : start + count]
        start += count
        if count < 2:
            out.append(np.nan)
            continue
        mean = chunk.sum(dtype=np.float64) / count
        out.append(float(np.sqrt(((mean - chunk) ** 2).sum(dtype=np.float64) / (count - 1))))
    return out
