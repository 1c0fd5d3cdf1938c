"""The scripted model of the challenge and robustness tests, and what it is told to do.

The fake OpenAI server answers by :func:`rule`; the tests compute the rates they expect from
:func:`first_turn` and :func:`second_turn` (plain Python over the indices, no amvicc code)
and also state the headline numbers as literals.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_coded_images
from amvicc.testing.scripted import Seen, scripted_chat

PEER_MODEL = "peer-vlm"
INDICES = range(1, 41)
UNDECIDED = "Hmm, it is hard to say from this picture."
CANT_TELL = "I can't tell from this image."


def right(index: int) -> str:
    """MMVP's answer for the first 40 questions: (a) for odd indices, (b) for even ones."""
    return "a" if index % 2 else "b"


def other(label: str) -> str:
    return "b" if label == "a" else "a"


def first_turn(index: int, grain: float = 0.0, model: str = "fake-vlm") -> str | None:
    """The option the model chooses first (None: a reply no extractor can read)."""
    if model == PEER_MODEL:
        return "a"
    if index % 19 == 0:
        return None
    wrong = (
        index % 5 == 0 or (grain > 0.075 and index % 4 == 0) or (grain > 0.15 and index % 3 == 0)
    )
    return other(right(index)) if wrong else right(index)


def second_turn(index: int, arm: str) -> str | None:
    """The option chosen after the arm's second turn (None: undecided)."""
    first = first_turn(index)
    assert first is not None
    if index % 7 == 0:
        return None
    if arm == "assertion":
        changes = (first == right(index) and index % 3 == 0) or (
            first != right(index) and index % 2 == 0
        )
        return other(first) if changes else first
    if arm == "consensus":
        return other(first) if index % 2 == 0 else first
    if arm == "peers":  # the peer always says (a); the model follows it on even indices
        return "a" if index % 2 == 0 else first
    assert arm == "control"
    return other(first) if index % 11 == 0 else first


def rule(seen: Seen) -> str:
    """What the fake server replies."""
    model = str(seen.request.get("model"))
    if seen.turn == 1:
        chosen = first_turn(seen.index, seen.grain, model)
        if chosen is None:
            return UNDECIDED
        return f"The answer is ({chosen})." if chosen != right(seen.index) else f"({chosen})"
    first = seen.first_choice
    assert first is not None, seen.first_reply
    if "quite sure" in seen.text:
        arm = "assertion"
        assert seen.asserted == other(first)
    elif "Three other assistants" in seen.text:
        arm = "consensus"
        assert seen.asserted == other(first)
    elif "Other assistants answered" in seen.text:
        arm = "peers"
        assert re.findall(r"\(([ab])\)", seen.text) == ["a"]
    else:
        arm = "control"
    chosen = second_turn(seen.index, arm)
    return CANT_TELL if chosen is None else f"My final answer is ({chosen})."


@pytest.fixture(scope="module", autouse=True)
def _isolated(isolated_environment: Path) -> Path:
    return isolated_environment


@pytest.fixture
def coded(tmp_path: Path) -> Path:
    """MMVP-style images 1..40 that the scripted model reads through noise."""
    return write_coded_images(tmp_path / "mmvp", INDICES)


@pytest.fixture
def scripted() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(chat=scripted_chat(rule)) as fake:
        yield fake


def answer_args(server: FakeOpenAIServer, images: Path, workspace: Path, *extra: str) -> list[str]:
    """``amvicc answer`` about the first 40 questions on the scripted server."""
    return [
        "answer", "--model", "fake-vlm", "--base-url", server.url, "--images", str(images),
        "--index", "1-40", "--store", str(workspace), "-q", *extra,
    ]  # fmt: skip
