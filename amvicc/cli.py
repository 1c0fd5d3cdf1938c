"""The ``amvicc`` command: one verb per stage, also runnable as ``python -m amvicc.<verb>``.

Verbs register themselves with :func:`verb` in light modules (argument definitions only; heavy
libraries are imported when the verb runs), listed in :data:`VERB_MODULES`. Options shared by
several verbs are added by the ``add_*_arguments`` helpers so they are named and behave the same
everywhere. A :class:`~amvicc.errors.UserError` becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from amvicc import __version__
from amvicc.api import DEFAULT_KEY_ENV, ApiSettings
from amvicc.catalogue import Catalogue, LabelPolicy, load_catalogue, parse_categories
from amvicc.errors import UserError
from amvicc.store import DEFAULT_STORE, Store

# verb name -> module that registers it (imported to build the parser; must stay light).
VERB_MODULES: dict[str, str] = {
    "prompts": "amvicc.prompts",
    "models": "amvicc.models",
    "generate": "amvicc.generate.cli",
    "answer": "amvicc.answer.cli",
    "grade": "amvicc.grade.cli",
    "judge": "amvicc.judge.cli",
    "score": "amvicc.score.cli",
    "import-grades": "amvicc.import_grades",
    "report": "amvicc.report.cli",
    "demo": "amvicc.demo",
}

RunFunction = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Verb:
    """A CLI verb: its arguments, what it does and an example for ``--help``."""

    name: str
    summary: str
    examples: tuple[str, ...]
    configure: Callable[[argparse.ArgumentParser], None]
    run: RunFunction


_REGISTRY: dict[str, Verb] = {}


def verb(
    name: str,
    *,
    summary: str,
    examples: Sequence[str],
    configure: Callable[[argparse.ArgumentParser], None],
) -> Callable[[RunFunction], RunFunction]:
    """Register the decorated function as the ``amvicc <name>`` verb.

    Args:
        name: the verb as typed on the command line.
        summary: one line for ``amvicc --help``.
        examples: full command lines shown at the end of ``amvicc <name> --help``.
        configure: adds the verb's arguments to its parser.
    """

    def register(run: RunFunction) -> RunFunction:
        _REGISTRY[name] = Verb(name, summary, tuple(examples), configure, run)
        return run

    return register


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage dump) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print the mistake and how to get help, then exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# --- shared arguments ------------------------------------------------------------------------


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store DIR``: the workspace every stage reads and writes."""
    parser.add_argument(
        "--store",
        type=Path,
        default=DEFAULT_STORE,
        metavar="DIR",
        help=f"workspace folder (default: ./{DEFAULT_STORE})",
    )


def add_run_argument(parser: argparse.ArgumentParser, *, help: str, many: bool = False) -> None:
    """``--run``: names a new run, or selects stored runs (``many``: repeatable)."""
    if many:
        parser.add_argument("--run", action="append", metavar="RUN", help=help)
    else:
        parser.add_argument("--run", metavar="RUN", help=help)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--categories``, ``--index`` and ``--limit``: which questions a stage works on."""
    add_categories_argument(parser)
    parser.add_argument(
        "--index",
        type=parse_index_ranges,
        metavar="RANGES",
        help="MMVP indices, e.g. 1-20,99,279-280 (default: all)",
    )
    parser.add_argument(
        "--limit", type=positive_int, metavar="N", help="stop after N items (default: all)"
    )


def add_categories_argument(parser: argparse.ArgumentParser) -> None:
    """``--categories`` (also ``--category``): category codes, comma-separated."""
    parser.add_argument(
        "--categories",
        "--category",
        dest="categories",
        type=comma_list,
        metavar="CODES",
        help="comma-separated category codes, e.g. tx,qc (default: all 9)",
    )


def add_catalogue_arguments(parser: argparse.ArgumentParser) -> None:
    """``--catalogue FILE`` and ``--original-labels``: which benchmark and which labels."""
    parser.add_argument(
        "--catalogue",
        type=Path,
        metavar="FILE",
        help="benchmark CSV (default: the shipped AMVICC catalogue)",
    )
    parser.add_argument(
        "--original-labels",
        action="store_true",
        help="keep MMVP's 4 known wrong labels (99, 100, 279, 280) instead of correcting them",
    )


def label_policy(args: argparse.Namespace) -> LabelPolicy:
    """The label policy the arguments ask for."""
    return "original" if args.original_labels else "corrected"


def catalogue_from_args(args: argparse.Namespace) -> Catalogue:
    """Load the catalogue and apply ``--categories`` and ``--index``.

    Raises:
        UserError: the catalogue has problems or the selection is empty.
    """
    catalogue = load_catalogue(args.catalogue, labels=label_policy(args))
    categories = parse_categories(args.categories) if args.categories else None
    selected = catalogue.select(categories=categories, indices=args.index)
    if not len(selected):
        raise UserError(
            "the selection (--categories/--index) matches no question of "
            f"{catalogue.source}; widen it"
        )
    return selected


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """Open ``--store``; reading verbs refuse a folder that is not a workspace."""
    return Store(args.store, create=create)


def parse_index_ranges(text: str) -> frozenset[int]:
    """Parse ``1-20,99,279-280`` into a set of indices."""
    indices: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            start, stop = int(low), int(high or low)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not an index or a range like 1-20"
            ) from None
        if start < 1 or stop < start:
            raise argparse.ArgumentTypeError(f"{part!r} is not a range of indices from 1 up")
        indices.update(range(start, stop + 1))
    if not indices:
        raise argparse.ArgumentTypeError("no index given")
    return frozenset(indices)


def format_index_ranges(indices: Iterable[int], *, separator: str = ",") -> str:
    """The inverse of :func:`parse_index_ranges`: ``{1, 2, 3, 7}`` -> ``1-3,7``."""
    ordered = sorted(set(indices))
    runs: list[str] = []
    start = previous = None
    for index in [*ordered, None]:
        if index is not None and previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    return separator.join(runs)


def comma_list(text: str) -> list[str]:
    """An argparse type: ``a, b,c`` -> ``['a', 'b', 'c']``."""
    return [item.strip() for item in text.split(",") if item.strip()]


def _number(text: str, kind: type[int] | type[float]) -> float:
    try:
        return kind(text)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = _number(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a number of at least 0."""
    value = _number(text, float)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def fraction(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    value = _number(text, float)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def add_api_arguments(
    parser: argparse.ArgumentParser,
    *,
    defaults: ApiSettings | None = None,
    endpoint: bool = True,
    title: str = "API (OpenAI-compatible servers)",
) -> None:
    """``--base-url``, ``--api-key-env``, ``--max-connections``, ``--timeout``, ``--max-retries``.

    Args:
        parser: the verb's parser.
        defaults: the verb's defaults (image APIs are slower than chat ones).
        endpoint: also add the URL and key options (off where another option names them).
        title: the group's heading in ``--help``.
    """
    defaults = defaults or ApiSettings()
    group = parser.add_argument_group(title)
    if endpoint:
        group.add_argument(
            "--base-url",
            metavar="URL",
            help="an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (vLLM, Ollama, "
            "SGLang, OpenRouter); default: OpenAI",
        )
        group.add_argument(
            "--api-key-env",
            default=DEFAULT_KEY_ENV,
            metavar="VAR",
            help=f"environment variable holding the API key (default: {DEFAULT_KEY_ENV}); "
            "keys are never stored",
        )
    group.add_argument(
        "--max-connections",
        type=positive_int,
        default=defaults.max_connections,
        metavar="N",
        help=f"requests in flight at once (default: {defaults.max_connections})",
    )
    group.add_argument(
        "--timeout",
        type=positive_float,
        default=defaults.timeout,
        metavar="SECONDS",
        help=f"per request attempt (default: {defaults.timeout:g})",
    )
    group.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=defaults.max_retries,
        metavar="N",
        help="retries on 429 (honouring Retry-After), 5xx and timeouts, with exponential "
        f"backoff and jitter (default: {defaults.max_retries})",
    )


