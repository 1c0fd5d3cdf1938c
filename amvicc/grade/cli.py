"""``amvicc grade``: arguments only (the work is in :mod:`amvicc.grade.grading`)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from amvicc.api import DEFAULT_KEY_ENV, ApiSettings
from amvicc.cli import (
    add_api_arguments,
    add_run_argument,
    add_store_argument,
    non_negative_float,
    open_store,
    positive_int,
    verb,
)

if TYPE_CHECKING:
    from amvicc.grade.llm_judge import LLMJudge

log = logging.getLogger(__name__)


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """The LLM judge's options (stage 2 of grading), shared by ``answer`` and ``grade``."""
    group = parser.add_argument_group("LLM judge (only for replies the extractor leaves undecided)")
    group.add_argument(
        "--judge",
        metavar="MODEL",
        help="judge model: openai:MODEL, or any name with --judge-base-url (default: no judge; "
        "undecided replies go to the human audit queue)",
    )
    group.add_argument(
        "--judge-mode",
        choices=["choice", "yesno"],
        default="choice",
        help="choice: which option did the reply pick (A/B/NONE); yesno: MMVP-grader style, "
        "is the reply the correct answer (default: choice)",
    )
    group.add_argument(
        "--judge-base-url", metavar="URL", help="the judge's OpenAI-compatible server"
    )
    group.add_argument(
        "--judge-api-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="VAR",
        help=f"environment variable holding the judge's key (default: {DEFAULT_KEY_ENV})",
    )
    group.add_argument(
        "--judge-template",
        type=Path,
        metavar="FILE",
        help="jinja2 template for the chosen mode (default: prompts/grade_judge_<mode>.jinja)",
    )
    group.add_argument(
        "--judge-temperature",
        type=non_negative_float,
        default=0.0,
        metavar="T",
        help="default: 0",
    )
    group.add_argument("--judge-seed", type=int, default=0, metavar="S", help="default: 0")
    group.add_argument(
        "--judge-max-tokens", type=positive_int, default=64, metavar="N", help="default: 64"
    )


def judge_from_args(args: argparse.Namespace) -> LLMJudge | None:
    """The LLM judge the arguments ask for, or None."""
    if not args.judge:
        return None
    from amvicc.grade.llm_judge import JudgeSettings, open_judge

    api = ApiSettings(
        base_url=args.judge_base_url,
        api_key_env=args.judge_api_key_env,
        max_connections=args.max_connections,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )
    settings = JudgeSettings(
        mode=args.judge_mode,
        temperature=args.judge_temperature,
        seed=args.judge_seed,
        max_tokens=args.judge_max_tokens,
    )
    templates = {args.judge_mode: args.judge_template} if args.judge_template else None
    return open_judge(args.judge, settings, api=api, templates=templates)


def _configure(parser: argparse.ArgumentParser) -> None:

    add_store_argument(parser)
    add_run_argument(
        parser, help="answer run to grade; repeatable (default: every answer run)", many=True
    )
    parser.add_argument(
        "--catalogue",
        type=Path,
        metavar="FILE",
        help="the catalogue the run used, if it moved (default: the one the run recorded)",
    )
    add_judge_arguments(parser)
    add_api_arguments(parser, endpoint=False)


@verb(
    "grade",
    summary="grade stored VLM replies offline: extractor, then an LLM judge, then human audit",
    examples=(
        "amvicc grade --run answer-openai-gpt-4o-1a2b3c4d",
        "amvicc grade --judge openai:gpt-4o-mini --judge-mode yesno",
        "amvicc grade --judge qwen2.5:7b --judge-base-url http://127.0.0.1:11434/v1",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Grade the chosen runs and print what each stage decided."""
    from amvicc.errors import UserError
    from amvicc.grade.grading import grade_run, run_catalogue

    store = open_store(args)
    run_ids = args.run or [r.run_id for r in store.runs(stage="answer")]
    if not run_ids:
        raise UserError(f"no answer run in {store.root}; run `amvicc answer` first")
    runs = [store.run(run_id) for run_id in run_ids]  # unknown names fail before any work
    judge = judge_from_args(args)
    for record in runs:
        catalogue = run_catalogue(record, args.catalogue)
        summary = grade_run(
            store, record.run_id, judge=judge, catalogue=catalogue, progress=not args.quiet
        )
        for line in summary.lines():
            print(line)
    return 0
