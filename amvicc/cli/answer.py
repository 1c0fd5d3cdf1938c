"""``amvicc answer``: ask a VLM, then grade its replies (the answer and grade stages)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from amvicc.cli.arguments import (
    add_api_arguments,
    add_catalogue_arguments,
    add_judge_arguments,
    add_local_arguments,
    add_run_argument,
    add_sampling_arguments,
    add_selection_arguments,
    add_store_argument,
    catalogue_from_args,
    llm_judge_options,
    model_run_fields,
    non_empty,
    open_store,
    positive_int,
    sampling_params,
    seed,
)
from amvicc.cli.registry import verb
from amvicc.errors import UserError

if TYPE_CHECKING:
    from amvicc.answer.options import AnswerOptions
    from amvicc.vlm.perturb import Perturbation

# ``--ladder`` without a file: the ladder ``amvicc scenes build`` wrote beside the catalogue.
LADDER_BESIDE_CATALOGUE = Path("<beside the catalogue>")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=non_empty,
        required=True,
        metavar="NAME",
        help="openai:MODEL, openrouter:PROVIDER/MODEL (key in OPENROUTER_API_KEY), "
        "hf:REPO_OR_FOLDER, tiny-llava (smoke test), or any model name with --base-url",
    )
    _add_image_source(parser)
    _add_prompt_and_sampling(parser)
    _add_perturbation(parser)
    add_api_arguments(parser)
    add_local_arguments(parser)
    add_judge_arguments(parser)
    add_store_argument(parser)
    add_run_argument(
        parser, help="name the run (default: answer-<model>-<hash>; the same command resumes it)"
    )
    add_selection_arguments(parser)
    add_catalogue_arguments(parser)


def _add_image_source(parser: argparse.ArgumentParser) -> None:
    images = parser.add_argument_group("images (give one)")
    source = images.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--images",
        type=Path,
        metavar="DIR",
        help="MMVP images: <index>.jpg|png files, or the Hugging Face snapshot "
        "('MMVP Images/' beside Questions.csv)",
    )
    source.add_argument(
        "--hf-dataset",
        metavar="NAME",
        help="load MMVP's images with `datasets`, e.g. MMVP/MMVP (needs network and "
        "amvicc[hf-datasets])",
    )
    source.add_argument(
        "--generated",
        metavar="RUN",
        help="ask about the images of a generation run instead (the correct answer of an "
        "explicit image is the option its prompt asked for)",
    )
    images.add_argument(
        "--kind",
        choices=["explicit", "implicit", "both"],
        default="explicit",
        help="with --generated: images of which prompts (default: explicit, the ones with a "
        "correct answer)",
    )
    images.add_argument(
        "--skip-missing",
        action="store_true",
        help="answer the questions whose image is there when some are missing or unreadable",
    )


def _add_prompt_and_sampling(parser: argparse.ArgumentParser) -> None:
    sampling = parser.add_argument_group("prompt and sampling")
    sampling.add_argument(
        "--template",
        type=Path,
        metavar="FILE",
        help="jinja2 prompt template (default: the shipped prompts/answer.jinja)",
    )
    sampling.add_argument(
        "--repeats",
        type=positive_int,
        default=1,
        metavar="K",
        help="samples per question, for mean@k and pass@k (default: 1)",
    )
    add_sampling_arguments(sampling)
    sampling.add_argument(
        "--ladder",
        nargs="?",
        const=LADDER_BESIDE_CATALOGUE,
        type=Path,
        metavar="FILE",
        help="ask GRIP's question ladder about procedural scenes instead of the questions: "
        "five typed rungs per image, from FILE (default: ladder.jsonl beside --catalogue, as "
        "`amvicc scenes build` writes it); needs --images",
    )


def _add_perturbation(parser: argparse.ArgumentParser) -> None:
    perturb = parser.add_argument_group("perturbation (GRIP's grain robustness)")
    perturb.add_argument(
        "--perturb",
        type=perturbation_levels,
        action="append",
        metavar="KIND:LEVELS",
        help="degrade every image before it is sent, one run per level: grain:S (Gaussian "
        "noise, std S x 255), blur:R (radius), jpeg:Q (quality), downscale:F (factor); "
        "several levels as grain:0.05,0.1,0.2; repeatable",
    )
    perturb.add_argument(
        "--perturb-seed",
        type=seed,
        default=0,
        metavar="S",
        help="seeds the grain with each image's hash: the same image always gets the same "
        "noise (default: 0)",
    )


@verb(
    order=60,
    summary="ask a VLM the MMVP questions about their images, store every reply, grade them",
    examples=(
        "amvicc answer --model openai:gpt-4o --images ~/data/MMVP",
        "amvicc answer --model openrouter:x-ai/grok-4 --images ~/data/MMVP  # OPENROUTER_API_KEY",
        "amvicc answer --model Qwen/Qwen2.5-VL-7B-Instruct --base-url http://127.0.0.1:8000/v1 "
        "--images ~/data/MMVP --repeats 5 --temperature 0.7",
        "amvicc answer --model hf:llava-hf/llava-1.5-7b-hf --images ~/data/MMVP --batch-size 16",
        "amvicc answer --model tiny-llava --images ~/data/MMVP --index 1-20  # offline smoke test",
        "amvicc answer --model openai:gpt-4o --images ~/data/MMVP --perturb grain:0.05,0.1,0.2",
        "amvicc answer --model openai:gpt-4o --catalogue scenes/catalogue.csv "
        "--images scenes/images --ladder",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Answer and store every reply, then grade the run offline.

    Returns:
        0 when every question has a reply; 1 when some requests failed (they are stored as
        errors and retried by rerunning the same command).
    """
    from amvicc.answer.runner import run_answer
    from amvicc.grade.llm_judge import open_llm_judge
    from amvicc.grade.options import GradeOptions
    from amvicc.grade.runner import run_grade
    from amvicc.vlm.providers import open_vlm

    catalogue = catalogue_from_args(args)
    options = answer_options(args)
    if options.ladder == LADDER_BESIDE_CATALOGUE:
        from amvicc.ladder import LADDER_FILE

        options = replace(options, ladder=Path(catalogue.source).parent / LADDER_FILE)
    perturbations = [
        replace(p, seed=args.perturb_seed) for levels in args.perturb or () for p in levels
    ]
    if args.run and len(perturbations) > 1:
        raise UserError(
            f"--run names one run, but --perturb asks for {len(perturbations)} (one per "
            "level); leave --run out"
        )
    judge_options = llm_judge_options(args)
    # A bad judge setting fails before any request to the answering model.
    judge = open_llm_judge(judge_options) if judge_options else None
    store = open_store(args, create=True)
    # One model for every level: a local model's weights load once.
    vlm = open_vlm(options.model, api=options.api, local=options.local) if perturbations else None
    failed = 0
    for perturbation in perturbations or [None]:
        answered = run_answer(
            replace(options, perturbation=perturbation), store=store, catalogue=catalogue, vlm=vlm
        )
        # The whole run is graded, including questions answered by earlier, other selections.
        graded = run_grade(
            GradeOptions(run_ids=(answered.run_id,), progress=options.progress),
            store=store,
            judge=judge,
        )
        for line in [*answered.lines(), *graded.lines()]:
            print(line)
        for line in answered.error_lines():
            print(line, file=sys.stderr)
        failed += answered.failed
    return 1 if failed else 0


def perturbation_levels(text: str) -> tuple[Perturbation, ...]:
    """An argparse type: ``KIND:LEVEL[,LEVEL...]`` as perturbations (seeded later)."""
    from amvicc.vlm.perturb import parse_perturbations

    try:
        return parse_perturbations(text)
    except UserError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def answer_options(args: argparse.Namespace) -> AnswerOptions:
    """The answering stage's options from ``amvicc answer``'s arguments."""
    from amvicc.answer.options import AnswerOptions

    return AnswerOptions(
        model=args.model,
        images=args.images,
        hf_dataset=args.hf_dataset,
        generated=args.generated,
        kinds=("implicit", "explicit") if args.kind == "both" else (args.kind,),
        skip_missing=args.skip_missing,
        template=args.template,
        repeats=args.repeats,
        sampling=sampling_params(args),
        ladder=args.ladder,
        **model_run_fields(args, run_name=args.run),
    )
