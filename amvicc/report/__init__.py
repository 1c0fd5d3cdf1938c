"""Reports: AMVICC's accuracies per category, failure modes, intervals and agreement.

The package root stays light (``amvicc --help`` imports the verb); the names below load their
modules, and pandas, on first use::

    from amvicc import Store
    from amvicc.report import build_report, compute_metrics, judge_agreement, render_report

    store = Store("amvicc-runs")
    metrics = compute_metrics(store)                      # tidy DataFrame, one row per number
    judges = judge_agreement(store)                       # automatic judges vs humans
    html = render_report(build_report(store, missing="exclude"), "html")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from amvicc.report.options import ReportOptions

if TYPE_CHECKING:
    from amvicc.report.build import (
        Report,
        build_report,
        compute_metrics,
        human_agreement,
        judge_agreement,
    )
    from amvicc.report.items import Items, ModelEntry, collect_items
    from amvicc.report.render import render_report

_LAZY = {
    "Report": "amvicc.report.build",
    "build_report": "amvicc.report.build",
    "compute_metrics": "amvicc.report.build",
    "human_agreement": "amvicc.report.build",
    "judge_agreement": "amvicc.report.build",
    "Items": "amvicc.report.items",
    "ModelEntry": "amvicc.report.items",
    "collect_items": "amvicc.report.items",
    "render_report": "amvicc.report.render",
}

__all__ = [
    "Items",
    "ModelEntry",
    "Report",
    "ReportOptions",
    "build_report",
    "collect_items",
    "compute_metrics",
    "human_agreement",
    "judge_agreement",
    "render_report",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'amvicc.report' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
