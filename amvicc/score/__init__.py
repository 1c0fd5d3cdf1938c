"""Human scoring: the ``amvicc score`` web app, its queues, statistics and export.

Raters judge generated images against the category rubrics (double-rated, blinded, with
adjudication of disagreements) and settle the VLM answers the automatic grader left undecided.
Every verdict is a row in the workspace the moment it is given. The modules:

- :mod:`amvicc.score.items`: what is rated (generated images, undecided answers).
- :mod:`amvicc.score.queue`: who still needs to rate what, in each rater's seeded order.
- :mod:`amvicc.score.desk`: :class:`~amvicc.score.desk.ScoringDesk`, the whole app without the
  web page (what tests, notebooks and the Gradio handlers call).
- :mod:`amvicc.score.views`: the escaped HTML of each screen; its CSS and JavaScript are files
  in ``amvicc/score/static/``.
- :mod:`amvicc.score.app`: the Gradio Blocks; :mod:`amvicc.score.links`: signed image links;
  :mod:`amvicc.score.server`: the server.
- :mod:`amvicc.score.stats`: agreement statistics; :mod:`amvicc.score.export`: CSV export.

From Python::

    from amvicc import Store, load_catalogue
    from amvicc.score import ScoreOptions, run_score

    summary = run_score(ScoreOptions(port=None), store=Store("runs"), catalogue=load_catalogue())
    print(summary.server.url)
    summary.server.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.score.options import ExportOptions, ExportSummary, ScoreOptions, ScoreSummary
    from amvicc.score.runner import run_export, run_score

_EXPORTS = {
    "ExportOptions": "amvicc.score.options",
    "ExportSummary": "amvicc.score.options",
    "ScoreOptions": "amvicc.score.options",
    "ScoreSummary": "amvicc.score.options",
    "run_export": "amvicc.score.runner",
    "run_score": "amvicc.score.runner",
}
__all__ = [
    "ExportOptions",
    "ExportSummary",
    "ScoreOptions",
    "ScoreSummary",
    "run_export",
    "run_score",
]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
