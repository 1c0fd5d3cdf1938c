"""VLM answering: ask vision-language models the paired MMVP questions, keep every reply.

The pieces other stages reuse (imported on first use, so ``amvicc --help`` stays fast):

- :func:`~amvicc.answer.backends.open_vlm` -> :class:`~amvicc.answer.backends.VLM`, whose
  async ``ask(image, prompt, ...)`` returns a :class:`~amvicc.answer.backends.Reply` for
  OpenAI-compatible servers, local transformers models and the ``tiny-llava`` smoke model;
- :class:`~amvicc.answer.engine.AnswerEngine`, which asks about a list of
  :class:`~amvicc.answer.engine.WorkItem` s and stores every reply durably;
- :func:`amvicc.grade.extract.extract_choice`, which reads the option a reply chose.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from amvicc.answer.backends import VLM, EncodedImage, LocalSettings, Reply, open_vlm
    from amvicc.answer.engine import AnswerEngine, EngineResult, SamplingParams, WorkItem

_EXPORTS = {
    "VLM": "amvicc.answer.backends",
    "EncodedImage": "amvicc.answer.backends",
    "LocalSettings": "amvicc.answer.backends",
    "Reply": "amvicc.answer.backends",
    "open_vlm": "amvicc.answer.backends",
    "AnswerEngine": "amvicc.answer.engine",
    "EngineResult": "amvicc.answer.engine",
    "SamplingParams": "amvicc.answer.engine",
    "WorkItem": "amvicc.answer.engine",
}

__all__ = [
    "VLM",
    "AnswerEngine",
    "EncodedImage",
    "EngineResult",
    "LocalSettings",
    "Reply",
    "SamplingParams",
    "WorkItem",
    "open_vlm",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'amvicc.answer' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
