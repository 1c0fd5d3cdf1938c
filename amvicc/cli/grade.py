"""``amvicc grade``: grade stored replies offline (the work is in :mod:`amvicc.grade`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from amvicc.cli.arguments import (
    add_api_arguments,
    add_judge_arguments,
    add_run_argument,
    add_store_argument,
    finite_float,
    llm_judge_options,
    open_store,
    seed,
)
from amvicc.cli.registry import verb


def _configure(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    add_run_argument(
        parser,
        help="answer or challenge run to grade; repeatable (default: every answer and "
        "challenge run)",
        many=True,
    )
    parser.add_argument(
        "--catalogue",
        type=Path,
        metavar="FILE",
        help="the catalogue the run used, if it moved (default: the one the run recorded)",
    )
    add_judge_arguments(parser)
    parser.add_argument(
        "--all",
        action="store_true",
        help="the LLM judge grades every reply, not only those the extractor left undecided",
    )
    audit = parser.add_argument_group("human audit sample of the automatic decisions")
    audit.add_argument(
        "--audit-fraction",
        type=finite_float,  # its range is checked by AuditSampleOptions
        default=0.1,
        metavar="F",
        help="share of each run's extractor- and judge-decided replies drawn (default: 0.1)",
    )
    audit.add_argument(
        "--audit-minimum",
        type=int,
        default=20,
        metavar="N",
        help="at least this many per run and stage, or all when fewer (default: 20)",
    )
    audit.add_argument("--audit-seed", type=seed, default=0, metavar="S", help="default: 0")
    audit.add_argument(
        "--no-audit-sample", action="store_true", help="draw no audit sample this time"
    )
    add_api_arguments(parser, endpoint=False)


@verb(
    order=80,
    summary="grade stored VLM replies offline: extractor, then an LLM judge, then human audit",
    examples=(
        "amvicc grade --run answer-openai-gpt-4o-1a2b3c4d",
        "amvicc grade --judge openai:gpt-4o-mini --judge-mode yesno",
        "amvicc grade --judge qwen2.5:7b --judge-base-url http://127.0.0.1:11434/v1",
        "amvicc grade --judge openai:gpt-4 --all --judge-template amvicc   # AMVICC's procedure",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Grade the chosen runs and print what each stage decided."""
    from amvicc.grade.options import AuditSampleOptions, GradeOptions
    from amvicc.grade.runner import run_grade

    options = GradeOptions(
        run_ids=tuple(args.run) if args.run else None,
        catalogue=args.catalogue,
        judge=llm_judge_options(args),
        audit=None
        if args.no_audit_sample
        else AuditSampleOptions(args.audit_fraction, args.audit_minimum, args.audit_seed),
        progress=not args.quiet,
    )
    summary = run_grade(options, store=open_store(args))
    for line in summary.lines():
        print(line)
    return 0
