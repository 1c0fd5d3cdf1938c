"""Image generation: render the catalogue's prompts with local diffusers pipelines or API models.

``amvicc generate`` (also ``python -m amvicc.generate``, or ``accelerate launch -m
amvicc.generate`` across GPUs) stores every image in the workspace with its provenance and
resumes where it stopped. From Python::

    from amvicc import Store, load_catalogue
    from amvicc.generate import GenerationOptions, generate_images

    summary = generate_images(
        GenerationOptions(model="tiny-sd3", limit=8), store=Store("runs"), catalogue=load_catalogue()
    )

Importing this package reads no weights and imports no torch; that happens when a run starts.
"""

from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions, GenerationSummary
from amvicc.generate.runner import generate_images, make_backend
from amvicc.generate.smoke import smoke_model_names, smoke_model_path
from amvicc.generate.specs import known_model_names, resolve_model

__all__ = [
    "GenerationOptions",
    "GenerationSummary",
    "ProcessLayout",
    "generate_images",
    "known_model_names",
    "make_backend",
    "resolve_model",
    "smoke_model_names",
    "smoke_model_path",
]
