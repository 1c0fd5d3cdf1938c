"""The options several verbs share, their argparse types, and what they turn into.

Every verb adds ``--store``, ``--run``, the selection, the catalogue, the API, the local-model
and the LLM-judge options through these helpers, so the flags are named and behave the same
everywhere; the ``*_from_args`` functions turn them into the typed objects the stages take.
This is the only place (with the verb modules beside it) that sees an ``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.api import DEFAULT_KEY_ENV, OPENROUTER, STABILITY, ApiSettings
from amvicc.catalogue import (
    Catalogue,
    IndexRanges,
    LabelPolicy,
    load_catalogue,
    parse_categories,
    parse_index_ranges,
)
from amvicc.errors import UserError
from amvicc.store import DEFAULT_STORE, Store

if TYPE_CHECKING:
    from amvicc.grade.options import LLMJudgeOptions
    from amvicc.vlm.base import LocalSettings
    from amvicc.vlm.engine import SamplingParams


#: The environment variable naming the default workspace (``--store`` wins over it).
STORE_ENV = "AMVICC_STORE"


def default_store() -> Path:
    """The workspace when ``--store`` is not given: ``$AMVICC_STORE``, else ``./amvicc-runs``."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store DIR``: the workspace every stage reads and writes (default from the env)."""
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"workspace folder (default: ${STORE_ENV} if set, else ./{DEFAULT_STORE})",
    )


