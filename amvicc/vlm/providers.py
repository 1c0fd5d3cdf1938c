"""Which model names open which VLM back end, named lazily as ``"module:function"``.

The interface (:mod:`amvicc.vlm.base`) never imports a back end, and this registry imports one
only when a model of it is opened, so ``amvicc --help`` loads neither torch nor the openai
client. A new route is a module beside the others with an opener of the :data:`Opener` shape,
and one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from amvicc.api import ApiSettings
from amvicc.errors import UserError
from amvicc.vlm.base import VLM, LocalSettings

# (what follows the prefix, or the name; the name as the user gave it; settings) -> VLM
Opener = Callable[[str, str, ApiSettings, LocalSettings], VLM]

#: ``<prefix>:<model>`` names: the opener receives what follows the prefix.
PREFIXES: dict[str, str] = {
    "openai": "amvicc.vlm.openai_chat:open_openai_chat",
    "openrouter": "amvicc.vlm.openrouter:open_openrouter",
    "hf": "amvicc.vlm.transformers_vlm:open_transformers",
}
#: Whole names, e.g. the offline smoke-test model.
NAMED: dict[str, str] = {
    "tiny-llava": "amvicc.vlm.smoke:open_tiny_llava",
}
#: Any other name, when a base URL is given: an OpenAI-compatible server.
COMPATIBLE_SERVER = PREFIXES["openai"]


def load_opener(reference: str) -> Opener:
    """Import the opener a registry entry names (``"package.module:function"``)."""
    module, _, attribute = reference.partition(":")
    return cast("Opener", getattr(importlib.import_module(module), attribute))


def open_vlm(
    model: str, *, api: ApiSettings | None = None, local: LocalSettings | None = None
) -> VLM:
    """Open the model a user named.

    Args:
        model: ``openai:<model>``, ``openrouter:<provider/model>``, ``hf:<repo or folder>``,
            ``tiny-llava``, or any model name served at ``api.base_url``.
        api: how to reach an OpenAI-compatible server.
        local: how to run a local model.

    Raises:
        UserError: the name fits no back end, or the model cannot be loaded.
    """
    api = api or ApiSettings()
    local = local or LocalSettings()
    if model in NAMED:
        return load_opener(NAMED[model])(model, model, api, local)
    prefix, sep, rest = model.partition(":")
    if sep and prefix in PREFIXES:
        if not rest:
            raise UserError(f"model {model!r} names no model after {prefix}:")
        return load_opener(PREFIXES[prefix])(rest, model, api, local)
    if api.base_url is not None:
        return load_opener(COMPATIBLE_SERVER)(model, model, api, local)
    known = ", ".join([*(f"{p}:NAME" for p in PREFIXES), *NAMED])
    raise UserError(
        f"unknown model {model!r}; use one of {known}, or any model name with --base-url URL "
        "for an OpenAI-compatible server (vLLM, Ollama, SGLang, OpenRouter)"
    )
