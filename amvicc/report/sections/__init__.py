"""The report's sections, in the order every output shows them.

Each module defines one :class:`~amvicc.report.section.Section` (``SECTION``): its computation,
its CSV rows, its JSON entries, its view, and — under ``templates/sections/`` — its HTML and
Markdown partials. A new section is one module here, added to :data:`SECTIONS` where it
should appear, and its two partials; nothing else changes.

The order is the reading order of the HTML and Markdown, and the order of the CSV's row
blocks: the accuracies first, then the challenge rates, other catalogues, samples, paired
comparisons, gains, prompt variants, concordance, baselines, usage, raw sheet cells and the
question ladder.
"""

from __future__ import annotations

from amvicc.report.section import Section
from amvicc.report.sections import (
    agreement,
    baselines,
    blind_spots,
    catalogues,
    comparisons,
    concordance,
    crossmodal_chart,
    explorer,
    failure_modes,
    gains,
    gallery,
    glance,
    grading,
    interaction,
    item_heatmap,
    judges,
    ladder,
    methods,
    missing,
    results,
    samples,
    shared_failure_modes,
    sheets,
    smoke,
    usage,
    variants,
)

SECTIONS: tuple[Section, ...] = (
    glance.SECTION,
    results.SECTION,
    failure_modes.SECTION,
    shared_failure_modes.SECTION,
    crossmodal_chart.SECTION,
    interaction.SECTION,
    catalogues.SECTION,
    samples.SECTION,
    comparisons.SECTION,
    gains.SECTION,
    variants.SECTION,
    concordance.SECTION,
    blind_spots.SECTION,
    item_heatmap.SECTION,
    explorer.SECTION,
    baselines.SECTION,
    usage.SECTION,
    sheets.SECTION,
    ladder.SECTION,
    missing.SECTION,
    agreement.SECTION,
    judges.SECTION,
    grading.SECTION,
    gallery.SECTION,
    methods.SECTION,
    smoke.SECTION,
)
SECTION_BY_KEY = {section.key: section for section in SECTIONS}
