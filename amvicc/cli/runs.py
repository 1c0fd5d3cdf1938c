"""``amvicc runs``: the workspace's runs, to find the one to resume, challenge or report.

One row per run: its id, stage, model, condition (a perturbation such as ``grain=0.1`` or a
challenge arm; empty for a plain run), status, items done and failed, and when it started;
as a table, CSV or JSON. Reading the store only, it stays light (no pandas).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import get_args

from amvicc.cli.arguments import add_store_argument, comma_list, open_store
from amvicc.cli.registry import verb
from amvicc.errors import UserError
from amvicc.store import RunCounts, RunRecord, Stage, Store

STAGES: tuple[str, ...] = get_args(Stage)


@dataclass(frozen=True)
class RunRow:
    """One run as ``amvicc runs`` lists it.

    Attributes:
        parent: the run it was made from (a challenge's answer run); empty for none.
    """

    run_id: str
    stage: str
    model: str
    condition: str
    status: str
    done: int
    failed: int
    started: str
    parent: str


def _configure(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument(
        "--stage",
        type=comma_list,
        metavar="STAGES",
        help=f"only runs of these stages, comma-separated ({', '.join(STAGES)})",
    )
    parser.add_argument(
        "--model",
        "--models",
        dest="models",
        type=comma_list,
        action="extend",
        metavar="NAMES",
        help="only runs of these models (names or glob patterns, comma-separated)",
    )
    parser.add_argument(
        "--format", choices=["table", "csv", "json"], default="table", help="output (table)"
    )
    parser.add_argument(
        "--show",
        metavar="RUN",
        help="everything stored about one run: its command, configuration, summary and the "
        "notes kept beside it (e.g. every record an import found disagreeing)",
    )


@verb(
    order=30,
    summary="list the workspace's runs: id, stage, model, condition, status, items, started",
    examples=(
        "amvicc runs",
        "amvicc runs --stage answer --model 'openai:*'",
        "amvicc runs --stage challenge --format csv",
        "amvicc runs --show answer-gpt-4o-1a2b3c4d",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Print the runs, oldest first."""
    stages = args.stage or []
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise UserError(f"unknown stage {unknown[0]!r}; stages: {', '.join(STAGES)}")
    store = open_store(args)
    if args.show:
        print(show_run(store, args.show))
        return 0
    rows = run_rows(store.runs(), store.run_counts(), stages=stages, models=args.models or [])
    if args.format == "json":
        print(json.dumps([asdict(row) for row in rows], indent=2))
    elif args.format == "csv":
        print(_csv(rows), end="")
    elif rows:
        print(_table(rows))
    else:
        print(f"no runs in {store.root}" + (" match" if stages or args.models else ""))
    return 0


def show_run(store: Store, run_id: str) -> str:
    """One run in full: its record, configuration and summary, then the notes kept beside it.

    Notes are the text files a stage keeps in the run's folder (``responses/<run>/*-notes.txt``),
    such as the full list of what an import found disagreeing with the catalogue; the terminal
    showed only a summary of them.
    """
    record = store.run(run_id)
    lines = [
        f"run       {record.run_id}",
        f"stage     {record.stage}",
        f"model     {record.model}",
        f"status    {record.status}",
        f"started   {record.started_at}",
        f"ended     {record.ended_at or '-'}",
    ]
    if record.condition:
        lines.append(f"condition {record.condition}")
    if record.parent_run_id:
        lines.append(f"parent    {record.parent_run_id}")
    if record.command:
        lines.append(f"command   {record.command}")
    lines.append("config    " + json.dumps(record.config, indent=2, sort_keys=True))
    lines.append("summary   " + json.dumps(record.summary, indent=2, sort_keys=True))
    folder = store.path(f"responses/{record.run_id}")
    for notes in sorted(folder.glob("*-notes.txt")) if folder.is_dir() else []:
        lines.append(f"--- {notes.relative_to(store.root)}")
        lines.append(notes.read_text(encoding="utf-8", errors="replace").rstrip("\n"))
    return "\n".join(lines)


def run_rows(
    runs: Sequence[RunRecord], counts: dict[str, RunCounts], *, stages: list[str], models: list[str]
) -> list[RunRow]:
    """The rows to list, filtered by stage and by model name or glob pattern."""
    rows = []
    for record in runs:
        if stages and record.stage not in stages:
            continue
        if models and not any(fnmatch.fnmatchcase(record.model, m) for m in models):
            continue
        count = counts.get(record.run_id, RunCounts())
        rows.append(
            RunRow(
                run_id=record.run_id,
                stage=record.stage,
                model=record.model,
                condition=record.condition,
                status=record.status,
                done=count.done,
                failed=count.failed,
                started=record.started_at,
                parent=record.parent_run_id or "",
            )
        )
    return rows


def _csv(rows: list[RunRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(RunRow.__dataclass_fields__))
    writer.writerows([list(asdict(row).values()) for row in rows])
    return out.getvalue()


def _table(rows: list[RunRow]) -> str:
    header = ("run", "stage", "model", "condition", "status", "done", "failed", "started")
    cells = [header] + [
        (
            r.run_id,
            r.stage,
            r.model,
            r.condition or "-",
            r.status,
            str(r.done),
            str(r.failed),
            r.started[:19].replace("T", " "),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    numeric = {5, 6}
    return "\n".join(
        "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    )
