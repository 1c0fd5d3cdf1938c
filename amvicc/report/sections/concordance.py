"""Item-level concordance: do VLMs and image models fail the same pairs?

Each MMVP pair is one observation: the VLM's pair outcome against the image model's explicit
pair outcome, for every VLM × image model and for the two modalities pooled, per category and
overall: the 2×2 table, agreement, Cohen's κ and φ with bootstrap intervals, the odds ratio with
Fisher's p (:mod:`amvicc.report.crossmodal`). The pooled line is the first screen's headline.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.report.crossmodal import concordance_table
from amvicc.report.metrics import ALL
from amvicc.report.rows import CROSS, empty_rows, row_frame
from amvicc.report.section import Page, Part, Section
from amvicc.report.values import records

# Per-category rows of individual combinations are listed up to this many combinations.
COMBINATIONS_LISTED = 20
CELLS = (
    ("both_pass", "both pass"),
    ("vlm_only", "only the VLM passes"),
    ("igm_only", "only the IGM passes"),
    ("both_fail", "both fail"),
)


def _compute(part: Part) -> pd.DataFrame | None:
    if part.outcomes is None:
        return None
    return concordance_table(part.outcomes, part.resampler)


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    """``concordance`` / ``concordance pooled`` rows: agreement, κ, φ, odds ratio, the cells."""
    if table.empty:
        return empty_rows()
    common: dict[str, Any] = {
        "model": [f"{v} × {i}" for v, i in zip(table["vlm"], table["igm"], strict=True)],
        "modality": CROSS,
        "category": table["category"],
        "condition": [
            "concordance pooled" if s == "pooled" else "concordance" for s in table["scope"]
        ],
    }
    pairs = table["pairs"]
    agreed = table["both_pass"] + table["both_fail"]
    parts = [
        row_frame(
            **common,
            metric=f"concordance_{name}",
            value=table[name],
            correct=agreed if name == "agreement" else None,
            total=pairs,
            ci_low=table[f"{name}_low"],
            ci_high=table[f"{name}_high"],
        )
        for name in ("agreement", "kappa", "phi")
    ]
    parts.append(
        row_frame(
            **common,
            metric="concordance_odds_ratio",
            value=table["odds_ratio"],
            total=pairs,
            p_value=table["fisher_p"],
        )
    )
    for cell, _ in CELLS:
        share = np.divide(
            table[cell].to_numpy("float64"),
            pairs.to_numpy("float64"),
            out=np.full(len(table), np.nan),
            where=pairs.to_numpy() > 0,
        )
        parts.append(
            row_frame(
                **common,
                metric=f"concordance_{cell}",
                value=share,
                correct=table[cell],
                total=pairs,
            )
        )
    return pd.concat(parts, ignore_index=True)


def _with_names(rows: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for row in records(rows):
        pairs = row["pairs"] or 0
        row["name"] = (
            "all categories" if row["category"] == ALL else CATEGORY_BY_CODE[row["category"]].name
        )
        row["bars"] = [
            (name, round(100 * row[cell] / pairs, 1) if pairs else 0.0, row[cell])
            for cell, name in CELLS
        ]
        out.append(row)
    return out


def _view(table: pd.DataFrame, page: Page) -> dict[str, Any]:
    pooled = table[table["scope"] == "pooled"]
    combos = table[table["scope"] == "model"]
    overall = combos[combos["category"] == ALL]
    by_combination = []
    if combos.drop_duplicates(["vlm", "igm"]).shape[0] <= COMBINATIONS_LISTED:
        for (vlm, igm), group in combos.groupby(["vlm", "igm"], sort=False):
            by_combination.append((f"{vlm} × {igm}", _with_names(group)))
    first = pooled.iloc[0] if not pooled.empty else None
    return {
        "title": "" if first is None else f"{first['vlm']} × {first['igm']}",
        "pooled": _with_names(pooled),
        "combinations": records(overall),
        "by_combination": by_combination,
        "combination_count": int(overall.shape[0]),
        "cells": [name for _, name in CELLS],
    }


SECTION = Section(
    key="concordance",
    title="Item-level concordance: do VLMs and image models fail the same pairs?",
    toc="Concordance",
    apart=True,
    compute=_compute,
    rows=_rows,
    document=lambda table: {"analyses": {"concordance": records(table)}},
    view=_view,
    exports={"analyses.concordance": lambda part: part["concordance"]},
)
