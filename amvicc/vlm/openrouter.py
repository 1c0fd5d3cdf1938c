"""OpenRouter: many providers' VLMs behind one OpenAI-compatible endpoint and one key.

``openrouter:<provider/model>`` (e.g. ``openrouter:x-ai/grok-4``) is the OpenAI-compatible chat
back end with OpenRouter's preset: endpoint ``https://openrouter.ai/api/v1`` (``--base-url``
overrides it), key from ``OPENROUTER_API_KEY`` (``--api-key-env`` overrides it), and the
attribution headers OpenRouter recommends. AMVICC reached its eleven VLMs this way, so one key
reproduces all of them (:data:`AMVICC_VLMS`).
"""

from __future__ import annotations

from amvicc.api import OPENROUTER, ApiSettings
from amvicc.routes import KnownModel
from amvicc.vlm.base import VLM, LocalSettings
from amvicc.vlm.openai_chat import OpenAIChatVLM

#: AMVICC's eleven VLMs as OpenRouter names them, with the model each stands for. The paper
#: does not name its Pixtral and Qwen variants; these are the largest vision ones OpenRouter
#: serves.
AMVICC_VLMS: dict[str, str] = {
    "openai/gpt-4o": "GPT-4o",
    "google/gemini-2.5-pro": "Gemini 2.5 Pro",
    "anthropic/claude-sonnet-4": "Claude Sonnet 4",
    "anthropic/claude-opus-4.1": "Claude Opus 4.1",
    "x-ai/grok-4": "Grok 4",
    "meta-llama/llama-3.2-90b-vision-instruct": "Llama 3.2 90B Vision",
    "meta-llama/llama-4-maverick": "Llama 4 Maverick",
    "meta-llama/llama-4-scout": "Llama 4 Scout",
    "google/gemma-3-27b-it": "Gemma 3 27B",
    "mistralai/pixtral-large-2411": "Pixtral (Large)",
    "qwen/qwen2.5-vl-72b-instruct": "Qwen (2.5-VL 72B)",
}


def amvicc_models() -> list[KnownModel]:
    """AMVICC's eleven VLMs as ``amvicc models`` lists them under the ``openrouter`` provider."""
    return [
        KnownModel(f"openrouter:{model_id}", f"AMVICC's {label}")
        for model_id, label in AMVICC_VLMS.items()
    ]


def open_openrouter(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    """The registry's opener for ``openrouter:<provider/model>``.

    Raises:
        UserError: the key's environment variable (``OPENROUTER_API_KEY`` by default) is empty.
    """
    return OpenAIChatVLM(target, api.with_preset(OPENROUTER), name=name)
