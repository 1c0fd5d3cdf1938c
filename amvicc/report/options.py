"""What a report is asked to show: the options of ``amvicc report`` as one frozen record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from amvicc.catalogue import LabelPolicy

MissingPolicy = Literal["fail", "exclude"]
ReportFormat = Literal["html", "md", "csv", "json"]

MISSING_POLICIES: tuple[MissingPolicy, ...] = get_args(MissingPolicy)
REPORT_FORMATS: tuple[ReportFormat, ...] = get_args(ReportFormat)

HUMAN_VERDICTS = "human"
ANY_VERDICTS = "any"

# AMVICC's failure-mode thresholds: consistent with every failure-mode statement in the paper.
DEFAULT_THRESHOLD_INDIVIDUAL = 0.8
DEFAULT_THRESHOLD_PAIR = 0.7
# Guessing one of two options: an item is right half the time, both items of a pair a quarter.
CHANCE_INDIVIDUAL = 0.5
CHANCE_PAIR = 0.25


@dataclass(frozen=True)
class ReportOptions:
    """How to turn the stored verdicts into numbers.

    Attributes:
        verdicts: whose image verdicts count: ``human`` (adjudicated, else the raters'
            majority), one automatic judge source such as ``judge:ocr:rapidocr``, or ``any``
            (humans where they resolve the item, else the automatic judges' majority).
        missing: ``fail`` counts an item with no usable verdict as wrong (AMVICC's rule);
            ``exclude`` leaves it (and its pair) out of the totals. Both are always counted.
        threshold_individual: a category is a failure mode below this individual accuracy.
        threshold_pair: ... or below this pair accuracy.
        bootstrap: resamples for the confidence intervals (0: none).
        confidence: the confidence level of the intervals.
        seed: seeds the bootstrap, so a report is reproducible.
        models: model names or glob patterns to include (None: all).
        categories: category codes to include (None: all).
        indices: MMVP indices to include, widened to whole pairs (None: all), e.g. to report
            on the subset a run covered.
        catalogue: the benchmark file (None: the shipped catalogue).
        labels: score every VLM under this label policy (None: each run's own policy).
        gallery: failing examples shown per model in the HTML report.
    """

    verdicts: str = HUMAN_VERDICTS
    missing: MissingPolicy = "fail"
    threshold_individual: float = DEFAULT_THRESHOLD_INDIVIDUAL
    threshold_pair: float = DEFAULT_THRESHOLD_PAIR
    bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    models: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    indices: frozenset[int] | None = None
    catalogue: Path | None = None
    labels: LabelPolicy | None = None
    gallery: int = 12
