"""The VLM interface: ask about an image, or hold a conversation, get the verbatim reply.

Every back end answers :meth:`VLM.converse` asynchronously and returns a :class:`Reply` holding
the raw body; :meth:`VLM.ask` (one image, one question) is its one-turn case, so the answering
engine, the challenge's second turns, the LLM judge and the image judge share one code path.
This module never imports a back end: :mod:`amvicc.vlm.providers` names them (lazily), so a new
route is one line there and one module beside this one.
"""

from __future__ import annotations

import hashlib
import mimetypes
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from amvicc.files import read_regular_file
from amvicc.redaction import redact_bytes, redact_known_secrets, redact_text

SMOKE_WARNING = "is a smoke-test model with random weights: its answers mean nothing"
# No benchmark image comes near this; Pillow's pixel limit refuses what decodes larger.
MAX_IMAGE_BYTES = 64 << 20


def read_image_file(path: Path) -> bytes:
    """An image file's bytes: a regular file (links followed only to one), at most 64 MiB.

    Raises:
        amvicc.files.UnreadableFile: a FIFO, device, socket or folder, or too large.
        OSError: it cannot be opened.
    """
    return read_regular_file(path, limit=MAX_IMAGE_BYTES)


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
        """Read an image file (:func:`read_image_file`); the type comes from its first bytes."""
        return cls.from_bytes(read_image_file(Path(path)), filename=str(path))

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


ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatTurn:
    """One message of a conversation with a model.

    A challenge (GRIP's second turn) replays the first turn exactly as it was sent (the image
    and the question), then the model's own first reply, then the new question; back ends turn
    these into their own message format (chat ``messages``, a processor's chat template).

    Attributes:
        role: ``user`` (what the model is asked), ``assistant`` (what it answered) or
            ``system`` (a system prompt, first if at all).
        text: the message's text.
        image: an image sent with a user message (shown before its text); None for none.
    """

    role: ChatRole
    text: str
    image: EncodedImage | None = None

    @classmethod
    def user(cls, text: str, image: ImageLike | None = None) -> ChatTurn:
        """A user message, with an optional image (a path, bytes or an encoded image)."""
        return cls("user", text, as_image(image))

    @classmethod
    def assistant(cls, text: str) -> ChatTurn:
        """A reply of the model, as it gave it."""
        return cls("assistant", text)

    @classmethod
    def system_prompt(cls, text: str) -> ChatTurn:
        """A system prompt (it opens the conversation)."""
        return cls("system", text)


def conversation_images(turns: Sequence[ChatTurn]) -> list[EncodedImage]:
    """The images of a conversation, in the order they were sent."""
    return [turn.image for turn in turns if turn.image is not None]


def conversation_request(turns: Sequence[ChatTurn]) -> dict[str, Any]:
    """What a reply records about the conversation it answers (hashes, never image bytes).

    A one-turn question records the image's hash and type as it always did; a longer
    conversation also records how many messages it had.
    """
    images = conversation_images(turns)
    request: dict[str, Any] = {}
    if images:
        request.update(image_sha256=images[0].sha256, image_mime=images[0].mime)
    if len(turns) > 1:
        request["turns"] = len(turns)
    if len(images) > 1:
        request["image_sha256s"] = [image.sha256 for image in images]
    if turns and turns[0].role == "system":
        request["system"] = turns[0].text
    return request


def fold_system_prompt(turns: Sequence[ChatTurn]) -> tuple[ChatTurn, ...]:
    """The conversation with a leading system prompt put before the first user message.

    For back ends whose models take no system message (many local chat templates).
    """
    if not turns or turns[0].role != "system":
        return tuple(turns)
    system, first, *rest = turns
    return (ChatTurn("user", f"{system.text}\n\n{first.text}", first.image), *rest)


def check_conversation(turns: Sequence[ChatTurn]) -> None:
    """Refuse a conversation no chat model can take (a programming error, not a user's).

    Raises:
        ValueError: it is empty, does not end with a user message, or has an image on an
            assistant message.
    """
    if not turns or turns[-1].role != "user":
        raise ValueError("a conversation must end with a user message")
    if any(turn.image is not None and turn.role != "user" for turn in turns):
        raise ValueError("only user messages carry images")
    if any(turn.role == "system" for turn in turns[1:]):
        raise ValueError("a system prompt can only open a conversation")


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

    def __post_init__(self) -> None:
        """Credentials out of everything a reply carries (a server may echo the key back).

        Every route builds a :class:`Reply`, so whatever stores, judges or prints one (the
        answering engine, the challenge, the judges) sees it redacted
        (:func:`amvicc.redaction.redact_text`).
        """
        if self.error is not None:
            object.__setattr__(self, "error", redact_text(self.error))
        if self.raw is not None:
            object.__setattr__(self, "raw", redact_bytes(self.raw))
        if self.text is not None:  # graded as written: only a key is taken out
            object.__setattr__(self, "text", redact_known_secrets(self.text))

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

    async def ask(
        self,
        image: ImageLike | None,
        prompt: str,
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        system: str | None = None,
    ) -> Reply:
        """Ask about one image (or none, for a text-only judge) and return the reply.

        The one-turn case of :meth:`converse`: the same request, the same stored record.
        ``system`` is a system prompt (a grading procedure such as AMVICC's has one); back ends
        without system messages put it before the prompt.
        """
        first = (ChatTurn.system_prompt(system),) if system is not None else ()
        return await self.converse(
            (*first, ChatTurn.user(prompt, image)),
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
        )

    @abstractmethod
    async def converse(
        self,
        turns: Sequence[ChatTurn],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> Reply:
        """Send a conversation (ending with a user message) and return the model's next reply.

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
