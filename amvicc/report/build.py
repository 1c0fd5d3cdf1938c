"""A report: every table the renderers need, computed once from the workspace.

The Python API for notebooks and other stages:

>>> from amvicc.report import compute_metrics, judge_agreement
>>> metrics = compute_metrics(Store("amvicc-runs"), missing="exclude")  # doctest: +SKIP
>>> judges = judge_agreement(Store("amvicc-runs"))  # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from tqdm import tqdm

from amvicc import __version__
from amvicc.catalogue import Catalogue
from amvicc.report.analyses import Analyses, compute_analyses
from amvicc.report.catalogues import Catalogues, other_catalogues
from amvicc.report.crossmodal import BlindSpot, blind_spot_evidence
from amvicc.report.entries import ModelEntry
from amvicc.report.gallery import GalleryItem, failing_examples
from amvicc.report.grading import audit_error_table, grading_agreement_table, procedure_table
from amvicc.report.interaction import Interaction, interaction_table
from amvicc.report.items import Items, collect_items
from amvicc.report.ladder import LadderTables, ladder_tables
from amvicc.report.methods import Methods, describe_methods
from amvicc.report.metrics import (
    failure_modes,
    judge_agreement_table,
    judge_metric_table,
    metric_table,
    missing_summary,
    plain,
    rater_agreement,
    samples_table,
    shared_failure_modes,
)
from amvicc.report.options import ReportOptions
from amvicc.report.robustness import robustness_table
from amvicc.store import Store, utc_now


@dataclass(frozen=True, eq=False)
class Report:
    """Everything a report shows.

    Attributes:
        metrics: :func:`~amvicc.report.metrics.metric_table` of every entry, plain and
            perturbed (``condition``), then the challenge rates: the CSV's rows and more.
        failures: the failing (model, category, metric) cells of plain runs.
        shared: per category, the models of each modality that fail there.
        missing: missing items per model, kind, category and reason, with their indices.
        samples: mean@k and pass@k of models with several samples per slot.
        agreement: agreement between human raters.
        judges: automatic image judges against the resolved human verdicts.
        judge_metrics: the image models' metrics as each automatic judge would give them.
        procedures: each VLM under the three-stage grading and each grading procedure.
        grading_agreement: extractor, LLM judges, procedures and human audit, pair by pair.
        audit_errors: each automatic grading stage's error rate in the human audit sample.
        gallery: failing images and answers to look at.
        interaction: the challenge arms: capitulation and correction, raw and adjusted, and
            their counts (:mod:`~amvicc.report.interaction`).
        robustness: each perturbed run beside its clean run on the same items
            (:mod:`~amvicc.report.robustness`).
        ladder: GRIP's question ladder: accuracy per level, where chains break, baselines
            (:mod:`~amvicc.report.ladder`).
        analyses: the item-level sections (concordance, comparisons, gains, ablations,
            baselines, usage, sheet notes).
        catalogues: the entries on other catalogues than the report's, scored apart against
            their own, and each model's accuracies on every catalogue side by side
            (:mod:`~amvicc.report.catalogues`).
        blind_spots: the first shared blind spots with the images and replies behind them.
        timings: seconds each step took.
    """

    options: ReportOptions
    generated_at: str
    store_root: str
    catalogue: Catalogue
    entries: tuple[ModelEntry, ...]
    metrics: pd.DataFrame
    failures: pd.DataFrame
    shared: pd.DataFrame
    missing: pd.DataFrame
    samples: pd.DataFrame
    agreement: pd.DataFrame
    judges: pd.DataFrame
    judge_metrics: pd.DataFrame
    procedures: pd.DataFrame
    grading_agreement: pd.DataFrame
    audit_errors: pd.DataFrame
    gallery: tuple[GalleryItem, ...]
    methods: Methods
    interaction: Interaction
    robustness: pd.DataFrame
    analyses: Analyses
    catalogues: Catalogues
    ladder: LadderTables = field(default_factory=LadderTables)
    blind_spots: tuple[BlindSpot, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    version: str = __version__

    @property
    def smoke_models(self) -> list[str]:
        """Labels of the random-weight smoke-test models (their numbers mean nothing)."""
        return [e.label for e in self.entries if e.smoke]

    @property
    def categories(self) -> list[str]:
        """The category codes reported, in AMVICC's order."""
        return [c.code for c in self.catalogue.categories()]


