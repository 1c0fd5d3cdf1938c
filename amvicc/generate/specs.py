"""Image models: what ``--model`` can name and the declarative files describing local ones.

A local model is one small YAML file in ``pipelines/`` (shipped, or any path given to
``--model``) naming the diffusers pipeline class, where the weights are (a Hugging Face
repository id, a local folder, or a smoke-test builder) and the defaults the model was made
for (steps, guidance, size, dtype, scheduler options). ``--model`` also takes a repository id or
a folder directly (the pipeline class is then read from its ``model_index.json``), and API
models: ``openai:<name>`` (OpenAI's images endpoint), ``openrouter:<provider/model>`` (chat
completions with image output), ``stability:<model>`` (Stability AI's REST API), or any name
served at ``--base-url`` (an images endpoint, or chat completions with ``--image-api chat``).

Only PyYAML is imported here, so ``amvicc models`` and ``--help`` stay fast.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args

from amvicc.errors import UserError
from amvicc.resources import resource_dir

DType = Literal["float32", "float16", "bfloat16"]
DTYPES: tuple[str, ...] = get_args(DType)
PIPELINE_SUFFIX = ".yaml"
# Read the pipeline class from the weights' model_index.json.
AUTO_PIPELINE = "DiffusionPipeline"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class SchedulerSpec:
    """A scheduler replacing or adjusting the pipeline's own.

    Attributes:
        name: a diffusers scheduler class; None keeps the pipeline's class.
        options: config values overriding the pipeline's scheduler config (e.g. ``shift``).
    """

    name: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The scheduler as recorded with a run."""
        return {"class": self.name, "options": dict(self.options)}


@dataclass(frozen=True)
class DiffusersModelSpec:
    """A local diffusers model and the defaults it was made for.

    Attributes:
        name: the name ``--model`` takes (the file name without ``.yaml``).
        pipeline: the diffusers pipeline class; ``DiffusionPipeline`` reads it from the weights.
        repo: a Hugging Face repository id or a local folder; None for smoke models.
        smoke: the smoke-test builder (tiny random weights) used instead of ``repo``.
        random: a folder of configs (``model_index.json`` and each component's
            ``config.json``) whose architecture is built with random weights in memory, at
            full size, instead of ``repo`` (for timing on a GPU; the images are noise).
        revision: the repository revision (branch, tag or commit); None is ``main``.
        variant: the weight files variant, e.g. ``fp16``.
        gated: the repository needs its licence accepted and a Hugging Face token.
        licence: where the licence is read and accepted.
        dtype: the weights' dtype when generating.
        steps: denoising steps; None keeps the pipeline's default.
        guidance: classifier-free guidance scale; None keeps the pipeline's default.
        width: image width in pixels; None keeps the pipeline's default.
        height: image height in pixels; None keeps the pipeline's default.
        size_multiple: width and height must be multiples of this (VAE factor x patch size).
        scheduler: a scheduler replacing or adjusting the pipeline's.
        call_options: further keyword arguments of the pipeline call.
        description: one line for ``amvicc models``.
        source: the file it was read from (for error messages), if any.
    """

    name: str
    pipeline: str
    repo: str | None = None
    smoke: str | None = None
    random: str | None = None
    revision: str | None = None
    variant: str | None = None
    gated: bool = False
    licence: str | None = None
    dtype: DType = "float32"
    steps: int | None = None
    guidance: float | None = None
    width: int | None = None
    height: int | None = None
    size_multiple: int = 8
    scheduler: SchedulerSpec | None = None
    call_options: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    source: str | None = None

    @property
    def is_smoke(self) -> bool:
        """Whether the weights are random (a smoke test, never a real result)."""
        return self.smoke is not None or self.random is not None

    @property
    def where(self) -> str:
        """The weights' location as a user reads it."""
        if self.random:
            return f"random weights on the architecture in {self.random}"
        return "random weights built offline" if self.smoke else str(self.repo)


