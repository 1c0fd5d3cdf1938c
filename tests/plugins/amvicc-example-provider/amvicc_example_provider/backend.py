"""The Example Cloud opener: an OpenAI-compatible chat API with its own endpoint and key."""

from amvicc.api import ApiPreset, ApiSettings
from amvicc.routes import KnownModel
from amvicc.vlm.base import VLM, LocalSettings
from amvicc.vlm.openai_chat import OpenAIChatVLM

EXAMPLE = ApiPreset(
    name="example", base_url="https://api.example.invalid/v1", key_env="EXAMPLE_API_KEY"
)


def known_models() -> list[KnownModel]:
    """The models Example Cloud serves, as `amvicc models` lists them."""
    return [KnownModel("example:vision-1", "Example Cloud's vision model")]


def open_example(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    """Open `example:<target>`: its preset fills what the user left unset (--base-url wins)."""
    return OpenAIChatVLM(target, api.with_preset(EXAMPLE), name=name)
