"""The scoring stage: serve the rating app, or export every verdict.

Serving needs Gradio (``amvicc[score]``), imported only then: the export is part of the core.
"""

from __future__ import annotations

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.extras import require_extra
from amvicc.score.desk import ScoringDesk
from amvicc.score.export import verdicts_export, write_export
from amvicc.score.options import ExportOptions, ExportSummary, ScoreOptions, ScoreSummary
from amvicc.store import Store


def run_score(options: ScoreOptions, *, store: Store, catalogue: Catalogue) -> ScoreSummary:
    """Start the scoring app in the background; the summary holds the running server.

    Every verdict is stored the moment it is given, so stopping the server loses nothing.

    Raises:
        UserError: Gradio is not installed, nothing to score, a bad setting, or the port is
            taken.
    """
    require_extra("score", "amvicc score serves its rating app with Gradio")
    from amvicc.score.server import serve

    if options.raters_per_item < 1:
        raise UserError("--raters-per-item must be at least 1")
    desk = ScoringDesk(
        store,
        catalogue,
        run_ids=list(options.run_ids) if options.run_ids else None,
        raters_per_item=options.raters_per_item,
        seed=options.seed,
    )
    if not desk.images and not desk.answers:
        raise UserError(
            f"nothing to score in {store.root}: no generated images and no undecided answers; "
            "run `amvicc generate` first (or pass --run)"
        )
    server = serve(
        desk,
        host=options.host,
        port=options.port,
        auth=list(options.logins) or None,
        open_browser=options.open_browser,
        quiet=options.quiet,
    )
    return ScoreSummary(
        server=server,
        images=len(desk.images),
        answers=len(desk.answers),
        raters_per_item=options.raters_per_item,
        logins=len(options.logins),
    )


def run_export(options: ExportOptions, *, store: Store, catalogue: Catalogue) -> ExportSummary:
    """Write every verdict of the workspace, history included, as CSV or JSON lines.

    Raises:
        UserError: the output cannot be written.
    """
    frame = verdicts_export(store, catalogue, people_only=options.people_only)
    write_export(frame, options.output, options.format, excel_safe=options.excel_safe)
    return ExportSummary(len(frame), options.output)
