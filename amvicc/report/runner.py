"""The report stage: compute a report from the workspace and write it where it is asked to go."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from amvicc.catalogue import load_catalogue
from amvicc.errors import UserError
from amvicc.files import write_output
from amvicc.report.early import EarlyReads, early_reads
from amvicc.report.options import ReportOptions, ReportSummary
from amvicc.report.stats import single_threaded_blas
from amvicc.store import Store

# pandas and everything that computes are imported once the verdicts are being read
# (amvicc.report.early): importing them takes as long as that read.

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
    with (
        early_reads(store, options.processes) as early,
        single_threaded_blas(),
        cyclic_gc_paused(),
    ):
        options = _default_catalogue(options, store)
        text, timings = _compute(options, store, early)
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


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the enclosed code runs.

    A report makes millions of objects that live until it is written (the rows it reads, the
    frames made from them); the collector's full passes keep scanning them and free almost
    nothing: 0.3 to 0.4 s of a report over 356k verdicts, with the same peak memory without
    them. Memory freed by reference counting, nearly all of it, is freed as before; whatever
    cycles are left are collected once the collector runs again after the block.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _default_catalogue(options: ReportOptions, store: Store) -> ReportOptions:
    """Without ``--catalogue``: the shipped one, unless every selected run used one other file.

    A workspace of scene runs only (``amvicc scenes build``) then reports on its scene set, as
    ``--catalogue`` would; runs on several catalogues, or on a file that is gone or changed,
    leave the shipped one, and the report says what it could not score.
    """
    from amvicc.report.entries import IGM_STAGES, VLM_STAGES, OnCatalogue, load_entries

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


def _compute(
    options: ReportOptions, store: Store, early: EarlyReads
) -> tuple[str, dict[str, float]]:
    """The report's text and the seconds each step and section took.

    Every format builds the same sections (:data:`amvicc.report.sections.SECTIONS`), as far
    as it needs them: the CSV only those with rows, the JSON those with entries.
    """
    from amvicc.report.build import build_report
    from amvicc.report.render import prerenderer, render_report
    from amvicc.report.section import Need

    need: Need = {"csv": "rows", "json": "document"}.get(options.format, "view")  # type: ignore[assignment]
    report = build_report(
        store,
        options,
        progress=options.progress,
        need=need,
        early=early,
        prerender=prerenderer(options.format),
    )
    text = render_report(report, options.format)
    return text, report.timings
