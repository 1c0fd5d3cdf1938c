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
from amvicc.report.codes import remembered
from amvicc.report.metrics import SHORT_NAMES, plain, samples_table
from amvicc.report.rows import empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import number, records


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


def _spread_cells(data: Samples) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    """Per (model label, category, metric): each sample's accuracy, then mean, min, max, sd."""
    if data.spread.empty:
        return {}
    per_sample = data.per_sample
    samples: dict[tuple[str, str, str], list[str]] = {}
    for label, category, metric, sample, value, correct, total in zip(
        per_sample["label"].tolist(),
        per_sample["category"].tolist(),
        per_sample["metric"].tolist(),
        per_sample["sample"].tolist(),
        _values(per_sample["value"]),
        per_sample["correct"].tolist(),
        per_sample["total"].tolist(),
        strict=True,
    ):
        shown = "–" if value is None else f"{value:.3f}"
        samples.setdefault((label, category, metric), []).append(
            f"sample {sample}: {shown} ({correct}/{total})"
        )
    spread = data.spread
    keys = zip(
        spread["label"].tolist(),
        spread["category"].tolist(),
        spread["metric"].tolist(),
        strict=True,
    )
    numbers = (_values(spread[name]) for name in ("mean_at_k", "min", "max", "sd"))
    return {
        key: ("; ".join(samples.get(key, [])), *values)
        for key, *values in zip(keys, *numbers, strict=True)
    }


def _values(column: pd.Series) -> list[Any]:
    """A column's numbers as Python numbers, missing ones None (as :func:`records` gives)."""
    return [None if v != v else v for v in column.tolist()]


def _view(data: Samples, page: Page) -> dict[str, Any]:
    """One tuple of texts per row, each number written once per distinct value."""
    spread = _spread_cells(data)
    shown = remembered(number)
    table = data.table
    rows = []
    for label, smoke, metric, k, category, mean, passed, correct, total in zip(
        table["label"].tolist(),
        table["smoke"].tolist(),
        table["metric"].tolist(),
        table["k"].tolist(),
        table["category"].tolist(),
        _values(table["mean_at_k"]),
        _values(table["pass_at_k"]),
        table["pass_correct"].tolist(),
        table["pass_total"].tolist(),
        strict=True,
    ):
        title, mean, low, high, sd = spread.get(
            (label, category, metric), ("", mean, None, None, None)
        )
        rows.append(
            (
                page.name(label, bool(smoke)),
                SHORT_NAMES[metric],
                k,
                category,
                title,
                shown(mean),
                shown(passed),
                correct,
                total,
                shown(low),
                shown(high),
                shown(sd),
            )
        )
    return {"rows": rows}


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
