"""The VLM providers: which model names open which back end, declared once.

Each :class:`Provider` says how ``--model`` names its models (a prefix such as ``openrouter:``,
a fixed name such as ``tiny-llava``, or any name at ``--base-url``), its key variable, its
defaults, the models it knows (AMVICC's eleven VLMs for ``openrouter:``) and the install extra
it needs; ``amvicc models`` lists them. Its opener is named lazily as ``"module:function"``, so
the interface (:mod:`amvicc.vlm.base`) never imports a back end and this registry imports one
only when a model of it is opened: ``amvicc --help`` loads neither torch nor the openai client.

A new route inside amvicc is a module beside the others with an opener of the :data:`Opener`
shape and one entry in :data:`PROVIDERS`. A package outside amvicc adds one through the
``amvicc.providers`` entry-point group, naming a :class:`Provider`::

    [project.entry-points."amvicc.providers"]
    example = "amvicc_example:PROVIDER"

Plugins are read only when a name is not a built-in one, or when the models are listed; a
plugin that fails to load is one warning line and is skipped, never a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Literal

from amvicc.api import DEFAULT_KEY_ENV, OPENROUTER, ApiSettings
from amvicc.errors import UserError
from amvicc.extras import EXTRAS, require_extra
from amvicc.routes import KnownModel, ModelRow, Route, load_reference
from amvicc.vlm.base import VLM, LocalSettings
from amvicc.vlm.engine import SamplingParams

log = logging.getLogger(__name__)

# (what follows the prefix, or the name; the name as the user gave it; settings) -> VLM
Opener = Callable[[str, str, ApiSettings, LocalSettings], VLM]
Match = Literal["prefix", "name", "base-url"]

#: The entry-point group through which other packages add providers.
ENTRY_POINT_GROUP = "amvicc.providers"


@dataclass(frozen=True, kw_only=True)
class Provider(Route):
    """A VLM provider: a :class:`~amvicc.routes.Route` and the opener of its models.

    Attributes:
        opener: ``"module:function"`` of an :data:`Opener`.
        match: ``prefix``: ``<name>:<model>``, the opener receiving ``<model>``; ``name``: the
            name itself (the opener receives it whole); ``base-url``: any name when
            ``--base-url`` is given (built in only).
    """

    opener: str
    match: Match = "prefix"


_API_DEFAULTS = (
    f"temperature {SamplingParams.temperature:g}, {SamplingParams.max_tokens} tokens, "
    f"{ApiSettings.max_connections} connections"
)
_LOCAL_DEFAULTS = (
    f"greedy, {SamplingParams.max_tokens} tokens, batch {LocalSettings.batch_size}, "
    "bfloat16 on GPU (float32 on CPU)"
)
_OPENAI_CHAT = "amvicc.vlm.openai_chat:open_openai_chat"

#: The built-in providers, in the order ``amvicc models`` lists them.
PROVIDERS: tuple[Provider, ...] = (
    Provider(
        name="openai",
        pattern="openai:<model>",
        kind="api",
        runs_with="OpenAI chat completions",
        source="api.openai.com",
        key_env=DEFAULT_KEY_ENV,
        defaults=_API_DEFAULTS,
        notes="e.g. openai:gpt-4o; images sent as base64 data URLs",
        opener=_OPENAI_CHAT,
    ),
    Provider(
        name="openrouter",
        pattern="openrouter:<provider/model>",
        kind="api",
        runs_with="OpenRouter chat completions",
        source=OPENROUTER.base_url,
        key_env=OPENROUTER.key_env,
        defaults=_API_DEFAULTS,
        notes="one key for many providers; --base-url overrides openrouter.ai",
        models="amvicc.vlm.openrouter:amvicc_models",
        opener="amvicc.vlm.openrouter:open_openrouter",
    ),
    Provider(
        name="hf",
        pattern="hf:<repo or folder>",
        kind="local",
        runs_with="transformers AutoModelForImageTextToText",
        source="Hugging Face cache or a local folder",
        defaults=_LOCAL_DEFAULTS,
        extra="local",
        needs="runs a local transformers model",
        notes="e.g. hf:llava-hf/llava-1.5-7b-hf; the model's own chat template; Qwen-VL, "
        "SmolVLM, LLaVA-OneVision and InternVL also need amvicc[qwen] (torchvision)",
        opener="amvicc.vlm.transformers_vlm:open_transformers",
    ),
    Provider(
        name="tiny-llava",
        pattern="tiny-llava",
        match="name",
        kind="smoke",
        runs_with="LlavaForConditionalGeneration",
        source="built offline from configs",
        defaults=f"greedy, {SamplingParams.max_tokens} tokens",
        extra="local",
        needs="runs a local transformers model (random weights)",
        notes="random weights: for tests and the demo, its answers mean nothing",
        opener="amvicc.vlm.smoke:open_tiny_llava",
    ),
    Provider(
        name="compatible",
        pattern="NAME --base-url URL",
        match="base-url",
        kind="api",
        runs_with="OpenAI-compatible chat completions",
        source="--base-url (vLLM, Ollama, SGLang, LM Studio, ...)",
        key_env=DEFAULT_KEY_ENV,
        defaults=_API_DEFAULTS,
        notes="any model such a server serves; no key needed unless --api-key-env names one",
        opener=_OPENAI_CHAT,
    ),
)


@cache
def plugin_providers() -> tuple[Provider, ...]:
    """The providers other packages add through :data:`ENTRY_POINT_GROUP` (read once).

    A plugin that cannot be imported, names no :class:`Provider`, takes a name already taken
    or needs an unknown extra is logged as one warning line and skipped.
    """
    taken = {provider.name for provider in PROVIDERS}
    found: list[Provider] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        loaded = _load_plugin(point, taken)
        if isinstance(loaded, str):
            dist = f"{point.dist.name}, " if point.dist is not None else ""
            log.warning(
                "amvicc: skipping provider plugin %r (%sentry point %s = %s): %s",
                point.name,
                dist,
                ENTRY_POINT_GROUP,
                point.value,
                loaded,
            )
            continue
        taken.add(loaded.name)
        found.append(loaded)
    return tuple(found)


def _load_plugin(point: EntryPoint, taken: set[str]) -> Provider | str:
    """The plugin's provider, or why it is skipped."""
    try:
        provider = point.load()
    except Exception as err:  # a plugin's import may fail in any way; amvicc goes on
        return f"cannot be loaded ({_first_line(err)})"
    if not isinstance(provider, Provider):
        return "it names no amvicc.vlm.providers.Provider"
    if provider.match == "base-url":
        return "match='base-url' is amvicc's own (use 'prefix' or 'name')"
    if provider.name in taken:
        return f"the name {provider.name!r} is already taken"
    if provider.extra is not None and provider.extra not in EXTRAS:
        return f"its extra {provider.extra!r} is not one of amvicc's ({', '.join(EXTRAS)})"
    return provider


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    first = text.splitlines()[0][:200] if text else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def all_providers() -> tuple[Provider, ...]:
    """The built-in providers, then the plugins' (reading the entry points)."""
    return (*PROVIDERS, *plugin_providers())


