"""An answering run end to end: images, prompts, run record, engine, summary.

Grading is a stage of its own (:func:`amvicc.grade.run_grade`); ``amvicc answer`` runs it on
the run right after this one, so the two share nothing but the store.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from amvicc.answer.options import AnswerOptions, AnswerSummary
from amvicc.catalogue import Catalogue, catalogue_file, format_index_ranges
from amvicc.errors import UserError
from amvicc.ladder import LadderQuestion, ladder_sha256, load_ladder, rung_key
from amvicc.lifecycle import RunLifecycle
from amvicc.store import RunSpec, Store
from amvicc.vlm.base import SMOKE_WARNING, VLM
from amvicc.vlm.engine import AnswerEngine, WorkItem
from amvicc.vlm.images import (
    ImageSet,
    SourceImage,
    folder_images,
    generated_images,
    hf_dataset_images,
    with_input_path,
)
from amvicc.vlm.perturb import Perturbation
from amvicc.vlm.prompting import ANSWER_TEMPLATE, LADDER_TEMPLATE, PromptTemplate, load_template
from amvicc.vlm.providers import open_vlm

log = logging.getLogger(__name__)


def run_answer(
    options: AnswerOptions, *, store: Store, catalogue: Catalogue, vlm: VLM | None = None
) -> AnswerSummary:
    """Ask the model about the selected questions' images and store every reply verbatim.

    Rerunning the same options asks only what has no reply yet (failed requests included).

    Args:
        options: the model, the image source, sampling and the run's settings.
        store: the workspace the replies go to.
        catalogue: the (already selected) questions to ask.
        vlm: an already opened model for ``options.model`` (default: opened here).

    Returns:
        How many items have replies, how many were asked now, and the run's id.

    Raises:
        UserError: bad input (unknown model, missing images, no usable image); replies stored
            before it are kept and the run is marked failed or interrupted.
    """
    ladder = _ladder(options, catalogue)
    default_template = LADDER_TEMPLATE if ladder is not None else ANSWER_TEMPLATE
    template = load_template(options.template, default=default_template)
    image_set = _images(options, store, catalogue)
    images = image_set.images[: options.limit] if options.limit else image_set.images
    extras: dict[str, dict[str, Any]] = {}
    if options.perturbation is not None:
        images, extras = _perturbed(images, options.perturbation)
    vlm = vlm or open_vlm(options.model, api=options.api, local=options.local)
    if vlm.smoke:
        log.warning("%s %s", vlm.name, SMOKE_WARNING)
    spec = _spec(options, vlm, catalogue, template, ladder)
    with RunLifecycle(store, spec, progress=options.progress, unit="req") as life:
        run = life.start()
        items = _work_items(images, catalogue, template, ladder, extras, options.repeats)
        engine = AnswerEngine(store, run, vlm, options.sampling, retries=options.api.max_retries)
        todo = engine.pending(items)
        done_before = len(items) - len(todo)
        log.info(
            "run %s: %d to ask%s",
            run.run_id,
            len(todo),
            f" ({done_before} of {len(items)} already answered)" if done_before else "",
        )
        result, failed = engine.ask_and_finish(
            life, items, todo, summary={"skipped_images": image_set.problems}
        )
    return AnswerSummary(
        run_id=run.run_id,
        store_root=str(store.root),
        items=len(items),
        answered=len(items) - failed,
        asked_now=life.taken,
        answered_now=result.answered,
        elsewhere=life.elsewhere,
        seconds=result.seconds,
        error_kinds=result.error_kinds,
        condition=run.condition,
        ladder=ladder is not None,
    )


def _work_items(
    images: Sequence[SourceImage],
    catalogue: Catalogue,
    template: PromptTemplate,
    ladder: Ladder | None,
    extras: dict[str, dict[str, Any]],
    repeats: int,
) -> list[WorkItem]:
    """Every (image, question or rung, sample) to ask, with what each reply records."""
    return [
        WorkItem(
            question=catalogue.question(image.index),
            image_key=image_key,
            image=image.image,
            prompt=prompt,
            sample=sample,
            image_id=image.image_id,
            input_path=image.input_path,
            extra={
                **({"prompt_kind": image.prompt_kind} if image.prompt_kind else {}),
                **({"image_converted": image.converted} if image.converted else {}),
                **extras.get(image.image.sha256, {}),
                **extra,
            },
        )
        for image in map(with_input_path, images)
        for image_key, prompt, extra in _prompts(image, catalogue, template, ladder)
        for sample in range(repeats)
    ]


Ladder = dict[int, tuple[LadderQuestion, ...]]


def _ladder(options: AnswerOptions, catalogue: Catalogue) -> Ladder | None:
    """The rungs to ask (None: the catalogue's questions), checked against the selection.

    Raises:
        UserError: the ladder is asked of other images than a scene folder's, or it lacks
            the rungs of a selected image.
    """
    if options.ladder is None:
        return None
    if options.images is None:
        raise UserError(
            "the question ladder is asked about scene images (--images DIR of `amvicc scenes "
            "build`); its answers are derived from the scenes, not from generated images"
        )
    ladder = load_ladder(options.ladder)
    lacking = [q.index for q in catalogue if q.index not in ladder]
    if lacking:
        raise UserError(
            f"{options.ladder} has no rungs for image(s) {format_index_ranges(lacking)}; use "
            "the ladder written beside the catalogue by `amvicc scenes build`"
        )
    return ladder


def _prompts(
    image: SourceImage, catalogue: Catalogue, template: PromptTemplate, ladder: Ladder | None
) -> list[tuple[str, str, dict[str, Any]]]:
    """What to ask about one image: (image key, prompt, what the reply records) per question.

    A plain run asks the image's question once. A ladder run asks each rung, keyed
    ``rung:<level>``, and records the rung with the reply, so grading and the report read
    the expected answer from the store alone.
    """
    question = catalogue.question(image.index)
    if ladder is None:
        return [(image.image_key, template.render(question=question), {})]
    return [
        (
            rung_key(rung.level),
            template.render(question=question, rung=rung),
            {"rung": rung.manifest(), "category": question.category.code},
        )
        for rung in ladder[image.index]
    ]


def _perturbed(
    images: Sequence[SourceImage], perturbation: Perturbation
) -> tuple[tuple[SourceImage, ...], dict[str, dict[str, Any]]]:
    """The images as the model is to see them, and what each reply records about its image.

    A perturbed image is a new file: it goes to the workspace under its own hash (the
    generated image's path is not its place), and each reply names the image it came from.
    """
    changed: list[SourceImage] = []
    extras: dict[str, dict[str, Any]] = {}
    for image in images:
        result = perturbation.perturb(image.image)
        perturbed = result.image
        changed.append(replace(image, image=perturbed, input_path=None))
        extras[perturbed.sha256] = {
            "perturbation": perturbation.condition,
            "source_image_sha256": image.image.sha256,
            **({"perturbation_converted": result.conversion} if result.conversion else {}),
        }
    return tuple(changed), extras


def _images(options: AnswerOptions, store: Store, catalogue: Catalogue) -> ImageSet:
    """The images to ask about, checked; stops on unusable ones unless ``skip_missing``."""
    indices = [q.index for q in catalogue]
    if options.images is not None:
        image_set = folder_images(options.images, indices)
    elif options.hf_dataset is not None:
        image_set = hf_dataset_images(options.hf_dataset, indices)
    elif options.generated is not None:
        image_set = generated_images(store, options.generated, indices, options.kinds)
    else:
        raise UserError("no image source: give a folder, a Hugging Face dataset or a run")
    if image_set.problems:
        message = image_set.problem_message(len(indices))
        if not options.skip_missing:
            raise UserError(f"{message}; add them, or pass --skip-missing to answer the rest")
        log.warning("%s; answering the rest (--skip-missing)", message)
    if not image_set.images:
        raise UserError(f"no usable image in {image_set.source} for the selected questions")
    if image_set.strays:
        log.warning("%s", image_set.stray_message())
    return image_set


def _spec(
    options: AnswerOptions,
    vlm: VLM,
    catalogue: Catalogue,
    template: PromptTemplate,
    ladder: Ladder | None = None,
) -> RunSpec:
    """The run: what defines its replies (outputs) and what else is worth recording.

    A perturbed run adds its perturbation to the outputs (a plain run's outputs, hence its id
    and resumption, are what they always were) and records the configuration key of its
    clean counterpart, so the report can put the two side by side item by item.
    """
    sampling = options.sampling
    outputs: dict[str, Any] = {
        "images": f"generated:{options.generated}" if options.generated else "mmvp",
        "template_sha256": template.sha256,
        "catalogue_sha256": catalogue.sha256,
        "label_policy": catalogue.label_policy,
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed,
        **vlm.outputs(),
    }
    settings: dict[str, Any] = {
        **vlm.describe(),
        "smoke_test_model": vlm.smoke,
        "image_source": str(options.images.resolve())
        if options.images
        else options.hf_dataset or options.generated,
        # absolute, so `amvicc grade` finds it from any folder
        "catalogue": catalogue_file(catalogue),
        "template": template.name,
        "repeats": options.repeats,
        "categories": [c.code for c in catalogue.categories()],
        "index": format_index_ranges(q.index for q in catalogue),
        "limit": options.limit,
    }
    if ladder is not None and options.ladder is not None:
        # The rungs asked are part of the replies' identity: another ladder is another run.
        outputs["ladder_sha256"] = ladder_sha256(ladder)
        settings["ladder"] = str(options.ladder.resolve())
    spec = RunSpec(
        stage="ladder" if ladder is not None else "answer",
        model=options.model,
        outputs=outputs,
        settings=settings,
        label_policy=catalogue.label_policy,
        catalogue_sha256=catalogue.sha256,
        smoke=vlm.smoke,
        command=options.command,
        name=options.run_name,
    )
    if options.perturbation is None:
        return spec
    perturbation = options.perturbation
    return replace(
        spec,
        outputs={**outputs, "perturbation": perturbation.describe()},
        settings={**settings, "clean_config_key": spec.config_key},
        condition=perturbation.condition,
    )
