"""Figures of the item-level sections (matplotlib, Agg, no pyplot state).

- :func:`concordance_figure`: per category, how the pairs split between both modalities
  passing, one passing and both failing, beside Cohen's κ with its interval;
- :func:`item_heatmap_figure`: questions × models, both modalities, one cell per item;
- :func:`comparison_figure`: the models × models matrix of accuracy differences.

Layouts are fixed in inches (no tight or constrained layout): measuring hundreds of tick
labels takes seconds at fifty models.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from amvicc.report.metrics import SHORT_NAMES

CELL_COLOURS = ("#2e7d32", "#9ccc65", "#ffb74d", "#c62828")  # both pass .. both fail
OUTCOME_COLOURS = ListedColormap(
    ["#ffffff", "#bdbdbd", "#d84315", "#43a047"]
)  # out, missing, wrong, right


def concordance_figure(rows: pd.DataFrame, title: str) -> Figure | None:
    """Stacked shares of the four cells per category, and κ with its interval.

    Args:
        rows: one comparison's concordance rows (one per category, ``all`` last).
        title: what is compared, for the figure's title.
    """
    if rows.empty:
        return None
    categories = list(rows["category"])
    y = np.arange(len(categories))[::-1]
    figure = Figure(figsize=(9.0, 0.42 * len(categories) + 1.6))
    bars = figure.add_axes((0.08, 0.22, 0.5, 0.66))
    left = np.zeros(len(rows))
    pairs = rows["pairs"].to_numpy("float64")
    names = (
        ("both_pass", "both pass"),
        ("vlm_only", "only the VLM passes"),
        ("igm_only", "only the IGM passes"),
        ("both_fail", "both fail"),
    )
    for (column, legend), colour in zip(names, CELL_COLOURS, strict=True):
        share = np.divide(
            rows[column].to_numpy("float64"), pairs, out=np.zeros(len(rows)), where=pairs > 0
        )
        bars.barh(y, share, left=left, color=colour, label=legend, height=0.7)
        left += share
    bars.set_yticks(y, categories, fontsize=8)
    bars.set_xlim(0, 1)
    bars.set_xlabel("share of pairs", fontsize=8)
    bars.legend(fontsize=7, ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    kappa = figure.add_axes((0.66, 0.22, 0.3, 0.66))
    values = rows["kappa"].to_numpy("float64")
    low = rows["kappa_low"].to_numpy("float64")
    high = rows["kappa_high"].to_numpy("float64")
    error = np.vstack([values - low, high - values])
    error = np.where(np.isnan(error), 0.0, np.abs(error))
    kappa.errorbar(values, y, xerr=error, fmt="o", color="#37474f", markersize=4, capsize=2)
    kappa.axvline(0, color="grey", linestyle="--", linewidth=1)
    kappa.set_yticks(y, [])
    kappa.set_xlim(-1, 1)
    kappa.set_xlabel("Cohen's κ (95% interval)", fontsize=8)
    figure.suptitle(title, fontsize=10)
    return figure


def item_heatmap_figure(
    labels: list[str], rows: list[str], matrix: np.ndarray[Any, Any]
) -> Figure | None:
    """Questions (rows) × models (columns): green right, red wrong, grey missing.

    With many questions the rows are labelled by category (a tick where each begins).
    """
    if not labels or not rows:
        return None
    cell_width = 0.22 if len(labels) <= 40 else 0.12
    cell_height = 0.14 if len(rows) <= 80 else 0.04
    left = 0.9 if len(rows) <= 80 else 0.6
    top = 0.3 + 0.06 * max(len(label) for label in labels)
    width = left + cell_width * len(labels) + 0.4
    height = top + cell_height * len(rows) + 0.5
    figure = Figure(figsize=(max(width, 4.0), height))
    axis = figure.add_axes(
        (
            left / max(width, 4.0),
            0.5 / height,
            cell_width * len(labels) / max(width, 4.0),
            cell_height * len(rows) / height,
        )
    )
    codes = np.clip(np.asarray(matrix, dtype="float64") + 2, 0, 3)  # -2..1 -> 0..3
    axis.imshow(codes, cmap=OUTCOME_COLOURS, vmin=0, vmax=3, aspect="auto", interpolation="nearest")
    axis.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
    axis.xaxis.tick_top()
    if len(rows) <= 80:
        axis.set_yticks(range(len(rows)), rows, fontsize=6)
    else:
        categories = [row.split()[-1] for row in rows]
        starts = [i for i, c in enumerate(categories) if i == 0 or c != categories[i - 1]]
        axis.set_yticks(starts, [categories[i] for i in starts], fontsize=7)
        for start in starts[1:]:
            axis.axhline(start - 0.5, color="black", linewidth=0.6)
    return figure


def comparison_figure(
    labels: list[str], panels: list[tuple[str, np.ndarray[Any, Any], np.ndarray[Any, Any]]]
) -> Figure | None:
    """Models × models, one panel per metric: row model's accuracy minus column model's.

    The first panel is labelled; the others keep its order.

    Args:
        labels: the models, in matrix order.
        panels: (metric, differences, p-values) with models × models arrays (NaN on the
            diagonal); a dot marks p < 0.05 (McNemar, overall).
    """
    if len(labels) < 2 or not panels:
        return None
    size = 0.28 if len(labels) <= 20 else 0.12
    side = size * len(labels)
    left = 0.3 + 0.06 * max(len(label) for label in labels)
    gap = 0.3
    bottom = 0.45
    width = left + len(panels) * (side + gap) + 0.9
    height = bottom + side + left
    figure = Figure(figsize=(width, height))
    image = None
    fontsize = 7 if len(labels) <= 20 else 4
    for position, (metric, difference, pvalue) in enumerate(panels):
        x = (left + position * (side + gap)) / width
        axis = figure.add_axes((x, bottom / height, side / width, side / height))
        image = axis.imshow(difference, cmap="RdBu", vmin=-0.5, vmax=0.5, interpolation="nearest")
        marked = np.argwhere(np.nan_to_num(pvalue, nan=1.0) < 0.05)
        if len(marked):
            axis.scatter(marked[:, 1], marked[:, 0], s=4 if len(labels) > 20 else 10, c="black")
        axis.set_xlabel(SHORT_NAMES.get(metric, metric), fontsize=9)
        axis.xaxis.tick_top()
        # Ticks on the first panel only (the others share its order): each tick is a few
        # artists, and thousands of them are what a large matrix costs to draw.
        if position == 0:
            axis.set_xticks(range(len(labels)), labels, rotation=90, fontsize=fontsize)
            axis.set_yticks(range(len(labels)), labels, fontsize=fontsize)
        else:
            axis.set_xticks([])
            axis.set_yticks([])
    if image is not None:
        bar = figure.add_axes(((width - 0.6) / width, bottom / height, 0.12 / width, side / height))
        figure.colorbar(image, cax=bar, label="row − column")
    return figure
