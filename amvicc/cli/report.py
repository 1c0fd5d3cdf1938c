"""``amvicc report``: AMVICC's accuracies per category for every model.

As HTML, Markdown, CSV or JSON, with failure modes, confidence intervals, agreement and
failure galleries.

Light on purpose (argument definitions only): pandas, matplotlib and jinja2 are imported when
the verb runs (:func:`amvicc.report.run_report`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from amvicc.cli.arguments import (
    add_catalogue_arguments,
    add_categories_argument,
    add_excel_safe_argument,
    add_output_argument,
    add_store_argument,
    comma_list,
    fraction,
    index_ranges,
    non_negative_int,
    open_store,
    output_target,
    seed,
)
from amvicc.cli.registry import verb
from amvicc.report.options import (
    DEFAULT_THRESHOLD_INDIVIDUAL,
    DEFAULT_THRESHOLD_PAIR,
    MISSING_POLICIES,
    REPORT_FORMATS,
    ReportOptions,
    report_format,
)

log = logging.getLogger(__name__)


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
        type=index_ranges,
        metavar="RANGES",
        help="MMVP indices, e.g. 1-20,99 (widened to whole pairs; default: all)",
    )
    parser.add_argument(
        "--smoke-index",
        type=index_ranges,
        metavar="RANGES",
        help="score the smoke-test models only on these indices, widened to pairs (the demo "
        "asks them a few pairs; real models keep every selected question)",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML prices per model for the tokens-and-cost table (amvicc ships none; see "
        "docs/report.md)",
    )
    parser.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        help="output format (default: from -o's suffix, else html)",
    )
    add_output_argument(
        parser, default="html and json go to <store>/report.<format>, md and csv to stdout"
    )
    add_excel_safe_argument(parser)
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
    parser.add_argument("--seed", type=seed, default=0, help="seed of the bootstrap (default 0)")
    parser.add_argument(
        "--gallery",
        type=non_negative_int,
        default=12,
        metavar="N",
        help="failing examples per model in the HTML report (default 12)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        choices=(1, 2),
        help="1: read and compute everything in one process; 2: read the images and verdicts "
        "in child processes while this one starts, then split the sections between two "
        "(default: 2 on a workspace of 20,000 items or more while a core is free; the report "
        "is the same either way)",
    )


@verb(
    order=140,
    summary="report accuracies per category, failure modes and agreement (html, md, csv, json)",
    examples=(
        "amvicc report",
        "amvicc report --format csv > results.csv",
        "amvicc report --models 'sd35,dalle3' --missing exclude -o report.html",
        "amvicc report --verdicts judge:ocr:rapidocr --format md",
        "amvicc report --index 81-100 --models 'dalle3*'   # AMVICC's ablation subset",
        "amvicc report --prices prices.yaml",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Build the report from the workspace and write it."""
    from amvicc.report.runner import run_report

    output, to_stdout = output_target(args)
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
        smoke_indices=args.smoke_index,
        prices=args.prices,
        catalogue=args.catalogue,
        labels="original" if args.original_labels else None,
        gallery=args.gallery,
        format=report_format(args.format, output),
        output=output,
        default_file=not to_stdout,
        progress=not args.quiet,
        excel_safe=args.excel_safe,
        processes=args.processes,
    )
    summary = run_report(options, store=open_store(args))
    if summary.path is None:
        sys.stdout.write(summary.text)
    for line in summary.lines():
        log.info(line)
    return 0
