"""The options every stage that asks a VLM shares (answer, challenge, judge)."""

from __future__ import annotations

from dataclasses import dataclass, field

from amvicc.api import ApiSettings
from amvicc.lifecycle import RunOptions
from amvicc.vlm.base import LocalSettings


@dataclass(frozen=True, kw_only=True)
class ModelRunOptions(RunOptions):
    """How to reach the model and how much to ask, besides the run's own options.

    Attributes:
        api: how to reach an OpenAI-compatible server.
        local: how to run a local model.
        limit: ask about the first ``limit`` items only (None: all).
    """

    api: ApiSettings = field(default_factory=ApiSettings)
    local: LocalSettings = field(default_factory=LocalSettings)
    limit: int | None = None
