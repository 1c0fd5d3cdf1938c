"""``amvicc export --format hf``: the study as a Hugging Face dataset folder (and on the Hub).

Composes two stages, sharing only the workspace: the report (its CSV rows are the ``results``
table, :func:`amvicc.report.run_report`) and the export (:func:`amvicc.export.run_dataset_export`).
``amvicc score export`` is another thing: the verdicts alone, as one CSV or JSON-lines file.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from amvicc.cli.arguments import (
    add_catalogue_arguments,
    add_store_argument,
    label_policy,
    store_path,
)
from amvicc.cli.registry import verb
from amvicc.errors import UserError

if TYPE_CHECKING:
    from amvicc.store import Store

log = logging.getLogger(__name__)

_LICENSE = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("hf",),
        default="hf",
        help="hf: a Hugging Face dataset folder, Parquet files and a dataset card (default)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="the dataset folder (replaced whole if it holds an earlier export)",
    )
    parser.add_argument(
        "--runs",
        "--run",
        dest="runs",
        action="extend",
        nargs="+",
        metavar="RUN",
        help="only these runs (default: every run; `amvicc runs` lists them)",
    )
    parser.add_argument(
        "--license",
        default="other",
        help="the dataset card's licence identifier, e.g. cc-by-4.0, mit (default: other)",
    )
    parser.add_argument(
        "--keep-rater-names",
        action="store_true",
        help="name raters as stored (default: a stable pseudonym each, rater-1, rater-2, ...)",
    )
    parser.add_argument(
        "--push-to-hub",
        metavar="REPO",
        help="also upload it to this Hugging Face dataset repository (token from HF_TOKEN)",
    )
    parser.add_argument(
        "--private", action="store_true", help="with --push-to-hub: create the repository private"
    )
    add_store_argument(parser)
    add_catalogue_arguments(parser)


@verb(
    order=130,
    summary="export the study (images, answers, verdicts, results) as a Hugging Face dataset",
    examples=(
        "amvicc export --format hf --out amvicc-study",
        "amvicc export --format hf --out study --runs answer-openai-gpt-4o-1a2b3c4d --license cc-by-4.0",
        "amvicc export --format hf --out study --push-to-hub my-org/amvicc-study",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Report the workspace as CSV, then write the dataset folder with it."""
    from amvicc.catalogue import load_catalogue
    from amvicc.export.options import DatasetExportOptions
    from amvicc.export.runner import run_dataset_export
    from amvicc.store import Store

    if not _LICENSE.match(args.license):
        raise UserError(f"--license {args.license!r} is not a licence identifier (e.g. cc-by-4.0)")
    if args.push_to_hub is not None and not _REPO.match(args.push_to_hub):
        raise UserError(f"--push-to-hub {args.push_to_hub!r} is not a repository id (owner/name)")
    store = Store(store_path(args), create=False)
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    runs = tuple(args.runs) if args.runs else None
    models = None
    if runs is not None:
        models = tuple(sorted({store.run(run_id).model for run_id in runs}))
    results = _results(store, args.catalogue, models)
    options = DatasetExportOptions(
        out=args.out,
        format=args.format,
        run_ids=runs,
        license=args.license,
        keep_rater_names=args.keep_rater_names,
        push_to_hub=args.push_to_hub,
        private=args.private,
    )
    summary = run_dataset_export(options, store=store, catalogue=catalogue, results=results)
    for line in summary.lines():
        print(line)
    return 0


def _results(store: Store, catalogue: Path | None, models: tuple[str, ...] | None) -> str | None:
    """The report's CSV rows for the exported models (None: nothing to report yet)."""
    from amvicc.report.options import ReportOptions
    from amvicc.report.runner import run_report

    chosen = ReportOptions(
        format="csv",
        output=None,
        default_file=False,
        progress=False,
        catalogue=catalogue,
        models=models,
    )
    try:
        return run_report(chosen, store=store).text
    except UserError as err:
        log.warning("the dataset has no results table: %s", err)
        return None
