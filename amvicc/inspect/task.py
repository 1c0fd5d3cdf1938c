"""The ``amvicc/mmvp`` Inspect task: the catalogue's questions, scored by amvicc's extractor.

Built on ``inspect_ai``'s public API only (``Task``, ``Sample``, ``generate``, ``@scorer``,
``@metric``). Each question is one sample (its id is the MMVP index): a user message with the
image, then the question rendered by amvicc's answer template (the same text ``amvicc answer``
sends; a template's ``system`` becomes a system message). Epochs are samples k = 1..n, as
``amvicc answer --repeats`` makes them.

The scorer is amvicc's deterministic extractor: a reply it reads as the correct option is
``C``, the other option ``I``, and a reply it cannot decide Inspect's no-answer ``N`` (counted
as not correct, AMVICC's rule for missing answers), never a guess. Metrics, over every epoch
(mean@k): per-category individual accuracy and pair accuracy (a pair counts when both of its
questions are correct in the same epoch), plus ``all``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState, generate

from amvicc.catalogue import Catalogue, Question, load_catalogue, parse_categories
from amvicc.catalogue.indices import parse_index_ranges
from amvicc.errors import UserError
from amvicc.extract import EXTRACTOR_VERSION, extract_choice
from amvicc.vlm.engine import SamplingParams
from amvicc.vlm.images import folder_images
from amvicc.vlm.prompting import ANSWER_TEMPLATE, PromptTemplate, load_template, render_with_system

ALL = "all"


@task
def mmvp(
    images: str,
    catalogue: str | None = None,
    categories: str | Sequence[str] | None = None,
    index: str | int | None = None,
    template: str | None = None,
    epochs: int = 1,
    original_labels: bool = False,
    skip_missing: bool = False,
) -> Task:
    """MMVP's questions (or another paired catalogue's) about their images, through Inspect.

    Args:
        images: the folder of the images (``<index>.jpg``, or MMVP's Hugging Face snapshot).
        catalogue: a catalogue CSV (default: the shipped AMVICC catalogue, MMVP's 300).
        categories: category codes, ``"tx,qc"`` or a list (default: all nine).
        index: MMVP indices, e.g. ``"1-20,99"`` (default: all).
        template: a jinja2 prompt template (default: amvicc's ``answer.jinja``).
        epochs: samples per question (sample k is epoch k).
        original_labels: keep MMVP's four known wrong labels instead of correcting them.
        skip_missing: ask only the questions whose image is there (by default a missing or
            unreadable image stops the task before anything is asked, naming them all).
    """
    questions = _questions(catalogue, categories, index, original_labels)
    prompt = load_template(template, default=ANSWER_TEMPLATE)
    found = folder_images(Path(images).expanduser(), [q.index for q in questions])
    if found.problems and not skip_missing:
        raise UserError(
            found.problem_message(len(questions)) + "; -T skip_missing=true asks the rest"
        )
    by_index = {image.index: image.image.data_url for image in found.images}
    samples = [
        _sample(q, by_index[q.index], prompt, questions) for q in questions if q.index in by_index
    ]
    defaults = SamplingParams()
    return Task(
        dataset=MemoryDataset(samples, name="mmvp"),
        solver=generate(),
        scorer=extractor(catalogue, original_labels),
        epochs=epochs,
        config=GenerateConfig(temperature=defaults.temperature, max_tokens=defaults.max_tokens),
        metadata={
            "catalogue": questions.source,
            "catalogue_sha256": questions.sha256,
            "label_policy": questions.label_policy,
            "template": prompt.name,
            "template_sha256": prompt.sha256,
        },
    )


def _questions(
    path: str | None,
    categories: str | Sequence[str] | None,
    index: str | int | None,
    original_labels: bool,
) -> Catalogue:
    """The catalogue, narrowed to the categories and indices asked for."""
    loaded = load_catalogue(path, labels="original" if original_labels else "corrected")
    codes = categories.split(",") if isinstance(categories, str) else categories
    chosen = parse_categories(codes) if codes else None
    ranges = parse_index_ranges(str(index)) if index is not None and str(index).strip() else None
    selected = loaded.select(categories=chosen, indices=ranges)
    if not len(selected):
        raise UserError("no question of the catalogue is in the categories and indices asked for")
    return selected


def _sample(question: Question, image: str, prompt: PromptTemplate, catalogue: Catalogue) -> Sample:
    system, text = render_with_system(prompt, question=question)
    messages: list[ChatMessage] = [ChatMessageSystem(content=system)] if system else []
    messages.append(ChatMessageUser(content=[ContentImage(image=image), ContentText(text=text)]))
    return Sample(
        id=question.index,
        input=messages,
        target=question.answer,
        metadata={
            "index": question.index,
            "pair": question.pair,
            "category": question.category.code,
            "question": question.text,
            "options": question.options_text,
            "answer": question.answer,
            "label_policy": catalogue.label_policy,
        },
    )


@metric(scores="unreduced")
def individual_accuracy() -> Metric:
    """Per category (and ``all``): correct replies over questions x epochs (mean@k)."""

    def compute(scores: list[SampleScore]) -> Value:
        groups: dict[str, list[float]] = defaultdict(list)
        for item in scores:
            correct = float(item.score.value == CORRECT)
            groups[ALL].append(correct)
            groups[str(_meta(item)["category"])].append(correct)
        return {f"individual_{k}": sum(v) / len(v) for k, v in sorted(groups.items())}

    return compute


@metric(scores="unreduced")
def pair_accuracy() -> Metric:
    """Per category (and ``all``): pairs with both questions correct in one epoch.

    Over pairs x epochs; a pair missing one of its questions counts as not both correct.
    """

    def compute(scores: list[SampleScore]) -> Value:
        pairs: dict[tuple[str, int, int], list[bool]] = defaultdict(list)
        for item in scores:
            meta = _meta(item)
            key = (str(meta["category"]), int(meta["pair"]), int(meta["epoch"]))
            pairs[key].append(item.score.value == CORRECT)
        groups: dict[str, list[float]] = defaultdict(list)
        for (category, _, _), correct in pairs.items():
            both = float(len(correct) == 2 and all(correct))
            groups[ALL].append(both)
            groups[category].append(both)
        return {f"pair_{k}": sum(v) / len(v) for k, v in sorted(groups.items())}

    return compute


def _meta(item: SampleScore) -> dict[str, Any]:
    return item.score.metadata or {}


@scorer(metrics=[individual_accuracy(), pair_accuracy()])
def extractor(catalogue: str | None = None, original_labels: bool = False) -> Scorer:
    """The extractor of amvicc as an Inspect scorer: the option the reply chose, or no answer.

    Args:
        catalogue: the catalogue the task asks (default: the shipped one).
        original_labels: score against MMVP's original labels.
    """
    questions = load_catalogue(catalogue, labels="original" if original_labels else "corrected")

    async def score(state: TaskState, target: Target) -> Score:
        question = questions.question(int(state.metadata["index"]))
        found = extract_choice(state.output.completion, question)
        if found.choice is None:
            value = NOANSWER
        else:
            value = CORRECT if found.choice == question.answer else INCORRECT
        return Score(
            value=value,
            answer=found.choice,
            explanation=f"extractor v{EXTRACTOR_VERSION}: {found.rule}",
            metadata={
                "category": question.category.code,
                "pair": question.pair,
                "epoch": state.epoch,
            },
        )

    return score
