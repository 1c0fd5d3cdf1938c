"""``amvicc demo``: the whole flow, offline, on embedded defaults, in a few minutes on a laptop.

It runs the same verbs a user runs, in one process, printing each command, in two parts:

1. **AMVICC's published results.** It imports the human grade sheets AMVICC published for its
   three image models (shipped in ``grades/``, CC0), under the paper's names — DALL·E 3,
   Gemini 2.5 Flash Image, SD 3.5 Large — so the report opens with AMVICC's own table.
2. **The machinery, on smoke-test models.** It generates both prompt kinds for a few pairs of
   every category with the ``tiny-sd3`` smoke model; builds as many procedural scene pairs
   per category (``amvicc scenes build``, in the workspace's ``scenes/``) and asks the
   ``tiny-llava`` smoke VLM their questions, then GRIP's question ladder about them; judges the explicit images by asking
   ``tiny-llava`` their question and the Text images with OCR. The smoke models have random
   weights, built offline in a second: their numbers mean nothing about real models, and the
   report keeps them apart from the real ones, after them, scored only on the pairs they were
   asked (``--smoke-index``).

MMVP's own images are not shipped (they are on the Hugging Face Hub), so the VLM answers about
scenes, whose truth comes from the code that drew them. The report scores the scene answers
against the scene catalogue, apart from MMVP's results. With ``--images DIR`` (MMVP's images)
``tiny-llava`` answers MMVP's questions too, and the report puts its accuracies on both
catalogues side by side.
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
from amvicc.extras import require_extra
from amvicc.imports.published import published_sheets

DEMO_STORE = Path("amvicc-demo")
# The scene set inside the workspace, and its seed (the same scenes on every machine).
SCENES_FOLDER = "scenes"
SCENES_SEED = 1
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
        help="MMVP's images (<index>.jpg or the Hugging Face snapshot): the VLM also answers "
        "MMVP's questions, beside the procedural scenes (default: scenes only)",
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


@verb(
    order=150,
    summary="run the whole flow offline on tiny smoke-test models and write the report",
    examples=("amvicc demo", "amvicc demo --pairs 1 --store /tmp/amvicc-demo"),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Run every stage on the smoke models; stop at the first stage that fails."""
    require_extra(("local", "ocr"), "amvicc demo runs local smoke-test models and OCR")
    started = time.perf_counter()
    store = str(args.store)
    indices = demo_indices(args.pairs)
    scenes = args.store / SCENES_FOLDER
    report = args.store / "report.html"
    report_argv = [
        *("report", "--store", store, "--smoke-index", format_index_ranges(indices)),
        *("-o", str(report)),
    ]
    print(PUBLISHED_NOTICE)
    print(SMOKE_NOTICE)
    if args.images is None:
        print(
            f"The VLM answers about procedural scenes built in {scenes}; pass --images DIR "
            "(MMVP's images) to ask it about MMVP's photographs too."
        )
    steps = [
        *_published_steps(store),
        *_smoke_steps(args, indices, scenes),
        (
            "write the report: AMVICC's published table first, the smoke-test models apart "
            "after it, on the pairs they were asked; the scene answers on their own catalogue",
            report_argv,
        ),
    ]
    quiet = ["-q"] if args.quiet else []
    for number, (what, argv) in enumerate(steps, start=1):
        # -q right after the verb: `scenes` takes it there, before its action.
        command = [argv[0], *quiet, *argv[1:]]
        print(f"\n[{number}/{len(steps)}] {what}\n$ {shlex.join(['amvicc', *command])}")
        sys.stdout.flush()
        status = run_verb(command)
        if status != 0:
            raise UserError(
                f"step {number} ({what}) failed with status {status}; fix what it printed and "
                "rerun `amvicc demo` to resume"
            )
    print(f"\nDone in {time.perf_counter() - started:.0f} s.")
    print(f"  workspace  {args.store}")
    print(f"  report     {report}  (first: AMVICC's published image-model results)")
    print(f"  scenes     {scenes}  (the scene set the VLM was asked about)")
    print(SMOKE_NOTICE)
    print("Rate the smoke images yourself (blinded, keyboard-driven), then refresh the report:")
    print(f"  amvicc score --store {shlex.quote(store)}")
    print(f"  {shlex.join(['amvicc', *report_argv])}")
    return 0


Step = tuple[str, list[str]]


def _published_steps(store: str) -> list[Step]:
    """Part 1: AMVICC's published human grade sheets, imported."""
    return [
        (
            f"part 1: import AMVICC's published grades of {model}",
            ["import-grades", str(sheet), "--model", model, "--store", store],
        )
        for sheet, model in published_sheets()
    ]


def _smoke_steps(args: argparse.Namespace, indices: list[int], scenes: Path) -> list[Step]:
    """Part 2: every stage on the smoke-test models (MMVP's questions only with --images)."""
    store = str(args.store)
    selection = ["--store", store, "--index", format_index_ranges(indices)]
    generation_run = f"demo-{IMAGE_MODEL}"
    catalogue = ("--catalogue", str(scenes / "catalogue.csv"), "--images", str(scenes / "images"))
    mmvp_answers: list[Step] = []
    if args.images is not None:
        mmvp_answers.append(
            (
                f"part 2: ask {VLM} MMVP's questions about its images, then grade the answers",
                ["answer", "--model", VLM, "--images", str(args.images), *selection],
            )
        )
    return [
        (
            f"part 2: generate both prompt kinds for {len(indices)} questions ({args.pairs} "
            f"pair(s) per category) with the smoke model {IMAGE_MODEL}",
            ["generate", "--model", IMAGE_MODEL, "--run", generation_run, *selection],
        ),
        (
            f"part 2: build {args.pairs} procedural scene pair(s) per category, whose answers "
            "are known from the drawing",
            [
                *("scenes", "build", "--out", str(scenes)),
                *("--per-category", str(args.pairs), "--seed", str(SCENES_SEED)),
            ],
        ),
        (
            f"part 2: ask the smoke VLM {VLM} about the scenes, then grade the answers",
            ["answer", "--model", VLM, *catalogue, "--store", store],
        ),
        (
            f"part 2: ask {VLM} GRIP's question ladder about the scenes (five questions of "
            "rising competence per image, typed answers), then grade the replies",
            ["answer", "--model", VLM, *catalogue, "--ladder", "--store", store],
        ),
        *mmvp_answers,
        (
            f"part 2: judge the explicit images by asking {VLM} their question",
            ["judge", "--run", generation_run, "--method", "question", "--judge", VLM, *selection],
        ),
        (
            "part 2: judge the Text images with OCR",
            ["judge", "--run", generation_run, "--method", "ocr", *selection],
        ),
    ]
