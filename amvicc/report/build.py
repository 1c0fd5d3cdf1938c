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
from amvicc.report.crossmodal import BlindSpot, blind_spot_evidence
from amvicc.report.entries import ModelEntry
from amvicc.report.gallery import GalleryItem, failing_examples
from amvicc.report.items import Items, collect_items
from amvicc.report.methods import Methods, describe_methods
from amvicc.report.metrics import (
    failure_modes,
    judge_agreement_table,
    judge_metric_table,
    metric_table,
    missing_summary,
    rater_agreement,
    samples_table,
    shared_failure_modes,
)
from amvicc.report.options import ReportOptions
from amvicc.store import Store, utc_now


@dataclass(frozen=True, eq=False)
class Report:
    """Everything a report shows.

    Attributes:
        metrics: :func:`~amvicc.report.metrics.metric_table` (the CSV's rows and more).
        failures: the failing (model, category, metric) cells.
        shared: per category, the models of each modality that fail there.
        missing: missing items per model, kind, category and reason, with their indices.
        samples: mean@k and pass@k of models with several samples per slot.
        agreement: agreement between human raters.
        judges: automatic image judges against the resolved human verdicts.
        judge_metrics: the image models' metrics as each automatic judge would give them.
        gallery: failing images and answers to look at.
        analyses: the item-level sections (concordance, comparisons, gains, ablations,
            baselines, usage, sheet notes).
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
    gallery: tuple[GalleryItem, ...]
    methods: Methods
    analyses: Analyses
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
        lap("items")
        bar.update()
        bar.set_postfix_str(steps[1])
        metrics = metric_table(items, options)
        failures = failure_modes(metrics, options)
        categories = [c.code for c in items.catalogue.categories()]
        shared = shared_failure_modes(metrics, failures, categories)
        missing = missing_summary(items)
        samples = samples_table(items, metrics, options)
        lap("metrics")
        bar.update()
        bar.set_postfix_str(steps[2])
        analyses = compute_analyses(store, items, options)
        spots = blind_spot_evidence(store, items, analyses.blind_spots, limit=BLIND_SPOTS_SHOWN)
        lap("analyses")
        bar.update()
        bar.set_postfix_str(steps[3])
        agreement = rater_agreement(items)
        lap("agreement")
        bar.update()
        bar.set_postfix_str(steps[4])
        judges = judge_agreement_table(items)
        judge_metrics = judge_metric_table(_images_only(items), options)
        lap("judges")
        bar.update()
        bar.set_postfix_str(steps[5])
        gallery = failing_examples(store, items, options.gallery)
        lap("gallery")
        bar.update()
        bar.set_postfix_str(steps[6])
        methods = describe_methods(store, items)
        lap("methods")
        bar.update()
    return Report(
        options=options,
        generated_at=utc_now(),
        store_root=str(store.root),
        catalogue=items.catalogue,
        entries=items.entries,
        metrics=metrics,
        failures=failures,
        shared=shared,
        missing=missing,
        samples=samples,
        agreement=agreement,
        judges=judges,
        judge_metrics=judge_metrics,
        gallery=tuple(gallery),
        methods=methods,
        analyses=analyses,
        blind_spots=tuple(spots),
        timings={**timings, **{f"analyses.{k}": v for k, v in analyses.timings.items()}},
    )


def _images_only(items: Items) -> Items:
    frame = items.frame[items.frame["modality"] == "igm"]
    entries = tuple(e for e in items.entries if e.modality == "igm")
    return replace(items, frame=frame, entries=entries)


def compute_metrics(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """AMVICC's metrics for every model, per category and ``all``, as a tidy DataFrame.

    Columns ``label, model, modality, smoke, samples, category, metric, value, correct,
    total, missing, ci_low, ci_high`` (and ``entry``, the configuration key). Keyword
    arguments override :class:`ReportOptions` fields, e.g. ``missing="exclude"``,
    ``verdicts="judge:ocr:rapidocr"``, ``bootstrap=0``.
    """
    options = _options(options, changes)
    return metric_table(collect_items(store, options), options)


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