# Shared blind spots shown with their images and replies in the HTML (all are in the JSON).
BLIND_SPOTS_SHOWN = 30


def _options(options: ReportOptions | None, changes: dict[str, Any]) -> ReportOptions:
    return replace(options or ReportOptions(), **changes)


def build_report(
    store: Store, options: ReportOptions | None = None, *, progress: bool = False, **changes: Any
) -> Report:
    """Compute every table of the report.

    Args:
        store: the workspace.
        options: how to count; keyword arguments override single fields
            (``build_report(store, missing="exclude")``).
        progress: show a progress bar on stderr (when it is a terminal).
        **changes: :class:`ReportOptions` fields to override.
    """
    options = _options(options, changes)
    steps = (
        "reading the workspace",
        "metrics",
        "challenges and perturbations",
        "item-level analyses",
        "agreement",
        "judges",
        "gallery",
        "methods",
    )
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    # disable=None: no bar when stderr is not a terminal (logs, pipes, CI).
    disable = None if progress else True
    with tqdm(total=len(steps), desc="report", unit="step", disable=disable, leave=False) as bar:
        bar.set_postfix_str(steps[0])
        items = collect_items(store, options)
        plain_items = plain_only(items)
        lap("items")
        bar.update()
        bar.set_postfix_str(steps[1])
        metrics = metric_table(items, options)
        failures = failure_modes(plain(metrics), options)
        categories = [c.code for c in items.catalogue.categories()]
        shared = shared_failure_modes(plain(metrics), failures, categories)
        missing = missing_summary(plain_items)
        samples = samples_table(plain_items, plain(metrics), options)
        catalogues = other_catalogues(store, options, items, metrics)
        lap("metrics")
        bar.update()
        bar.set_postfix_str(steps[2])
        interaction = interaction_table(store, items, options)
        robustness = robustness_table(items, options)
        ladder = ladder_tables(store, options)
        lap("interaction")
        bar.update()
        bar.set_postfix_str(steps[3])
        analyses = compute_analyses(store, plain_items, options)
        spots = blind_spot_evidence(
            store, plain_items, analyses.blind_spots, limit=BLIND_SPOTS_SHOWN
        )
        lap("analyses")
        bar.update()
        bar.set_postfix_str(steps[4])
        agreement = rater_agreement(plain_items)
        lap("agreement")
        bar.update()
        bar.set_postfix_str(steps[5])
        judges = judge_agreement_table(items)
        judge_metrics = judge_metric_table(_images_only(items), options)
        procedures = procedure_table(plain_items, options)
        grading_agreement = grading_agreement_table(plain_items)
        audit_errors = audit_error_table(store, items, options.confidence, options.models)
        lap("judges")
        bar.update()
        bar.set_postfix_str(steps[6])
        gallery = failing_examples(store, plain_items, options.gallery)
        lap("gallery")
        bar.update()
        bar.set_postfix_str(steps[7])
        methods = describe_methods(store, items)
        lap("methods")
        bar.update()
    return Report(
        options=options,
        generated_at=utc_now(),
        store_root=str(store.root),
        catalogue=items.catalogue,
        entries=items.entries,
        metrics=with_interaction(metrics, interaction),
        failures=failures,
        shared=shared,
        missing=missing,
        samples=samples,
        agreement=agreement,
        judges=judges,
        judge_metrics=judge_metrics,
        procedures=procedures,
        grading_agreement=grading_agreement,
        audit_errors=audit_errors,
        gallery=tuple(gallery),
        methods=methods,
        interaction=interaction,
        robustness=robustness,
        analyses=analyses,
        catalogues=catalogues,
        ladder=ladder,
        blind_spots=tuple(spots),
        timings={**timings, **{f"analyses.{k}": v for k, v in analyses.timings.items()}},
    )


