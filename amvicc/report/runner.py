"""The report stage: compute a report from the workspace and write it where it is asked to go."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from amvicc.catalogue import load_catalogue
from amvicc.errors import UserError
from amvicc.files import write_output
from amvicc.report.analyses import analysis_rows, compute_analyses
from amvicc.report.build import build_report, plain_only, with_interaction
from amvicc.report.catalogues import other_catalogues, report_rows
from amvicc.report.entries import IGM_STAGES, VLM_STAGES, OnCatalogue, load_entries
from amvicc.report.interaction import interaction_table
from amvicc.report.items import collect_items
from amvicc.report.ladder import ladder_rows, ladder_tables
from amvicc.report.metrics import metric_table
from amvicc.report.options import ReportOptions, ReportSummary
from amvicc.report.render import render_ladder_only, render_report, to_csv
from amvicc.report.stats import single_threaded_blas
from amvicc.store import Store

log = logging.getLogger(__name__)


def run_report(options: ReportOptions, *, store: Store) -> ReportSummary:
    """Build the report ``options`` describe and write it.

    CSV holds the numbers only, so it skips agreement, galleries and figures. The seconds each
    step took are logged at debug level (``-v``): ``report timings: items 0.81, ...``.

    The file is written whole or not at all (a report cut off midway leaves the previous
    one), never over the workspace's own files (:func:`amvicc.files.write_output`).

    Raises:
        UserError: nothing to report, a bad selection, or the file cannot be written.
    """
    options = _default_catalogue(options, store)
    with single_threaded_blas():
        text, timings = _compute(options, store)
    log.debug(
        "report timings: %s",
        ", ".join(f"{name} {seconds:.2f}" for name, seconds in timings.items()),
    )
    path = options.output
    if path is None and options.default_file and options.format in ("html", "json"):
        path = store.root / f"report.{options.format}"
    if path is not None:
        write_output(path, text, what="the report")
    return ReportSummary(options.format, text, path)


def _default_catalogue(options: ReportOptions, store: Store) -> ReportOptions:
    """Without ``--catalogue``: the shipped one, unless every selected run used one other file.

    A workspace of scene runs only (``amvicc scenes build``) then reports on its scene set, as
    ``--catalogue`` would; runs on several catalogues, or on a file that is gone or changed,
    leave the shipped one, and the report says what it could not score.
    """
    if (
        options.catalogue is not None
        or not store.runs_frame(stages=(*IGM_STAGES, *VLM_STAGES)).shape[0]
    ):
        return options
    on_shipped = OnCatalogue(load_catalogue(None, labels=options.labels or "corrected"))
    entries = load_entries(store, options.models, labels=options.labels, on=on_shipped)
    if any(on_shipped(e) for e in entries):
        return options
    files = {(e.catalogue_file, e.catalogue_sha256) for e in entries}
    if len(files) != 1:
        return options
    ((file, sha),) = files
    if file is None or not Path(file).is_file():
        return options
    try:
        catalogue = load_catalogue(file)
    except UserError:
        return options
    if catalogue.sha256 != sha:
        return options
    log.info("reporting on %s: every selected run used it (--catalogue to choose)", file)
    return replace(options, catalogue=Path(file))


def _compute(options: ReportOptions, store: Store) -> tuple[str, dict[str, float]]:
    """The report's text and the seconds each step took."""
    started = time.perf_counter()
    if not store.runs_frame(stages=(*IGM_STAGES, *VLM_STAGES)).shape[0] and store.runs(
        stage="ladder"
    ):
        ladder = ladder_tables(store, options)
        text = render_ladder_only(ladder, options, options.format, store_root=str(store.root))
        return text, {"ladder": time.perf_counter() - started}
    if options.format == "csv":
        items = collect_items(store, options)
        read = time.perf_counter()
        metrics = with_interaction(
            metric_table(items, options), interaction_table(store, items, options)
        )
        metrics = report_rows(metrics, other_catalogues(store, options, items, metrics))
        counted = time.perf_counter()
        analyses = compute_analyses(store, plain_only(items), options)
        ladder_csv = ladder_rows(ladder_tables(store, options))
        timings = {
            "items": read - started,
            "metrics": counted - read,
            "analyses": time.perf_counter() - counted,
            **{f"analyses.{k}": v for k, v in analyses.timings.items()},
        }
        text = to_csv(
            metrics,
            intervals=options.bootstrap > 0,
            extra=pd.concat([analysis_rows(analyses), ladder_csv], ignore_index=True),
            excel_safe=options.excel_safe,
        )
        return text, timings
    report = build_report(store, options, progress=options.progress)
    rendering = time.perf_counter()
    text = render_report(report, options.format)
    return text, {**report.timings, "render": time.perf_counter() - rendering}
