"""``amvicc demo``: the whole flow, offline, on embedded defaults, in a few minutes on a laptop.

It runs the same verbs a user runs, in one process, printing each command, in two parts:

1. **AMVICC's published results.** It imports the human grade sheets AMVICC published for its
   three image models (shipped in ``grades/``, CC0), under the paper's names — DALL·E 3,
   Gemini 2.5 Flash Image, SD 3.5 Large — so the report opens with AMVICC's own table.
2. **The machinery, on smoke-test models.** It generates both prompt kinds for a few pairs of
   every category with the ``tiny-sd3`` smoke model, answers their questions with the
   ``tiny-llava`` smoke VLM, judges the explicit images by asking ``tiny-llava`` their
   question and the Text images with OCR. The smoke models have random weights, built
   offline in a second: their numbers mean nothing about real models, and the report keeps
   them apart from the real ones, after them, scored only on the pairs they were asked
   (``--smoke-index``).

MMVP's own images are not shipped (they are on the Hugging Face Hub); without ``--images``
the VLM answers questions about stand-in pictures rendered here, labelled as such.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from amvicc.catalogue import format_index_ranges
from amvicc.cli.arguments import positive_int
from amvicc.cli.main import main as run_verb
from amvicc.cli.registry import verb
from amvicc.errors import UserError
from amvicc.imports.published import published_sheets

DEMO_STORE = Path("amvicc-demo")
IMAGE_MODEL = "tiny-sd3"
VLM = "tiny-llava"
SMOKE_NOTICE = (
    "Part 2 runs random-weight smoke-test models: their numbers show that the machinery "
    "works and mean nothing about real models."
)
PUBLISHED_NOTICE = (
    "Part 1 imports AMVICC's published human grades of DALL·E 3, Gemini 2.5 Flash Image and "
    "SD 3.5 Large (CC0): the report opens with AMVICC's own image-model table."
)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        type=Path,
        default=DEMO_STORE,
        metavar="DIR",
        help=f"workspace for the demo (default: ./{DEMO_STORE}); rerunning resumes it",
    )
    parser.add_argument(
        "--pairs",
        type=positive_int,
        default=2,
        metavar="N",
        help="question pairs per category (default: 2, i.e. 36 questions and 72 images)",
    )
    parser.add_argument(
        "--images",
        type=Path,
        metavar="DIR",
        help="MMVP's images (<index>.jpg or the Hugging Face snapshot) for the VLM side "
        "(default: stand-in pictures rendered offline)",
    )


def demo_indices(pairs_per_category: int) -> list[int]:
    """The questions of the first ``pairs_per_category`` pairs of every category."""
    from amvicc.catalogue import load_catalogue

    chosen: list[int] = []
    for category in (catalogue := load_catalogue()).categories():
        pairs = catalogue.select(categories=[category]).pairs()
        for members in list(pairs.values())[:pairs_per_category]:
            chosen.extend(q.index for q in members)
    return sorted(chosen)


def write_stand_in_images(folder: Path, indices: list[int]) -> Path:
    """Render a labelled stand-in picture per question, named as MMVP's images are."""
    from PIL import Image, ImageDraw, ImageFont

    from amvicc.catalogue import load_catalogue

    catalogue = load_catalogue()
    folder.mkdir(parents=True, exist_ok=True)
    font = ImageFont.load_default(size=14)
    for index in indices:
        path = folder / f"{index}.png"
        if path.exists():
            continue
        question = catalogue.question(index)
        image = Image.new("RGB", (224, 224), (235, 235, 235))
        draw = ImageDraw.Draw(image)
        draw.multiline_text(
            (8, 8),
            f"stand-in for\nMMVP image {index}\n\n" + _wrap(question.text, 26),
            fill=(40, 40, 40),
            font=font,
        )
        temporary = path.with_suffix(".tmp")
        image.save(temporary, format="PNG")
        temporary.replace(path)
    return folder


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


@verb(
    "demo",
    summary="run the whole flow offline on tiny smoke-test models and write the report",
    examples=("amvicc demo", "amvicc demo --pairs 1 --store /tmp/amvicc-demo"),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Run every stage on the smoke models; stop at the first stage that fails."""
    started = time.perf_counter()
    store = str(args.store)
    indices = demo_indices(args.pairs)
    selection = ["--store", store, "--index", format_index_ranges(indices)]
    quiet = ["-q"] if args.quiet else []
    images = args.images or write_stand_in_images(args.store / "stand-in-images", indices)
    generation_run = f"demo-{IMAGE_MODEL}"
    report = args.store / "report.html"
    report_argv = [
        "report",
        "--store",
        store,
        "--smoke-index",
        format_index_ranges(indices),
        "-o",
        str(report),
    ]
    print(PUBLISHED_NOTICE)
    print(SMOKE_NOTICE)
    if args.images is None:
        print(f"The VLM answers about stand-in pictures in {images}; pass --images DIR for MMVP's.")
    published = [
        (
            f"part 1: import AMVICC's published grades of {model}",
            ["import-grades", str(sheet), "--model", model, "--store", store],
        )
        for sheet, model in published_sheets()
    ]
    steps = [
        *published,
        (
            f"part 2: generate both prompt kinds for {len(indices)} questions ({args.pairs} "
            f"pair(s) per category) with the smoke model {IMAGE_MODEL}",
            ["generate", "--model", IMAGE_MODEL, "--run", generation_run, *selection],
        ),
        (
            f"part 2: answer the questions with the smoke VLM {VLM}, then grade the answers",
            ["answer", "--model", VLM, "--images", str(images), *selection],
        ),
        (
            f"part 2: judge the explicit images by asking {VLM} their question",
            ["judge", "--run", generation_run, "--method", "question", "--judge", VLM, *selection],
        ),
        (
            "part 2: judge the Text images with OCR",
            ["judge", "--run", generation_run, "--method", "ocr", *selection],
        ),
        (
            "write the report: AMVICC's published table first, the smoke-test models apart "
            "after it, on the pairs they were asked",
            report_argv,
        ),
    ]
    for number, (what, argv) in enumerate(steps, start=1):
        print(f"\n[{number}/{len(steps)}] {what}\n$ {shlex.join(['amvicc', *argv, *quiet])}")
        sys.stdout.flush()
        status = run_verb([*argv, *quiet])
        if status != 0:
            raise UserError(
                f"step {number} ({what}) failed with status {status}; fix what it printed and "
                "rerun `amvicc demo` to resume"
            )
    print(f"\nDone in {time.perf_counter() - started:.0f} s.")
    print(f"  workspace  {args.store}")
    print(f"  report     {report}  (first: AMVICC's published image-model results)")
    print(SMOKE_NOTICE)
    print("Rate the smoke images yourself (blinded, keyboard-driven), then refresh the report:")
    print(f"  amvicc score --store {shlex.quote(store)}")
    print(f"  {shlex.join(['amvicc', *report_argv])}")
    return 0
