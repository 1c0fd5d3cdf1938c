"""``amvicc score [serve|export]``: the human scoring app, and the export of every verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from amvicc.cli import (
    add_catalogue_arguments,
    add_run_argument,
    add_store_argument,
    label_policy,
    open_store,
    run_as_module,
    verb,
)
from amvicc.errors import UserError


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
    serve.add_argument("--port", type=int, default=7860, help="port (default: 7860)")
    serve.add_argument(
        "--raters-per-item",
        type=int,
        default=2,
        metavar="N",
        help="how many people rate each image (default: 2); disagreements go to adjudication",
    )
    serve.add_argument(
        "--seed", type=int, default=0, help="base of each rater's random order (default: 0)"
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
    export.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write here (default: standard output)"
    )
    export.add_argument(
        "--people-only",
        action="store_true",
        help="only verdicts of raters, grade sheets and adjudicators",
    )


@verb(
    "score",
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
    from amvicc.score.app import serve
    from amvicc.score.desk import ScoringDesk

    if args.raters_per_item < 1:
        raise UserError("--raters-per-item must be at least 1")
    logins = read_logins(args.auth or [], args.auth_file)
    store = open_store(args)
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    desk = ScoringDesk(
        store,
        catalogue,
        run_ids=args.run,
        raters_per_item=args.raters_per_item,
        seed=args.seed,
    )
    if not desk.images and not desk.answers:
        raise UserError(
            f"nothing to score in {store.root}: no generated images and no undecided answers; "
            "run `amvicc generate` first (or pass --run)"
        )
    server = serve(
        desk,
        host=args.host,
        port=args.port,
        auth=logins or None,
        open_browser=args.open,
        quiet=args.quiet,
    )
    print(
        f"Scoring {len(desk.images)} images ({args.raters_per_item} raters each) and "
        f"{len(desk.answers)} undecided answers at {server.url}"
        + (f" for {len(logins)} login(s)" if logins else "")
        + "; Ctrl-C stops (every verdict is already saved)",
        file=sys.stderr,
    )
    server.wait()
    return 0


def _export(args: argparse.Namespace) -> int:
    from amvicc.catalogue import load_catalogue
    from amvicc.score.export import verdicts_export, write_export

    store = open_store(args)
    frame = verdicts_export(
        store,
        load_catalogue(args.catalogue, labels=label_policy(args)),
        people_only=args.people_only,
    )
    write_export(frame, args.output, args.format)
    if args.output is not None:
        print(f"wrote {len(frame)} verdicts to {args.output}", file=sys.stderr)
    return 0


def read_logins(pairs: list[str], auth_file: Path | None) -> list[tuple[str, str]]:
    """Logins from ``--auth USER:PASSWORD`` and ``--auth-file`` (``#`` starts a comment).

    Raises:
        UserError: a login is malformed, a user repeats, or the file cannot be read.
    """
    from amvicc.score.desk import normalise_rater

    entries = [("--auth", pair) for pair in pairs]
    if auth_file is not None:
        try:
            text = auth_file.read_text(encoding="utf-8")
        except OSError as err:
            raise UserError(f"cannot read --auth-file {auth_file}: {err.strerror}") from None
        entries += [
            (f"{auth_file}:{number}", line.strip())
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
    logins: dict[str, str] = {}
    for where, entry in entries:
        user, colon, password = entry.partition(":")
        if not colon or not user.strip() or not password:
            raise UserError(f"{where}: a login is USER:PASSWORD with both parts non-empty")
        try:
            user = normalise_rater(user)
        except UserError as err:
            raise UserError(f"{where}: {err}") from None
        if user in logins:
            raise UserError(f"{where}: user {user!r} is given twice")
        logins[user] = password
    return list(logins.items())


if __name__ == "__main__":
    run_as_module("score")
