"""``amvicc judge``: arguments to :class:`~amvicc.judge.JudgeOptions`, then the judge."""

from __future__ import annotations

import argparse
from pathlib import Path

from amvicc.cli.arguments import (
    add_api_arguments,
    add_catalogue_arguments,
    add_local_arguments,
    add_sampling_arguments,
    add_selection_arguments,
    add_store_argument,
    label_policy,
    model_run_fields,
    non_empty,
    open_store,
    sampling_params,
)
from amvicc.cli.registry import verb


def _configure(parser: argparse.ArgumentParser) -> None:
    from amvicc.judge.methods import METHODS

    parser.add_argument(
        "--run", required=True, metavar="RUN", help="the generation run whose images to judge"
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        required=True,
        help="rubric: a VLM grades against the category rubric; question: a VLM answers the "
        "image's MMVP question (explicit images); ocr: OCR reads Text images (offline)",
    )
    parser.add_argument(
        "--judge",
        type=non_empty,
        metavar="MODEL",
        help="the VLM judge for rubric and question: openai:MODEL, openrouter:PROVIDER/MODEL, "
        "hf:REPO_OR_FOLDER, tiny-llava (smoke test), or any name with --base-url (ocr uses "
        "rapidocr)",
    )
    parser.add_argument(
        "--kind",
        choices=["explicit", "implicit", "both"],
        default="both",
        help="images of which prompts, for rubric (question and ocr judge explicit ones)",
    )
    parser.add_argument(
        "--template",
        type=Path,
        metavar="FILE",
        help="jinja2 prompt (default: prompts/judge_rubric.jinja for rubric, "
        "prompts/answer.jinja for question)",
    )
    add_sampling_arguments(parser)
    add_api_arguments(parser)
    add_local_arguments(parser)
    add_store_argument(parser)
    add_selection_arguments(parser)
    add_catalogue_arguments(parser)


@verb(
    order=90,
    summary="judge generated images automatically (VLM rubric, VLM question-back, OCR)",
    examples=(
        "amvicc judge --run generate-sd35-1a2b3c4d --method ocr",
        "amvicc judge --run generate-sd35-1a2b3c4d --method question --judge openai:gpt-4o",
        "amvicc judge --run generate-sd35-1a2b3c4d --method rubric --judge Qwen/Qwen2.5-VL-72B "
        "--base-url http://127.0.0.1:8000/v1",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Judge a generation run's images and print what the judge decided."""
    from amvicc.catalogue import PROMPT_KINDS, load_catalogue, parse_categories
    from amvicc.judge.options import JudgeOptions
    from amvicc.judge.runner import run_judge

    store = open_store(args)
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    indices = args.index
    if args.categories:
        chosen = catalogue.select(categories=parse_categories(args.categories), indices=indices)
        indices = frozenset(q.index for q in chosen)
    options = JudgeOptions(
        run_id=args.run,
        method=args.method,
        judge=args.judge,
        kinds=PROMPT_KINDS if args.kind == "both" else (args.kind,),
        indices=indices,
        template=args.template,
        sampling=sampling_params(args),
        **model_run_fields(args),
    )
    summary = run_judge(options, store=store, catalogue=catalogue)
    for line in summary.lines():
        print(line)
    return 1 if summary.errors else 0
