"""A workspace with a question-ladder run, made by the real stages (scenes, answer, grade).

Shared by the scoring app's tests (auditing ladder replies) and the report's (their audited
error rates). The VLM is the fake OpenAI server, scripted so the typed comparator decides some
rungs and leaves others to the audit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from amvicc.cli import main
from amvicc.scenes import run_scenes
from amvicc.scenes.options import ScenesOptions
from amvicc.testing.fake_openai import FakeOpenAIServer, last_user_text

SECRET_LADDER_VLM = "secret-ladder-vlm"
#: What the fake VLM says to a rung asking for a number: two numbers, so the comparator cannot
#: read it (with markup and template syntax a page must escape).
HEDGED_COUNT = "Maybe <b>1</b> or 2 ${x} {{y}}"


def ladder_reply(request: dict[str, Any]) -> str:
    """A VLM answering the ladder: hedges on counts, picks the first choice otherwise.

    The comparator reads the option and word rungs (the first choice: right on some images,
    wrong on others) and leaves the counting rungs undecided, for the audit.
    """
    text = last_user_text(request)
    if "whole number" in text:
        return HEDGED_COUNT
    word = re.search(r"one word: (\S+) or (\S+)\.", text)
    if word:
        return word.group(1)
    return "yes" if "yes or no" in text else "(a)"


def add_ladder_run(root: Path, scenes: Path, *, model: str = SECRET_LADDER_VLM) -> None:
    """Build a two-image scene set and answer its question ladder into the workspace ``root``.

    ``amvicc answer --ladder`` grades the run as it ends: the comparator decides the option
    and word rungs and draws them all for audit (fewer than the minimum), and leaves the
    counting rungs undecided: ten replies in the audit queue, four of them sampled.
    """
    run_scenes(ScenesOptions(out=scenes, per_category=1, categories=("qc",)))
    with FakeOpenAIServer(chat=ladder_reply) as server, pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_API_KEY", raising=False)
        code = main(
            ["answer", "--model", model, "--base-url", server.url, "--store", str(root),
             "--catalogue", str(scenes / "catalogue.csv"), "--images", str(scenes / "images"),
             "--ladder", "-q"]
        )  # fmt: skip
    assert code == 0
