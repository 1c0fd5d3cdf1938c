"""Robustness to perturbation: accuracy under grain (blur, JPEG, downscale) beside the clean run.

A perturbed answer run (``amvicc answer --perturb grain:0.1``) is an entry of its own whose
clean counterpart is the same model with the same options and no perturbation. Its accuracy
is in the metric table with its ``condition``; here each condition is put next to the clean
run **on the same items** (question, sample): the within-item drop is clean minus perturbed
accuracy, individual and pair, per category and over all, with a paired bootstrap interval
over MMVP pairs (each resample draws one set of pairs and scores both runs on it).

Under ``--missing fail`` every item counts (a missing one as wrong, in either run); under
``exclude`` an item counts only when both runs have a usable answer, and a pair only when
all four of its answers do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from amvicc.report.entries import parse_condition
from amvicc.report.items import Items, category_sort_key
from amvicc.report.metrics import ALL
from amvicc.report.options import ReportOptions
from amvicc.report.paired import difference_interval

ROBUSTNESS_COLUMNS = (
    "entry",
    "clean_entry",
    "label",
    "model",
    "condition",
    "kind",
    "level",
    "smoke",
    "category",
    "metric",
    "clean",
    "perturbed",
    "drop",
    "ci_low",
    "ci_high",
    "total",
)


def robustness_table(items: Items, options: ReportOptions) -> pd.DataFrame:
    """Clean and perturbed accuracy on the same items, and the drop, per condition.

    Returns:
        :data:`ROBUSTNESS_COLUMNS`: one row per (perturbed entry, category and ``all``,
        ``individual`` / ``pair``): ``clean`` and ``perturbed`` accuracy over the ``total``
        items (or pairs) both count, ``drop`` = clean − perturbed and its interval. A
        perturbed entry whose clean run is not in the report has no rows.
    """
    by_key = {e.key: e for e in items.entries}
    perturbed = [e for e in items.entries if e.condition and e.clean_key in by_key]
    if not perturbed:
        return pd.DataFrame(columns=list(ROBUSTNESS_COLUMNS))
    frame = items.frame
    exclude = options.missing == "exclude"
    rows: list[dict[str, object]] = []
    for entry in perturbed:
        clean = by_key[str(entry.clean_key)]
        keys = ["question_index", "sample"]
        both = frame.loc[frame["entry"] == entry.key, [*keys, "pair", "category", "outcome"]].merge(
            frame.loc[frame["entry"] == clean.key, [*keys, "outcome"]],
            on=keys,
            suffixes=("", "_clean"),
        )
        counted = (
            (both["outcome"] != "missing") & (both["outcome_clean"] != "missing")
            if exclude
            else pd.Series(True, index=both.index)
        )
        items_frame = both.assign(
            n=counted.astype("int64"),
            p=(counted & (both["outcome"] == "correct")).astype("int64"),
            c=(counted & (both["outcome_clean"] == "correct")).astype("int64"),
        )
        slots = items_frame.groupby(["category", "pair", "sample"], sort=False).agg(
            n=("n", "sum"), p=("p", "sum"), c=("c", "sum"), size=("n", "size")
        )
        whole = slots["n"] == 2
        slots["pn"] = whole.astype("int64")
        slots["pp"] = (whole & (slots["p"] == 2)).astype("int64")
        slots["pc"] = (whole & (slots["c"] == 2)).astype("int64")
        units = slots.groupby(["category", "pair"], sort=False)[
            ["n", "p", "c", "pn", "pp", "pc"]
        ].sum()
        units = units.reset_index()
        units = pd.concat([units, units.assign(category=ALL)])
        kind, level = parse_condition(entry.condition)
        for category, group in units.groupby("category", sort=False):
            for metric, (n, clean_k, pert_k) in (
                ("individual", ("n", "c", "p")),
                ("pair", ("pn", "pc", "pp")),
            ):
                total = int(group[n].sum())
                clean_right, pert_right = int(group[clean_k].sum()), int(group[pert_k].sum())
                low, high = difference_interval(
                    group[clean_k].to_numpy(),
                    group[pert_k].to_numpy(),
                    group[n].to_numpy(),
                    options,
                )
                rows.append(
                    {
                        "entry": entry.key,
                        "clean_entry": clean.key,
                        "label": entry.label,
                        "model": entry.model,
                        "condition": entry.condition,
                        "kind": kind,
                        "level": level,
                        "smoke": entry.smoke,
                        "category": category,
                        "metric": metric,
                        "clean": clean_right / total if total else np.nan,
                        "perturbed": pert_right / total if total else np.nan,
                        "drop": (clean_right - pert_right) / total if total else np.nan,
                        "ci_low": low,
                        "ci_high": high,
                        "total": total,
                    }
                )
    table = pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))
    return (
        table.assign(
            _label=table["label"].str.casefold(),
            _category=category_sort_key(table["category"]),
            _metric=table["metric"] != "individual",
        )
        .sort_values(["_label", "clean_entry", "kind", "level", "entry", "_metric", "_category"])[
            list(ROBUSTNESS_COLUMNS)
        ]
        .reset_index(drop=True)
    )
