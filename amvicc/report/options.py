"""What a report is asked to show and where it goes: ``amvicc report``'s options, and its summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from amvicc.catalogue import LabelPolicy
from amvicc.errors import UserError

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
        smoke_indices: score the smoke-test models only on these indices, widened to whole
            pairs (None: on every selected question). The demo asks its smoke models a few
            pairs and reports them beside real models scored on all 300 questions.
        prices: a YAML file of prices per model, for the tokens-and-cost table (None: tokens
            only; amvicc ships no prices).
        catalogue: the benchmark file (None: the shipped catalogue). Runs made on another
            catalogue are scored apart, against the file they recorded.
        labels: score every VLM under this label policy (None: each run's own policy).
        gallery: failing examples shown per model in the HTML report.
        format: ``html``, ``md``, ``csv`` or ``json`` (see :func:`report_format`).
        output: where to write it; None: html and json go to ``<store>/report.<format>``
            (unless ``default_file`` is off), md and csv are only returned.
        default_file: write html and json to the workspace when ``output`` is None.
        progress: show a progress bar while the report is computed.
        excel_safe: in CSV, prefix text cells a spreadsheet would run as a formula
            (``=``, ``+``, ``-``, ``@``) with ``'``; off by default to keep the data exact.
        processes: ``1`` reads and computes everything in this process, ``2`` splits the
            reading and the sections between two (:mod:`amvicc.report.parallel`); None: two
            on a big workspace while a core is free. The report is the same either way.
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
    smoke_indices: frozenset[int] | None = None
    prices: Path | None = None
    catalogue: Path | None = None
    labels: LabelPolicy | None = None
    gallery: int = 12
    format: ReportFormat = "html"
    output: Path | None = None
    default_file: bool = True
    progress: bool = True
    excel_safe: bool = False
    processes: int | None = None


SUFFIX_FORMATS: dict[str, ReportFormat] = {
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
    ".csv": "csv",
    ".json": "json",
}


def report_format(chosen: ReportFormat | None, output: Path | None) -> ReportFormat:
    """The format asked for, else the one ``output``'s suffix names, else HTML.

    Raises:
        UserError: no format is given and the output's suffix names none.
    """
    if chosen is not None:
        return chosen
    if output is not None:
        suffix = output.suffix.lower()
        if suffix in SUFFIX_FORMATS:
            return SUFFIX_FORMATS[suffix]
        raise UserError(
            f"cannot tell the format from {output}'s suffix; add --format html|md|csv|json"
        )
    return "html"


@dataclass(frozen=True)
class ReportSummary:
    """A written report.

    Attributes:
        format: the format it is in.
        text: the whole report.
        path: the file it was written to (None: only returned, e.g. for standard output).
    """

    format: ReportFormat
    text: str
    path: Path | None

    def lines(self) -> list[str]:
        """Where the report went."""
        return [f"wrote {self.path}"] if self.path is not None else []
