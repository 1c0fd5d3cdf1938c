"""``amvicc score [serve|export]``: the human scoring app, and the export of every verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from amvicc.cli.arguments import (
    add_catalogue_arguments,
    add_excel_safe_argument,
    add_output_argument,
    add_run_argument,
    add_store_argument,
    label_policy,
    open_store,
    output_target,
    port,
    seed,
)
from amvicc.cli.registry import verb


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=("serve", "export"),
        default="serve",
        help="serve the scoring app (default), or export every verdict",
    )
    add_store_argument(parser)
    add_catalogue_arguments(parser)
    serve = parser.add_argument_group("serve")
    add_run_argument(
        parser,
        many=True,
        help="a generation run to rate; repeat for several (default: every generation run)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only); "
        "use 0.0.0.0 with --auth to let raters on the network in",
    )
    serve.add_argument("--port", type=port, default=7860, help="port (default: 7860)")
    serve.add_argument(
        "--raters-per-item",
        type=int,
        default=2,
        metavar="N",
        help="how many people rate each image (default: 2); disagreements go to adjudication",
    )
    serve.add_argument(
        "--seed", type=seed, default=0, help="base of each rater's random order (default: 0)"
    )
    serve.add_argument(
        "--auth",
        action="append",
        metavar="USER:PASSWORD",
        help="require a login (repeat for each rater); the user is the rater's name",
    )
    serve.add_argument(
        "--auth-file",
        type=Path,
        metavar="FILE",
        help="logins, one USER:PASSWORD a line (keeps passwords off the command line)",
    )
    serve.add_argument(
        "--open", action="store_true", help="open the app in this machine's web browser"
    )
    export = parser.add_argument_group("export")
    export.add_argument(
        "--format", choices=("csv", "jsonl"), default="csv", help="export format (default: csv)"
    )
    add_output_argument(export, default="standard output")
    add_excel_safe_argument(export)
    export.add_argument(
        "--people-only",
        action="store_true",
        help="only verdicts of raters, grade sheets and adjudicators",
    )


@verb(
    order=100,
    summary="rate generated images by hand (blinded, double-rated), audit undecided answers",
    examples=(
        "amvicc score",
        "amvicc score --run generate-sd35-1a2b3c4d --auth-file raters.txt --host 0.0.0.0",
        "amvicc score export --format csv -o verdicts.csv",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Serve the scoring app, or export the verdicts."""
    if args.action == "export":
        return _export(args)
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    from amvicc.catalogue import load_catalogue
    from amvicc.score.logins import read_logins
    from amvicc.score.options import ScoreOptions
    from amvicc.score.runner import run_score

    options = ScoreOptions(
        run_ids=tuple(args.run) if args.run else None,
        host=args.host,
        port=args.port,
        raters_per_item=args.raters_per_item,
        seed=args.seed,
        logins=tuple(read_logins(args.auth or [], args.auth_file)),
        open_browser=args.open,
        quiet=args.quiet,
    )
    store = open_store(args)
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    summary = run_score(options, store=store, catalogue=catalogue)
    for line in summary.lines():
        print(line, file=sys.stderr)
    summary.server.wait()
    return 0


def _export(args: argparse.Namespace) -> int:
    from amvicc.catalogue import load_catalogue
    from amvicc.score.options import ExportOptions
    from amvicc.score.runner import run_export

    output, _ = output_target(args)
    options = ExportOptions(
        format=args.format,
        output=output,
        people_only=args.people_only,
        excel_safe=args.excel_safe,
    )
    store = open_store(args)
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    summary = run_export(options, store=store, catalogue=catalogue)
    for line in summary.lines():
        print(line, file=sys.stderr)
    return 0