def add_run_argument(parser: argparse.ArgumentParser, *, help: str, many: bool = False) -> None:
    """``--run``: names a new run, or selects stored runs (``many``: repeatable)."""
    if many:
        parser.add_argument("--run", type=non_empty, action="append", metavar="RUN", help=help)
    else:
        parser.add_argument("--run", type=non_empty, metavar="RUN", help=help)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--categories``, ``--index`` and ``--limit``: which questions a stage works on."""
    add_categories_argument(parser)
    parser.add_argument(
        "--index",
        type=index_ranges,
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


STDOUT = "-"


def add_output_argument(parser: argparse.ArgumentParser | Any, *, default: str) -> None:
    """``-o/--output PATH``, where ``-`` is standard output (for every verb that writes).

    Args:
        parser: the verb's parser or one of its argument groups.
        default: where the output goes without ``-o``, for ``--help``.
    """
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="PATH",
        help=f"where to write; '-' is standard output (default: {default})",
    )


def output_target(args: argparse.Namespace) -> tuple[Path | None, bool]:
    """The file ``-o`` names, and whether ``-o -`` asked for standard output.

    Returns:
        ``(path, to_stdout)``: ``(None, True)`` for ``-o -``; ``(None, False)`` without
        ``-o`` (the verb's default); ``(path, False)`` otherwise.
    """
    output: Path | None = args.output
    if output is not None and str(output) == STDOUT:
        return None, True
    return output, False


def add_excel_safe_argument(parser: argparse.ArgumentParser | Any) -> None:
    """``--excel-safe``: CSV cells that a spreadsheet would run as formulas get a ``'``."""
    parser.add_argument(
        "--excel-safe",
        action="store_true",
        help="for opening the CSV in a spreadsheet: prefix text cells starting with =, +, -, "
        "@ with ' so that they are not run as formulas (off by default: the data stays exact "
        "for pandas and R)",
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


def store_path(args: argparse.Namespace) -> Path:
    """The workspace folder: ``--store``, else ``$AMVICC_STORE``, else ``./amvicc-runs``."""
    given: Path | None = args.store
    return given if given is not None else default_store()


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """Open the workspace; reading verbs refuse a folder that is not a workspace."""
    return Store(store_path(args), create=create)


def index_ranges(text: str) -> IndexRanges:
    """An argparse type: MMVP index ranges such as ``1-20,99,279-280``.

    Kept as ranges: the catalogue checks them (:meth:`Catalogue.select`) before anything
    expands them, so a typo such as ``1-99999999999999999999`` is one line, not 23 GB.
    """
    try:
        return parse_index_ranges(text)
    except UserError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def comma_list(text: str) -> list[str]:
    """An argparse type: ``a, b,c`` -> ``['a', 'b', 'c']``; a list of nothing is refused.

    ``--categories ,`` would otherwise select nothing, which every verb reads as "all".
    """
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give comma-separated names")
    return items


def non_empty(text: str) -> str:
    """An argparse type: a name that is not empty or blank (``--model ""`` names no model)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; give one")
    return text


#: Seeds are stored in SQLite's 64-bit integers (and numpy takes no negative seed).
MAX_SEED = 2**63 - 1


def seed(text: str) -> int:
    """An argparse type: a seed, a whole number from 0 to :data:`MAX_SEED`."""
    value = _whole(text) if text.strip().lstrip("-").isdigit() else None
    if value is None or not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seed: give a whole number from 0 to {MAX_SEED}"
        )
    return value


def port(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535."""
    value = int(_number(text, int))
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give 1 to 65535")
    return value


def finite_float(text: str) -> float:
    """An argparse type: any finite number (NaN and infinity are refused)."""
    return _number(text, float)


def _whole(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _number(text: str, kind: type[int] | type[float]) -> float:
    """``text`` as a number of ``kind``; floats must be finite.

    NaN passes every comparison a range check makes (``nan < 0`` is False) and infinity
    reaches requests and stored JSON as non-standard ``NaN``/``Infinity``: both are refused
    here, for every float option at once.
    """
    try:
        value = kind(text)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


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
) -> argparse._ArgumentGroup:
    """``--base-url``, ``--api-key-env``, ``--max-connections``, ``--timeout``, ``--max-retries``.

    Args:
        parser: the verb's parser.
        defaults: the verb's defaults (image APIs are slower than chat ones).
        endpoint: also add the URL and key options (off where another option names them).
        title: the group's heading in ``--help``.

    Returns:
        The group, for a verb to add its own API options to.
    """
    defaults = defaults or ApiSettings()
    group = parser.add_argument_group(title)
    if endpoint:
        group.add_argument(
            "--base-url",
            metavar="URL",
            help="an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (vLLM, Ollama, "
            "SGLang, OpenRouter); default: OpenAI, or the provider of an openrouter: or "
            "stability: model",
        )
        group.add_argument(
            "--api-key-env",
            metavar="VAR",
            help=f"environment variable holding the API key (default: {DEFAULT_KEY_ENV}; "
            f"{OPENROUTER.key_env} for openrouter:, {STABILITY.key_env} for stability:); "
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
    return group


def api_settings(args: argparse.Namespace) -> ApiSettings:
    """The API settings :func:`add_api_arguments` collected."""
    return ApiSettings(
        base_url=getattr(args, "base_url", None),
        api_key_env=getattr(args, "api_key_env", None),
        max_connections=args.max_connections,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )


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
    from amvicc.vlm.base import LocalSettings

    return LocalSettings(device=args.device, dtype=args.dtype, batch_size=args.batch_size)


def add_sampling_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """``--temperature``, ``--max-tokens`` and ``--seed``: how a VLM's replies are sampled."""
    parser.add_argument(
        "--temperature",
        type=non_negative_float,
        default=0.0,
        metavar="T",
        help="sampling temperature (default: 0, greedy)",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=512,
        metavar="N",
        help="longest reply in tokens (default: 512)",
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=0,
        help=f"base seed, 0 to {MAX_SEED}; each item's seed derives from it (default: 0)",
    )


def sampling_params(args: argparse.Namespace) -> SamplingParams:
    """The sampling :func:`add_sampling_arguments` collected."""
    from amvicc.vlm.engine import SamplingParams

    return SamplingParams(args.temperature, args.max_tokens, args.seed)


def run_fields(args: argparse.Namespace, *, run_name: str | None = None) -> dict[str, Any]:
    """The fields of :class:`~amvicc.lifecycle.RunOptions` every stage's options take."""
    return {"run_name": run_name, "command": args.command_line, "progress": not args.quiet}


def model_run_fields(args: argparse.Namespace, *, run_name: str | None = None) -> dict[str, Any]:
    """The fields of :class:`~amvicc.vlm.options.ModelRunOptions` (answer, challenge, judge)."""
    return {
        **run_fields(args, run_name=run_name),
        "api": api_settings(args),
        "local": local_settings(args),
        "limit": args.limit,
    }


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """The LLM judge's options (stage 2 of grading), shared by ``answer`` and ``grade``."""
    group = parser.add_argument_group("LLM judge (only for replies the extractor leaves undecided)")
    group.add_argument(
        "--judge",
        type=non_empty,
        metavar="MODEL",
        help="judge model: openai:MODEL, openrouter:PROVIDER/MODEL, or any name with "
        "--judge-base-url (default: no judge; "
        "undecided replies go to the human audit queue)",
    )
    group.add_argument(
        "--judge-mode",
        choices=["choice", "yesno"],
        default="choice",
        help="choice: which option did the reply pick (A/B/NONE); yesno: MMVP-grader style, "
        "is the reply the correct answer (default: choice)",
    )
    group.add_argument(
        "--judge-base-url", metavar="URL", help="the judge's OpenAI-compatible server"
    )
    group.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help=f"environment variable holding the judge's key (default: {DEFAULT_KEY_ENV}; "
        f"{OPENROUTER.key_env} for an openrouter: judge)",
    )
    group.add_argument(
        "--judge-template",
        metavar="FILE|amvicc",
        help="jinja2 template for the chosen mode (default: prompts/grade_judge_<mode>.jinja), "
        "or 'amvicc': AMVICC's own GPT-4 grading procedure (yes/no, temperature 0.2, its "
        "prompts), which grades every reply under its own source",
    )
    group.add_argument(
        "--judge-temperature",
        type=non_negative_float,
        default=0.0,
        metavar="T",
        help="default: 0",
    )
    group.add_argument("--judge-seed", type=seed, default=0, metavar="S", help="default: 0")
    group.add_argument(
        "--judge-max-tokens", type=positive_int, default=64, metavar="N", help="default: 64"
    )


def llm_judge_options(args: argparse.Namespace) -> LLMJudgeOptions | None:
    """The LLM judge :func:`add_judge_arguments` asked for, or None."""
    if not args.judge:
        if getattr(args, "all", False) or args.judge_template:
            raise UserError("--all and --judge-template need a judge model: add --judge MODEL")
        return None
    from amvicc.grade.options import PROCEDURES, JudgeSettings, LLMJudgeOptions

    template: str | None = args.judge_template
    return LLMJudgeOptions(
        model=args.judge,
        settings=JudgeSettings(
            mode=args.judge_mode,
            temperature=args.judge_temperature,
            seed=args.judge_seed,
            max_tokens=args.judge_max_tokens,
        ),
        api=ApiSettings(
            base_url=args.judge_base_url,
            api_key_env=args.judge_api_key_env,
            max_connections=args.max_connections,
            timeout=args.timeout,
            max_retries=args.max_retries,
        ),
        template=Path(template) if template and template not in PROCEDURES else None,
        procedure=template if template in PROCEDURES else None,
        all_replies=bool(getattr(args, "all", False)),
    )
