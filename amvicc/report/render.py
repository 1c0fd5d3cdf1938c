"""Write a :class:`~amvicc.report.build.Report` as HTML, Markdown, CSV or JSON.

- CSV: one row per number, ``model,modality,category,metric,value,correct,total`` then
  ``ci_low,ci_high`` when intervals were computed, then ``condition,p_value,p_adjusted``,
  then ``catalogue`` (the short name of the catalogue the number is on: ``MMVP`` for the
  shipped one; the rows of other catalogues' runs follow the report's own, see
  :mod:`amvicc.report.catalogues`);
  ``value`` with 6 decimals (empty when nothing was counted). The accuracies come first:
  ``condition`` is empty for a plain run, a perturbation (``grain=0.1``) for a perturbed run's
  ``individual`` / ``pair`` rows, ``variant=<name>`` for a prompt variant's, or a challenge arm
  for the ``capitulation``, ``correction`` and ``*_adjusted`` rows (whose ``correct`` and
  ``total`` are the changes and the first turns counted; empty for adjusted rates, which are
  differences). Then the item-level sections' numbers
  (:func:`amvicc.report.analyses.analysis_rows` says what their ``condition`` holds).
- JSON: every table, with a ``smoke`` flag on each model and number.
- Markdown: the tables, ready to paste into a paper.
- HTML: one self-contained file (inline CSS, embedded figures and thumbnails) that opens
  offline.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from amvicc import __version__
from amvicc.catalogue import CATEGORIES, CATEGORY_BY_CODE
from amvicc.catalogue.csvtext import excel_safe as excel_safe_cell
from amvicc.ladder import LADDER_LEVELS, LEVEL_NAMES
from amvicc.report.analyses import ROW_COLUMNS
from amvicc.report.analysis_view import (
    NO_SPREAD,
    analysis_figures,
    analysis_view,
    sample_spread_cells,
)
from amvicc.report.build import Report
from amvicc.report.catalogues import report_rows
from amvicc.report.interaction import ARM_ORDER, INTERACTION_METRICS, INTERACTION_NAMES
from amvicc.report.ladder import LadderTables, ladder_rows
from amvicc.report.metrics import (
    ALL,
    IGM_METRICS,
    SHORT_NAMES,
    VLM_METRICS,
    plain,
    threshold,
)
from amvicc.report.options import CHANCE_INDIVIDUAL, CHANCE_PAIR, ReportFormat, ReportOptions
from amvicc.store import utc_now

CSV_COLUMNS = ("model", "modality", "category", "metric", "value", "correct", "total")
INTERVAL_COLUMNS = ("ci_low", "ci_high")
CONDITION_COLUMNS = ("condition", "p_value", "p_adjusted")
CATALOGUE_COLUMNS = ("catalogue",)
SMOKE_MARK = "⚠ smoke"
SMOKE_WARNING = (
    "random weights, built offline for tests and demos: their numbers only show that the "
    "pipeline runs and mean nothing about any real model"
)
TEMPLATES = Path(__file__).resolve().parent / "templates"
MODALITY_TITLES = {"igm": "Image generation models (IGMs)", "vlm": "Vision-language models (VLMs)"}
SMOKE_TITLES = {
    "igm": "Smoke-test image models (random weights: the numbers mean nothing)",
    "vlm": "Smoke-test VLMs (random weights: the numbers mean nothing)",
}


def render_report(report: Report, fmt: ReportFormat) -> str:
    """The report in one format, as text."""
    if fmt == "csv":
        from amvicc.report.analyses import analysis_rows

        return to_csv(
            report_rows(report.metrics, report.catalogues),
            intervals=report.options.bootstrap > 0,
            extra=pd.concat([analysis_rows(report.analyses), ladder_rows(report.ladder)]),
            excel_safe=report.options.excel_safe,
        )
    if fmt == "json":
        return to_json(report)
    if fmt == "md":
        return str(_template("report.md.jinja").render(view=_view(report, html=False)))
    return str(_template("report.html.jinja").render(view=_view(report, html=True)))


def render_ladder_only(
    ladder: LadderTables, options: ReportOptions, fmt: ReportFormat, *, store_root: str
) -> str:
    """The report of a workspace whose only runs are ladder runs: the ladder's section alone.

    The benchmark's tables need answer or generation runs; the ladder carries its own
    answers, so it is reported without them.
    """
    if fmt == "csv":
        empty = pd.DataFrame(columns=["label", *ROW_COLUMNS[1:]])
        return to_csv(
            empty,
            intervals=options.bootstrap > 0,
            extra=ladder_rows(ladder),
            excel_safe=options.excel_safe,
        )
    if fmt == "json":
        document = {
            "amvicc_version": __version__,
            "generated_at": utc_now(),
            "store": store_root,
            "ladder": _ladder_records(ladder),
        }
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    view = {
        "options": options,
        "version": __version__,
        "generated_at": utc_now(),
        "store_root": store_root,
        "ci_title": f"{round(100 * options.confidence)}% CI (all)",
        "ladder": _ladder_tables(ladder, options),
        "smoke_models": [e.label for e in ladder.entries if e.smoke],
        "smoke_warning": SMOKE_WARNING,
        "smoke_mark": SMOKE_MARK,
    }
    return str(_template(f"ladder_only.{fmt}.jinja").render(view=view))


# --- CSV and JSON ----------------------------------------------------------------------------


def to_csv(
    metrics: pd.DataFrame,
    *,
    intervals: bool = True,
    extra: pd.DataFrame | None = None,
    excel_safe: bool = False,
) -> str:
    """One row per number: :func:`~amvicc.report.metrics.metric_table`, then ``extra``.

    The columns are fixed (see the module docstring); ``extra`` has
    :data:`amvicc.report.analyses.ROW_COLUMNS`. Formatted column by column: a report of
    fifty models has tens of thousands of comparison rows. ``excel_safe`` prefixes model names
    and catalogue names that a spreadsheet would run as a formula (``=...``) with ``'`` (see
    :func:`amvicc.catalogue.csvtext.excel_safe`).
    """
    columns = (
        CSV_COLUMNS
        + (INTERVAL_COLUMNS if intervals else ())
        + CONDITION_COLUMNS
        + CATALOGUE_COLUMNS
    )
    plain = (
        metrics.drop(columns=[c for c in ("model",) if c in metrics.columns])
        .rename(columns={"label": "model"})
        .assign(p_value=np.nan, p_adjusted=np.nan)
    )
    for column in ("condition", "catalogue"):
        if column not in plain.columns:
            plain[column] = ""
    parts = [plain[ROW_COLUMNS]]
    if extra is not None and not extra.empty:
        parts.append(extra[ROW_COLUMNS])
    rows = pd.concat(parts, ignore_index=True)
    cells = {
        "model": [
            excel_safe_cell(name) if excel_safe else name for name in rows["model"].astype(str)
        ],
        "modality": rows["modality"].astype(str).tolist(),
        "category": rows["category"].astype(str).tolist(),
        "metric": rows["metric"].astype(str).tolist(),
        "value": _formatted(rows["value"], "{:.6f}"),
        "correct": _formatted(rows["correct"], "{:.0f}"),
        "total": _formatted(rows["total"], "{:.0f}"),
        "ci_low": _formatted(rows["ci_low"], "{:.6f}"),
        "ci_high": _formatted(rows["ci_high"], "{:.6f}"),
        "condition": rows["condition"].fillna("").astype(str).tolist(),
        "p_value": _formatted(rows["p_value"], "{:.6g}"),
        "p_adjusted": _formatted(rows["p_adjusted"], "{:.6g}"),
        "catalogue": [
            excel_safe_cell(name) if excel_safe else name
            for name in rows["catalogue"].fillna("").astype(str)
        ],
    }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*(cells[name] for name in columns), strict=True))
    return out.getvalue()


def _formatted(column: pd.Series, pattern: str) -> list[str]:
    """Numbers as text with ``pattern``; missing (None, NaN) as an empty cell."""
    # na_value: nullable counts (pd.NA) become NaN on every pandas the floor allows.
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    text = pattern.format
    return ["" if value != value else text(value) for value in values.tolist()]


def _records(frame: pd.DataFrame, drop: tuple[str, ...] = ("entry",)) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    kept = frame.drop(columns=[c for c in drop if c in frame.columns])
    return [{str(k): _plain(v) for k, v in row.items()} for row in kept.to_dict(orient="records")]


def _plain(value: Any) -> Any:
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"  # an odds ratio with an empty cell
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
            "name": report.catalogues.name,
            "source": report.catalogue.source,
            "sha256": report.catalogue.sha256,
            "categories": report.categories,
        },
        "other_catalogues": _catalogue_records(report),
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
                "condition": e.condition,
                "smoke": e.smoke,
                "samples": e.samples,
                "label_policy": e.label_policy,
                "runs": list(e.run_ids),
            }
            for e in report.entries
        ],
        "metrics": _records(report_rows(report.metrics, report.catalogues)),
        "interaction": _records(report.interaction.counts),
        "robustness": _records(report.robustness, drop=("entry", "clean_entry")),
        "ladder": _ladder_records(report.ladder),
        "failure_modes": _records(report.failures),
        "shared_failure_modes": _records(report.shared),
        "missing": _records(report.missing),
        "samples": _records(report.samples),
        "agreement": _records(report.agreement),
        "judge_validation": _records(report.judges),
        "judge_metrics": _records(report.judge_metrics),
        "grading_procedures": _records(report.procedures, drop=()),
        "grading_agreement": _records(report.grading_agreement, drop=()),
        "audit_errors": _records(report.audit_errors, drop=()),
        "analyses": _analysis_records(report),
        "methods": {
            "runs": [asdict(r) for r in report.methods.runs],
            "sources": [asdict(s) for s in report.methods.sources],
            "counts": dict(report.methods.counts),
            "versions": report.methods.versions,
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _catalogue_records(report: Report) -> dict[str, Any]:
    """The other catalogues, their models, what could not be scored, and the comparison."""
    catalogues = report.catalogues
    return {
        "catalogues": [
            {
                "name": other.name,
                "source": other.items.catalogue.source,
                "sha256": other.items.catalogue.sha256,
                "categories": other.categories,
                "models": [e.label for e in other.items.entries],
            }
            for other in catalogues.others
        ],
        "side_by_side": _records(catalogues.side_by_side, drop=()),
        "not_scored": [asdict(row) for row in catalogues.not_scored],
    }


def _analysis_records(report: Report) -> dict[str, Any]:
    a = report.analyses
    return {
        "concordance": _records(a.concordance),
        "shared_blind_spots": _records(a.blind_spots),
        "comparisons": _records(a.comparisons),
        "explicit_implicit_gains": _records(a.gains),
        "explicit_implicit_pairs": _records(a.pair_gains),
        "prompt_variants": _records(a.variants),
        "per_sample": _records(a.per_sample),
        "sample_spread": _records(a.spread),
        "constant_baselines": _records(a.baselines),
        "usage": _records(a.usage),
        "currency": a.currency,
        "raw_sheet_cells": _records(a.raw_cells),
        "grade_sheets": a.sheets,
    }


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
    environment.filters["pval"] = lambda v: "–" if _missing(v) else _p_text(float(v))
    environment.filters["signed"] = lambda v: "–" if _missing(v) else f"{float(v):+.3f}"
    return environment


def _p_text(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


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


_NO_CELL = {"text": "–", "ci": "", "failing": False, "count": "", "missing": 0}


def _accuracy_cell(
    cell: Mapping[Any, Any] | None, metric: str, category: str, report: Report
) -> dict[str, Any]:
    """One accuracy as a table shows it: the value, failing or not, count, interval, missing."""
    if cell is None:
        return dict(_NO_CELL)
    failing = (
        category != ALL and cell["total"] > 0 and cell["value"] < threshold(metric, report.options)
    )
    level = round(100 * report.options.confidence)
    return {
        "text": _number(cell["value"]),
        "ci": _interval(cell["ci_low"], cell["ci_high"], level),
        "failing": bool(failing),
        "count": f"{int(cell['correct'])}/{int(cell['total'])}",
        "missing": int(cell["missing"]),
    }


def _table(
    modality: str, smoke: bool, columns: list[str], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """A table of the metric-table macro: one modality's real or smoke-test models."""
    return {
        "modality": modality,
        "smoke": smoke,
        "title": (SMOKE_TITLES if smoke else MODALITY_TITLES)[modality],
        "columns": columns,
        "rows": rows,
    }


