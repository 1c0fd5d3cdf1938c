"""``amvicc prompts check|show``: validate a benchmark catalogue and list its prompts."""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

from amvicc.catalogue import PROMPT_KINDS, Catalogue, check_catalogue
from amvicc.cli.arguments import (
    add_catalogue_arguments,
    add_selection_arguments,
    catalogue_from_args,
    label_policy,
)
from amvicc.cli.registry import verb
from amvicc.rubrics import load_rubrics


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="validate a catalogue and print a summary (exit 1 when it has problems)"
    )
    check.add_argument(
        "file", nargs="?", type=Path, help="catalogue CSV (default: the shipped one)"
    )
    check.add_argument("--rubrics", type=Path, metavar="DIR", help="also check this rubric folder")
    check.add_argument(
        "--original-labels", action="store_true", help="keep MMVP's 4 known wrong labels"
    )
    show = actions.add_parser("show", help="list prompts (or questions) of a catalogue")
    add_catalogue_arguments(show)
    add_selection_arguments(show)
    show.add_argument(
        "--kind",
        choices=[*PROMPT_KINDS, "both"],
        default="both",
        help="which prompts to list (default: both)",
    )
    show.add_argument("--format", choices=["table", "csv"], default="table", help="output format")


@verb(
    order=10,
    summary="check a benchmark catalogue, or show its prompts",
    examples=(
        "amvicc prompts check",
        "amvicc prompts check my_benchmark.csv",
        "amvicc prompts show --category tx --kind explicit",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Dispatch to ``check`` or ``show``."""
    if args.action == "check":
        return _check(args)
    return _show(args)


def _check(args: argparse.Namespace) -> int:
    result = check_catalogue(args.file, labels=label_policy(args))
    for problem in result.problems:
        print(problem)
    if result.catalogue is None:
        print(f"{result.path}: {len(result.problems)} problem(s)", file=sys.stderr)
        return 1
    _print_summary(result.catalogue)
    if args.rubrics is not None or args.file is None:
        rubrics = load_rubrics(args.rubrics)
        print(f"rubrics      {len(rubrics)} categories, all present")
    return 0


def _print_summary(catalogue: Catalogue) -> None:
    questions = catalogue.questions
    pairs = catalogue.pairs()
    print(f"{catalogue.source}: OK ({catalogue.format} format)")
    print(f"questions    {len(questions)}")
    print(f"pairs        {len(pairs)}")
    if catalogue.has_prompts:
        prompts = catalogue.prompts()
        kinds = Counter(p.kind for p in prompts)
        per_kind = ", ".join(f"{kinds[k]} {k}" for k in PROMPT_KINDS)
        print(f"prompts      {len(prompts)} ({per_kind})")
    else:
        print("prompts      none (questions only)")
    print(f"categories   {len(catalogue.categories())}")
    fixed = ", ".join(map(str, catalogue.corrected_indices)) or "none needed"
    print(f"labels       {catalogue.label_policy} (corrected: {fixed})")
    per_question = Counter(q.category for q in questions)
    per_pair = Counter(members[0].category for members in pairs.values())
    print()
    print(f"{'code':<5} {'category':<42} {'questions':>9} {'pairs':>6}")
    for category in catalogue.categories():
        print(
            f"{category.code:<5} {category.name:<42} "
            f"{per_question[category]:>9} {per_pair[category]:>6}"
        )


def _show(args: argparse.Namespace) -> int:
    catalogue = catalogue_from_args(args)
    kinds = PROMPT_KINDS if args.kind == "both" else (args.kind,)
    prompts = catalogue.prompts(kinds)[: args.limit]
    if args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["index", "pair", "category_code", "kind", "shows", "prompt"])
        for p in prompts:
            q = p.question
            writer.writerow([q.index, q.pair, q.category.code, p.kind, p.shows or "", p.text])
        return 0
    for p in prompts:
        q = p.question
        shows = f" -> ({p.shows}) {q.option(p.shows).text}" if p.shows else ""
        print(f"{q.index:>4} {q.category.code} {p.kind:<8} {p.text}{shows}")
    return 0