@dataclass(frozen=True)
class ApiModelSpec:
    """An image model behind an OpenAI-compatible images endpoint.

    Attributes:
        name: the name as the user gave it (``openai:gpt-image-1``, or any name at a base URL).
        api_model: the ``model`` sent to the endpoint.
        base_url: the endpoint; None for OpenAI.
        size: the default ``WIDTHxHEIGHT``.
        sizes: the sizes the model accepts; empty when any size may be asked for.
        options: further request parameters (e.g. ``quality``).
        response_format: ``b64_json`` asks for the image itself rather than a URL; None sends
            nothing (GPT image models always answer in base64 and reject the parameter).
        description: one line for ``amvicc models``.
    """

    name: str
    api_model: str
    base_url: str | None = None
    size: str = "1024x1024"
    sizes: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    response_format: str | None = "b64_json"
    description: str = ""


@dataclass(frozen=True)
class ChatImageSpec:
    """An image model behind chat completions with image output (OpenRouter's wire format).

    The prompt goes as the user message with ``"modalities": ["image", "text"]``; the image
    comes back as a data URL in ``choices[0].message.images``.

    Attributes:
        name: the name as the user gave it (``openrouter:google/gemini-2.5-flash-image``).
        api_model: the ``model`` sent to the endpoint.
        base_url: the endpoint; None for the preset's (OpenRouter's).
        preset: ``openrouter`` for ``openrouter:`` names (endpoint, key variable, headers);
            None for any OpenAI-compatible server chosen with ``--image-api chat``.
        options: further request parameters (e.g. ``image_config``).
        description: one line for ``amvicc models``.
    """

    name: str
    api_model: str
    base_url: str | None = None
    preset: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class StabilitySpec:
    """An image model behind Stability AI's REST API (``/v2beta/stable-image/generate/...``).

    Attributes:
        name: the name as the user gave it (``stability:sd3.5-large``).
        route: the last part of the endpoint path: ``sd3``, ``ultra`` or ``core``.
        api_model: the ``model`` form field (the ``sd3`` route only); None for the others.
        base_url: the API's root; None for Stability AI's.
        description: one line for ``amvicc models``.
    """

    name: str
    route: str
    api_model: str | None = None
    base_url: str | None = None
    description: str = ""


ModelSpec = DiffusersModelSpec | ApiModelSpec | ChatImageSpec | StabilitySpec
ImageApi = Literal["images", "chat"]
IMAGE_APIS: tuple[str, ...] = get_args(ImageApi)
OPENROUTER_PREFIX = "openrouter:"
STABILITY_PREFIX = "stability:"

# OpenAI's image models; any other ``openai:<name>`` is sent as is with generic defaults.
API_MODELS: dict[str, ApiModelSpec] = {
    spec.name: spec
    for spec in (
        ApiModelSpec(
            name="openai:gpt-image-1",
            api_model="gpt-image-1",
            sizes=("1024x1024", "1536x1024", "1024x1536"),
            options={"quality": "auto"},
            response_format=None,
            description="OpenAI GPT Image 1",
        ),
        ApiModelSpec(
            name="openai:dall-e-3",
            api_model="dall-e-3",
            sizes=("1024x1024", "1792x1024", "1024x1792"),
            options={"quality": "standard"},
            description="OpenAI DALL-E 3; rewrites prompts, recorded per image",
        ),
    )
}


# Chat-completion image models with a shipped description; any other openrouter:<name> works
# the same way with generic defaults.
CHAT_IMAGE_MODELS: dict[str, ChatImageSpec] = {
    spec.name: spec
    for spec in (
        ChatImageSpec(
            name="openrouter:google/gemini-2.5-flash-image",
            api_model="google/gemini-2.5-flash-image",
            preset="openrouter",
            description="Google Gemini 2.5 Flash Image via OpenRouter; no seed",
        ),
    )
}