def _metric_tables(
    report: Report, metrics: pd.DataFrame, categories: list[str] | None = None
) -> list[dict[str, Any]]:
    """Per modality: rows (model, metric) × columns (categories, all), with flags.

    Real models come first, a modality's smoke-test models in tables of their own after
    every real one (``smoke``: True), so random-weight numbers never share a table with — or
    come before — real results. The columns are the report's categories unless
    ``categories`` (another catalogue's) are given.
    """
    tables = []
    columns = [*(report.categories if categories is None else categories), ALL]
    smoke_column = metrics["smoke"].astype(bool)
    for smoke, (modality, names) in itertools.product(
        (False, True), (("igm", IGM_METRICS), ("vlm", VLM_METRICS))
    ):
        part = metrics[(metrics["modality"] == modality) & (smoke_column == smoke)]
        if part.empty:
            continue
        cells = {
            (r["entry"], r["metric"], r["category"]): r for r in part.to_dict(orient="records")
        }
        rows = []
        for entry in dict.fromkeys(part["entry"]):
            first = part[part["entry"] == entry].iloc[0]
            for index, metric in enumerate(names):
                row_cells = [
                    _accuracy_cell(cells.get((entry, metric, category)), metric, category, report)
                    for category in columns
                ]
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
                **_table(modality, smoke, columns, rows),
                "metrics": [(SHORT_NAMES[m], m) for m in names],
            }
        )
    return tables


