"""Image generation: render the catalogue's prompts with local diffusers pipelines or API models.

``amvicc generate`` (also ``python -m amvicc.generate``, or ``accelerate launch -m
amvicc.generate`` across GPUs) stores every image in the workspace with its provenance and
resumes where it stopped. From Python::

    from amvicc import Store, load_catalogue
    from amvicc.generate import GenerationOptions, run_generate

    summary = run_generate(
        GenerationOptions(model="tiny-sd3", limit=8), store=Store("runs"), catalogue=load_catalogue()
    )

The image back ends live here too (:mod:`~amvicc.generate.pipeline` for diffusers,
:mod:`~amvicc.generate.openai_images` for image APIs, chosen by :mod:`~amvicc.generate.specs`).
Importing this package reads no weights and imports no torch; that happens when a run starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.generate.distributed import ProcessLayout
    from amvicc.generate.options import GenerationOptions, GenerationSummary
    from amvicc.generate.runner import make_backend, run_generate
    from amvicc.generate.smoke import smoke_model_names, smoke_model_path
    from amvicc.generate.specs import known_model_names, resolve_model

_EXPORTS = {
    "ProcessLayout": "amvicc.generate.distributed",
    "GenerationOptions": "amvicc.generate.options",
    "GenerationSummary": "amvicc.generate.options",
    "make_backend": "amvicc.generate.runner",
    "run_generate": "amvicc.generate.runner",
    "smoke_model_names": "amvicc.generate.smoke",
    "smoke_model_path": "amvicc.generate.smoke",
    "known_model_names": "amvicc.generate.specs",
    "resolve_model": "amvicc.generate.specs",
}
__all__ = [
    "GenerationOptions",
    "GenerationSummary",
    "ProcessLayout",
    "known_model_names",
    "make_backend",
    "resolve_model",
    "run_generate",
    "smoke_model_names",
    "smoke_model_path",
]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