def with_interaction(metrics: pd.DataFrame, interaction: Interaction) -> pd.DataFrame:
    """The metric rows, then the challenge rates in the same columns (the CSV's rows).

    Counts stay whole numbers (nullable: an adjusted rate, a difference, has none).
    """
    if interaction.metrics.empty:
        return metrics
    rows = interaction.metrics[list(metrics.columns)]
    table = pd.concat([metrics, rows], ignore_index=True)
    return table.astype({"correct": "Int64", "total": "Int64", "missing": "Int64"})


def plain_only(items: Items) -> Items:
    """The items of plain entries (no condition): what the main tables count."""
    if all(not e.condition for e in items.entries):
        return items
    keys = {e.key for e in items.entries if not e.condition}
    frame = items.frame[items.frame["entry"].isin(keys)]
    entries = tuple(e for e in items.entries if e.key in keys)
    return replace(items, frame=frame, entries=entries)


def _images_only(items: Items) -> Items:
    frame = items.frame[items.frame["modality"] == "igm"]
    entries = tuple(e for e in items.entries if e.modality == "igm")
    return replace(items, frame=frame, entries=entries)


def compute_metrics(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """AMVICC's metrics for every model, per category and ``all``, as a tidy DataFrame.

    Columns ``label, model, modality, condition, catalogue, smoke, samples, category, metric,
    value, correct, total, missing, ci_low, ci_high`` (and ``entry``, the configuration key):
    the CSV's rows of the report's catalogue (runs on other catalogues are scored apart, see
    :func:`~amvicc.report.catalogues.other_catalogues`). Perturbed runs give ``individual`` / ``pair`` rows with their condition
    (``grain=0.1``); challenge arms give ``capitulation``, ``correction`` and their
    ``_adjusted`` rows with the arm as condition; an empty condition is a plain run. Keyword
    arguments override :class:`ReportOptions` fields, e.g. ``missing="exclude"``,
    ``verdicts="judge:ocr:rapidocr"``, ``bootstrap=0``.
    """
    options = _options(options, changes)
    items = collect_items(store, options)
    metrics = metric_table(items, options)
    return with_interaction(metrics, interaction_table(store, items, options))


def judge_agreement(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Every automatic image judge against the resolved human verdicts.

    Per judge, per image model (and ``all models``), per category and ``all``: ``items``,
    ``accuracy``, ``kappa`` (Cohen's), ``false_positive_rate`` (judge says correct, humans
    say not), ``recall``, and the confusion counts. Use it to see where a judge may stand in
    for human raters.
    """
    return judge_agreement_table(collect_items(store, _options(options, changes)))


def concordance(store: Store, options: ReportOptions | None = None, **changes: Any) -> pd.DataFrame:
    """Item-level concordance of VLM and image-model pair outcomes, per category and ``all``.

    One row per VLM × image model (and the modalities pooled): the 2×2 counts (``both_pass``,
    ``vlm_only``, ``igm_only``, ``both_fail``), ``agreement``, Cohen's ``kappa``, ``phi``
    (each with ``_low`` / ``_high`` bootstrap bounds), ``odds_ratio`` and ``fisher_p``. See
    :mod:`amvicc.report.crossmodal`.
    """
    options = _options(options, changes)
    return compute_analyses(store, collect_items(store, options), options).concordance


def compare_models(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Paired comparisons of every two models of a modality on the same items.

    Per metric and category: each side's accuracy, the ``difference`` with its paired
    bootstrap interval, McNemar's exact ``p_value`` and Holm's ``p_holm`` across categories.
    See :mod:`amvicc.report.comparisons`.
    """
    options = _options(options, changes)
    return compute_analyses(store, collect_items(store, options), options).comparisons


def human_agreement(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Agreement between human raters per model (percent, Cohen's κ, Fleiss' κ)."""
    return rater_agreement(collect_items(store, _options(options, changes)))