def _catalogue_view(report: Report) -> dict[str, Any]:
    """The other catalogues' section: their tables, the side-by-side, what is not scored."""
    catalogues = report.catalogues
    return {
        "name": catalogues.name,
        "title": f"{catalogues.name} and other catalogues",
        "any": catalogues.any,
        "others": [
            {
                "name": other.name,
                "source": other.items.catalogue.source,
                "sha256": other.items.catalogue.sha256,
                "questions": len(other.items.catalogue),
                "tables": _metric_tables(report, plain(other.metrics), other.categories),
            }
            for other in catalogues.others
        ],
        "side_by_side": _side_by_side_tables(report),
        "not_scored": [
            {**asdict(row), "name": _name(row.label, row.smoke), "runs": ", ".join(row.runs)}
            for row in catalogues.not_scored
        ],
    }


def _side_by_side_tables(report: Report) -> list[dict[str, Any]]:
    """Per modality: each model's rows (metric, catalogue) and differences × categories.

    Shaped as :func:`_metric_tables`' tables (the same table macro draws them); smoke-test
    models in tables of their own, after the real ones.
    """
    side = report.catalogues.side_by_side
    if side.empty:
        return []
    present = set(side["category"])
    columns = [c.code for c in CATEGORIES if c.code in present] + [ALL]
    tables = []
    for smoke, modality in itertools.product((False, True), ("igm", "vlm")):
        part = side[(side["modality"] == modality) & (side["smoke"].astype(bool) == smoke)]
        if part.empty:
            continue
        rows = []
        for label in dict.fromkeys(part["label"]):
            lines = _side_by_side_lines(report, part[part["label"] == label], columns)
            rows += [
                {
                    **line,
                    "name": _name(str(label), smoke),
                    "smoke": smoke,
                    "first": index == 0,
                    "span": len(lines),
                }
                for index, line in enumerate(lines)
            ]
        tables.append(_table(modality, smoke, columns, rows))
    return tables


