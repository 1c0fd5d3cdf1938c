"""Vision-language models behind one interface: ask about an image, get the verbatim reply.

:func:`open_vlm` turns a model name into a :class:`VLM`:

- ``openai:gpt-4o``: OpenAI's API; any name with ``base_url``: an OpenAI-compatible server
  (vLLM, Ollama, SGLang, OpenRouter). See :mod:`amvicc.answer.openai_chat`.
- ``hf:<repo id or folder>``: a local transformers model. See
  :mod:`amvicc.answer.transformers_vlm`.
- ``tiny-llava``: a random-weight smoke-test model built offline. See
  :mod:`amvicc.answer.smoke`.

Every back end answers :meth:`VLM.ask` asynchronously and returns a :class:`Reply` holding the
raw body, so the answering engine, the LLM judge and the image judge share one code path.
Back ends register by decorator; their heavy libraries load only when one is opened.
"""

from __future__ import annotations

import hashlib
import mimetypes
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from amvicc.api import ApiSettings
from amvicc.errors import UserError

SMOKE_WARNING = "is a smoke-test model with random weights: its answers mean nothing"


@dataclass(frozen=True)
class EncodedImage:
    """An image file's bytes, as sent to a model.

    Attributes:
        data: the encoded file (JPEG, PNG, ...), unchanged.
        mime: its media type, e.g. ``image/jpeg``.
    """

    data: bytes
    mime: str

    @classmethod
    def from_path(cls, path: str | Path) -> EncodedImage:
        """Read an image file; the media type comes from its first bytes."""
        return cls.from_bytes(Path(path).read_bytes(), filename=str(path))

    @classmethod
    def from_bytes(cls, data: bytes, *, filename: str | None = None) -> EncodedImage:
        """Wrap encoded image bytes.

        The media type comes from the bytes' signature, else from ``filename``'s extension.
        """
        guessed = mimetypes.guess_type(filename)[0] if filename else None
        return cls(data, sniff_mime(data) or guessed or "image/png")

    @cached_property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes: the image's identity."""
        return hashlib.sha256(self.data).hexdigest()

    @property
    def extension(self) -> str:
        """A file extension for the media type, e.g. ``.jpg``."""
        return _EXTENSIONS.get(self.mime, ".img")

    @cached_property
    def data_url(self) -> str:
        """The image as a base64 ``data:`` URL (what chat APIs take)."""
        import base64

        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


_EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "image/bmp": ".bmp",
}


