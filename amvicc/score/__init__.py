"""Human scoring: the ``amvicc score`` web app, its queues, statistics and export.

Raters judge generated images against the category rubrics (double-rated, blinded, with
adjudication of disagreements) and settle the VLM answers the automatic grader left undecided.
Every verdict is a row in the workspace the moment it is given. The modules:

- :mod:`amvicc.score.items`: what is rated (generated images, undecided answers).
- :mod:`amvicc.score.queue`: who still needs to rate what, in each rater's seeded order.
- :mod:`amvicc.score.desk`: :class:`~amvicc.score.desk.ScoringDesk`, the whole app without the
  web page (what tests, notebooks and the Gradio handlers call).
- :mod:`amvicc.score.views`: the escaped HTML of each screen.
- :mod:`amvicc.score.app`: the Gradio Blocks and the server.
- :mod:`amvicc.score.stats`: agreement statistics; :mod:`amvicc.score.export`: CSV export.
"""