def _side_by_side_lines(
    report: Report, mine: pd.DataFrame, columns: list[str]
) -> list[dict[str, Any]]:
    """One model's lines: per metric, its accuracy on each catalogue, then the differences."""
    cells = {
        (r["metric"], r["catalogue"], r["category"]): r for r in mine.to_dict(orient="records")
    }
    lines: list[dict[str, Any]] = []
    for metric in dict.fromkeys(mine["metric"]):
        rows = mine[mine["metric"] == metric]
        reference = str(rows["reference"].iloc[0])
        names = [str(c) for c in dict.fromkeys(rows["catalogue"])]
        short = SHORT_NAMES[metric]
        for name in names:
            lines.append(
                {
                    "metric": metric,
                    "short": f"{short} · {name}",
                    "cells": [
                        _accuracy_cell(cells.get((metric, name, c)), metric, c, report)
                        for c in columns
                    ],
                }
            )
        for name in names:
            if name == reference:
                continue
            differences = [cells.get((metric, name, c)) for c in columns]
            lines.append(
                {
                    "metric": f"{metric}: {name} − {reference}",
                    "short": f"Δ{short} {name} − {reference}",
                    "cells": [
                        dict(_NO_CELL)
                        if d is None or _missing(d["difference"])
                        else {**_NO_CELL, "text": f"{float(d['difference']):+.3f}"}
                        for d in differences
                    ],
                }
            )
    return lines