def api_settings(args: argparse.Namespace) -> ApiSettings:
    """The API settings :func:`add_api_arguments` collected."""
    return ApiSettings(
        base_url=getattr(args, "base_url", None),
        api_key_env=getattr(args, "api_key_env", DEFAULT_KEY_ENV),
        max_connections=args.max_connections,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )


# --- entry points ----------------------------------------------------------------------------


def _load_verbs() -> dict[str, Verb]:
    for module in VERB_MODULES.values():
        importlib.import_module(module)
    return {name: _REGISTRY[name] for name in VERB_MODULES}


def build_parser() -> ArgumentParser:
    """The full ``amvicc`` parser with every verb."""
    verbs = _load_verbs()
    parser = ArgumentParser(
        prog="amvicc",
        description="Profile where image generators and vision-language models fail on the "
        "same visual concepts (AMVICC / MMVP).",
        epilog="Each verb also runs as `python -m amvicc.<verb>`; `amvicc VERB --help` shows "
        "an example.",
    )
    parser.add_argument("--version", action="version", version=f"amvicc {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for item in verbs.values():
        verb_parser = sub.add_parser(
            item.name,
            help=item.summary,
            description=item.summary,
            epilog="example:\n" + "\n".join(f"  {e}" for e in item.examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_verbosity(verb_parser)
        item.configure(verb_parser)
        verb_parser.set_defaults(_run=item.run, _verb=item.name)
    return parser


def _add_verbosity(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0, help="more detail")
    group.add_argument(
        "-q", "--quiet", action="store_true", help="only warnings and errors; no progress bars"
    )


def _configure_logging(args: argparse.Namespace) -> None:
    if args.quiet:
        level = logging.WARNING
    elif args.verbose:
        level = logging.DEBUG
    else:
        level = logging.INFO
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr, force=True)
    if args.verbose < 2:
        # Third-party libraries log at INFO; keep them quiet unless asked with -vv.
        # openai >= 3 runs on httpx2 / httpcore2.
        noisy_loggers = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "urllib3")
        for noisy in (*noisy_loggers, "diffusers", "transformers"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``amvicc`` with ``argv`` (default: the process's arguments).

    Returns:
        The exit status: 0 success, 1 a check found problems, 2 a usage or input mistake,
        130 interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    # Recorded with each run; API keys never come on the command line, only their env names.
    args.command_line = shlex.join(["amvicc", *argv])
    _configure_logging(args)
    name = args._verb
    try:
        status: int = args._run(args)
    except UserError as err:
        print(f"amvicc {name}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(
            f"amvicc {name}: interrupted; finished work is saved, rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); exit quietly as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


def run_as_module(name: str) -> NoReturn:
    """Entry point of ``python -m amvicc.<name>``: the same as ``amvicc <name>``."""
    raise SystemExit(main([name, *sys.argv[1:]]))
