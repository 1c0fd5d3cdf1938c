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

from amvicc.report.items import Items, category_sort_key
from amvicc.report.metrics import ALL, METRIC_ORDER, METRICS_BY_KIND
from amvicc.report.options import ReportOptions

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
    f = items.frame[items.frame["entry"].isin(many)]
    if f.empty:
        return pd.DataFrame(columns=PER_SAMPLE_COLUMNS)
    slots = (
        f.assign(
            c=(f["outcome"] == "correct").astype("int64"),
            m=(f["outcome"] == "missing").astype("int64"),
        )
        .groupby(["entry", "kind", "category", "pair", "sample"], sort=False)
        .agg(c=("c", "sum"), m=("m", "sum"), n=("c", "size"))
        .reset_index()
    )
    exclude = options.missing == "exclude"
    slots["it"] = slots["n"] - slots["m"] if exclude else slots["n"]
    slots["pc"] = ((slots["c"] == slots["n"]) & (slots["n"] == 2)).astype("int64")
    slots["pt"] = (slots["m"] == 0).astype("int64") if exclude else 1
    both = pd.concat([slots, slots.assign(category=ALL)], ignore_index=True)
    sums = both.groupby(["entry", "kind", "category", "sample"], sort=False)[
        ["c", "it", "pc", "pt"]
    ].sum()
    parts = []
    for which, (correct, total) in enumerate((("c", "it"), ("pc", "pt"))):
        part = sums[[correct, total]].set_axis(["correct", "total"], axis=1).reset_index()
        part["metric"] = part["kind"].map(lambda kind, i=which: METRICS_BY_KIND[kind][i])
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    table["value"] = np.divide(
        table["correct"].to_numpy("float64"),
        table["total"].to_numpy("float64"),
        out=np.full(len(table), np.nan),
        where=table["total"].to_numpy() > 0,
    )
    table["sample"] = table["sample"].astype("int64") + 1
    table["label"] = table["entry"].map(lambda key: many[key].label)
    table["modality"] = table["entry"].map(lambda key: many[key].modality)
    table["smoke"] = table["entry"].map(lambda key: many[key].smoke)
    table["k"] = table["entry"].map(lambda key: many[key].samples)
    ordered = table.assign(
        _modality=table["modality"] != "igm",
        _label=table["label"].str.casefold(),
        _category=category_sort_key(table["category"]),
        _metric=table["metric"].map(METRIC_ORDER.index),
    ).sort_values(["_modality", "_label", "entry", "_category", "_metric", "sample"])
    return ordered[PER_SAMPLE_COLUMNS].reset_index(drop=True)


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

    pandas' own two-pass formula (``Series.std``: the mean, then the squared deviations),
    per group on a numpy slice: the same numbers, without a Python call into pandas per
    group (a report of fifty models has thousands of groups).
    """
    codes = group.to_numpy()
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=int(codes.max(initial=-1)) + 1))
    out = []
    start = 0
    for end in ends.tolist():
        chunk = values[order[start:end]]
        count = end - start
        start = end
        if count < 2:
            out.append(np.nan)
            continue
        mean = chunk.sum(dtype=np.float64) / count
        out.append(float(np.sqrt(((mean - chunk) ** 2).sum(dtype=np.float64) / (count - 1))))
    return out