def _all_smoke_models(report: Report) -> list[str]:
    """The smoke-test models of every table, other catalogues' too: the opening banner's."""
    others = [e for other in report.catalogues.others for e in other.items.entries]
    return list(dict.fromkeys([*report.smoke_models, *(e.label for e in others if e.smoke)]))


def _view(report: Report, *, html: bool) -> dict[str, Any]:
    smoke = {e.label: e.smoke for e in report.entries}
    spread = sample_spread_cells(report)
    view: dict[str, Any] = {
        "report": report,
        "options": report.options,
        "categories": [(c, CATEGORY_BY_CODE[c].name) for c in report.categories],
        "smoke_models": report.smoke_models,
        "banner_smoke_models": _all_smoke_models(report),
        "smoke_warning": SMOKE_WARNING,
        "smoke_mark": SMOKE_MARK,
        "chance": {"individual": CHANCE_INDIVIDUAL, "pair": CHANCE_PAIR},
        "tables": _metric_tables(report, plain(report.metrics)),
        "interaction": _interaction_tables(report),
        "ci_title": f"{round(100 * report.options.confidence)}% CI (all)",
        "robustness": _robustness_tables(report),
        "ladder": _ladder_tables(report.ladder, report.options),
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
                **spread.get((row["label"], row["category"], row["metric"]), NO_SPREAD),
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
        "procedures": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.procedures)
        ],
        "grading_agreement": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.grading_agreement)
        ],
        "audit_errors": [
            {**row, "name": _name(row["label"], smoke.get(row["label"], False))}
            for row in _records(report.audit_errors)
        ],
        "gallery": report.gallery,
        "methods": report.methods,
        "models": report.entries,
        "analysis": analysis_view(report),
        "catalogues": _catalogue_view(report),
    }
    view["real_tables"] = [t for t in view["tables"] if not t["smoke"]]
    view["smoke_tables"] = [t for t in view["tables"] if t["smoke"]]
    if html:
        view["figures"] = _figures(report)
        view["figures"].update(analysis_figures(report))
    return view


def _figures(report: Report) -> dict[str, Any]:
    from amvicc.report.plots import (
        crossmodal_figure,
        data_uri,
        heatmap_figure,
        perturbation_curve_figure,
    )

    figures: dict[str, Any] = {"heatmaps": [], "crossmodal": None, "caption": "", "curves": []}
    metrics = plain(report.metrics)
    for modality in ("igm", "vlm"):
        figure = heatmap_figure(
            metrics,
            modality,
            threshold_individual=report.options.threshold_individual,
            threshold_pair=report.options.threshold_pair,
        )
        if figure is not None:
            figures["heatmaps"].append((MODALITY_TITLES[modality], data_uri(figure)))
    cross = crossmodal_figure(metrics)
    if cross is not None:
        figures["crossmodal"] = data_uri(cross[0])
        figures["caption"] = cross[1]
    robustness = report.robustness
    for label, kind in dict.fromkeys(zip(robustness["label"], robustness["kind"], strict=True)):
        smoke = bool(robustness.loc[robustness["label"] == label, "smoke"].any())
        curve = perturbation_curve_figure(robustness, label, kind, smoke=smoke)
        if curve is not None:
            figures["curves"].append((f"{_name(label, smoke)}: {kind}", data_uri(curve)))
    return figures


