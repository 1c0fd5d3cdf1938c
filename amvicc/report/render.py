"""Write a :class:`~amvicc.report.build.Report` as HTML, Markdown, CSV or JSON.

- CSV: one row per number, ``model,modality,category,metric,value,correct,total`` then
  ``ci_low,ci_high`` when intervals were computed; ``value`` with 6 decimals (empty when
  nothing was counted).
- JSON: every table, with a ``smoke`` flag on each model and number.
- Markdown: the tables, ready to paste into a paper.
- HTML: one self-contained file (inline CSS, embedded figures and thumbnails) that opens
  offline.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from amvicc.catalogue import CATEGORY_BY_CODE
from amvicc.catalogue.csvtext import excel_safe as excel_safe_cell
from amvicc.report.build import Report
from amvicc.report.metrics import (
    ALL,
    IGM_METRICS,
    SHORT_NAMES,
    VLM_METRICS,
    threshold,
)
from amvicc.report.options import CHANCE_INDIVIDUAL, CHANCE_PAIR, ReportFormat

CSV_COLUMNS = ("model", "modality", "category", "metric", "value", "correct", "total")
INTERVAL_COLUMNS = ("ci_low", "ci_high")
SMOKE_MARK = "⚠ smoke"
SMOKE_WARNING = (
    "random weights, built offline for tests and demos: their numbers only show that the "
    "pipeline runs and mean nothing about any real model"
)
TEMPLATES = Path(__file__).resolve().parent / "templates"
MODALITY_TITLES = {"igm": "Image generation models (IGMs)", "vlm": "Vision-language models (VLMs)"}


def render_report(report: Report, fmt: ReportFormat) -> str:
    """The report in one format, as text."""
    if fmt == "csv":
        return to_csv(
            report.metrics,
            intervals=report.options.bootstrap > 0,
            excel_safe=report.options.excel_safe,
        )
    if fmt == "json":
        return to_json(report)
    if fmt == "md":
        return str(_template("report.md.jinja").render(view=_view(report, html=False)))
    return str(_template("report.html.jinja").render(view=_view(report, html=True)))


# --- CSV and JSON ----------------------------------------------------------------------------


def _decimal(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{float(value):.6f}"  # type: ignore[arg-type]


def to_csv(metrics: pd.DataFrame, *, intervals: bool = True, excel_safe: bool = False) -> str:
    """One row per number of :func:`~amvicc.report.metrics.metric_table`.

    The columns are fixed (see the module docstring). ``excel_safe`` prefixes model names that
    a spreadsheet would run as a formula (``=...``) with ``'`` (see
    :func:`amvicc.catalogue.csvtext.excel_safe`).
    """
    columns = CSV_COLUMNS + (INTERVAL_COLUMNS if intervals else ())
    m = metrics
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    labels = m["label"].map(excel_safe_cell) if excel_safe else m["label"]
    values = zip(
        labels,
        m["modality"],
        m["category"],
        m["metric"],
        m["value"].map(_decimal),
        m["correct"].astype("int64"),
        m["total"].astype("int64"),
        m["ci_low"].map(_decimal),
        m["ci_high"].map(_decimal),
        strict=True,
    )
    width = len(columns)
    writer.writerows(row[:width] for row in values)
    return out.getvalue()


def _records(frame: pd.DataFrame, drop: tuple[str, ...] = ("entry",)) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    kept = frame.drop(columns=[c for c in drop if c in frame.columns])
    return [{str(k): _plain(v) for k, v in row.items()} for row in kept.to_dict(orient="records")]


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str | list):
        return _plain(value.item())
    return value


def to_json(report: Report) -> str:
    """The whole report as JSON (NaN as null)."""
    options = asdict(report.options)
    for where_it_goes in (
        "output",
        "default_file",
        "progress",
        "excel_safe",
    ):  # not how the numbers came
        options.pop(where_it_goes)
    options["catalogue"] = str(options["catalogue"]) if options["catalogue"] else None
    options["indices"] = sorted(options["indices"]) if options["indices"] is not None else None
    document = {
        "amvicc_version": report.version,
        "generated_at": report.generated_at,
        "store": report.store_root,
        "catalogue": {
            "source": report.catalogue.source,
            "sha256": report.catalogue.sha256,
            "categories": report.categories,
        },
        "options": options,
        "thresholds": {
            "individual": report.options.threshold_individual,
            "pair": report.options.threshold_pair,
        },
        "chance": {"individual": CHANCE_INDIVIDUAL, "pair": CHANCE_PAIR},
        "smoke_models": report.smoke_models,
        "models": [
            {
                "label": e.label,
                "model": e.model,
                "modality": e.modality,
                "smoke": e.smoke,
                "samples": e.samples,
                "label_policy": e.label_policy,
                "runs": list(e.run_ids),
            }
            for e in report.entries
        ],
        "metrics": _records(report.metrics),
        "failure_modes": _records(report.failures),
        "shared_failure_modes": _records(report.shared),
        "missing": _records(report.missing),
        "samples": _records(report.samples),
        "agreement": _records(report.agreement),
        "judge_validation": _records(report.judges),
        "judge_metrics": _records(report.judge_metrics),
        "methods": {
            "runs": [asdict(r) for r in report.methods.runs],
            "sources": [asdict(s) for s in report.methods.sources],
            "counts": dict(report.methods.counts),
            "versions": report.methods.versions,
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --- HTML and Markdown -----------------------------------------------------------------------


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html.jinja"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["num"] = _number
    environment.filters["pct"] = lambda v: "–" if _missing(v) else f"{100 * float(v):.1f}%"
    environment.filters["md"] = markdown_text
    environment.filters["code"] = markdown_code
    return environment


# Characters that would start Markdown syntax (emphasis, links, code, tables) in plain text.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def markdown_text(value: object) -> str:
    """Any text (a model name, a prompt, a reply) as inert Markdown on one line.

    HTML is escaped as entities (``<script>`` shows as text, never runs), Markdown's own
    punctuation is backslash-escaped (no links, images or emphasis from data), and line breaks
    become spaces so a table row stays one row.
    """
    text = " ".join(str(value).splitlines())
    text = html.escape(text, quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def markdown_code(value: object) -> str:
    """Any text as one Markdown code span (shown verbatim, HTML never interpreted).

    The fence is one backtick longer than the longest run of backticks inside, so no value
    closes it early; ``|`` is escaped so a table cell stays one cell.
    """
    text = " ".join(str(value).splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _template(name: str) -> Any:
    return _environment().get_template(name)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value: Any, digits: int = 3) -> str:
    return "–" if _missing(value) else f"{float(value):.{digits}f}"


def _name(label: str, smoke: bool) -> str:
    return f"{label} {SMOKE_MARK}" if smoke else label


def _metric_tables(report: Report, metrics: pd.DataFrame) -> list[dict[str, Any]]:
    """Per modality: rows (model, metric) × columns (categories, all), with flags."""
    tables = []
    columns = [*report.categories, ALL]
    level = round(100 * report.options.confidence)
    for modality, names in (("igm", IGM_METRICS), ("vlm", VLM_METRICS)):
        part = metrics[metrics["modality"] == modality]
        if part.empty:
            continue
        cells = {
            (r["entry"], r["metric"], r["category"]): r for r in part.to_dict(orient="records")
        }
        rows = []
        for entry in dict.fromkeys(part["entry"]):
            first = part[part["entry"] == entry].iloc[0]
            for index, metric in enumerate(names):
                row_cells = []
                for category in columns:
                    cell = cells.get((entry, metric, category))
                    if cell is None:
                        row_cells.append({"text": "–", "ci": "", "failing": False, "count": ""})
                        continue
                    failing = (
                        category != ALL
                        and cell["total"] > 0
                        and cell["value"] < threshold(metric, report.options)
                    )
                    ci = (
                        ""
                        if _missing(cell["ci_low"])
                        else f"{level}% CI {_number(cell['ci_low'])}–{_number(cell['ci_high'])}"
                    )
                    row_cells.append(
                        {
                            "text": _number(cell["value"]),
                            "ci": ci,
                            "failing": bool(failing),
                            "count": f"{int(cell['correct'])}/{int(cell['total'])}",
                            "missing": int(cell["missing"]),
                        }
                    )
                rows.append(
                    {
                        "name": _name(str(first["label"]), bool(first["smoke"])),
                        "smoke": bool(first["smoke"]),
                        "first": index == 0,
                        "span": len(names),
                        "metric": metric,
                        "short": SHORT_NAMES[metric],
                        "cells": row_cells,
                    }
                )
        tables.append(
            {
                "modality": modality,
                "title": MODALITY_TITLES[modality],
                "columns": columns,
                "rows": rows,
                "metrics": [(SHORT_NAMES[m], m) for m in names],
            }
        )
    return tables


def _view(report: Report, *, html: bool) -> dict[str, Any]:
    smoke = {e.label: e.smoke for e in report.entries}
    view: dict[str, Any] = {
        "report": report,
        "options": report.options,
        "categories": [(c, CATEGORY_BY_CODE[c].name) for c in report.categories],
        "smoke_models": report.smoke_models,
        "smoke_warning": SMOKE_WARNING,
        "smoke_mark": SMOKE_MARK,
        "chance": {"individual": CHANCE_INDIVIDUAL, "pair": CHANCE_PAIR},
        "tables": _metric_tables(report, report.metrics),
        "failures": [
            {
                **row,
                "name": _name(row["label"], bool(row["smoke"])),
                "short": SHORT_NAMES[row["metric"]],
                "category_name": CATEGORY_BY_CODE[row["category"]].name,
            }
            for row in _records(report.failures)
        ],
        "shared": [
            {
                **row,
                "name": CATEGORY_BY_CODE[row["category"]].name,
                "igm": ", ".join(_name(x, smoke.get(x, False)) for x in row["igm_failing"]),
                "vlm": ", ".join(_name(x, smoke.get(x, False)) for x in row["vlm_failing"]),
            }
            for row in _records(report.shared)
        ],
        "missing": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.missing)
        ],
        "missing_total": int(report.missing["count"].sum()) if not report.missing.empty else 0,
        "samples": [
            {
                **row,
                "name": _name(row["label"], bool(row["smoke"])),
                "short": SHORT_NAMES[row["metric"]],
            }
            for row in _records(report.samples)
        ],
        "agreement": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.agreement)
        ],
        "judges": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.judges)
        ],
        "judge_tables": [
            (judge, _metric_tables(report, group))
            for judge, group in (
                report.judge_metrics.groupby("judge", sort=True)
                if not report.judge_metrics.empty
                else []
            )
        ],
        "gallery": report.gallery,
        "methods": report.methods,
        "models": report.entries,
    }
    if html:
        view["figures"] = _figures(report)
    return view


def _figures(report: Report) -> dict[str, Any]:
    from amvicc.report.plots import crossmodal_figure, data_uri, heatmap_figure

    figures: dict[str, Any] = {"heatmaps": [], "crossmodal": None, "caption": ""}
    for modality in ("igm", "vlm"):
        figure = heatmap_figure(
            report.metrics,
            modality,
            threshold_individual=report.options.threshold_individual,
            threshold_pair=report.options.threshold_pair,
        )
        if figure is not None:
            figures["heatmaps"].append((MODALITY_TITLES[modality], data_uri(figure)))
    cross = crossmodal_figure(report.metrics)
    if cross is not None:
        figures["crossmodal"] = data_uri(cross[0])
        figures["caption"] = cross[1]
    return figures
