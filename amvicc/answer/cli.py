"""``amvicc answer``: arguments only (the work is in :mod:`amvicc.answer.runner`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from amvicc.cli import (
    add_api_arguments,
    add_catalogue_arguments,
    add_run_argument,
    add_selection_arguments,
    add_store_argument,
    non_negative_float,
    positive_int,
    verb,
)

if TYPE_CHECKING:
    from amvicc.answer.backends import LocalSettings


def _configure(parser: argparse.ArgumentParser) -> None:
    from amvicc.grade.cli import add_judge_arguments

    parser.add_argument(
        "--model",
        required=True,
        metavar="NAME",
        help="openai:MODEL, hf:REPO_OR_FOLDER, tiny-llava (smoke test), or any model name "
        "with --base-url",
    )
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
    sampling.add_argument(
        "--temperature",
        type=non_negative_float,
        default=0.0,
        metavar="T",
        help="sampling temperature (default: 0, greedy)",
    )
    sampling.add_argument(
        "--max-tokens",
        type=positive_int,
        default=512,
        metavar="N",
        help="longest reply in tokens (default: 512)",
    )
    sampling.add_argument(
        "--seed",
        type=int,
        default=0,
        help="base seed; each question's seed derives from it (default: 0)",
    )

    add_api_arguments(parser)
    add_local_arguments(parser)
    add_judge_arguments(parser)
    add_store_argument(parser)
    add_run_argument(
        parser, help="name the run (default: answer-<model>-<hash>; the same command resumes it)"
    )
    add_selection_arguments(parser)
    add_catalogue_arguments(parser)


def add_local_arguments(parser: argparse.ArgumentParser) -> None:
    """Options for running a local model (``hf:`` and ``tiny-llava``)."""
    local = parser.add_argument_group("local models (hf:, tiny-llava)")
    local.add_argument(
        "--device", default="auto", help="auto (CUDA, MPS, else CPU), cpu, cuda, cuda:1, mps"
    )
    local.add_argument(
        "--dtype",
        choices=["auto", "float32", "bfloat16", "float16"],
        default="auto",
        help="weights precision (default: auto = bfloat16 on GPU, float32 on CPU)",
    )
    local.add_argument(
        "--batch-size",
        type=positive_int,
        default=8,
        metavar="N",
        help="questions per generate() call (default: 8)",
    )


def local_settings(args: argparse.Namespace) -> LocalSettings:
    """The local-model settings :func:`add_local_arguments` collected."""
    from amvicc.answer.backends import LocalSettings

    return LocalSettings(device=args.device, dtype=args.dtype, batch_size=args.batch_size)


@verb(
    "answer",
    summary="ask a VLM the MMVP questions about their images, store every reply, grade them",
    examples=(
        "amvicc answer --model openai:gpt-4o --images ~/data/MMVP",
        "amvicc answer --model Qwen/Qwen2.5-VL-7B-Instruct --base-url http://127.0.0.1:8000/v1 "
        "--images ~/data/MMVP --repeats 5 --temperature 0.7",
        "amvicc answer --model hf:llava-hf/llava-1.5-7b-hf --images ~/data/MMVP --batch-size 16",
        "amvicc answer --model tiny-llava --images ~/data/MMVP --index 1-20  # offline smoke test",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Answer, store, grade; see :func:`amvicc.answer.runner.run_answer`."""
    from amvicc.answer.runner import run_answer

    return run_answer(args)