# Stability AI's hosted text-to-image models.
STABILITY_MODELS: dict[str, StabilitySpec] = {
    spec.name: spec
    for spec in (
        StabilitySpec(
            name="stability:sd3.5-large",
            route="sd3",
            api_model="sd3.5-large",
            description="Stable Diffusion 3.5 Large, hosted",
        ),
        StabilitySpec(
            name="stability:sd3.5-large-turbo",
            route="sd3",
            api_model="sd3.5-large-turbo",
            description="Stable Diffusion 3.5 Large Turbo, hosted",
        ),
        StabilitySpec(
            name="stability:sd3.5-medium",
            route="sd3",
            api_model="sd3.5-medium",
            description="Stable Diffusion 3.5 Medium, hosted",
        ),
        StabilitySpec(
            name="stability:ultra",
            route="ultra",
            description="Stable Image Ultra",
        ),
        StabilitySpec(
            name="stability:core",
            route="core",
            description="Stable Image Core",
        ),
    )
}


def pipelines_dir() -> Path:
    """The folder of shipped pipeline files."""
    return resource_dir("pipelines")


def shipped_model_names() -> tuple[str, ...]:
    """The names of the shipped pipeline files, sorted."""
    return tuple(sorted(p.stem for p in pipelines_dir().glob(f"*{PIPELINE_SUFFIX}")))


def known_model_names() -> tuple[str, ...]:
    """Every name ``--model`` knows without a path: pipeline files, then API models."""
    return (*shipped_model_names(), *API_MODELS, *CHAT_IMAGE_MODELS, *STABILITY_MODELS)


def shipped_models() -> list[DiffusersModelSpec]:
    """Every shipped pipeline file, parsed.

    Raises:
        UserError: a file is broken; the message names the file and the field.
    """
    return [
        load_pipeline_file(pipelines_dir() / f"{n}{PIPELINE_SUFFIX}") for n in shipped_model_names()
    ]


def resolve_model(
    model: str, *, base_url: str | None = None, image_api: ImageApi = "images"
) -> ModelSpec:
    """What ``--model`` names.

    Args:
        model: a shipped name (``sd35``), ``openai:<name>``, ``openrouter:<provider/model>``,
            ``stability:<model>``, a path to a pipeline file, a local diffusers folder, or a
            Hugging Face repository id (``org/name``).
        base_url: an endpoint; for ``openrouter:`` and ``stability:`` names it replaces the
            provider's (a proxy, a local fake), otherwise ``model`` is the name served there.
        image_api: how a server at ``base_url`` makes images: ``images`` (OpenAI's images
            endpoint) or ``chat`` (chat completions with image output, OpenRouter's format).

    Raises:
        UserError: nothing has this name (the message lists the known ones), its pipeline
            file is broken, or ``chat`` is asked for without an endpoint.
    """
    if image_api not in IMAGE_APIS:
        raise UserError(f"--image-api {image_api!r} is not one of {', '.join(IMAGE_APIS)}")
    if model.startswith(OPENROUTER_PREFIX):
        api_model = model.removeprefix(OPENROUTER_PREFIX).strip()
        if not api_model:
            raise UserError(f"model {model!r} names no model after {OPENROUTER_PREFIX}")
        known_chat = CHAT_IMAGE_MODELS.get(model) or ChatImageSpec(
            name=model, api_model=api_model, preset="openrouter"
        )
        return replace(known_chat, base_url=base_url)
    if model.startswith(STABILITY_PREFIX):
        known_stability = STABILITY_MODELS.get(model)
        if known_stability is None:
            raise UserError(
                f"unknown Stability AI model {model!r}; known: {', '.join(STABILITY_MODELS)}"
            )
        return replace(known_stability, base_url=base_url)
    if image_api == "chat":
        if base_url is None:
            raise UserError(
                "--image-api chat needs --base-url (an OpenAI-compatible server); for "
                "OpenRouter use --model openrouter:<provider/model>"
            )
        return ChatImageSpec(name=model, api_model=model.removeprefix("openai:"), base_url=base_url)
    if base_url is not None:
        known = API_MODELS.get(model)
        if known is not None:
            return replace(known, base_url=base_url)
        return ApiModelSpec(name=model, api_model=model.removeprefix("openai:"), base_url=base_url)
    if model in API_MODELS:
        return API_MODELS[model]
    if model.startswith("openai:") and model.removeprefix("openai:"):
        api_model = model.removeprefix("openai:")
        response_format = None if api_model.startswith("gpt-image") else "b64_json"
        return ApiModelSpec(name=model, api_model=api_model, response_format=response_format)
    shipped = pipelines_dir() / f"{model}{PIPELINE_SUFFIX}"
    if "/" not in model and shipped.is_file():
        return load_pipeline_file(shipped)
    path = Path(model).expanduser()
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise UserError(f"pipeline file {model} does not exist")
        return load_pipeline_file(path)
    if path.is_dir():
        if not (path / "model_index.json").is_file():
            raise UserError(
                f"{model} is a folder but not a diffusers pipeline (no model_index.json); "
                "give the folder that `save_pretrained` or `hf download` made"
            )
        return DiffusersModelSpec(name=model, pipeline=AUTO_PIPELINE, repo=str(path.resolve()))
    if not is_local_path(model):
        return DiffusersModelSpec(name=model, pipeline=AUTO_PIPELINE, repo=model)
    if model.startswith(("/", ".", "~")):
        raise UserError(f"{model} does not exist; give a local diffusers folder or a pipeline file")
    raise UserError(
        f"unknown model {model!r}; known models: {', '.join(known_model_names())} "
        "(or a pipeline file, a Hugging Face repo id like org/name, a local diffusers folder, "
        "openai:<name>, openrouter:<provider/model>, stability:<model>, or any name with "
        "--base-url; `amvicc models` lists them)"
    )


