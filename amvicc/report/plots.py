"""The report's figures (matplotlib, Agg; embedded in the HTML as base64 PNG).

Figures are made with :class:`matplotlib.figure.Figure` directly, never through pyplot's
global state, so building a report changes nothing for a notebook that also plots.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from amvicc.report.metrics import (
    ALL,
    IGM_METRICS,
    SHORT_NAMES,
    VLM_METRICS,
    chance,
)

SMOKE_SUFFIX = " (smoke)"
_SERIES = (  # cross-modal chart: (modality, metric, legend)
    ("vlm", "individual", "VLM I"),
    ("igm", "individual_implicit", "IGM I Im"),
    ("igm", "individual_explicit", "IGM I Ex"),
    ("vlm", "pair", "VLM P"),
    ("igm", "pair_implicit", "IGM P Im"),
    ("igm", "pair_explicit", "IGM P Ex"),
)


def figure_png(figure: Figure) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def data_uri(figure: Figure) -> str:
    """A figure as a ``data:image/png;base64`` URI for a self-contained page."""
    return "data:image/png;base64," + base64.b64encode(figure_png(figure)).decode()


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


def crossmodal_figure(metrics: pd.DataFrame) -> tuple[Figure, str] | None:
    """Mean accuracy per category of the VLMs beside the image models'.

    Smoke-test models are left out of the means when real models of the same modality are
    present. Returns the figure and a caption, or None with neither modality present.
    """
    data = metrics[metrics["category"] != ALL]
    if data.empty:
        return None
    kept = []
    notes = []
    for modality in ("igm", "vlm"):
        part = data[data["modality"] == modality]
        real = part[~part["smoke"].astype(bool)]
        if not real.empty:
            kept.append(real)
            notes.append(f"{real['entry'].nunique()} {modality.upper()}(s)")
        elif not part.empty:
            kept.append(part)
            notes.append(f"{part['entry'].nunique()} {modality.upper()}(s), all smoke-test models")
    chosen = pd.concat(kept)
    categories = list(dict.fromkeys(chosen["category"]))
    means = chosen.groupby(["metric", "category"])["value"].mean()
    figure = Figure(figsize=(max(7.0, 0.9 * len(categories) + 2), 6.2), layout="constrained")
    axes = figure.subplots(2, 1, sharex=True)
    x = np.arange(len(categories))
    for axis, series in zip(axes, (_SERIES[:3], _SERIES[3:]), strict=True):
        present = [s for s in series if s[1] in means.index.get_level_values(0)]
        width = 0.8 / max(1, len(present))
        for offset, (_, metric, legend) in enumerate(present):
            heights = [means.get((metric, c), np.nan) for c in categories]
            axis.bar(x + (offset - (len(present) - 1) / 2) * width, heights, width, label=legend)
        level = chance(series[0][1])
        axis.axhline(level, color="grey", linestyle="--", linewidth=1, label=f"chance {level}")
        axis.set_ylim(0, 1)
        axis.set_ylabel("pair accuracy" if series[0][1] == "pair" else "individual accuracy")
        axis.legend(fontsize=8, ncols=4, loc="upper right")
    axes[-1].set_xticks(x, categories)
    caption = "Mean accuracy per category over " + " and ".join(notes) + "."
    return figure, caption


def perturbation_curve_figure(
    robustness: pd.DataFrame, label: str, kind: str, *, smoke: bool = False
) -> Figure | None:
    """One model's accuracy over one perturbation's levels (GRIP's grain curve).

    Over all categories, individual and pair: each level's perturbed accuracy, and the clean
    accuracy on the same items drawn at level 0, with the drop's interval as error bars.
    """
    rows = robustness[
        (robustness["label"] == label)
        & (robustness["kind"] == kind)
        & (robustness["category"] == ALL)
    ].sort_values("level")
    if rows.empty:
        return None
    figure = Figure(figsize=(5.2, 3.2))
    axes = figure.add_subplot()
    for metric, marker in (("individual", "o"), ("pair", "s")):
        part = rows[rows["metric"] == metric]
        if part.empty:
            continue
        levels = [0.0, *part["level"].astype(float)]
        values = [float(part["clean"].iloc[0]), *part["perturbed"].astype(float)]
        line = axes.plot(levels, values, marker=marker, label=SHORT_NAMES[metric])[0]
        low = part["drop"] - part["ci_low"]
        high = part["ci_high"] - part["drop"]
        if not (low.isna().all() or high.isna().all()):
            axes.errorbar(
                part["level"].astype(float),
                part["perturbed"].astype(float),
                yerr=np.vstack([high.fillna(0), low.fillna(0)]),
                fmt="none",
                ecolor=line.get_color(),
                capsize=3,
            )
    axes.axhline(chance("individual"), color="grey", linestyle="--", linewidth=0.8)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel(f"{kind} level")
    axes.set_ylabel("accuracy")
    axes.set_title(_row_label(label, smoke), fontsize=10)
    axes.legend(fontsize=8)
    figure.tight_layout()
    return figure
