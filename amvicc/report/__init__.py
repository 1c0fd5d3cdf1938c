"""Reports: AMVICC's accuracies per category, failure modes, intervals and agreement.

The package root stays light (``amvicc --help`` imports the verb); the names below load their
modules, and pandas, on first use::

    from amvicc import Store
    from amvicc.report import ReportOptions, build_report, compute_metrics, run_report
    from amvicc.report import compare_models, concordance, judge_agreement, render_report

    store = Store("amvicc-runs")
    summary = run_report(ReportOptions(format="md"), store=store)  # what `amvicc report` does
    metrics = compute_metrics(store)                      # tidy DataFrame, one row per number
    judges = judge_agreement(store)                       # automatic judges vs humans
    pairs = concordance(store)                            # VLM × image model, item by item
    differences = compare_models(store)                   # paired, McNemar, Holm
    html = render_report(build_report(store, missing="exclude"), "html")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.report.build import (
        Report,
        build_report,
        compare_models,
        compute_metrics,
        concordance,
        human_agreement,
        judge_agreement,
    )
    from amvicc.report.entries import ModelEntry
    from amvicc.report.items import Items, collect_items
    from amvicc.report.options import ReportOptions, ReportSummary
    from amvicc.report.render import render_report
    from amvicc.report.runner import run_report

_LAZY = {
    "Report": "amvicc.report.build",
    "build_report": "amvicc.report.build",
    "compare_models": "amvicc.report.build",
    "concordance": "amvicc.report.build",
    "compute_metrics": "amvicc.report.build",
    "human_agreement": "amvicc.report.build",
    "judge_agreement": "amvicc.report.build",
    "Items": "amvicc.report.items",
    "ModelEntry": "amvicc.report.entries",
    "collect_items": "amvicc.report.items",
    "render_report": "amvicc.report.render",
    "ReportOptions": "amvicc.report.options",
    "ReportSummary": "amvicc.report.options",
    "run_report": "amvicc.report.runner",
}

__all__ = [
    "Items",
    "ModelEntry",
    "Report",
    "ReportOptions",
    "ReportSummary",
    "build_report",
    "collect_items",
    "compare_models",
    "compute_metrics",
    "concordance",
    "human_agreement",
    "judge_agreement",
    "render_report",
    "run_report",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