def is_local_path(text: str) -> bool:
    """Whether a model location is a folder rather than a repository id (``org/name``)."""
    return text.startswith(("/", ".", "~")) or not _REPO_ID.match(text)


# --- pipeline files --------------------------------------------------------------------------

_FILE_FIELDS = {f.name for f in fields(DiffusersModelSpec) if f.name not in ("name", "source")}


def load_pipeline_file(path: Path) -> DiffusersModelSpec:
    """Parse and check one pipeline file.

    Raises:
        UserError: the file is not YAML, lacks a required field, has an unknown field or a
            value of the wrong type; the message names the file and the field.
    """
    import yaml

    from amvicc.files import UnsafeYAML, load_yaml

    try:
        data = load_yaml(path.read_text(encoding="utf-8"))  # no aliases, NaN or infinity
    except OSError as err:
        raise UserError(f"cannot read pipeline file {path}: {err.strerror}") from None
    except UnsafeYAML as err:
        raise UserError(f"pipeline file {path}: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or "syntax error"
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise UserError(f"pipeline file {path} is not valid YAML ({where}{problem})") from None
    return parse_pipeline_mapping(data, name=path.stem, source=str(path))


def parse_pipeline_mapping(data: object, *, name: str, source: str) -> DiffusersModelSpec:
    """Check a pipeline file's content and build its spec (see :func:`load_pipeline_file`)."""
    if not isinstance(data, dict):
        raise UserError(
            f"pipeline file {source} must be a mapping of fields (pipeline:, repo:, ...)"
        )
    check = _FieldChecker(source)
    unknown = sorted(set(map(str, data)) - _FILE_FIELDS)
    if unknown:
        raise UserError(
            f"pipeline file {source}: unknown field {unknown[0]!r}; "
            f"known fields: {', '.join(sorted(_FILE_FIELDS))}"
        )
    pipeline = check.identifier(data, "pipeline", required=True)
    repo = check.text(data, "repo")
    smoke = check.text(data, "smoke")
    random = check.text(data, "random")
    if sum(field is not None for field in (repo, smoke, random)) != 1:
        raise UserError(
            f"pipeline file {source}: give exactly one of field 'repo' (a Hugging Face "
            "repository id or a local folder), field 'smoke' (a smoke-test builder) and field "
            "'random' (a folder of configs to build with random weights)"
        )
    if random is not None:
        folder = Path(random).expanduser()
        if not folder.is_absolute():
            folder = Path(source).parent / folder
        if not (folder / "model_index.json").is_file():
            raise UserError(
                f"pipeline file {source}: field 'random' names {folder}, which has no "
                "model_index.json"
            )
        random = str(folder.resolve())
    if smoke is not None:
        from amvicc.generate.smoke import smoke_model_names

        if smoke not in smoke_model_names():
            raise UserError(
                f"pipeline file {source}: field 'smoke' is {smoke!r}; "
                f"known smoke models: {', '.join(smoke_model_names())}"
            )
    if repo is not None and is_local_path(repo):
        folder = Path(repo).expanduser()
        if not folder.is_absolute():
            folder = Path(source).parent / folder
        repo = str(folder.resolve())
    dtype = check.text(data, "dtype") or "float32"
    if dtype not in DTYPES:
        raise UserError(
            f"pipeline file {source}: field 'dtype' is {dtype!r}; use one of {', '.join(DTYPES)}"
        )
    return DiffusersModelSpec(
        name=name,
        pipeline=pipeline or AUTO_PIPELINE,
        repo=repo,
        smoke=smoke,
        random=random,
        revision=check.text(data, "revision"),
        variant=check.text(data, "variant"),
        gated=check.flag(data, "gated"),
        licence=check.text(data, "licence"),
        dtype=dtype,  # type: ignore[arg-type]  # checked against DTYPES above
        steps=check.positive_int(data, "steps"),
        guidance=check.number(data, "guidance"),
        width=check.positive_int(data, "width"),
        height=check.positive_int(data, "height"),
        size_multiple=check.positive_int(data, "size_multiple") or 8,
        scheduler=check.scheduler(data),
        call_options=check.mapping(data, "call_options"),
        description=check.text(data, "description") or "",
        source=source,
    )


@dataclass(frozen=True)
class _FieldChecker:
    """Reads one field of a pipeline file, naming the file and field when it is wrong."""

    source: str

    def _fail(self, name: str, expected: str, value: object) -> UserError:
        return UserError(
            f"pipeline file {self.source}: field {name!r} must be {expected}, got {value!r}"
        )

    def text(self, data: dict[str, Any], name: str) -> str | None:
        value = data.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self._fail(name, "a non-empty string", value)
        return value.strip()

    def identifier(self, data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
        value = self.text(data, name)
        if value is None and required:
            raise UserError(
                f"pipeline file {self.source}: field {name!r} is missing; name the diffusers "
                f"pipeline class, e.g. StableDiffusion3Pipeline ({AUTO_PIPELINE} reads it from "
                "the weights)"
            )
        if value is not None and not _IDENTIFIER.match(value):
            raise self._fail(name, "a diffusers class name", value)
        return value

    def flag(self, data: dict[str, Any], name: str) -> bool:
        value = data.get(name, False)
        if not isinstance(value, bool):
            raise self._fail(name, "true or false", value)
        return value

    def positive_int(self, data: dict[str, Any], name: str) -> int | None:
        value = data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self._fail(name, "a whole number of at least 1", value)
        return value

    def number(self, data: dict[str, Any], name: str) -> float | None:
        value = data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise self._fail(name, "a number of at least 0", value)
        return float(value)

    def mapping(self, data: dict[str, Any], name: str) -> dict[str, Any]:
        value = data.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise self._fail(name, "a mapping of option names to values", value)
        return dict(value)

    def scheduler(self, data: dict[str, Any]) -> SchedulerSpec | None:
        value = data.get("scheduler")
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self._fail("scheduler", "a mapping with 'class' and/or 'options'", value)
        unknown = sorted(set(map(str, value)) - {"class", "options"})
        if unknown:
            raise UserError(
                f"pipeline file {self.source}: unknown field 'scheduler.{unknown[0]}'; "
                "known: scheduler.class, scheduler.options"
            )
        name = value.get("class")
        if name is not None and (not isinstance(name, str) or not _IDENTIFIER.match(name)):
            raise self._fail("scheduler.class", "a diffusers scheduler class name", name)
        options = value.get("options") or {}
        if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
            raise self._fail("scheduler.options", "a mapping of config names to values", options)
        return SchedulerSpec(name=name, options=dict(options))
