"""Paired comparisons on the same items: model vs model, explicit vs implicit, variant vs base.

Two columns of :class:`~amvicc.report.outcomes.Outcomes` are compared on the items (or pairs)
that count for both. Per category and overall:

- each side's accuracy and the difference ``A − B``;
- a percentile bootstrap interval of the difference, resampling pairs with the weights of
  :class:`~amvicc.report.stats.Resampler` (both sides get the same resample: the interval is
  paired);
- McNemar's exact p-value on the discordant items (``A`` right and ``B`` wrong, and the
  reverse) and, across the categories of one comparison and metric, Holm's adjustment.

Individual metrics compare items, pair metrics compare pairs (a pair is right when both its
items are). Every comparison of every column pair is computed at once, with array operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.codes import ranks, text_column
from amvicc.report.items import category_sort_key
from amvicc.report.metrics import METRICS_BY_KIND
from amvicc.report.outcomes import MISSING, Outcomes
from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.stats import Resampler, holm, mcnemar_p, ratio

COMPARISON_COLUMNS = [
    "model",
    "versus",
    "modality",
    "smoke",
    "category",
    "metric",
    "condition",
    "units",
    "missing",
    "correct",
    "versus_correct",
    "value",
    "versus_value",
    "difference",
    "ci_low",
    "ci_high",
    "model_only",
    "versus_only",
    "p_value",
    "p_holm",
]
GAIN = "explicit-implicit"


def _contrast(
    outcomes: Outcomes,
    resampler: Resampler,
    first: np.ndarray[Any, Any],
    second: np.ndarray[Any, Any],
    pairs: bool,
) -> dict[str, dict[str, np.ndarray[Any, Any]]]:
    """Every statistic of the comparisons ``first[j]`` vs ``second[j]``, per category.

    Returns:
        category -> statistic name -> array over j.
    """
    missing = outcomes.codes == MISSING
    if pairs:
        correct = outcomes.pair_correct()[:, :, None]
        counted = outcomes.pair_counted()[:, :, None]
        missing = missing.any(axis=2, keepdims=True)
    else:
        correct = outcomes.item_correct()
        counted = outcomes.item_counted()
    common = counted[first] & counted[second]  # comparisons × pairs × units
    # Units with a missing item on either side: failures in ``units`` under --missing fail,
    # left out of them under exclude; counted either way, so every accuracy says so.
    either_missing = _units(missing[first] | missing[second])
    right_a = correct[first] & common
    right_b = correct[second] & common
    # Per comparison and pair (float, for the matrix products of the bootstrap).
    only_a = _units(right_a & ~right_b)
    only_b = _units(right_b & ~right_a)
    ahead = (only_a - only_b).astype("float64")  # A's correct minus B's, per pair
    counts = _units(common)
    n_pair = counts.astype("float64")
    right = _units(right_a)
    # Every pair counts the same for every comparison (the usual case under --missing fail):
    # a resample's denominator is then that count times the resample's size, no product.
    same = counts.size and (counts == counts.flat[0]).all()
    # Every unit counts for every column compared: a side's correct units per pair do not
    # depend on the other side, so each column is resampled once (Resampler.difference_interval).
    used = np.union1d(first, second)
    separable = bool(same) and bool(counted[used].all())
    per_column = _units(correct)
    slices = outcomes.category_slices()
    starts = np.array([s.start for _, s in slices[:-1]], dtype=np.int64)

    def per_category(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """Sums per category (columns in :meth:`category_slices` order, ``all`` last)."""
        if not len(starts):
            return np.zeros((x.shape[0], 1), dtype=x.dtype)
        sums = np.add.reduceat(x, starts, axis=1)
        return np.concatenate([sums, x.sum(axis=1, keepdims=True)], axis=1)

    sums = {
        name: per_category(x)
        for name, x in (
            ("a_only", only_a),
            ("b_only", only_b),
            ("right", right),
            ("n", n_pair),
            ("missing", either_missing),
        )
    }
    out: dict[str, dict[str, np.ndarray[Any, Any]]] = {}
    for position, (category, part) in enumerate(slices):
        n = sums["n"][:, position]
        ca = sums["right"][:, position].astype("float64")
        a_only = sums["a_only"][:, position]
        b_only = sums["b_only"][:, position]
        cb = ca - a_only + b_only
        stats = {
            "units": n,
            "missing": sums["missing"][:, position],
            "correct": ca,
            "versus_correct": cb,
            "value": ratio(ca, n),
            "versus_value": ratio(cb, n),
            "difference": ratio(ca - cb, n),
            "model_only": a_only,
            "versus_only": b_only,
        }
        stats["p_value"] = np.where(n > 0, mcnemar_p(a_only, b_only), np.nan)
        weights = resampler.weights(part.stop - part.start)
        if weights is None:
            stats["ci_low"] = stats["ci_high"] = np.full(len(first), np.nan)
        elif same and counts.flat[0] > 0:  # one denominator: integer numerators
            scale = float(counts.flat[0]) * (part.stop - part.start)
            if separable:
                bounds = resampler.difference_interval(per_column[:, part], first, second, scale)
            else:
                bounds = resampler.counts_interval(only_a[:, part] - only_b[:, part], scale)
            assert bounds is not None
            stats["ci_low"], stats["ci_high"] = bounds
        else:
            lead = weights @ ahead[:, part].T  # resamples × comparisons
            counted_weight = weights @ n_pair[:, part].T
            stats["ci_low"], stats["ci_high"] = resampler.interval(ratio(lead, counted_weight))
        out[category] = stats
    _holm_across_categories(out, len(first))
    return out


def _holm_across_categories(out: dict[str, dict[str, np.ndarray[Any, Any]]], count: int) -> None:
    """Add ``p_holm``: each comparison's p-values adjusted across its categories."""
    categories = [c for c in out if c != "all"]
    if categories:
        adjusted = holm(np.stack([out[c]["p_value"] for c in categories], axis=1))
        for position, category in enumerate(categories):
            out[category]["p_holm"] = adjusted[:, position]
    out["all"]["p_holm"] = np.full(count, np.nan)  # overall: one test, nothing to adjust