def _interval(low: Any, high: Any, level: int) -> str:
    return "" if _missing(low) else f"{level}% CI {_number(low)}–{_number(high)}"


def _bracket(cell: Mapping[Any, Any] | None) -> str:
    """A cell's interval as ``[low, high]``, or an empty string without one."""
    if cell is None or _missing(cell["ci_low"]):
        return ""
    return f"[{_number(cell['ci_low'])}, {_number(cell['ci_high'])}]"


def _interaction_tables(report: Report) -> list[dict[str, Any]]:
    """Per (model, challenged run): rows (arm, metric) × columns (categories, all), and counts.

    A cell shows the rate; its title the changes over the first turns, the interval and the
    undecided second turns.
    """
    metrics = report.interaction.metrics
    counts = report.interaction.counts
    if metrics.empty:
        return []
    columns = [*report.categories, ALL]
    level = round(100 * report.options.confidence)
    tables = []
    for (label, challenged), part in metrics.groupby(["label", "challenged_run"], sort=False):
        cells = {(r["entry"], r["metric"], r["category"]): r for r in part.to_dict("records")}
        rows = []
        for entry in dict.fromkeys(part["entry"]):
            mine = part[part["entry"] == entry]
            arm = str(mine["condition"].iloc[0])
            names = [m for m in INTERACTION_METRICS if m in set(mine["metric"])]
            for index, metric in enumerate(names):
                row_cells = []
                for category in columns:
                    cell = cells.get((entry, metric, category))
                    if cell is None:
                        row_cells.append({"text": "–", "title": ""})
                        continue
                    adjusted = metric.endswith("_adjusted")
                    title = [
                        ""
                        if adjusted or _missing(cell["total"])
                        else f"{int(cell['correct'])}/{int(cell['total'])}",
                        _interval(cell["ci_low"], cell["ci_high"], level),
                        ""
                        if adjusted or _missing(cell["missing"]) or not cell["missing"]
                        else f"{int(cell['missing'])} undecided second turn(s)",
                    ]
                    text = _number(cell["value"])
                    if adjusted and not _missing(cell["value"]) and float(cell["value"]) > 0:
                        text = "+" + text
                    row_cells.append({"text": text, "title": " · ".join(t for t in title if t)})
                overall = cells.get((entry, metric, ALL))
                rows.append(
                    {
                        "arm": arm,
                        "first": index == 0,
                        "span": len(names),
                        "metric": INTERACTION_NAMES[metric],
                        "cells": row_cells,
                        "ci": _bracket(overall),
                    }
                )
        smoke = bool(part["smoke"].any())
        mine_counts = counts[
            (counts["label"] == label) & (counts["challenged_run"] == challenged)
        ].to_dict("records")
        tables.append(
            {
                "name": _name(str(label), smoke),
                "smoke": smoke,
                "challenged_run": challenged,
                "columns": columns,
                "rows": rows,
                "counts": [{k: _plain(v) for k, v in row.items()} for row in mine_counts],
                "arms": [a for a in ARM_ORDER if a in set(part["condition"])],
            }
        )
    return tables


