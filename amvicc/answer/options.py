"""What an answering run is asked to do, and what it reports back."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from amvicc.catalogue import PromptKind
from amvicc.vlm.engine import SamplingParams
from amvicc.vlm.options import ModelRunOptions
from amvicc.vlm.perturb import Perturbation


@dataclass(frozen=True)
class AnswerOptions(ModelRunOptions):
    """Everything ``amvicc answer`` takes besides the catalogue and the store.

    Exactly one image source is given: ``images``, ``hf_dataset`` or ``generated``. The model
    and run options (``api``, ``local``, ``limit``, ``run_name``, ``command``, ``progress``)
    are :class:`~amvicc.vlm.options.ModelRunOptions`'.

    Attributes:
        model: ``openai:<model>``, ``hf:<repo or folder>``, ``tiny-llava``, or a name served at
            ``api.base_url``.
        images: a folder of MMVP images (``<index>.jpg``, or the Hugging Face snapshot).
        hf_dataset: a Hugging Face dataset of MMVP's images, e.g. ``MMVP/MMVP``.
        generated: a generation run whose images are asked about instead.
        kinds: with ``generated``, the prompt kinds whose images are asked about.
        skip_missing: answer the rest when some images are missing or unreadable.
        template: a jinja2 prompt template (None: the shipped ``answer.jinja``).
        repeats: samples per question (for mean@k and pass@k).
        sampling: temperature, reply length and base seed.
        perturbation: degrade every image before it is sent (``grain``, ``blur``, ``jpeg``,
            ``downscale``); the run is its own run with this condition, next to the clean one.
        ladder: ask GRIP's question ladder instead of the questions: this ``ladder.jsonl``
            (``amvicc scenes build`` writes one) gives each scene image's five rungs; the run
            is a ``ladder`` run of its own, graded by the typed comparator. Needs ``images``.
    """

    model: str
    images: Path | None = None
    hf_dataset: str | None = None
    generated: str | None = None
    kinds: tuple[PromptKind, ...] = ("explicit",)
    skip_missing: bool = False
    template: Path | None = None
    repeats: int = 1
    sampling: SamplingParams = field(default_factory=SamplingParams)
    perturbation: Perturbation | None = None
    ladder: Path | None = None


@dataclass(frozen=True)
class AnswerSummary:
    """What an answering run did.

    Attributes:
        run_id: the stored run.
        store_root: the workspace.
        items: questions x images x repeats the run covers.
        answered: of which have a reply now.
        asked_now: requests sent by this call (the rest were answered before).
        answered_now: of which got a reply.
        seconds: time spent asking.
        error_kinds: the commonest failure messages with their counts.
        condition: the perturbation the images were given (``grain=0.1``); empty for none.
        elsewhere: items another process answering the same run answered, or held, meanwhile.
        ladder: the run asked the question ladder's rungs (each item is one rung of one image).
    """

    run_id: str
    store_root: str
    items: int
    answered: int
    asked_now: int
    answered_now: int
    seconds: float
    error_kinds: Counter[str] = field(default_factory=Counter)
    condition: str = ""
    elsewhere: int = 0
    ladder: bool = False

    @property
    def failed(self) -> int:
        """Items whose request failed (stored as errors; rerunning retries them)."""
        return self.items - self.answered

    def lines(self) -> list[str]:
        """One line for the terminal (the failures go to :meth:`error_lines`)."""
        rate = ""
        if self.seconds > 0 and self.asked_now:
            rate = f", {self.answered_now / self.seconds:.1f}/s"
        condition = f" [{self.condition}]" if self.condition else ""
        shared = f", {self.elsewhere} by another process" if self.elsewhere else ""
        what = " ladder rungs" if self.ladder else ""
        return [
            f"answered {self.answered}/{self.items}{what}{condition} ({self.asked_now} asked now"
            f"{rate}{shared}); run {self.run_id} in {self.store_root}"
        ]

    def error_lines(self) -> list[str]:
        """What failed and how to retry it; empty when nothing failed."""
        if not self.failed:
            return []
        lines = [f"  {count} x {message}" for message, count in self.error_kinds.most_common(3)]
        lines.append(
            f"{self.failed} request(s) failed and are stored as errors; rerun the same command "
            "to retry them"
        )
        return lines
