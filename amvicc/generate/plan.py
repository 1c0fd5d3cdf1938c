"""Which images a run makes: the selection's prompts times samples, minus what is done."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from amvicc.catalogue import Catalogue, Prompt, PromptKind
from amvicc.errors import UserError
from amvicc.generate.seeding import image_seed
from amvicc.store import ImageRecord

Slot = tuple[int, str, int]


@dataclass(frozen=True)
class ImageJob:
    """One image to make: a prompt, its sample number and its seed."""

    prompt: Prompt
    sample: int
    seed: int

    @property
    def slot(self) -> Slot:
        """Where the image goes in the store: (question index, prompt kind, sample)."""
        return (self.prompt.question.index, self.prompt.kind, self.sample)


def plan_jobs(
    catalogue: Catalogue,
    *,
    kinds: Collection[PromptKind],
    limit: int | None,
    num_images: int,
    seed: int,
) -> list[ImageJob]:
    """Every image the selection asks for, prompt by prompt, in catalogue order.

    Args:
        catalogue: the (already selected) questions.
        kinds: ``implicit`` and/or ``explicit``.
        limit: keep only the first ``limit`` prompts.
        num_images: samples per prompt.
        seed: the base seed.

    Raises:
        UserError: nothing is selected.
    """
    prompts = catalogue.prompts(kinds)[:limit]
    if not prompts or num_images < 1:
        raise UserError(
            "nothing to generate: the selection (--categories/--index/--prompts/--limit) "
            "has no prompt; widen it"
        )
    return [
        ImageJob(p, sample, image_seed(seed, p.question.index, p.kind, sample))
        for p in prompts
        for sample in range(num_images)
    ]


def jobs_to_do(
    jobs: Sequence[ImageJob], done: Collection[Slot], stored: Sequence[ImageRecord]
) -> list[ImageJob]:
    """The jobs whose image is not made yet.

    Args:
        jobs: the planned images.
        done: slots already made for this configuration (``Store.done_image_slots``).
        stored: this configuration's current images; a slot whose stored prompt differs from
            the catalogue's (the prompt was edited) is made again.
    """
    stored_prompts: dict[Slot, str] = {
        (r.question_index, r.prompt_kind, r.sample): r.prompt for r in stored
    }
    return [
        job
        for job in jobs
        if job.slot not in done or stored_prompts.get(job.slot, job.prompt.text) != job.prompt.text
    ]
