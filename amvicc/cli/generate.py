"""``amvicc generate``: arguments to :class:`~amvicc.generate.GenerationOptions`, then the run."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from amvicc.catalogue import PROMPT_KINDS
from amvicc.cli.arguments import (
    add_api_arguments,
    add_catalogue_arguments,
    add_run_argument,
    add_selection_arguments,
    add_store_argument,
    api_settings,
    catalogue_from_args,
    non_empty,
    non_negative_float,
    positive_int,
    seed,
    store_path,
)
from amvicc.cli.registry import verb
from amvicc.generate.options import API_DEFAULTS

DTYPE_CHOICES = ("float32", "float16", "bfloat16")


def _option(text: str) -> tuple[str, Any]:
    """Parse ``KEY=VALUE``; the value is read as YAML (``512`` is a number, ``hd`` a string).

    NaN, infinity and aliases are refused (:func:`amvicc.files.load_yaml`): the value goes
    into the request and the run's stored JSON.
    """
    import yaml

    from amvicc.files import UnsafeYAML, load_yaml

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    try:
        parsed = load_yaml(value) if value.strip() else ""
    except UnsafeYAML as err:
        raise argparse.ArgumentTypeError(f"{key.strip()}: {err}") from None
    except yaml.YAMLError:
        parsed = value
    return key.strip(), parsed


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=non_empty,
        required=True,
        metavar="MODEL",
        help="a name from `amvicc models` (sd35, tiny-sd3, openai:dall-e-3, "
        "openrouter:google/gemini-2.5-flash-image, stability:sd3.5-large...), a pipeline file, "
        "a Hugging Face repo id, a local diffusers folder, or a name at --base-url",
    )
    add_store_argument(parser)
    add_run_argument(parser, help="name of the run (default: derived from model and settings)")
    add_catalogue_arguments(parser)
    add_selection_arguments(parser)
    parser.add_argument(
        "--prompts",
        choices=[*PROMPT_KINDS, "both"],
        default="both",
        help="which prompts of each question to render (default: both)",
    )
    parser.add_argument(
        "--num-images",
        type=positive_int,
        default=1,
        metavar="K",
        help="images per prompt, each with its own seed (default: 1)",
    )
    parser.add_argument(
        "--seed", type=seed, default=0, help="base of every image's seed (default: 0)"
    )
    parser.add_argument(
        "--force", action="store_true", help="make the images again even where they exist"
    )

    model = parser.add_argument_group("model parameters (default: the pipeline file's)")
    model.add_argument("--steps", type=positive_int, metavar="N", help="denoising steps")
    model.add_argument("--guidance", type=non_negative_float, metavar="G", help="guidance scale")
    model.add_argument("--width", type=positive_int, metavar="PX", help="image width")
    model.add_argument("--height", type=positive_int, metavar="PX", help="image height")
    model.add_argument("--dtype", choices=DTYPE_CHOICES, help="weights' dtype")
    model.add_argument("--revision", metavar="REV", help="branch, tag or commit of the weights")
    model.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a further pipeline-call or API-request parameter, e.g. max_sequence_length=512 "
        "or quality=high (repeatable); for API models, parameters the OpenAI client does not "
        "know are sent in the request body as they are (extra_body), for OpenAI-compatible "
        "servers that take more",
    )

    hardware = parser.add_argument_group("hardware (do not change the images)")
    hardware.add_argument(
        "--batch-size",
        type=positive_int,
        default=1,
        metavar="N",
        help="prompts per call (default: 1)",
    )
    hardware.add_argument(
        "--device", default="auto", help="auto (default), cpu, cuda, cuda:N or mps"
    )
    hardware.add_argument(
        "--offload",
        choices=["model", "sequential"],
        help="keep idle components (model) or layers (sequential) on the CPU to save GPU memory",
    )
    hardware.add_argument(
        "--compile",
        action="store_true",
        help="compile the denoiser's repeated blocks with torch.compile (regional compilation)",
    )

    api = add_api_arguments(parser, defaults=API_DEFAULTS, title="API models")
    api.add_argument(
        "--image-api",
        choices=["images", "chat"],
        default="images",
        help="how the server at --base-url makes images: images (OpenAI's /images/generations, "
        "default) or chat (/chat/completions with image output, OpenRouter's format)",
    )


@verb(
    order=50,
    summary="render the catalogue's prompts with an image model and store every image",
    examples=(
        "amvicc generate --model tiny-sd3 --limit 8",
        "amvicc generate --model sd35 --categories tx,qc --num-images 4 --batch-size 4",
        "accelerate launch -m amvicc.generate --model sd35 --batch-size 4",
        "amvicc generate --model openai:gpt-image-1 --prompts explicit --max-connections 8",
        "amvicc generate --model openrouter:google/gemini-2.5-flash-image --num-images 2",
        "amvicc generate --model stability:sd3.5-large",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Generate, print the summary, and exit 1 when some images failed (rerun to retry)."""
    from amvicc.generate.distributed import launched_rank
    from amvicc.generate.options import GenerationOptions
    from amvicc.generate.runner import run_generate
    from amvicc.store import Store

    main_process = launched_rank() == 0
    if not main_process:
        logging.getLogger().setLevel(logging.WARNING)
    options = GenerationOptions(
        model=args.model,
        image_api=args.image_api,
        kinds=PROMPT_KINDS if args.prompts == "both" else (args.prompts,),
        limit=args.limit,
        num_images=args.num_images,
        seed=args.seed,
        steps=args.steps,
        guidance=args.guidance,
        width=args.width,
        height=args.height,
        dtype=args.dtype,
        revision=args.revision,
        extra=dict(args.option),
        batch_size=args.batch_size,
        device=args.device,
        offload=args.offload,
        compile=args.compile,
        force=args.force,
        api=api_settings(args),
        run_name=args.run,
        command=args.command_line,
        progress=not args.quiet,
        verbose=args.verbose,
    )
    catalogue = catalogue_from_args(args)
    # Under a launcher only the main process opens the database (see docs/generate.md).
    store = Store(store_path(args), create=True, database=main_process)
    summary = run_generate(options, store=store, catalogue=catalogue)
    if main_process and not args.quiet:
        for line in summary.lines():
            print(line)
    return 1 if summary.failed else 0
