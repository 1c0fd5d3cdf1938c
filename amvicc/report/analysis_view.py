"""What the HTML and Markdown templates show of the item-level sections.

Numbers stay numbers here (the templates format them with their ``num``, ``pct`` and
``pval`` filters); this module chooses rows, orders them and lays out the comparison
matrices, so the templates hold no logic beyond loops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.metrics import ALL, SHORT_NAMES

if TYPE_CHECKING:
    from amvicc.report.build import Report

# Comparison matrices are tables up to this many models, figures beyond (a table of fifty
# models is unreadable; a figure of three says less than the table).
MATRIX_TABLE_MODELS = 10
# Per-category concordance rows of individual combinations are listed up to this many.
COMBINATIONS_LISTED = 20
HEADLINE_METRICS = (
    "individual_implicit",
    "individual_explicit",
    "pair_implicit",
    "pair_explicit",
    "individual",
    "pair",
)
# The matrices drawn as figures: the explicit prompts (the cross-modal contrast) and the VLMs'.
FIGURE_METRICS = ("individual_explicit", "pair_explicit", "individual", "pair")


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    return [
        {str(k): (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _category_name(code: str) -> str:
    return "all categories" if code == ALL else CATEGORY_BY_CODE[code].name


def _headline_concordance(concordance: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    pooled = concordance[concordance["scope"] == "pooled"]
    if pooled.empty:
        return "", pooled
    first = pooled.iloc[0]
    return f"{first['vlm']} × {first['igm']}", pooled


def analysis_view(report: Report) -> dict[str, Any]:
    """Rows and layouts of the item-level sections, for both templates."""
    a = report.analyses
    smoke = {e.label: e.smoke for e in report.entries}
    title, pooled = _headline_concordance(a.concordance)
    combos = a.concordance[a.concordance["scope"] == "model"]
    overall = combos[combos["category"] == ALL]
    by_combination = []
    if combos.drop_duplicates(["vlm", "igm"]).shape[0] <= COMBINATIONS_LISTED:
        for (vlm, igm), group in combos.groupby(["vlm", "igm"], sort=False):
            by_combination.append((f"{vlm} × {igm}", _with_names(group)))
    return {
        "concordance_title": title,
        "concordance": _with_names(pooled),
        "concordance_pooled_smoke": bool(pooled["smoke"].any()) if not pooled.empty else False,
        "combinations": _records(overall),
        "by_combination": by_combination,
        "combination_count": int(overall.shape[0]),
        "blind_spots": report.blind_spots,
        "blind_spot_count": len(a.blind_spots),
        "blind_spot_models": (
            (list(a.blind_spots["igms"].iloc[0]), list(a.blind_spots["vlms"].iloc[0]))
            if not a.blind_spots.empty
            else ([], [])
        ),
        "matrices": _matrices(a.comparisons, smoke),
        "comparison_count": int(a.comparisons.shape[0]),
        "gains": _gains(a.gains),
        "variants": [
            {**row, "short": SHORT_NAMES.get(row["metric"], row["metric"])}
            for row in _records(a.variants)
        ],
        "baselines": _baselines(a.baselines),
        "usage": _records(a.usage),
        "currency": a.currency,
        "raw_cells": [
            {**row, "short": SHORT_NAMES.get(row["metric"], row["metric"])}
            for row in _records(a.raw_cells)
        ],
        "sheets": sorted(a.sheets.items()),
    }


def _with_names(rows: pd.DataFrame) -> list[dict[str, Any]]:
    return [{**row, "name": _category_name(row["category"])} for row in _records(rows)]


def _matrices(comparisons: pd.DataFrame, smoke: dict[str, bool]) -> list[dict[str, Any]]:
    """Per metric, the models × models table of overall differences (small model counts)."""
    out = []
    overall = comparisons[comparisons["category"] == ALL]
    for metric in HEADLINE_METRICS:
        rows = overall[overall["metric"] == metric]
        if rows.empty:
            continue
        labels = list(dict.fromkeys([*rows["model"], *rows["versus"]]))
        if len(labels) > MATRIX_TABLE_MODELS:
            continue
        cells: dict[tuple[str, str], dict[str, Any]] = {}
        for row in _records(rows):
            for first, second, sign in (
                (row["model"], row["versus"], 1),
                (row["versus"], row["model"], -1),
            ):
                low, high = row["ci_low"], row["ci_high"]
                if sign < 0 and low is not None and high is not None:
                    low, high = -high, -low
                difference = row["difference"]
                cells[(first, second)] = {
                    "difference": None if difference is None else sign * difference,
                    "low": low,
                    "high": high,
                    "p": row["p_value"],
                    "units": row["units"],
                    "missing": row["missing"],
                    "significant": row["p_value"] is not None and row["p_value"] < 0.05,
                }
        out.append(
            {
                "metric": metric,
                "short": SHORT_NAMES[metric],
                "labels": [(label, smoke.get(label, False)) for label in labels],
                "rows": [
                    (
                        label,
                        smoke.get(label, False),
                        [cells.get((label, other)) for other in labels],
                    )
                    for label in labels
                ],
            }
        )
    return out


def _gains(gains: pd.DataFrame) -> list[dict[str, Any]]:
    """Per image model: the overall gains, and per category in a second list."""
    models: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for row in _records(gains):
        model = models.setdefault(
            row["model"], {"model": row["model"], "smoke": False, "overall": None, "categories": []}
        )
        model["smoke"] = model["smoke"] or bool(row["smoke"])
        key = (row["model"], row["category"])
        if key not in cells:
            cells[key] = {
                "category": row["category"],
                "name": _category_name(row["category"]),
                "individual": None,
                "pair": None,
            }
            if row["category"] == ALL:
                model["overall"] = cells[key]
            else:
                model["categories"].append(cells[key])
        cells[key]["individual" if row["metric"] == "individual_gain" else "pair"] = row
    return list(models.values())


def _baselines(baselines: pd.DataFrame) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in _records(baselines):
        category = row["category"]
        entry = out.setdefault(
            category, {"category": category, "name": _category_name(category), "values": {}}
        )
        entry["values"][(row["baseline"], row["metric"])] = row
    return list(out.values())


NO_SPREAD: dict[str, Any] = {"per_sample": "", "min": None, "max": None, "sd": None}


def sample_spread_cells(report: Report) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Per (model label, category, metric): each sample's accuracy, min, max and sd.

    They join the Samples section's rows (mean@k and pass@k), and its mean@k becomes the
    mean of the samples' accuracies (the same number under ``--missing fail``).
    """
    a = report.analyses
    if a.spread.empty:
        return {}
    samples: dict[tuple[str, str, str], list[str]] = {}
    for row in _records(a.per_sample):
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
        for row in _records(a.spread)
    }


