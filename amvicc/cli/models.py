"""``amvicc models``: the models each stage can run, by kind.

Each kind of model (image models for ``generate``; more kinds register the same way) is a
function decorated with :func:`model_list` that returns :class:`ModelRow` records, so the
listing, its table and its JSON stay one piece of code.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from amvicc.cli.registry import verb


@dataclass(frozen=True)
class ModelRow:
    """One model as ``amvicc models`` shows it.

    Attributes:
        name: what ``--model`` takes.
        kind: ``local``, ``api`` or ``smoke`` (random weights, for tests and demos).
        runs_with: the diffusers class, or the API it calls.
        source: the repository, folder or endpoint.
        defaults: the parameters it runs with unless told otherwise.
        notes: licence, gating, what to know before running it.
    """

    name: str
    kind: str
    runs_with: str
    source: str
    defaults: str
    notes: str = ""


@dataclass(frozen=True)
class ModelList:
    """A kind of model: its title, how to use it, and its rows."""

    key: str
    title: str
    footer: str
    rows: Callable[[], Sequence[ModelRow]]


_LISTS: dict[str, ModelList] = {}


def model_list(
    key: str, *, title: str, footer: str = ""
) -> Callable[[Callable[[], Sequence[ModelRow]]], Callable[[], Sequence[ModelRow]]]:
    """Register the decorated function as the ``key`` section of ``amvicc models``."""

    def register(rows: Callable[[], Sequence[ModelRow]]) -> Callable[[], Sequence[ModelRow]]:
        _LISTS[key] = ModelList(key, title, footer, rows)
        return rows

    return register


@model_list(
    "image",
    title="Image models (amvicc generate --model NAME)",
    footer="--model also takes a pipeline file (my-model.yaml), a Hugging Face repo id "
    "(org/name), a local diffusers folder, openai:<name>, openrouter:<provider/model>, or any "
    "name served at --base-url (--image-api chat for chat-completion image models). API keys "
    "are read from the variable in the source column (or --api-key-env), never stored.",
)
def image_models() -> list[ModelRow]:
    """The shipped pipeline files and the known API image models, with the key each needs."""
    from amvicc.api import DEFAULT_KEY_ENV, OPENROUTER, STABILITY
    from amvicc.generate.specs import (
        API_MODELS,
        CHAT_IMAGE_MODELS,
        STABILITY_MODELS,
        shipped_models,
    )

    rows = []
    for spec in shipped_models():
        size = f"{spec.width}x{spec.height}" if spec.width and spec.height else "pipeline default"
        notes = spec.description
        if spec.gated:
            notes += "; accept the licence on the Hub and set HF_TOKEN"
        rows.append(
            ModelRow(
                name=spec.name,
                kind="smoke" if spec.is_smoke else "local",
                runs_with=spec.pipeline,
                source=spec.where,
                defaults=f"{spec.steps} steps, guidance {spec.guidance}, {size}, {spec.dtype}",
                notes=notes,
            )
        )
    for api in API_MODELS.values():
        rows.append(
            ModelRow(
                name=api.name,
                kind="api",
                runs_with="OpenAI images API",
                source=f"{api.api_model} ({DEFAULT_KEY_ENV})",
                defaults=", ".join([api.size, *(f"{k} {v}" for k, v in api.options.items())]),
                notes=api.description,
            )
        )
    for chat in CHAT_IMAGE_MODELS.values():
        rows.append(
            ModelRow(
                name=chat.name,
                kind="api",
                runs_with="chat completions, modalities image+text",
                source=f"OpenRouter ({OPENROUTER.key_env})",
                defaults="1 image per request, no seed",
                notes=chat.description,
            )
        )
    rows.append(
        ModelRow(
            name="openrouter:<provider/model>",
            kind="api",
            runs_with="chat completions, modalities image+text",
            source=f"OpenRouter ({OPENROUTER.key_env})",
            defaults="1 image per request, no seed",
            notes="any OpenRouter model with image output",
        )
    )
    for stability in STABILITY_MODELS.values():
        rows.append(
            ModelRow(
                name=stability.name,
                kind="api",
                runs_with=f"Stability AI REST v2beta ({stability.route})",
                source=f"api.stability.ai ({STABILITY.key_env})",
                defaults="1:1, png, per-image seed",
                notes=stability.description,
            )
        )
    return rows


@model_list(
    "vlm",
    title="Vision-language models (amvicc answer / amvicc judge --model NAME)",
    footer="Any model served by an OpenAI-compatible server (vLLM, Ollama, SGLang, OpenRouter) "
    "works as NAME with --base-url URL. Qwen-VL, SmolVLM, LLaVA-OneVision and InternVL "
    "processors need torchvision: pip install 'amvicc[qwen]'.",
)
def vision_language_models() -> list[ModelRow]:
    """How each back end is named, AMVICC's eleven VLMs, and the smoke-test VLM."""
    from amvicc.api import OPENROUTER
    from amvicc.vlm.openrouter import AMVICC_VLMS

    amvicc = [
        ModelRow(
            name=f"openrouter:{model_id}",
            kind="api",
            runs_with="OpenRouter chat completions",
            source=OPENROUTER.key_env,
            defaults="temperature 0, 512 tokens, 16 connections",
            notes=f"AMVICC's {label}",
        )
        for model_id, label in AMVICC_VLMS.items()
    ]
    return [
        ModelRow(
            name="openai:<model>",
            kind="api",
            runs_with="OpenAI chat completions",
            source="OPENAI_API_KEY or --api-key-env",
            defaults="temperature 0, 512 tokens, 16 connections",
            notes="e.g. openai:gpt-4o; images sent as base64 data URLs",
        ),
        ModelRow(
            name="openrouter:<provider/model>",
            kind="api",
            runs_with="OpenRouter chat completions",
            source=f"{OPENROUTER.key_env} or --api-key-env",
            defaults="temperature 0, 512 tokens, 16 connections",
            notes="one key for many providers; --base-url overrides openrouter.ai",
        ),
        *amvicc,
        ModelRow(
            name="hf:<repo or folder>",
            kind="local",
            runs_with="transformers AutoModelForImageTextToText",
            source="Hugging Face cache or a local folder",
            defaults="greedy, 512 tokens, batch 8, bfloat16 on GPU",
            notes="e.g. hf:llava-hf/llava-1.5-7b-hf; the model's own chat template",
        ),
        ModelRow(
            name="tiny-llava",
            kind="smoke",
            runs_with="LlavaForConditionalGeneration",
            source="built offline from configs",
            defaults="greedy, 512 tokens",
            notes="random weights: for tests and the demo, its answers mean nothing",
        ),
    ]


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        choices=["all", *_LISTS],
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
    chosen = [item for item in _LISTS.values() if args.kind in ("all", item.key)]
    if args.format == "json":
        listing = {item.key: [asdict(row) for row in item.rows()] for item in chosen}
        print(json.dumps(listing, indent=2))
        return 0
    for number, item in enumerate(chosen):
        if number:
            print()
        print(item.title)
        print(_table(item.rows()))
        if item.footer:
            print(item.footer)
    return 0


def _table(rows: Sequence[ModelRow]) -> str:
    header = ("name", "kind", "runs with", "source", "defaults", "notes")
    cells = [header] + [(r.name, r.kind, r.runs_with, r.source, r.defaults, r.notes) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in cells
    )
