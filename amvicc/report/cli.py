"""``amvicc report``: AMVICC's accuracies per category for every model.

As HTML, Markdown, CSV or JSON, with failure modes, confidence intervals, agreement and
failure galleries.

Light on purpose (argument definitions only): pandas, matplotlib and jinja2 are imported when
the verb runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from amvicc.cli import (
    add_catalogue_arguments,
    add_categories_argument,
    add_store_argument,
    comma_list,
    fraction,
    non_negative_int,
    open_store,
    parse_index_ranges,
    run_as_module,
    verb,
)
from amvicc.errors import UserError
from amvicc.report.options import (
    DEFAULT_THRESHOLD_INDIVIDUAL,
    DEFAULT_THRESHOLD_PAIR,
    MISSING_POLICIES,
    REPORT_FORMATS,
    ReportFormat,
    ReportOptions,
)

log = logging.getLogger(__name__)

SUFFIX_FORMATS: dict[str, ReportFormat] = {
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
    ".csv": "csv",
    ".json": "json",
}


def _configure(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    add_catalogue_arguments(parser)
    parser.add_argument(
        "--models",
        "--model",
        dest="models",
        type=comma_list,
        action="extend",
        metavar="NAMES",
        help="comma-separated model names or glob patterns, e.g. 'sd35,openai:*' (default: all)",
    )
    add_categories_argument(parser)
    parser.add_argument(
        "--index",
        type=parse_index_ranges,
        metavar="RANGES",
        help="MMVP indices, e.g. 1-20,99 (widened to whole pairs; default: all)",
    )
    parser.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        help="output format (default: from -o's suffix, else html)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="PATH",
        help="where to write the report; '-' is stdout (default: html and json go to "
        "<store>/report.<format>, md and csv to stdout)",
    )
    parser.add_argument(
        "--verdicts",
        default="human",
        metavar="WHOSE",
        help="whose image verdicts count: 'human' (adjudicated, else the raters' majority; "
        "default), an automatic judge source such as 'judge:ocr:rapidocr', or 'any' "
        "(humans, else the automatic judges' majority)",
    )
    parser.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="fail",
        help="items without a usable verdict (never generated, refused, never rated, no "
        "answer) count as failures (fail, AMVICC's rule; default) or are left out (exclude)",
    )
    parser.add_argument(
        "--threshold-individual",
        type=fraction,
        default=DEFAULT_THRESHOLD_INDIVIDUAL,
        metavar="X",
        help=f"failure mode below this individual accuracy (default {DEFAULT_THRESHOLD_INDIVIDUAL})",
    )
    parser.add_argument(
        "--threshold-pair",
        type=fraction,
        default=DEFAULT_THRESHOLD_PAIR,
        metavar="X",
        help=f"failure mode below this pair accuracy (default {DEFAULT_THRESHOLD_PAIR})",
    )
    parser.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=1000,
        metavar="N",
        help="bootstrap resamples (over pairs) for the 95%% intervals; 0 turns them off "
        "(default 1000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    parser.add_argument(
        "--gallery",
        type=non_negative_int,
        default=12,
        metavar="N",
        help="failing examples per model in the HTML report (default 12)",
    )


@verb(
    "report",
    summary="report accuracies per category, failure modes and agreement (html, md, csv, json)",
    examples=(
        "amvicc report",
        "amvicc report --format csv > results.csv",
        "amvicc report --models 'sd35,dalle3' --missing exclude -o report.html",
        "amvicc report --verdicts judge:ocr:rapidocr --format md",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Build the report from the workspace and write it."""
    from amvicc.report.build import build_report, compute_metrics
    from amvicc.report.render import render_report, to_csv

    fmt = _format(args)
    options = ReportOptions(
        verdicts=args.verdicts,
        missing=args.missing,
        threshold_individual=args.threshold_individual,
        threshold_pair=args.threshold_pair,
        bootstrap=args.bootstrap,
        seed=args.seed,
        models=tuple(args.models) if args.models else None,
        categories=tuple(args.categories) if args.categories else None,
        indices=args.index,
        catalogue=args.catalogue,
        labels="original" if args.original_labels else None,
        gallery=args.gallery,
    )
    store = open_store(args)
    if fmt == "csv":  # the numbers only: no agreement, galleries or figures to compute
        text = to_csv(compute_metrics(store, options), intervals=options.bootstrap > 0)
    else:
        text = render_report(build_report(store, options, progress=not args.quiet), fmt)
    output: Path | None = args.output
    if output is None and fmt in ("html", "json"):
        output = store.root / f"report.{fmt}"
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return 0
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot write the report to {output}: {err.strerror}") from None
    log.info("wrote %s", output)
    return 0


def _format(args: argparse.Namespace) -> ReportFormat:
    if args.format is not None:
        fmt: ReportFormat = args.format
        return fmt
    if args.output is not None and str(args.output) != "-":
        suffix = args.output.suffix.lower()
        if suffix in SUFFIX_FORMATS:
            return SUFFIX_FORMATS[suffix]
        raise UserError(
            f"cannot tell the format from {args.output}'s suffix; add --format html|md|csv|json"
        )
    return "html"


if __name__ == "__main__":
    run_as_module("report")
