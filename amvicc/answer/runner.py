"""``amvicc answer`` end to end: images, prompts, run, engine, grading, summary."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, cast

from amvicc.answer.backends import SMOKE_WARNING, VLM, open_vlm
from amvicc.answer.cli import local_settings
from amvicc.answer.engine import AnswerEngine, EngineResult, SamplingParams, WorkItem
from amvicc.answer.images import (
    ImageSet,
    folder_images,
    generated_images,
    hf_dataset_images,
    with_input_path,
)
from amvicc.answer.prompting import ANSWER_TEMPLATE, PromptTemplate, load_template
from amvicc.catalogue import Catalogue, PromptKind
from amvicc.cli import api_settings, catalogue_from_args, label_policy, open_store
from amvicc.errors import UserError
from amvicc.store import RunRecord, RunSpec, Store

log = logging.getLogger(__name__)


def run_answer(args: argparse.Namespace) -> int:
    """Answer the selected questions, store every reply, grade, and print a summary.

    Returns:
        0 when every question has a reply; 1 when some requests failed (they are stored as
        errors and retried by rerunning the same command).
    """
    catalogue = catalogue_from_args(args)
    template = load_template(args.template, default=ANSWER_TEMPLATE)
    store = open_store(args, create=True)
    image_set = _images(args, store, catalogue)
    images = image_set.images[: args.limit] if args.limit else image_set.images

    vlm = open_vlm(
        args.model,
        api=api_settings(args),
        local=local_settings(args),
    )
    if vlm.smoke:
        log.warning("%s %s", vlm.name, SMOKE_WARNING)
    from amvicc.grade.cli import judge_from_args

    judge = judge_from_args(args)  # a bad judge setting fails before any request
    sampling = SamplingParams(args.temperature, args.max_tokens, args.seed)
    run = store.start_run(_spec(args, vlm, catalogue, template, sampling))
    store.sweep_temporary()

    items = [
        WorkItem(
            question=catalogue.question(image.index),
            image_key=image.image_key,
            image=image.image,
            prompt=prompt,
            sample=sample,
            image_id=image.image_id,
            input_path=image.input_path,
            extra={"prompt_kind": image.prompt_kind} if image.prompt_kind else {},
        )
        for image in map(with_input_path, images)
        for prompt in [template.render(question=catalogue.question(image.index))]
        for sample in range(args.repeats)
    ]
    engine = AnswerEngine(store, run, vlm, sampling, retries=args.max_retries)
    todo = engine.pending(items)
    done_before = len(items) - len(todo)
    log.info(
        "run %s: %d to ask%s",
        run.run_id,
        len(todo),
        f" ({done_before} of {len(items)} already answered)" if done_before else "",
    )
    result = _answer(args, store, run, engine, todo)
    failed = len(engine.pending(items))
    store.finish_run(
        run.run_id,
        "finished" if failed == 0 else "failed",
        {
            "items": len(items),
            "answered": len(items) - failed,
            "errors": failed,
            "asked_now": len(todo),
            "seconds": round(result.seconds, 3),
            "skipped_images": image_set.problems,
        },
    )

    from amvicc.grade.grading import grade_run

    # The whole run is graded, including questions answered by earlier, other selections.
    summary = grade_run(store, run.run_id, judge=judge, progress=not args.quiet)
    rate = f", {result.answered / result.seconds:.1f}/s" if result.seconds > 0 and todo else ""
    print(
        f"answered {len(items) - failed}/{len(items)} ({len(todo)} asked now{rate}); "
        f"run {run.run_id} in {store.root}"
    )
    for line in summary.lines():
        print(line)
    if failed:
        for message, count in result.error_kinds.most_common(3):
            print(f"  {count} x {message}", file=sys.stderr)
        print(
            f"{failed} request(s) failed and are stored as errors; rerun the same command to "
            "retry them",
            file=sys.stderr,
        )
        return 1
    return 0


def _images(args: argparse.Namespace, store: Store, catalogue: Catalogue) -> ImageSet:
    """The images to ask about, checked; stops on unusable ones unless --skip-missing."""
    indices = [q.index for q in catalogue]
    if args.images is not None:
        image_set = folder_images(args.images, indices)
    elif args.hf_dataset is not None:
        image_set = hf_dataset_images(args.hf_dataset, indices)
    else:
        kinds: tuple[PromptKind, ...] = (
            ("implicit", "explicit") if args.kind == "both" else (args.kind,)
        )
        image_set = generated_images(store, args.generated, indices, kinds)
    if image_set.problems:
        message = image_set.problem_message(len(indices))
        if not args.skip_missing:
            raise UserError(f"{message}; add them, or pass --skip-missing to answer the rest")
        log.warning("%s; answering the rest (--skip-missing)", message)
    if not image_set.images:
        raise UserError(f"no usable image in {image_set.source} for the selected questions")
    return image_set


def _spec(
    args: argparse.Namespace,
    vlm: VLM,
    catalogue: Catalogue,
    template: PromptTemplate,
    sampling: SamplingParams,
) -> RunSpec:
    """The run: what defines its replies (outputs) and what else is worth recording."""
    outputs: dict[str, Any] = {
        "images": f"generated:{args.generated}" if args.generated else "mmvp",
        "template_sha256": template.sha256,
        "catalogue_sha256": catalogue.sha256,
        "label_policy": label_policy(args),
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed,
        **vlm.outputs(),
    }
    settings: dict[str, Any] = {
        **vlm.describe(),
        "smoke_test_model": vlm.smoke,
        "image_source": str(args.images.resolve())
        if args.images
        else args.hf_dataset or args.generated,
        # absolute, so `amvicc grade` finds it from any folder
        "catalogue": str(args.catalogue.resolve()) if args.catalogue else None,
        "template": template.name,
        "repeats": args.repeats,
        "categories": args.categories,
        "index": sorted(args.index) if args.index else None,
        "limit": args.limit,
    }
    return RunSpec(
        stage="answer",
        model=args.model,
        outputs=outputs,
        settings=settings,
        label_policy=label_policy(args),
        catalogue_sha256=catalogue.sha256,
        smoke=vlm.smoke,
        command=args.command_line,
        name=args.run,
    )


def _answer(
    args: argparse.Namespace,
    store: Store,
    run: RunRecord,
    engine: AnswerEngine,
    todo: list[WorkItem],
) -> EngineResult:
    from tqdm import tqdm

    bar = cast(
        "tqdm[object]",
        tqdm(
            total=len(todo),
            unit="req",
            desc=engine.vlm.name,
            disable=args.quiet or not todo,
            dynamic_ncols=True,
        ),
    )
    try:
        return engine.answer_sync(todo, progress=bar)
    except KeyboardInterrupt:
        store.finish_run(run.run_id, "interrupted")
        raise
    except UserError:
        store.finish_run(run.run_id, "failed")
        raise
    finally:
        bar.close()