def sniff_mime(data: bytes) -> str | None:
    """The media type of encoded image bytes from their signature, or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data.startswith(b"BM"):
        return "image/bmp"
    return None


ImageLike = EncodedImage | Path | str | bytes


def as_image(image: ImageLike | None) -> EncodedImage | None:
    """Accept an :class:`EncodedImage`, a path or encoded bytes."""
    if image is None or isinstance(image, EncodedImage):
        return image
    if isinstance(image, bytes):
        return EncodedImage.from_bytes(image)
    return EncodedImage.from_path(image)


@dataclass(frozen=True)
class Reply:
    """One answer from a model, kept verbatim.

    Attributes:
        text: the reply text; None when the request failed.
        raw: the response body exactly as received (an API's JSON; for local models, JSON
            with the decoded text and token ids); None when nothing came back.
        prompt_tokens: tokens of the prompt, as the model counted them.
        completion_tokens: tokens of the reply.
        latency_s: seconds from sending to receiving, retries included.
        request: the parameters sent (never the image's bytes or a key).
        error: why the request failed; None on success.
        retryable: a failure worth trying again at once (e.g. a malformed body).
    """

    text: str | None
    raw: bytes | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    request: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    retryable: bool = False

    @property
    def ok(self) -> bool:
        """Whether the model answered."""
        return self.error is None and self.text is not None


BackendKind = Literal["openai", "transformers"]


class VLM(ABC):
    """A vision-language model amvicc can ask questions about images.

    Attributes:
        name: the model as the user named it (recorded with runs).
        kind: ``openai`` (an API) or ``transformers`` (local).
        smoke: a random-weight smoke-test model whose answers mean nothing.
        concurrency: how many :meth:`ask` calls are worth having in flight at once.
    """

    name: str
    kind: BackendKind
    smoke: bool = False
    concurrency: int = 1

    @abstractmethod
    async def ask(
        self,
        image: ImageLike | None,
        prompt: str,
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> Reply:
        """Ask about one image (or none, for a text-only judge) and return the reply.

        Failures the run should record and retry later come back as a :class:`Reply` with
        ``error`` set; mistakes no retry can fix (a rejected key, an unknown model) raise
        :class:`~amvicc.errors.UserError`.
        """

    def describe(self) -> dict[str, Any]:
        """What a run records about this back end (no secrets)."""
        return {"backend": self.kind}

    def outputs(self) -> dict[str, Any]:
        """Back-end settings that change the replies (part of the run's identity)."""
        return {}

    async def aclose(self) -> None:
        """Release connections held by the current event loop."""
        return None


@dataclass(frozen=True)
class LocalSettings:
    """How to run a local (transformers) model.

    Attributes:
        device: ``auto`` (CUDA, then MPS, then CPU), or a torch device such as ``cuda:1``.
        dtype: ``auto`` (bfloat16 on a GPU, float32 on CPU), ``float32``, ``bfloat16`` or
            ``float16``.
        batch_size: questions per ``generate()`` call.
    """

    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8


# (what follows the prefix, or the name; the name as the user gave it; settings) -> VLM
VLMFactory = Callable[[str, str, ApiSettings, LocalSettings], VLM]

_PREFIXES: dict[str, VLMFactory] = {}
_NAMED: dict[str, VLMFactory] = {}


def register_prefix(prefix: str) -> Callable[[VLMFactory], VLMFactory]:
    """Register a factory for model names ``<prefix>:<rest>`` (it receives ``<rest>``)."""

    def register(factory: VLMFactory) -> VLMFactory:
        _PREFIXES[prefix] = factory
        return factory

    return register


def register_model(name: str) -> Callable[[VLMFactory], VLMFactory]:
    """Register a factory for one model name, e.g. ``tiny-llava``."""

    def register(factory: VLMFactory) -> VLMFactory:
        _NAMED[name] = factory
        return factory

    return register


def open_vlm(
    model: str, *, api: ApiSettings | None = None, local: LocalSettings | None = None
) -> VLM:
    """Open the model a user named.

    Args:
        model: ``openai:<model>``, ``hf:<repo or folder>``, ``tiny-llava``, or any model name
            served at ``api.base_url``.
        api: how to reach an OpenAI-compatible server.
        local: how to run a local model.

    Raises:
        UserError: the name fits no back end, or the model cannot be loaded.
    """
    api = api or ApiSettings()
    local = local or LocalSettings()
    if model in _NAMED:
        return _NAMED[model](model, model, api, local)
    prefix, sep, rest = model.partition(":")
    if sep and prefix in _PREFIXES:
        if not rest:
            raise UserError(f"model {model!r} names no model after {prefix}:")
        return _PREFIXES[prefix](rest, model, api, local)
    if api.base_url is not None:
        return _openai(model, model, api, local)
    known = ", ".join([*(f"{p}:NAME" for p in _PREFIXES), *_NAMED])
    raise UserError(
        f"unknown model {model!r}; use one of {known}, or any model name with --base-url URL "
        "for an OpenAI-compatible server (vLLM, Ollama, SGLang, OpenRouter)"
    )


@register_prefix("openai")
def _openai(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    from amvicc.answer.openai_chat import OpenAIChatVLM

    return OpenAIChatVLM(target, api, name=name)


@register_prefix("hf")
def _transformers(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    from amvicc.answer.transformers_vlm import TransformersVLM

    return TransformersVLM.load(target, local, name=name)


@register_model("tiny-llava")
def _tiny_llava(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    from amvicc.answer.smoke import tiny_llava_path
    from amvicc.answer.transformers_vlm import TransformersVLM

    return TransformersVLM.load(str(tiny_llava_path()), local, name=name, smoke=True)