def _units(flags: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Count the true units (items or the pair) per comparison and pair: the last axis."""
    count = flags[:, :, 0].astype(np.int64)
    for unit in range(1, flags.shape[2]):
        count += flags[:, :, unit]
    return count


_COUNTS = ("units", "missing", "correct", "versus_correct", "model_only", "versus_only")


def _run(
    outcomes: Outcomes,
    resampler: Resampler,
    jobs: list[tuple[int, int, str, str]],
) -> pd.DataFrame:
    """Compare (first column, second column, metric stem, condition) jobs, both metrics.

    The table is built once from numpy columns, already in its order (metric, model,
    versus, then AMVICC's category order: pandas' stable sort of those keys), instead of a
    frame per category and metric sorted on strings.
    """
    if not jobs:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    first = np.array([j[0] for j in jobs])
    second = np.array([j[1] for j in jobs])
    columns = outcomes.columns
    labels = columns["label"].to_numpy(dtype=object)
    smoke = columns["smoke"].to_numpy(dtype=bool)
    metrics, categories, values = [], [], []
    for which, pairs in ((0, False), (1, True)):
        stats = _contrast(outcomes, resampler, first, second, pairs)
        names = np.array([_metric_name(j[2], which) for j in jobs], dtype=object)
        for category, part in stats.items():
            metrics.append(names)
            categories.append(category)
            values.append(part)
    count = len(jobs)
    block = np.repeat(np.arange(len(categories)), count)
    job = np.tile(np.arange(count), len(categories))
    metric_names = np.unique(np.concatenate(metrics))
    metric = np.concatenate([np.searchsorted(metric_names, m) for m in metrics])
    label_rank = ranks(labels)
    names = np.array(categories, dtype=object)
    order = np.lexsort(
        (
            category_sort_key(pd.Series(names)).to_numpy()[block],
            label_rank[second][job],
            label_rank[first][job],
            metric,
        )
    )
    block, job, metric = block[order], job[order], metric[order]
    data: dict[str, Any] = {
        "model": text_column(labels, first[job]),
        "versus": text_column(labels, second[job]),
        "modality": text_column(columns["modality"].to_numpy(dtype=object), first[job]),
        "smoke": (smoke[first] | smoke[second])[job],
        "category": text_column(names, block),
        "metric": text_column(metric_names, metric),
        "condition": text_column(np.array([j[3] for j in jobs], dtype=object), job),
    }
    for name in COMPARISON_COLUMNS[7:]:
        column = np.concatenate([v[name] for v in values])[order]
        data[name] = column.astype("int64") if name in _COUNTS else column
    return pd.DataFrame(data)


def _metric_name(stem: str, which: int) -> str:
    if stem in METRICS_BY_KIND:
        return METRICS_BY_KIND[stem][which]
    return ("individual_", "pair_")[which] + stem


def model_comparisons(outcomes: Outcomes, resampler: Resampler) -> pd.DataFrame:
    """Every pair of models of a modality, per prompt kind (prompt variants aside).

    Returns:
        :data:`COMPARISON_COLUMNS`, one row per (model, versus, metric, category);
        ``condition`` is ``vs=<versus>``.
    """
    columns = outcomes.columns
    labels = [str(label) for label in columns["label"]]
    jobs = []
    for kind in ("implicit", "explicit", "answer"):
        chosen = columns[(columns["kind"] == kind) & (columns["variant"] == "")]
        positions = list(chosen.index)
        for i, a in enumerate(positions):
            for b in positions[i + 1 :]:
                jobs.append((a, b, kind, f"vs={labels[b]}"))
    return _run(outcomes, resampler, jobs)


def explicit_gains(outcomes: Outcomes, resampler: Resampler) -> pd.DataFrame:
    """Explicit − implicit, per image model: does naming the feature in the prompt help?

    Returns:
        :data:`COMPARISON_COLUMNS` with ``metric`` ``individual_gain`` / ``pair_gain``,
        ``versus`` the same model, ``condition`` ``explicit-implicit``; ``model_only``
        counts items (pairs) right only with the explicit prompt, ``versus_only`` those
        right only with the implicit one.
    """
    jobs = [
        (explicit, implicit, "gain", GAIN) for explicit, implicit in _explicit_implicit(outcomes)
    ]
    return _run(outcomes, resampler, jobs)


def _explicit_implicit(outcomes: Outcomes) -> list[tuple[int, int]]:
    """The (explicit, implicit) columns of each image model that has both, in model order."""
    columns = outcomes.columns
    sides = []
    for entry in dict.fromkeys(columns.loc[columns["modality"] == "igm", "entry"]):
        explicit = outcomes.column(str(entry), "explicit")
        implicit = outcomes.column(str(entry), "implicit")
        if explicit is not None and implicit is not None:
            sides.append((explicit, implicit))
    return sides


def variant_comparisons(outcomes: Outcomes, resampler: Resampler) -> pd.DataFrame:
    """Each prompt variant against its baseline: the same model with the catalogue's prompts.

    Returns:
        :data:`COMPARISON_COLUMNS`; ``model`` is the variant, ``versus`` the baseline,
        ``condition`` ``variant=<name>``. Variants without a baseline are left out.
    """
    columns = outcomes.columns
    jobs = []
    for position in np.flatnonzero(columns["variant"].to_numpy(dtype=object) != ""):
        row = columns.iloc[int(position)]
        base = np.flatnonzero(
            (columns["model"] == row["model"]).to_numpy()
            & (columns["modality"] == row["modality"]).to_numpy()
            & (columns["kind"] == row["kind"]).to_numpy()
            & (columns["variant"] == "").to_numpy()
        )
        if len(base):
            jobs.append(
                (int(position), int(base[0]), str(row["kind"]), f"variant={row['variant']}")
            )
    return _run(outcomes, resampler, jobs)


PAIR_GAIN_COLUMNS = ["model", "smoke", "pair", "category", "implicit", "explicit", "gain"]


def pair_gains(outcomes: Outcomes) -> pd.DataFrame:
    """Explicit − implicit per image model and pair: which pairs naming the feature fixed or broke.

    Returns:
        :data:`PAIR_GAIN_COLUMNS`: ``implicit`` / ``explicit`` are the pair outcomes (1 both
        images right, 0 not), ``gain`` their difference (1, 0 or −1); pairs that do not count
        for both prompt kinds are left out.
    """
    columns = outcomes.columns
    correct = outcomes.pair_correct()
    counted = outcomes.pair_counted()
    sides = _explicit_implicit(outcomes)
    if not sides:
        return pd.DataFrame(columns=PAIR_GAIN_COLUMNS)
    explicit, implicit = (np.array(side) for side in zip(*sides, strict=True))
    both = counted[explicit] & counted[implicit]  # models × pairs; rows in model order
    model, pair = np.nonzero(both)
    ex = correct[explicit][both].astype("int64")
    im = correct[implicit][both].astype("int64")
    category, names = pd.factorize(outcomes.pairs["category"])
    return pd.DataFrame(
        {
            "model": text_column(columns["label"].to_numpy(dtype=object), explicit[model]),
            "smoke": columns["smoke"].to_numpy(dtype=bool)[explicit][model],
            "pair": outcomes.pairs["pair"].to_numpy()[pair],
            "category": text_column(np.asarray(names, dtype=object), category[pair]),
            "implicit": im,
            "explicit": ex,
            "gain": ex - im,
        }
    )


def comparison_rows(table: pd.DataFrame, suffix: str, versus: bool) -> pd.DataFrame:
    """Comparison rows for the CSV: ``metric`` + ``suffix``; ``vs=<versus>`` added to the condition.

    ``value`` is the difference, ``total`` the items or pairs compared, ``p_value``
    McNemar's and ``p_adjusted`` Holm's across categories.
    """
    if table.empty:
        return empty_rows()
    condition = table["condition"].astype(str)
    if versus:
        condition = condition + " vs=" + table["versus"].astype(str)
    return row_frame(
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
