"""The VLM client layer: one interface to every vision-language model, and the engine that asks.

``answer`` asks MMVP's questions with it, ``grade``'s LLM judge reads replies with it and
``judge`` asks about generated images with it; it imports none of them. The pieces:

- :mod:`amvicc.vlm.base`: :class:`VLM` (async ``ask(image, prompt) -> Reply``),
  :class:`Reply`, :class:`EncodedImage`, :class:`LocalSettings`;
- :mod:`amvicc.vlm.providers`: :func:`open_vlm` and the lazy ``"module:function"`` registry
  (``openai:``, ``hf:``, ``tiny-llava``, any name at a base URL);
- :mod:`amvicc.vlm.openai_chat`, :mod:`amvicc.vlm.transformers_vlm`, :mod:`amvicc.vlm.smoke`:
  the back ends;
- :mod:`amvicc.vlm.engine`: :class:`AnswerEngine`, concurrent and retrying, storing every reply;
- :mod:`amvicc.vlm.prompting`: jinja2 prompt templates; :mod:`amvicc.vlm.images`: the images a
  model is asked about (MMVP folders, the Hugging Face dataset, generation runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.vlm.base import SMOKE_WARNING, VLM, EncodedImage, LocalSettings, Reply
    from amvicc.vlm.engine import AnswerEngine, EngineResult, SamplingParams, WorkItem
    from amvicc.vlm.prompting import PromptTemplate, load_template
    from amvicc.vlm.providers import open_vlm

_EXPORTS = {
    "SMOKE_WARNING": "amvicc.vlm.base",
    "VLM": "amvicc.vlm.base",
    "EncodedImage": "amvicc.vlm.base",
    "LocalSettings": "amvicc.vlm.base",
    "Reply": "amvicc.vlm.base",
    "AnswerEngine": "amvicc.vlm.engine",
    "EngineResult": "amvicc.vlm.engine",
    "SamplingParams": "amvicc.vlm.engine",
    "WorkItem": "amvicc.vlm.engine",
    "PromptTemplate": "amvicc.vlm.prompting",
    "load_template": "amvicc.vlm.prompting",
    "open_vlm": "amvicc.vlm.providers",
}
__all__ = [
    "SMOKE_WARNING",
    "VLM",
    "AnswerEngine",
    "EncodedImage",
    "EngineResult",
    "LocalSettings",
    "PromptTemplate",
    "Reply",
    "SamplingParams",
    "WorkItem",
    "load_template",
    "open_vlm",
]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