def analysis_figures(report: Report) -> dict[str, Any]:
    """The item-level sections' figures as ``data:`` URIs (None where there is nothing)."""
    from amvicc.report.analysis_plots import (
        comparison_figure,
        concordance_figure,
        item_heatmap_figure,
    )
    from amvicc.report.crossmodal import item_matrix
    from amvicc.report.plots import data_uri

    a = report.analyses
    figures: dict[str, Any] = {"concordance": None, "items": None, "comparisons": []}
    title, pooled = _headline_concordance(a.concordance)
    concordance = concordance_figure(pooled, f"Pair outcomes: {title}") if title else None
    if concordance is not None:
        figures["concordance"] = data_uri(concordance)
    items = item_heatmap_figure(*item_matrix(a.outcomes))
    if items is not None:
        figures["items"] = data_uri(items)
    overall = a.comparisons[a.comparisons["category"] == ALL]
    for modality, title_text in (("igm", "Image models"), ("vlm", "VLMs")):
        part = overall[overall["modality"] == modality]
        if part.empty:
            continue
        labels = list(dict.fromkeys([*part["model"], *part["versus"]]))
        if len(labels) <= MATRIX_TABLE_MODELS:
            continue  # the section shows it as a table
        position = {label: i for i, label in enumerate(labels)}
        panels = []
        for metric in FIGURE_METRICS:
            rows = part[part["metric"] == metric]
            if rows.empty:
                continue
            difference = np.full((len(labels), len(labels)), np.nan)
            pvalue = np.full((len(labels), len(labels)), np.nan)
            i = rows["model"].map(position).to_numpy()
            j = rows["versus"].map(position).to_numpy()
            difference[i, j] = rows["difference"].to_numpy("float64")
            difference[j, i] = -rows["difference"].to_numpy("float64")
            pvalue[i, j] = pvalue[j, i] = rows["p_value"].to_numpy("float64")
            panels.append((metric, difference, pvalue))
        names = [
            f"{label} (smoke)"
            if any(e.smoke and e.label == label for e in report.entries)
            else label
            for label in labels
        ]
        figure = comparison_figure(names, panels)
        if figure is not None:
            figures["comparisons"].append((title_text, data_uri(figure)))
    return figures
