"""``amvicc challenge``: a second turn after an answer run's replies, then grade (GRIP's loop).

Light on purpose (argument definitions only): the challenge and grade stages load when the
verb runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from amvicc.challenge.options import ARMS
from amvicc.cli.arguments import (
    add_api_arguments,
    add_categories_argument,
    add_judge_arguments,
    add_local_arguments,
    add_store_argument,
    index_ranges,
    llm_judge_options,
    model_run_fields,
    non_empty,
    open_store,
    positive_int,
)
from amvicc.cli.registry import verb

if TYPE_CHECKING:
    from amvicc.catalogue import Catalogue
    from amvicc.challenge.options import ChallengeOptions
    from amvicc.store import Store


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run",
        required=True,
        metavar="RUN",
        help="the answer run whose replies are challenged (see `amvicc runs --stage answer`)",
    )
    parser.add_argument(
        "--arm",
        required=True,
        choices=ARMS,
        help="assertion: the user asserts the other option; consensus: three peers give the "
        "other option; peers: other runs' replies (--peer-run) are quoted; control: only "
        "'Please state your final answer.'",
    )
    parser.add_argument(
        "--peer-run",
        type=non_empty,
        dest="peer_runs",
        action="append",
        metavar="RUN",
        help="with --arm peers: an answer run whose replies are quoted; repeat for more peers",
    )
    parser.add_argument(
        "--template",
        type=Path,
        metavar="FILE",
        help="jinja2 template of the second turn (default: prompts/challenge_<arm>.jinja; "
        "variables question, chosen, asserted, first_reply, peers)",
    )
    parser.add_argument(
        "--name",
        type=non_empty,
        metavar="NAME",
        help="name the challenge run (default: challenge-<model>-<arm>-<hash>; the same "
        "command resumes it)",
    )
    parser.add_argument(
        "--catalogue",
        type=Path,
        metavar="FILE",
        help="the catalogue the answer run used, if it moved (default: the one it recorded)",
    )
    add_categories_argument(parser)
    parser.add_argument(
        "--index",
        type=index_ranges,
        metavar="RANGES",
        help="MMVP indices to challenge, e.g. 1-40 (default: all the run answered)",
    )
    parser.add_argument(
        "--limit", type=positive_int, metavar="N", help="challenge the first N replies only"
    )
    add_api_arguments(
        parser, title="API (default: the server the answer run used; the model is the run's)"
    )
    add_local_arguments(parser)
    add_judge_arguments(parser)
    add_store_argument(parser)


@verb(
    order=70,
    summary="re-ask an answer run's questions with a second turn (assertion, consensus, peers, "
    "control), store and grade the replies",
    examples=(
        "amvicc challenge --run answer-openai-gpt-4o-1a2b3c4d --arm assertion",
        "amvicc challenge --run answer-openai-gpt-4o-1a2b3c4d --arm control",
        "amvicc challenge --run answer-openai-gpt-4o-1a2b3c4d --arm peers "
        "--peer-run answer-openai-gpt-4.1-5e6f7a8b --peer-run answer-llava-9c0d1e2f",
        "amvicc challenge --run answer-openai-gpt-4o-1a2b3c4d --arm assertion "
        "--template my_assertion.jinja",
    ),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Challenge and store every second-turn reply, then grade the challenge run offline.

    Returns:
        0 when every second turn has a reply; 1 when some requests failed (they are stored
        as errors and retried by rerunning the same command).
    """
    from amvicc.challenge.runner import run_challenge
    from amvicc.grade.llm_judge import open_llm_judge
    from amvicc.grade.options import GradeOptions
    from amvicc.grade.runner import run_grade

    options = challenge_options(args)
    judge_options = llm_judge_options(args)
    judge = open_llm_judge(judge_options) if judge_options else None
    store = open_store(args)
    catalogue = challenged_catalogue(args, store)
    challenged = run_challenge(options, store=store, catalogue=catalogue)
    graded = run_grade(
        GradeOptions(run_ids=(challenged.run_id,), progress=options.progress),
        store=store,
        judge=judge,
    )
    for line in [*challenged.lines(), *graded.lines()]:
        print(line)
    for line in challenged.error_lines():
        print(line, file=sys.stderr)
    return 1 if challenged.failed else 0


def challenged_catalogue(args: argparse.Namespace, store: Store) -> Catalogue:
    """The answer run's catalogue (or ``--catalogue``), selected by --categories / --index.

    Raises:
        UserError: an unknown run, another catalogue than the run's, or an empty selection.
    """
    from amvicc.catalogue import parse_categories
    from amvicc.errors import UserError
    from amvicc.vlm.replies import run_catalogue

    catalogue = run_catalogue(store.run(args.run), args.catalogue)
    categories = parse_categories(args.categories) if args.categories else None
    selected = catalogue.select(categories=categories, indices=args.index)
    if not len(selected):
        raise UserError("the selection (--categories/--index) matches no question; widen it")
    return selected


def challenge_options(args: argparse.Namespace) -> ChallengeOptions:
    """The challenge stage's options from ``amvicc challenge``'s arguments."""
    from amvicc.challenge.options import ChallengeOptions

    return ChallengeOptions(
        run_id=args.run,
        arm=args.arm,
        peer_runs=tuple(args.peer_runs or ()),
        template=args.template,
        **model_run_fields(args, run_name=args.name),
    )
