"""Local image models: load a diffusers pipeline and render batches of prompts with it.

The same code path runs SD 3.5 Large on a GPU and ``tiny-sd3`` on a laptop: the pipeline class
comes from the pipeline file, the weights through ``from_pretrained`` (from the Hugging Face
cache, a folder, or the smoke-model cache), and each batch is one pipeline call with one
seeded generator per image. Errors the user can fix (weights not downloaded, out of memory, a
size the model cannot take) become one-line :class:`~amvicc.errors.UserError` messages.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.errors import UserError
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions
from amvicc.generate.plan import ImageJob
from amvicc.generate.quiet import quiet_libraries
from amvicc.generate.random_weights import build_random_pipeline, configs_digest
from amvicc.generate.seeding import generators
from amvicc.generate.sink import ImageSink
from amvicc.generate.smoke import smoke_model_id, smoke_model_path
from amvicc.generate.specs import AUTO_PIPELINE, DTYPES, DiffusersModelSpec, is_local_path
from amvicc.provenance import package_versions

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)


class DiffusersBackend:
    """Makes images with a local diffusers pipeline.

    Creating it checks the options against the pipeline file (cheap, before any weights are
    read); :meth:`load` reads the weights; :meth:`generate` renders jobs into a sink.
    """

    seeded = True

    def __init__(
        self, spec: DiffusersModelSpec, options: GenerationOptions, layout: ProcessLayout
    ) -> None:
        self.spec = spec
        self.options = options
        self.layout = layout
        self.smoke = spec.is_smoke
        self.steps = options.steps if options.steps is not None else spec.steps
        self.guidance = options.guidance if options.guidance is not None else spec.guidance
        self.width = options.width or spec.width
        self.height = options.height or spec.height
        self.dtype = options.dtype or spec.dtype
        self.revision = options.revision or spec.revision
        self.call_options = {**spec.call_options, **options.extra}
        if self.dtype not in DTYPES:
            raise UserError(f"--dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        self._check_size()
        if spec.repo is not None and is_local_path(spec.repo) and not Path(spec.repo).is_dir():
            where = f"pipeline file {spec.source}: field 'repo'" if spec.source else "--model"
            raise UserError(f"{where} names the folder {spec.repo}, which does not exist")
        if spec.random:
            self.weights = f"random:{Path(spec.random).name}@{configs_digest(Path(spec.random))}"
        else:
            self.weights = smoke_model_id(spec.smoke) if spec.smoke else str(spec.repo)
        self.outputs: dict[str, Any] = {
            "backend": "diffusers",
            "weights": self.weights,
            "revision": self.revision,
            "variant": spec.variant,
            "pipeline": spec.pipeline,
            "steps": self.steps,
            "guidance": self.guidance,
            "width": self.width,
            "height": self.height,
            "dtype": self.dtype,
            "scheduler": spec.scheduler.describe() if spec.scheduler else None,
            "call_options": self.call_options,
        }
        self.settings: dict[str, Any] = {
            "device": options.device,
            "offload": options.offload,
            "compile": options.compile,
            "processes": layout.count,
        }
        self.pipe: Any = None
        self.device: torch.device | None = None
        self.params: dict[str, Any] = {}

    def _check_size(self) -> None:
        multiple = self.spec.size_multiple
        for name, value in (("width", self.width), ("height", self.height)):
            if value is not None and value % multiple:
                lower, upper = value - value % multiple, value - value % multiple + multiple
                suggestion = f"{lower} or {upper}" if lower else str(upper)
                raise UserError(
                    f"{self.spec.name} cannot make a {name} of {value} px: width and height "
                    f"must be multiples of {multiple}; use --{name} {suggestion}"
                )

    def describe(self) -> str:
        """The model as one log line."""
        size = f"{self.width}x{self.height}" if self.width and self.height else "default size"
        return (
            f"{self.spec.name}: {self.spec.pipeline}, {self.spec.where}, {self.steps} steps, "
            f"guidance {self.guidance}, {size}, {self.dtype}"
        )

    def load(self) -> None:
        """Read the weights and place the pipeline on its device.

        Raises:
            UserError: the weights are not cached and cannot be downloaded, the pipeline class
                is unknown, the device is unavailable, or memory runs out.
        """
        import torch

        if self.pipe is not None:
            return
        device = resolve_device(self.options.device, self.layout)
        if self.options.offload and device.type == "cpu":
            raise UserError(
                "--offload moves weights between the CPU and a GPU; it needs a GPU device "
                "(--device cuda); on the CPU leave it out"
            )
        with quiet_libraries(self.options.verbose):
            cls = pipeline_class(self.spec)
            scheduler_class = self._scheduler_class()
            source = smoke_model_path(self.spec.smoke) if self.spec.smoke else str(self.spec.repo)
            import diffusers

            wanted = getattr(torch, self.dtype)
            kwargs: dict[str, Any] = {dtype_argument(diffusers.__version__): wanted}
            if self.revision:
                kwargs["revision"] = self.revision
            if self.spec.variant:
                kwargs["variant"] = self.spec.variant
            try:
                if self.spec.random:
                    # Built where it runs: a full-size model never passes through the CPU.
                    where = torch.device("cpu") if self.options.offload else device
                    pipe = build_random_pipeline(Path(self.spec.random), dtype=wanted, device=where)
                else:
                    pipe = cls.from_pretrained(source, **kwargs)
            except torch.OutOfMemoryError:
                raise UserError(self._out_of_memory("loading the weights")) from None
            except OSError as err:
                if self.spec.smoke:
                    raise UserError(
                        f"the smoke model in {source} is damaged ({_one_line(err)}); delete "
                        "that folder and rerun to build it again"
                    ) from None
                raise UserError(missing_weights_message(self.spec, self.revision, err)) from None
            except ValueError as err:
                raise UserError(
                    f"cannot load {source} as {self.spec.pipeline}: {_one_line(err)}"
                ) from None
            check_loaded_dtype(pipe, wanted, self.dtype)
            scheduler = self.spec.scheduler
            if scheduler is not None:
                cls = scheduler_class or type(pipe.scheduler)
                pipe.scheduler = cls.from_config(pipe.scheduler.config, **scheduler.options)
            try:
                if self.options.offload == "model":
                    pipe.enable_model_cpu_offload(device=device)
                elif self.options.offload == "sequential":
                    pipe.enable_sequential_cpu_offload(device=device)
                else:
                    pipe.to(device)
            except torch.OutOfMemoryError:
                raise UserError(self._out_of_memory(f"moving the weights to {device}")) from None
        if self.options.compile:
            compiled = compile_repeated_blocks(pipe)
            log.info("compiling %s (the first batch is slow)", compiled)
        pipe.set_progress_bar_config(disable=True)
        self.pipe, self.device = pipe, device
        local = self.spec.is_smoke or is_local_path(str(self.spec.repo))
        commit = None if local else _commit(self)
        self.params = {
            **self.outputs,
            "commit": commit,
            "smoke_test": self.smoke,
            "device": str(device),
            "process": f"{self.layout.index}/{self.layout.count}",
            "versions": package_versions(),
        }

    def _scheduler_class(self) -> Any:
        """The scheduler class the pipeline file names (None: keep the pipeline's own)."""
        name = self.spec.scheduler.name if self.spec.scheduler else None
        if name is None:
            return None
        import diffusers

        cls = getattr(diffusers, name, None)
        if not (isinstance(cls, type) and hasattr(cls, "from_config")):
            raise UserError(
                f"pipeline file {self.spec.source}: field 'scheduler.class': diffusers "
                f"{diffusers.__version__} has no scheduler {name!r}"
            )
        return cls

    def generate(self, jobs: Sequence[ImageJob], sink: ImageSink, *, batch_size: int) -> None:
        """Render the jobs ``batch_size`` at a time, storing each batch's images at once."""
        if self.pipe is None:
            raise RuntimeError("load() the pipeline first")
        call: dict[str, Any] = {
            name: value
            for name, value in (
                ("num_inference_steps", self.steps),
                ("guidance_scale", self.guidance),
                ("width", self.width),
                ("height", self.height),
            )
            if value is not None
        }
        call.update(self.call_options)
        with quiet_libraries(self.options.verbose):
            for start in range(0, len(jobs), batch_size):
                self._render(jobs[start : start + batch_size], call, sink)

    def _render(self, batch: Sequence[ImageJob], call: dict[str, Any], sink: ImageSink) -> None:
        import torch

        try:
            output = self.pipe(
                prompt=[job.prompt.text for job in batch],
                generator=generators([job.seed for job in batch]),
                **call,
            )
        except torch.OutOfMemoryError:
            raise UserError(self._out_of_memory(f"making a batch of {len(batch)}")) from None
        except (ValueError, TypeError) as err:
            # The pipeline's input checks (size, options) run before any work is done.
            if isinstance(err, TypeError) and "unexpected keyword" not in str(err):
                raise
            raise UserError(
                f"{self.spec.name} cannot generate with these settings: {_one_line(err)}"
            ) from None
        flagged = getattr(output, "nsfw_content_detected", None) or [False] * len(batch)
        for job, image, unsafe in zip(batch, output.images, flagged, strict=True):
            if unsafe:
                sink.reject(job, "refused", "the pipeline's safety checker flagged the image")
            else:
                sink.save(job, image)

    def _out_of_memory(self, doing: str) -> str:
        size = f" at {self.width}x{self.height}" if self.width and self.height else ""
        return (
            f"out of memory on {self.device or self.options.device} {doing} with "
            f"{self.spec.name}{size}; finished images are kept: rerun with --batch-size 1, or "
            "--offload model (--offload sequential uses least memory)"
        )


def pipeline_class(spec: DiffusersModelSpec) -> Any:
    """The diffusers pipeline class a spec names.

    Raises:
        UserError: diffusers has no pipeline of that name.
    """
    import diffusers

    cls = getattr(diffusers, spec.pipeline, None)
    if not (isinstance(cls, type) and issubclass(cls, diffusers.DiffusionPipeline)):
        where = f"pipeline file {spec.source}: field 'pipeline'" if spec.source else "--model"
        raise UserError(
            f"{where}: diffusers {diffusers.__version__} has no pipeline class {spec.pipeline!r} "
            f"(e.g. StableDiffusion3Pipeline, FluxPipeline, or {AUTO_PIPELINE} to read it "
            "from the weights)"
        )
    return cls


def missing_weights_message(spec: DiffusersModelSpec, revision: str | None, err: Exception) -> str:
    """One line saying that a model's weights are missing and how to download them."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    repo = str(spec.repo)
    named = spec.name if spec.name == repo else f"{spec.name} ({repo})"
    causes = list(_causes(err))
    if any(isinstance(c, GatedRepoError) for c in causes):
        reason = "the repository is gated and this machine's Hugging Face token may not use it"
    elif any(isinstance(c, RepositoryNotFoundError) for c in causes):
        reason = "the Hub has no such repository (or it is private)"
    elif os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        reason = "HF_HUB_OFFLINE is set"
    else:
        reason = "the Hub could not be reached"
    revision_flag = f" --revision {revision}" if revision else ""
    licence = ""
    if spec.gated:
        url = spec.licence or f"https://huggingface.co/{repo}"
        licence = (
            f"accept the licence at {url} while logged in, log in here with `hf auth login` "
            "(or set HF_TOKEN), then "
        )
    return (
        f"the weights of {named} are not in the local Hugging Face cache and "
        f"could not be downloaded ({reason}); {licence}download them with "
        f"`hf download {repo}{revision_flag}` (older hubs: `huggingface-cli download {repo}`) "
        "and rerun"
    )


def resolve_device(requested: str, layout: ProcessLayout) -> torch.device:
    """The device to generate on.

    Args:
        requested: ``auto`` (the launcher's device, else CUDA, else MPS, else the CPU) or a
            torch device string.
        layout: this process's layout; under a launcher ``cuda`` means this process's GPU.

    Raises:
        UserError: the device is not a device or is not available.
    """
    import torch

    if requested == "auto":
        if layout.device is not None:
            return torch.device(layout.device)
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(requested)
    except RuntimeError:
        raise UserError(
            f"--device {requested!r} is not a device; use auto, cpu, cuda, cuda:N or mps"
        ) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UserError(
            f"--device {requested} but no CUDA GPU is visible to torch {torch.__version__}; "
            "use --device cpu, or install a CUDA build of torch"
        )
    if str(device) == "cuda" and layout.device is not None:
        return torch.device(layout.device)
    return device


def compile_repeated_blocks(pipe: Any) -> str:
    """Compile the denoiser's repeated blocks with ``torch.compile`` (regional compilation).

    Uses the model's declared ``_repeated_blocks`` when it has them, else every module of each
    list of identical blocks (e.g. SD3's ``transformer_blocks``).

    Returns:
        What was compiled, for the log.
    """
    import torch

    denoiser = getattr(pipe, "transformer", None) or getattr(pipe, "unet", None)
    if denoiser is None:
        raise UserError("--compile: this pipeline has no transformer or UNet to compile")
    name = type(denoiser).__name__
    if getattr(denoiser, "_repeated_blocks", None):
        denoiser.compile_repeated_blocks()
        return f"the repeated blocks of {name}"
    blocks = [
        block
        for module in denoiser.modules()
        if isinstance(module, torch.nn.ModuleList)
        and len(module) > 1
        and len({type(child) for child in module}) == 1
        for block in module
    ]
    if not blocks:
        denoiser.compile()
        return f"the whole {name}"
    for block in blocks:
        block.compile()
    return f"{len(blocks)} repeated blocks of {name}"


def _commit(backend: DiffusersBackend) -> str | None:
    """The commit of the cached snapshot the weights came from (None if unknown)."""
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            str(backend.spec.repo),
            revision=backend.revision,
            local_files_only=True,
            allow_patterns=["model_index.json"],
        )
    except (OSError, ValueError):
        return None
    return Path(folder).name


def _causes(err: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = err
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def dtype_argument(version: str) -> str:
    """The ``from_pretrained`` keyword this diffusers release reads the weights' dtype from.

    diffusers 0.40 reads ``dtype`` (and refuses ``torch_dtype`` beside it); 0.36 to 0.39 read
    only ``torch_dtype`` and silently ignore ``dtype``, so a pipeline asked for bfloat16 would
    load in float32 (twice the memory) while the run records bfloat16.
    """
    from packaging.version import Version

    return "dtype" if Version(version).release[:2] >= (0, 40) else "torch_dtype"


def check_loaded_dtype(pipe: Any, wanted: torch.dtype, name: str) -> None:
    """Fail loudly when a loaded pipeline's weights are not in the dtype the run records.

    Raises:
        UserError: a component holds its weights in another dtype.
    """
    import torch

    wrong = []
    for component, module in sorted(getattr(pipe, "components", {}).items()):
        if not isinstance(module, torch.nn.Module):
            continue
        dtypes = {p.dtype for p in module.parameters() if p.is_floating_point()}
        # Some models keep a few layers in float32 on purpose (T5's feed-forward output):
        # what must not happen is a component with no weight in the requested dtype.
        if dtypes and wanted not in dtypes:
            found = ", ".join(sorted(str(d).removeprefix("torch.") for d in dtypes))
            wrong.append(f"{component} ({found})")
    if wrong:
        raise UserError(
            f"asked for {name} weights, but diffusers loaded {'; '.join(wrong)}; the run would "
            "record the wrong dtype, so nothing was generated (check the diffusers version)"
        )


def _one_line(err: BaseException) -> str:
    return re.sub(r"\s+", " ", str(err)).strip()[:400]
