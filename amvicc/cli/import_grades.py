"""``amvicc import-grades``: arguments to :class:`~amvicc.imports.ImportGradesOptions`, then the import."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from amvicc.cli.arguments import (
    add_catalogue_arguments,
    add_store_argument,
    label_policy,
    non_empty,
    store_path,
)
from amvicc.cli.registry import verb
from amvicc.imports.options import DEFAULT_RATER

log = logging.getLogger(__name__)
# Warnings listed without -v: a sheet with many typos stays readable.
WARNINGS_SHOWN = 5


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sheet", type=Path, metavar="SHEET.csv", help="the grade sheet (CSV)")
    parser.add_argument(
        "--model",
        type=non_empty,
        required=True,
        help="the image model the sheet grades, e.g. dalle3",
    )
    parser.add_argument(
        "--rater",
        default=DEFAULT_RATER,
        help=f"who graded the sheet (default: {DEFAULT_RATER}); each rater's sheet is one "
        "vote in the majority",
    )
    parser.add_argument(
        "--variant",
        metavar="NAME",
        help="the prompt variant the sheet's images were made from (AMVICC's wording "
        "ablation), e.g. wording; default: the catalogue's prompts, or a variant named after "
        "the sheet's prompts when they differ from the catalogue's",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check the sheet and say what would be added"
    )
    add_store_argument(parser)
    add_catalogue_arguments(parser)


@verb(
    order=110,
    summary="import a human grade sheet in AMVICC's format (Y/N per image) for an image model",
    examples=(
        "amvicc import-grades dalle3_grades.csv --model dalle3",
        "amvicc import-grades sd_grades_alice.csv --model sd35 --rater alice",
        "amvicc import-grades dalle3_wording_ab.csv --model dalle3 --variant wording",
        "amvicc import-grades dalle3_randomness.csv --model dalle3-randomness  # IDs 81-2, ...",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Read, check and import the sheet."""
    from amvicc.catalogue import load_catalogue
    from amvicc.imports.grades import run_import_grades
    from amvicc.imports.options import ImportGradesOptions

    options = ImportGradesOptions(
        sheet=args.sheet,
        model=args.model,
        rater=args.rater,
        dry_run=args.dry_run,
        command=args.command_line,
        variant=args.variant,
    )
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    # The folder, not an opened store: a sheet with errors, or a dry run, creates nothing.
    summary = run_import_grades(options, store=store_path(args), catalogue=catalogue)
    shown = summary.warnings if args.verbose else summary.warnings[:WARNINGS_SHOWN]
    for warning in shown:
        log.warning("%s", warning)
    if len(shown) < len(summary.warnings):
        log.warning(
            "%s: and %d more warning(s) of the same kind; -v lists them all",
            summary.sheet,
            len(summary.warnings) - len(shown),
        )
    for line in summary.lines():
        print(line)
    return 0
