"""A scripted VLM for the fake OpenAI server: replies by a rule the test knows.

The rule sees what a model would see — which question (from the coded image), how much grain
the image carries, which turn of the conversation it is in, its own first reply and the
user's last message — and returns the reply. Tests of the challenge and the perturbation
stages compute the rates they expect from the same rule, so every number in a report can be
checked exactly::

    def rule(seen: Seen) -> str:
        if seen.turn == 1:
            return "(a)" if seen.grain < 0.07 else "(b)"
        return f"({seen.asserted})" if seen.asserted and seen.index % 3 == 0 else seen.first_reply

    with FakeOpenAIServer(chat=scripted_chat(rule)) as server:
        ...
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amvicc.testing.fake_openai import ChatHandler, iter_image_parts, last_user_text
from amvicc.testing.mmvp_images import read_coded_image

_LABEL = re.compile(r"\(([ab])\)")


@dataclass(frozen=True)
class Seen:
    """What the scripted model sees in one request.

    Attributes:
        index: the question's MMVP index (read from the coded image).
        grain: the noise the image carries (its std / 255; 0 for a clean image).
        turn: 1 for a first question, 2 for the message after the model's first reply.
        first_reply: the model's earlier reply (None on the first turn).
        text: the user's last message.
        request: the whole request body.
    """

    index: int
    grain: float
    turn: int
    first_reply: str | None
    text: str
    request: dict[str, Any]

    @property
    def asserted(self) -> str | None:
        """The option label the last message names as ``(a)`` / ``(b)`` on a later turn."""
        if self.turn == 1:
            return None
        found = _LABEL.search(self.text)
        return found.group(1) if found else None

    @property
    def first_choice(self) -> str | None:
        """The option label the model's first reply named, if any."""
        found = _LABEL.search(self.first_reply or "")
        return found.group(1) if found else None


def seen_in(request: dict[str, Any]) -> Seen:
    """Read a chat request the way :func:`scripted_chat` shows it to a rule."""
    url = next(iter_image_parts(request))
    index, grain = read_coded_image(base64.b64decode(url.split(",", 1)[1]))
    messages = request.get("messages", [])
    replies = [m.get("content") for m in messages if m.get("role") == "assistant"]
    first = replies[0] if replies and isinstance(replies[0], str) else None
    return Seen(
        index=index,
        grain=grain,
        turn=1 + len(replies),
        first_reply=first,
        text=last_user_text(request),
        request=request,
    )


def scripted_chat(rule: Callable[[Seen], str]) -> ChatHandler:
    """A chat handler for :class:`~amvicc.testing.fake_openai.FakeOpenAIServer` from a rule."""
    return lambda request: rule(seen_in(request))
