"""``amvicc models``: the models each stage can run, read from the registries that run them.

Nothing here describes a model: the image routes (:mod:`amvicc.generate.routes`) and the VLM
providers (:mod:`amvicc.vlm.providers`, with those plugins add through the ``amvicc.providers``
entry points) declare their names, key variables, defaults, install extras and known models,
and this verb prints what they declare, as a table or as JSON.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from amvicc.cli.registry import verb
from amvicc.routes import ModelRow


@dataclass(frozen=True)
class ModelList:
    """A kind of model: its title, what to know about all of it, and its registry's rows."""

    key: str
    title: str
    footer: str
    rows: Callable[[], Sequence[ModelRow]]


def _image_rows() -> list[ModelRow]:
    from amvicc.generate.routes import IMAGE_ROUTES

    return [row for route in IMAGE_ROUTES for row in route.rows()]


def _vlm_rows() -> list[ModelRow]:
    from amvicc.vlm.providers import provider_rows

    return provider_rows()


_KEYS = (
    "API keys are read from the variable in the key column (or the one --api-key-env names), "
    "never stored. A model whose extra is missing says so: pip install 'amvicc[EXTRA]'."
)
LISTS: dict[str, ModelList] = {
    "image": ModelList("image", "Image models (amvicc generate --model NAME)", _KEYS, _image_rows),
    "vlm": ModelList(
        "vlm",
        "Vision-language models (amvicc answer / grade --judge / judge --judge NAME)",
        _KEYS + " Other packages add providers through the amvicc.providers entry points.",
        _vlm_rows,
    ),
}


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        choices=["all", *LISTS],
        default="all",
        help="which models to list (default: all)",
    )
    parser.add_argument("--format", choices=["table", "json"], default="table", help="output")


@verb(
    order=20,
    summary="list the models amvicc can run, with their defaults",
    examples=("amvicc models", "amvicc models --kind image --format json"),
    configure=_configure,
)
def run(args: argparse.Namespace) -> int:
    """Print the chosen lists as tables or as JSON."""
    chosen = [item for item in LISTS.values() if args.kind in ("all", item.key)]
    if args.format == "json":
        listing = {item.key: [asdict(row) for row in item.rows()] for item in chosen}
        print(json.dumps(listing, indent=2))
        return 0
    for number, item in enumerate(chosen):
        if number:
            print()
        print(item.title)
        print(_table(item.rows()))
        print(item.footer)
    return 0


_COLUMNS = (
    ("name", "name"),
    ("kind", "kind"),
    ("runs with", "runs_with"),
    ("source", "source"),
    ("key", "key_env"),
    ("extra", "extra"),
    ("defaults", "defaults"),
    ("notes", "notes"),
)


def _table(rows: Sequence[ModelRow]) -> str:
    header = tuple(title for title, _ in _COLUMNS)
    # An empty key or extra is shown as "-": no key, the core install.
    cells = [header] + [
        tuple(
            getattr(r, field) or ("-" if field in ("key_env", "extra") else "")
            for _, field in _COLUMNS
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in cells
    )
