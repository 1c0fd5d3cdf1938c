"""Notes on imported grade sheets: where they came from, and cells a raw reading counts otherwise.

A sheet cell such as `` Y`` (a stray space) is read as ``Y`` on import, and the raw cell is
kept in the verdict's details. A script that compares raw cells with ``'Y'`` — AMVICC's own
analysis does — counts that image as not correct. Where that changes a number of the results
table, the report shows both, so a reader comparing with a published table sees why one
number differs (AMVICC's DALL·E 3 ``sc`` I Im: 0.981481 in the paper, 1.000000 here).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd

from amvicc.report.items import Items
from amvicc.report.metrics import metric_table
from amvicc.report.options import ReportOptions
from amvicc.store import SHEET_PREFIX, Store

RAW_CELL_COLUMNS = [
    "label",
    "category",
    "metric",
    "value",
    "correct",
    "total",
    "raw_value",
    "raw_correct",
    "cells",
]
KIND_COLUMNS = {"implicit": "Correct_im", "explicit": "Correct_ex"}


def sheet_id(question_index: int, sample: int) -> str:
    """The ID a grade sheet gives a slot: ``81``, then ``81-2`` for the second sample."""
    return str(question_index) if sample == 0 else f"{question_index}-{sample + 1}"


def sheet_sources(items: Items) -> dict[str, list[str]]:
    """Per imported model (its label), the grade sheets whose verdicts it holds."""
    imported = {e.key: e.label for e in items.entries if e.imported}
    if not imported:
        return {}
    verdicts = items.image_verdicts
    sheets = verdicts[verdicts["source"].astype(str).str.startswith(SHEET_PREFIX)]
    subjects = items.frame.loc[items.frame["entry"].isin(imported), ["subject_id", "entry"]]
    joined = sheets.merge(subjects, on="subject_id")
    out: dict[str, list[str]] = {}
    for entry, group in joined.groupby("entry", sort=False):
        names = sorted({str(s).split(":")[1] for s in group["source"]})
        out[imported[str(entry)]] = names
    return out


def raw_cell_differences(store: Store, items: Items, options: ReportOptions) -> pd.DataFrame:
    """The results-table cells a raw reading of the sheets' padded cells would change.

    An item counts as the raw reading counts it when a sheet's deciding verdict came from a
    padded ``Y`` cell: not correct. Only imported models are concerned.

    Returns:
        :data:`RAW_CELL_COLUMNS`: the value here and the raw reading's, with the cells
        (``sheet row N (ID i), column: ' Y'``) behind the difference.
    """
    imported = {e.key for e in items.entries if e.imported}
    f = items.frame
    mine = f[f["entry"].isin(imported) & (f["subject_id"] != "")]
    if mine.empty:
        return pd.DataFrame(columns=RAW_CELL_COLUMNS)
    details = store.sheet_verdict_details(list(mine["subject_id"]))
    if details.empty:
        return pd.DataFrame(columns=RAW_CELL_COLUMNS)
    cells: dict[str, str] = {}
    for subject, value, text in zip(
        details["subject_id"], details["value"], details["detail_json"], strict=True
    ):
        detail = json.loads(str(text) or "{}")
        raw = detail.get("cell")
        if value == "correct" and isinstance(raw, str) and raw.strip() == "Y":
            cells[str(subject)] = f"{detail.get('sheet')} row {detail.get('row')}: {raw!r}"
    if not cells:
        return pd.DataFrame(columns=RAW_CELL_COLUMNS)
    flipped = mine["subject_id"].isin(cells) & (mine["outcome"] == "correct")
    if not flipped.any():
        return pd.DataFrame(columns=RAW_CELL_COLUMNS)
    entries = set(mine.loc[flipped, "entry"])
    raw_frame = f[f["entry"].isin(entries)].copy()
    raw_frame.loc[
        raw_frame["subject_id"].isin(cells) & (raw_frame["outcome"] == "correct"), "outcome"
    ] = "incorrect"
    chosen = tuple(e for e in items.entries if e.key in entries)
    plain = replace(options, bootstrap=0)
    here = metric_table(replace(items, frame=f[f["entry"].isin(entries)], entries=chosen), plain)
    there = metric_table(replace(items, frame=raw_frame, entries=chosen), plain)
    both = here.merge(
        there[["entry", "category", "metric", "value", "correct"]],
        on=["entry", "category", "metric"],
        suffixes=("", "_raw"),
    )
    changed = both[both["correct"] != both["correct_raw"]]
    rows = []
    for row in changed.to_dict(orient="records"):
        kind = "implicit" if str(row["metric"]).endswith("implicit") else "explicit"
        scope = (mine["category"] == row["category"]) if row["category"] != "all" else True
        behind = mine[flipped & (mine["entry"] == row["entry"]) & (mine["kind"] == kind) & scope]
        notes = [
            f"{cells[str(s)]} (ID {sheet_id(int(i), int(k))}, {KIND_COLUMNS[kind]})"
            for s, i, k in zip(
                behind["subject_id"], behind["question_index"], behind["sample"], strict=True
            )
        ]
        rows.append(
            {
                "label": row["label"],
                "category": row["category"],
                "metric": row["metric"],
                "value": row["value"],
                "correct": int(row["correct"]),
                "total": int(row["total"]),
                "raw_value": row["value_raw"],
                "raw_correct": int(row["correct_raw"]),
                "cells": notes,
            }
        )
    return pd.DataFrame(rows, columns=RAW_CELL_COLUMNS)
