"""What a generation run is asked to do, and what it reports back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from amvicc.api import ApiSettings
from amvicc.catalogue import PROMPT_KINDS, PromptKind
from amvicc.generate.specs import ImageApi

Offload = Literal["model", "sequential"]
# Image APIs take longer per request than chat ones, and rate-limit sooner.
API_DEFAULTS = ApiSettings(max_connections=4, timeout=300.0)


@dataclass(frozen=True)
class GenerationOptions:
    """Everything ``amvicc generate`` takes besides the catalogue and the store.

    Model parameters left as None take the pipeline file's defaults.

    Attributes:
        model: a shipped name, a pipeline file, a repo id or folder, ``openai:<name>``,
            ``openrouter:<provider/model>``, ``stability:<model>``, or a name served at
            ``api.base_url``.
        image_api: how a server at ``api.base_url`` makes images: ``images`` (OpenAI's images
            endpoint) or ``chat`` (chat completions with image output).
        kinds: which prompts of each question to render.
        limit: only the first ``limit`` prompts of the selection (each with ``num_images``).
        num_images: samples per prompt (for mean@k / pass@k).
        seed: the base of every image's seed.
        steps: denoising steps.
        guidance: guidance scale.
        width: image width in pixels.
        height: image height in pixels.
        dtype: ``float32``, ``float16`` or ``bfloat16``.
        revision: the weights' repository revision.
        extra: further pipeline call or API request parameters (``--option KEY=VALUE``).
        batch_size: prompts per pipeline call (local models).
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:1``, ``mps``...
        offload: move idle components (``model``) or layers (``sequential``) to the CPU.
        compile: compile the denoiser's repeated blocks with ``torch.compile``.
        force: make the images again even where they exist.
        api: how to reach an API image model (endpoint, key variable, requests in flight,
            timeout, retries).
        run_name: the run's id (default: derived from the model and its configuration).
        command: the command line, recorded with the run.
        progress: show a progress bar (main process only).
        verbose: 0 keeps third-party libraries quiet; 1 lets their warnings through.
    """

    model: str
    image_api: ImageApi = "images"
    kinds: tuple[PromptKind, ...] = PROMPT_KINDS
    limit: int | None = None
    num_images: int = 1
    seed: int = 0
    steps: int | None = None
    guidance: float | None = None
    width: int | None = None
    height: int | None = None
    dtype: str | None = None
    revision: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    batch_size: int = 1
    device: str = "auto"
    offload: Offload | None = None
    compile: bool = False
    force: bool = False
    api: ApiSettings = API_DEFAULTS
    run_name: str | None = None
    command: str | None = None
    progress: bool = True
    verbose: int = 0


@dataclass(frozen=True)
class GenerationSummary:
    """What a generation run did.

    Attributes:
        run_id: the stored run.
        config_key: the hash of everything that defines its images.
        smoke: the model has random weights; its images are smoke tests, not results.
        planned: images the selection asks for.
        made: images made now.
        skipped: images already in the store.
        failed: attempts that failed (retried by the next run).
        refused: prompts the model declined (content policy), with the reason stored.
        seconds: wall time of the whole run, loading included.
        generation_seconds: of which making the images (the main process's share).
        processes: how many processes shared the work.
        elsewhere: images of the to-do list another process on the same workspace made, or
            was making when this run ended (claimed by it).
    """

    run_id: str
    model: str
    config_key: str
    smoke: bool
    planned: int
    made: int
    skipped: int
    failed: int
    refused: int
    seconds: float
    generation_seconds: float = 0.0
    processes: int = 1
    elsewhere: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The summary as stored with the run."""
        return asdict(self)

    def lines(self) -> list[str]:
        """What the terminal shows: one line."""
        return [self.line()]

    def line(self) -> str:
        """One line for the terminal."""
        rate = ""
        if self.made and self.generation_seconds:
            rate = f" ({self.made / self.generation_seconds:.2f} images/s while generating)"
        label = " [SMOKE TEST: random weights, not a real result]" if self.smoke else ""
        retry = f"; rerun to retry the {self.failed} failed" if self.failed else ""
        shared = f", {self.elsewhere} by another process" if self.elsewhere else ""
        return (
            f"{self.model}{label}: made {self.made}, skipped {self.skipped}{shared}, "
            f"failed {self.failed}, refused {self.refused} of {self.planned} "
            f"in {self.seconds:.1f} s{rate}; run {self.run_id}{retry}"
        )
