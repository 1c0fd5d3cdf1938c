"""Smoke-test models: every section again, for the random-weight models alone.

Smoke-test models (``runs.smoke``: random weights, built offline for tests and demos) have
numbers that only show the pipeline runs. They never share a table, a pooled number, a
comparison, a heatmap or a gallery with real models: the report computes its sections a second
time on them alone (a part of its own, :class:`~amvicc.report.section.Part`) and shows that
part here, under a title that says what they are. Their rows follow the real models' in the
CSV and JSON, with their ``smoke`` flag in the JSON.
"""

from __future__ import annotations

from amvicc.report.section import Part, Section

TITLE = "Smoke-test models (random weights: the numbers mean nothing)"
WARNING = (
    "random weights, built offline for tests and demos: their numbers only show that the "
    "pipeline runs and mean nothing about any real model"
)


def _compute(part: Part) -> Part | None:
    """The smoke-test models' part, from the real part (it holds none itself)."""
    return None if part.smoke else part.smoke_part


SECTION = Section(
    key="smoke",
    title=TITLE,
    toc="Smoke-test models (random weights)",
    compute=_compute,
    hides=True,
)
