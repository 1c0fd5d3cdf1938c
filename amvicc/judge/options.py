"""What an image-judging job is asked to do, and what it reports back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from amvicc.catalogue import PROMPT_KINDS, PromptKind
from amvicc.judge.methods import Method
from amvicc.vlm.engine import SamplingParams
from amvicc.vlm.options import ModelRunOptions


@dataclass(frozen=True)
class JudgeOptions(ModelRunOptions):
    """One judging job (what ``amvicc judge`` is given).

    Of the shared :class:`~amvicc.vlm.options.ModelRunOptions`, ``api`` and ``local`` reach a
    VLM judge and ``limit`` judges at most that many images.

    Attributes:
        run_id: the generation run whose images are judged.
        method: ``rubric``, ``question`` or ``ocr``.
        judge: the VLM (``rubric``, ``question``); ignored by ``ocr``.
        kinds: which prompt kinds' images; ``question`` and ``ocr`` judge explicit ones only.
        indices: the questions whose images to judge (None: all).
        template: the rubric judge's prompt (None: the shipped one).
        sampling: the judge's temperature, reply length and seed.
    """

    run_id: str
    method: Method
    judge: str | None = None
    kinds: tuple[PromptKind, ...] = PROMPT_KINDS
    indices: Collection[int] | None = None
    template: Path | None = None
    sampling: SamplingParams = field(default_factory=SamplingParams)


@dataclass(frozen=True)
class JudgeSummary:
    """What a judging job did.

    Attributes:
        judge_run: the judge's run id.
        source: the verdict source, e.g. ``judge:question:tiny-llava``.
        images: images the job covers.
        verdicts: each value's count over those images (from this judge).
        skipped: images of the run left out: of another prompt kind, or that this method
            cannot judge (implicit ones for ``question``, non-Text ones for ``ocr``).
        errors: requests that failed (stored, retried by the next run).
        smoke: the judge is a random-weight smoke-test model.
    """

    judge_run: str
    source: str
    images: int
    verdicts: Counter[str]
    skipped: int
    errors: int
    seconds: float
    smoke: bool

    def lines(self) -> list[str]:
        """A short human summary."""
        counts = ", ".join(f"{self.verdicts[v]} {v}" for v in ("correct", "incorrect", "undecided"))
        lines = [f"{self.source}: {self.images} image(s) judged in {self.seconds:.1f} s: {counts}"]
        if self.skipped:
            lines.append(
                f"  {self.skipped} other image(s) skipped (another prompt kind, or not "
                "judgeable by this method)"
            )
        if self.errors:
            lines.append(
                f"  {self.errors} request(s) failed and are stored; rerun the same command to retry"
            )
        if self.smoke:
            lines.append(
                "  the judge is a smoke-test model with random weights: its verdicts mean nothing"
            )
        return lines