def provider_rows() -> list[ModelRow]:
    """Every provider's rows for ``amvicc models``; a plugin whose listing fails keeps its own."""
    rows: list[ModelRow] = []
    for provider in all_providers():
        try:
            rows.extend(provider.rows())
        except Exception as err:  # a plugin's model listing may fail in any way
            if provider in PROVIDERS:
                raise
            log.warning(
                "amvicc: provider plugin %r cannot list its models (%s)",
                provider.name,
                _first_line(err),
            )
            rows.append(provider.row(KnownModel(provider.pattern, provider.notes)))
    return rows


def _match(providers: Sequence[Provider], model: str) -> tuple[Provider, str] | None:
    for provider in providers:
        if provider.match == "name" and provider.name == model:
            return provider, model
    prefix, sep, rest = model.partition(":")
    if not sep:
        return None
    for provider in providers:
        if provider.match == "prefix" and provider.name == prefix:
            if not rest:
                raise UserError(f"model {model!r} names no model after {prefix}:")
            return provider, rest
    return None


def find_provider(model: str, *, base_url: str | None = None) -> tuple[Provider, str]:
    """The provider that opens ``model``, and what its opener receives.

    Built-in names come first; plugins are read only for a name no built-in provider takes.

    Raises:
        UserError: the name fits no provider (the message lists how models are named).
    """
    found = _match(PROVIDERS, model) or _match(plugin_providers(), model)
    if found is not None:
        return found
    if base_url is not None:
        return next(p for p in PROVIDERS if p.match == "base-url"), model
    known = ", ".join(
        p.name if p.match == "name" else f"{p.name}:NAME"
        for p in all_providers()
        if p.match != "base-url"
    )
    raise UserError(
        f"unknown model {model!r}; use one of {known}, or any model name with --base-url URL "
        "for an OpenAI-compatible server (vLLM, Ollama, SGLang, OpenRouter); `amvicc models` "
        "lists them"
    )


def open_vlm(
    model: str, *, api: ApiSettings | None = None, local: LocalSettings | None = None
) -> VLM:
    """Open the model a user named.

    Args:
        model: ``openai:<model>``, ``openrouter:<provider/model>``, ``hf:<repo or folder>``,
            ``tiny-llava``, a plugin's name, or any model name served at ``api.base_url``.
        api: how to reach an OpenAI-compatible server.
        local: how to run a local model.

    Raises:
        UserError: the name fits no provider, the provider's install extra is missing (one
            line naming it), or the model cannot be loaded.
    """
    api = api or ApiSettings()
    local = local or LocalSettings()
    provider, target = find_provider(model, base_url=api.base_url)
    if provider.extra is not None:
        require_extra(provider.extra, f"{model} {provider.needs or 'needs it'}")
    try:
        opener: Opener = load_reference(provider.opener)
    except (ImportError, AttributeError, ValueError) as err:
        raise UserError(
            f"model {model!r}: provider {provider.name!r} cannot load its opener "
            f"{provider.opener} ({_first_line(err)})"
        ) from None
    return opener(target, model, api, local)
