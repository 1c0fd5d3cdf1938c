"""``amvicc scenes build``: draw a procedural paired scene set with exact truth.

Light on purpose (argument definitions only): Pillow and numpy load when the verb runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from amvicc.cli.arguments import add_categories_argument, positive_int, seed
from amvicc.cli.registry import verb


def _size(text: str) -> int:
    from amvicc.scenes.options import MAX_SIZE, MIN_SIZE

    value = positive_int(text)
    if not MIN_SIZE <= value <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"{text!r} must be from {MIN_SIZE} to {MAX_SIZE}")
    return value


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="write DIR/catalogue.csv, DIR/images/<index>.png and DIR/scenes.jsonl",
        description="Draw pairs of scenes that differ only in the probed attribute, for "
        "every category, with a catalogue every verb takes (--catalogue DIR/catalogue.csv, "
        "--images DIR/images) and a manifest of every object drawn.",
    )
    build.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder to write into (new, empty, or an earlier scene set, which is replaced)",
    )
    build.add_argument(
        "--per-category",
        type=positive_int,
        default=20,
        metavar="N",
        help="pairs per category, two images each (default: 20)",
    )
    build.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="the same seed and options give byte-identical files anywhere (default: 0)",
    )
    add_categories_argument(build)
    build.add_argument(
        "--size", type=_size, default=512, metavar="PX", help="image side in pixels (default: 512)"
    )
    build.add_argument(
        "--level",
        type=int,
        choices=(1, 2, 3),
        default=1,
        help="difficulty: more objects and clutter, smaller objects, lower contrast (default: 1)",
    )


@verb(
    order=40,
    summary="build procedural paired scenes with exact truth (MMVP's categories, any scale)",
    examples=(
        "amvicc scenes build --out scenes --per-category 20 --seed 1",
        "amvicc scenes build --out scenes-hard --level 3 --categories qc,pr",
        "amvicc answer --catalogue scenes/catalogue.csv --images scenes/images --model tiny-llava",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Build the scene set and print where it went."""
    from amvicc.scenes.options import ScenesOptions
    from amvicc.scenes.runner import run_scenes

    summary = run_scenes(
        ScenesOptions(
            out=args.out,
            per_category=args.per_category,
            seed=args.seed,
            categories=tuple(args.categories) if args.categories else None,
            size=args.size,
            level=args.level,
            progress=not getattr(args, "quiet", False),
        )
    )
    for line in summary.lines():
        print(line)
    return 0
