"""The report stage: compute a report from the workspace and write it where it is asked to go."""

from __future__ import annotations

from amvicc.errors import UserError
from amvicc.report.build import build_report, compute_metrics
from amvicc.report.options import ReportOptions, ReportSummary
from amvicc.report.render import render_report, to_csv
from amvicc.store import Store


def run_report(options: ReportOptions, *, store: Store) -> ReportSummary:
    """Build the report ``options`` describe and write it.

    CSV holds the numbers only, so it skips agreement, galleries and figures.

    Raises:
        UserError: nothing to report, a bad selection, or the file cannot be written.
    """
    if options.format == "csv":
        text = to_csv(
            compute_metrics(store, options),
            intervals=options.bootstrap > 0,
            excel_safe=options.excel_safe,
        )
    else:
        report = build_report(store, options, progress=options.progress)
        text = render_report(report, options.format)
    path = options.output
    if path is None and options.default_file and options.format in ("html", "json"):
        path = store.root / f"report.{options.format}"
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as err:
            raise UserError(f"cannot write the report to {path}: {err.strerror}") from None
    return ReportSummary(options.format, text, path)
