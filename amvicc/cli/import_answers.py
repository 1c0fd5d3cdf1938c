"""``amvicc import-answers``: arguments to :class:`~amvicc.imports.ImportAnswersOptions`, then the import and its grading."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from amvicc.cli.arguments import (
    add_api_arguments,
    add_catalogue_arguments,
    add_judge_arguments,
    add_store_argument,
    label_policy,
    llm_judge_options,
    non_empty,
    store_path,
)
from amvicc.cli.registry import verb

log = logging.getLogger(__name__)

# The formats as the stage names them (kept here as text so the parser stays light).
FORMATS = ("amvicc-jsonl", "amvicc-graded", "lmms-eval", "vlmevalkit", "inspect", "generic")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="the replies: AMVICC's answers .jsonl or graded .json, lmms-eval samples .jsonl, "
        "a VLMEvalKit prediction .xlsx/.tsv/.json, an Inspect log (.eval or .json; needs "
        "amvicc[inspect]), or a CSV/JSONL with index and response",
    )
    parser.add_argument(
        "--model", type=non_empty, required=True, help="the VLM that wrote them, e.g. gpt-4o"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="the file's format (default: detected from its name and first record)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check the file and say what would be added"
    )
    parser.add_argument(
        "--accept-mismatch",
        action="store_true",
        help="also import records that disagree with the question they name (question text, "
        "options, answer key, prompt); by default they are listed and left out",
    )
    add_store_argument(parser)
    add_catalogue_arguments(parser)
    add_judge_arguments(parser)
    add_api_arguments(parser, endpoint=False)


@verb(
    order=120,
    summary="import VLM replies made elsewhere (AMVICC, lmms-eval, VLMEvalKit, Inspect, CSV/JSONL) "
    "as an answer run, then grade them",
    examples=(
        "amvicc import-answers gpt4o_evaluation.jsonl --model gpt-4o",
        "amvicc import-answers evaluation_results_grok4.json --model grok-4",
        "amvicc import-answers samples_mmvp.jsonl --model llava-1.5-7b --format lmms-eval",
        "amvicc import-answers GPT4o_MMVP.xlsx --model gpt-4o-vlmevalkit",
        "amvicc import-answers logs/2025-01-01T00-00-00_mmvp_abc.eval --model gpt-4o-inspect",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Read, check and import the file, then grade the run like any answer run."""
    from amvicc.catalogue import load_catalogue
    from amvicc.grade.llm_judge import open_llm_judge
    from amvicc.grade.options import GradeOptions
    from amvicc.grade.runner import run_grade
    from amvicc.imports.answers import agreement_with_extractor, run_import_answers
    from amvicc.imports.options import ImportAnswersOptions
    from amvicc.store import Store

    options = ImportAnswersOptions(
        file=args.file,
        model=args.model,
        format=args.format,
        dry_run=args.dry_run,
        command=args.command_line,
        accept_mismatch=args.accept_mismatch,
    )
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    judge_options = llm_judge_options(args)
    # A bad judge setting fails before anything is imported.
    judge = open_llm_judge(judge_options) if judge_options else None
    # The folder, not an opened store: a file with errors, or a dry run, creates nothing.
    summary = run_import_answers(options, store=store_path(args), catalogue=catalogue)
    # One line per kind of note; -q keeps the counts only, the full list stays with the run.
    for line in summary.note_lines(examples=not args.quiet):
        log.warning("%s", line)
    lines = summary.lines()
    if not options.dry_run:
        store = Store(store_path(args), create=False)
        graded = run_grade(
            GradeOptions(run_ids=(summary.run_id,), catalogue=args.catalogue, progress=False),
            store=store,
            judge=judge,
        )
        lines += graded.lines()
        if summary.judge_source:
            agree, both = agreement_with_extractor(store, summary.run_id, summary.judge_source)
            if both:
                lines.append(
                    f"  {summary.judge_source} and the extractor pick the same option for "
                    f"{agree} of the {both} replies both decided ({agree / both:.1%})"
                )
    for line in lines:
        print(line)
    return 0
