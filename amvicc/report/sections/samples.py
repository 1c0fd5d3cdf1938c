"""Samples: mean@k, pass@k and the spread across samples (AMVICC's randomness ablation).

For models with k > 1 samples per slot: each sample's accuracy (CSV rows ``sample=2``), mean@k,
pass@k, and the lowest, highest and standard deviation of the samples' accuracies
(:mod:`amvicc.report.ablations`, :func:`amvicc.report.metrics.samples_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.ablations import per_sample_accuracy, sample_spread
from amvicc.report.metrics import SHORT_NAMES, plain, samples_table
from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records

NO_SPREAD: dict[str, Any] = {"per_sample": "", "min": None, "max": None, "sd": None}


@dataclass(frozen=True, eq=False)
class Samples:
    """The samples tables: pass@k (``table``), each sample's accuracy, and their spread."""

    table: pd.DataFrame
    per_sample: pd.DataFrame
    spread: pd.DataFrame


def _compute(part: Part) -> Samples | None:
    if part.plain_items is None or part.metrics is None:
        return None
    table = samples_table(part.plain_items, plain(part.metrics), part.options)
    per_sample = per_sample_accuracy(part.plain_items, part.options)
    return Samples(table, per_sample, sample_spread(per_sample))


def _rows(data: Samples) -> pd.DataFrame:
    """``sample=<k>`` rows, then ``mean@k``, ``min@k``, ``max@k`` and ``sd@k`` rows."""
    per_sample, spread = data.per_sample, data.spread
    if per_sample.empty:
        return empty_rows()
    rows = [
        row_frame(
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
            row_frame(
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


def _spread_cells(data: Samples) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Per (model label, category, metric): each sample's accuracy, min, max and sd."""
    if data.spread.empty:
        return {}
    samples: dict[tuple[str, str, str], list[str]] = {}
    for row in records(data.per_sample):
        key = (row["label"], row["category"], row["metric"])
        value = "–" if row["value"] is None else f"{row['value']:.3f}"
        samples.setdefault(key, []).append(
            f"sample {row['sample']}: {value} ({row['correct']}/{row['total']})"
        )
    return {
        (row["label"], row["category"], row["metric"]): {
            "per_sample": "; ".join(
                samples.get((row["label"], row["category"], row["metric"]), [])
            ),
            "mean_at_k": row["mean_at_k"],
            "min": row["min"],
            "max": row["max"],
            "sd": row["sd"],
        }
        for row in records(data.spread)
    }


def _view(data: Samples, page: Page) -> dict[str, Any]:
    spread = _spread_cells(data)
    return {
        "rows": [
            {
                **row,
                "name": page.name(row["label"], bool(row["smoke"])),
                "short": SHORT_NAMES[row["metric"]],
                **spread.get((row["label"], row["category"], row["metric"]), NO_SPREAD),
            }
            for row in records(data.table)
        ]
    }


SECTION = Section(
    key="samples",
    title="Samples: mean@k, pass@k and the spread across samples",
    toc="Samples (mean@k, pass@k)",
    compute=_compute,
    rows=_rows,
    document=lambda data: {
        "samples": records(data.table),
        "analyses": {"per_sample": records(data.per_sample), "sample_spread": records(data.spread)},
    },
    view=_view,
    empty=lambda data: data.table.empty,
    exports={
        "samples": lambda part: part["samples"].table if part["samples"] is not None else None,
        "analyses.per_sample": lambda part: (
            None if part["samples"] is None else part["samples"].per_sample
        ),
        "analyses.spread": lambda part: None if part["samples"] is None else part["samples"].spread,
    },
)
