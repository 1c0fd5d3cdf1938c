"""The image routes: how each kind of image model is made, declared once.

:func:`~amvicc.generate.specs.resolve_model` reads what ``--model`` names into a spec; the
route for that spec's type names the back end that makes its images (lazily, as
``"module:Class"``: a diffusers back end imports torch only when a local model runs), the key
variable, the defaults, the install extra it needs and the models it knows by name (the shipped
pipeline files, :data:`~amvicc.generate.specs.API_MODELS`,
:data:`~amvicc.generate.specs.CHAT_IMAGE_MODELS`, :data:`~amvicc.generate.specs.STABILITY_MODELS`).
``amvicc models`` lists these routes; :func:`open_backend` opens one, after checking its extra.
A new route is a spec in ``specs.py``, a back end beside the others and one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from amvicc.api import DEFAULT_KEY_ENV, OPENROUTER, STABILITY
from amvicc.extras import require_extra
from amvicc.generate.specs import (
    API_MODELS,
    CHAT_IMAGE_MODELS,
    STABILITY_MODELS,
    ApiModelSpec,
    ChatImageSpec,
    DiffusersModelSpec,
    ModelSpec,
    StabilitySpec,
    shipped_models,
)
from amvicc.routes import KnownModel, Route, load_reference

if TYPE_CHECKING:
    from amvicc.generate.chat_images import ChatImageBackend
    from amvicc.generate.distributed import ProcessLayout
    from amvicc.generate.openai_images import ApiImageBackend
    from amvicc.generate.options import GenerationOptions
    from amvicc.generate.pipeline import DiffusersBackend
    from amvicc.generate.stability import StabilityBackend

    Backend: TypeAlias = DiffusersBackend | ApiImageBackend | ChatImageBackend | StabilityBackend


GATED_TOKEN_ENV = "HF_TOKEN"


@dataclass(frozen=True, kw_only=True)
class ImageRoute(Route):
    """A route of ``amvicc generate``: a :class:`~amvicc.routes.Route` and its back end.

    Attributes:
        spec: the spec type :func:`~amvicc.generate.specs.resolve_model` returns for it.
        backend: ``"module:Class"`` of the back end, built as ``Class(spec, options, layout)``.
    """

    spec: type[ModelSpec]
    backend: str


def shipped_pipelines() -> list[KnownModel]:
    """The shipped pipeline files, with the defaults each was made for."""
    known = []
    for spec in shipped_models():
        size = f"{spec.width}x{spec.height}" if spec.width and spec.height else "pipeline default"
        notes = spec.description
        if spec.gated:
            notes += "; accept the licence on the Hub first"
        known.append(
            KnownModel(
                spec.name,
                notes,
                kind="smoke" if spec.is_smoke else None,
                runs_with=spec.pipeline,
                source=spec.where,
                defaults=f"{spec.steps} steps, guidance {spec.guidance}, {size}, {spec.dtype}",
                # A gated repository's weights download with a Hugging Face token.
                key_env=GATED_TOKEN_ENV if spec.gated else None,
            )
        )
    return known


def openai_image_models() -> list[KnownModel]:
    """OpenAI's image models, then any name at an OpenAI-compatible images endpoint."""
    known = [
        KnownModel(
            spec.name,
            spec.description,
            defaults=", ".join([spec.size, *(f"{k} {v}" for k, v in spec.options.items())]),
        )
        for spec in API_MODELS.values()
    ]
    compatible = KnownModel(
        "NAME --base-url URL",
        "any image model an OpenAI-compatible images endpoint serves (key: any, unless "
        "--api-key-env names one)",
        source="--base-url",
    )
    return [*known, compatible]


def chat_image_models() -> list[KnownModel]:
    """Chat-completion image models with a shipped description, then any compatible server."""
    known = [KnownModel(spec.name, spec.description) for spec in CHAT_IMAGE_MODELS.values()]
    compatible = KnownModel(
        "NAME --base-url URL --image-api chat",
        "any server answering chat completions with image output (OpenRouter's format)",
        source="--base-url",
        key_env=DEFAULT_KEY_ENV,
    )
    return [*known, compatible]


def stability_models() -> list[KnownModel]:
    """Stability AI's hosted models (only these names work)."""
    return [
        KnownModel(
            spec.name, spec.description, runs_with=f"Stability AI REST v2beta ({spec.route})"
        )
        for spec in STABILITY_MODELS.values()
    ]


_HERE = "amvicc.generate.routes"

#: Every image route, in the order ``amvicc models`` lists them.
IMAGE_ROUTES: tuple[ImageRoute, ...] = (
    ImageRoute(
        name="diffusers",
        pattern="<file.yaml | org/name | folder>",
        kind="local",
        runs_with="a diffusers pipeline (class from the file or model_index.json)",
        source="a pipeline file, a Hugging Face repository or a local folder",
        defaults="the pipeline file's, else the pipeline's own",
        extra="local",
        needs="runs a local diffusers pipeline",
        notes="your own pipeline file, a repo id or a diffusers folder; shipped files below",
        models=f"{_HERE}:shipped_pipelines",
        spec=DiffusersModelSpec,
        backend="amvicc.generate.pipeline:DiffusersBackend",
    ),
    ImageRoute(
        name="openai-images",
        pattern="openai:<name>",
        kind="api",
        runs_with="OpenAI images API",
        source="api.openai.com",
        key_env=DEFAULT_KEY_ENV,
        defaults=f"{ApiModelSpec.size}, base64 image",
        notes="any OpenAI image model, sent as is with generic defaults",
        models=f"{_HERE}:openai_image_models",
        spec=ApiModelSpec,
        backend="amvicc.generate.openai_images:ApiImageBackend",
    ),
    ImageRoute(
        name="chat-images",
        pattern="openrouter:<provider/model>",
        kind="api",
        runs_with="chat completions, modalities image+text",
        source=OPENROUTER.base_url,
        key_env=OPENROUTER.key_env,
        defaults="1 image per request, no seed",
        notes="any OpenRouter model with image output",
        models=f"{_HERE}:chat_image_models",
        spec=ChatImageSpec,
        backend="amvicc.generate.chat_images:ChatImageBackend",
    ),
    ImageRoute(
        name="stability",
        pattern="stability:<model>",
        kind="api",
        runs_with="Stability AI REST v2beta",
        source=STABILITY.base_url,
        key_env=STABILITY.key_env,
        defaults="1:1, png, per-image seed",
        any_name=False,
        models=f"{_HERE}:stability_models",
        spec=StabilitySpec,
        backend="amvicc.generate.stability:StabilityBackend",
    ),
)


def image_route(spec: ModelSpec) -> ImageRoute:
    """The route that makes the images of ``spec``."""
    return next(route for route in IMAGE_ROUTES if isinstance(spec, route.spec))


def open_backend(spec: ModelSpec, options: GenerationOptions, layout: ProcessLayout) -> Backend:
    """The back end of ``spec``'s route, with the options checked (no weights read yet).

    Raises:
        MissingExtra: the route needs an install extra that is missing (one line naming it).
        UserError: the options do not suit the model.
    """
    route = image_route(spec)
    if route.extra is not None:
        require_extra(route.extra, f"{spec.name} {route.needs}")
    backend: Backend = load_reference(route.backend)(spec, options, layout)
    return backend