def _robustness_tables(report: Report) -> list[dict[str, Any]]:
    """Per model and clean run: rows (condition, clean / perturbed / drop) × categories, all.

    Clean and perturbed accuracy on the same items, then the drop with its interval.
    """
    robustness = report.robustness
    if robustness.empty:
        return []
    columns = [*report.categories, ALL]
    level = round(100 * report.options.confidence)
    tables = []
    for (label, _clean), part in robustness.groupby(["label", "clean_entry"], sort=False):
        cells = {(r["condition"], r["metric"], r["category"]): r for r in part.to_dict("records")}
        rows = []
        for condition in dict.fromkeys(part["condition"]):
            for metric in ("individual", "pair"):
                short = SHORT_NAMES[metric]
                for what in ("clean", "perturbed", "drop"):
                    row_cells = []
                    for category in columns:
                        cell = cells.get((condition, metric, category))
                        if cell is None:
                            row_cells.append({"text": "–", "title": ""})
                            continue
                        text = _number(cell[what])
                        title = f"{int(cell['total'])} {'pairs' if metric == 'pair' else 'items'}"
                        if what == "drop":
                            interval = _interval(cell["ci_low"], cell["ci_high"], level)
                            title = f"{title} · {interval}" if interval else title
                        row_cells.append({"text": text, "title": title})
                    name = {
                        "clean": f"{short} clean",
                        "perturbed": f"{short} perturbed",
                        "drop": f"Δ{short} (clean − perturbed)",
                    }[what]
                    overall = cells.get((condition, metric, ALL))
                    rows.append(
                        {
                            "condition": condition,
                            "first": metric == "individual" and what == "clean",
                            "span": 6,
                            "metric": name,
                            "drop": what == "drop",
                            "cells": row_cells,
                            "ci": _bracket(overall) if what == "drop" else "",
                        }
                    )
        smoke = bool(part["smoke"].any())
        tables.append(
            {"name": _name(str(label), smoke), "smoke": smoke, "columns": columns, "rows": rows}
        )
    return tables


def _ladder_records(tables: LadderTables) -> dict[str, Any]:
    """The ladder's tables for the JSON report."""
    if tables.empty:
        return {"entries": [], "levels": [], "chains": []}
    return {
        "entries": [
            {
                "label": e.label,
                "model": e.model,
                "smoke": e.smoke,
                "catalogue": e.catalogue,
                "runs": list(e.run_ids),
            }
            for e in tables.entries
        ],
        "levels": _records(tables.levels, drop=()),
        "chains": _records(tables.chains, drop=()),
    }


def _ladder_tables(tables: LadderTables, options: ReportOptions) -> list[dict[str, Any]]:
    """What the HTML and Markdown templates show: per model, levels × categories and chains."""
    if tables.empty:
        return []
    level_percent = round(100 * options.confidence)
    views = []
    for entry in tables.entries:
        levels = tables.levels[tables.levels["entry"] == entry.label]
        if levels.empty:
            continue
        categories = [c for c in dict.fromkeys(levels["category"]) if c != ALL]
        columns = [*categories, ALL]
        cells = {(int(r["level"]), r["category"]): r for r in levels.to_dict("records")}
        rows = []
        for level in LADDER_LEVELS:
            overall = cells.get((level, ALL))
            if overall is None:
                continue
            row_cells = []
            for category in columns:
                cell = cells.get((level, category))
                if cell is None:
                    row_cells.append({"text": "–", "title": ""})
                    continue
                row_cells.append(
                    {
                        "text": _percent(cell["accuracy"]),
                        "title": f"{cell['correct']}/{cell['total']} right, {cell['missing']} missing",
                    }
                )
            rows.append(
                {
                    "level": level,
                    "name": LEVEL_NAMES[level],
                    "cells": row_cells,
                    "baseline": _percent(overall["baseline"]),
                    "missing": int(overall["missing"]),
                    "ci": _percent_interval(overall["ci_low"], overall["ci_high"], level_percent),
                }
            )
        chains = tables.chains[tables.chains["entry"] == entry.label]
        views.append(
            {
                "name": _name(entry.label, entry.smoke),
                "smoke": entry.smoke,
                "catalogue": entry.catalogue,
                "runs": ", ".join(entry.run_ids),
                "columns": columns,
                "column_names": [
                    CATEGORY_BY_CODE[c].name if c in CATEGORY_BY_CODE else c for c in columns
                ],
                "rows": rows,
                "chains": [
                    {
                        "first_failed": row["first_failed"],
                        "count": int(row["count"]),
                        "share": _percent(row["share"]),
                    }
                    for row in chains.to_dict("records")
                ],
                "chain_total": int(chains["count"].sum()),
            }
        )
    return views


def _percent(value: float) -> str:
    return "–" if value != value else f"{100 * value:.1f}"


def _percent_interval(low: float, high: float, level: int) -> str:
    if low != low:
        return ""
    return f"{level}% CI [{100 * low:.1f}, {100 * high:.1f}]"
