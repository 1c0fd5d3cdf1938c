"""The accuracy heatmap as a matplotlib figure, for notebooks (``notebooks/report.ipynb``).

The HTML report draws its charts in HTML and SVG, and its one picture with
:mod:`amvicc.report.pixels` (no plotting library: matplotlib takes a report seconds). This
figure is for the Python API: made with :class:`matplotlib.figure.Figure` directly, never
through pyplot's global state, so it changes nothing for a notebook that also plots.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from amvicc.report.metrics import (
    ALL,
    IGM_METRICS,
    SHORT_NAMES,
    VLM_METRICS,
)

SMOKE_SUFFIX = " (smoke)"


def figure_png(figure: Figure) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def _row_label(label: str, smoke: bool) -> str:
    return label + SMOKE_SUFFIX if smoke else label


def heatmap_figure(
    metrics: pd.DataFrame,
    modality: str,
    *,
    threshold_individual: float = 0.8,
    threshold_pair: float = 0.7,
) -> Figure | None:
    """Models × categories, one panel per metric, cells coloured by accuracy.

    Cells below the failure-mode threshold are outlined; values are written in the cells
    when there are few models. Returns None when the modality has no models.
    """
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    names = IGM_METRICS if modality == "igm" else VLM_METRICS
    data = metrics[metrics["modality"] == modality]
    if data.empty:
        return None
    categories = list(dict.fromkeys(data["category"]))
    rows = data.drop_duplicates("entry")
    labels = [_row_label(str(r.label), bool(r.smoke)) for r in rows.itertuples()]
    annotate = len(labels) <= 30
    # A fixed layout in inches: constrained or tight layouts measure every tick label, which
    # takes seconds with fifty models.
    cell_width, cell_height = (0.42, 0.3) if annotate else (0.3, 0.18)
    left = 0.3 + 0.065 * max(len(label) for label in labels)
    panel = cell_width * len(categories)
    gap, right, top, bottom = 0.25, 1.0, 0.45, 0.45
    width = left + len(names) * panel + (len(names) - 1) * gap + right
    height = top + cell_height * len(labels) + bottom
    figure = Figure(figsize=(width, height))
    image = None
    for position, metric in enumerate(names):
        x = (left + position * (panel + gap)) / width
        axis = figure.add_axes((x, bottom / height, panel / width, 1 - (top + bottom) / height))
        table = data[data["metric"] == metric].pivot_table(
            index="entry", columns="category", values="value", sort=False, dropna=False
        )
        values = table.reindex(index=list(rows["entry"]), columns=categories).to_numpy("float64")
        image = axis.imshow(values, cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
        axis.set_title(SHORT_NAMES[metric], fontsize=10)
        axis.set_xticks(range(len(categories)), categories, fontsize=8)
        axis.set_yticks(range(len(labels)), labels if position == 0 else [], fontsize=8)
        limit = threshold_pair if metric.startswith("pair") else threshold_individual
        failing = [
            Rectangle((j - 0.5, i - 0.5), 1, 1)
            for (i, j), value in np.ndenumerate(values)
            if value < limit and categories[j] != ALL
        ]
        axis.add_collection(
            PatchCollection(failing, facecolor="none", edgecolor="black", linewidth=1.1)
        )
        if annotate:
            for (i, j), value in np.ndenumerate(values):
                if not np.isnan(value):
                    axis.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7)
    if image is not None:
        colorbar = figure.add_axes(
            ((width - right + 0.25) / width, bottom / height, 0.15 / width, 0.5)
        )
        figure.colorbar(image, cax=colorbar, label="accuracy")
    return figure
