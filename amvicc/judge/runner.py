"""``amvicc judge``: automatic image judges, stored as automatic raters.

The VLM methods (``rubric``, ``question``) run on the answering stage's engine: every judge
reply is stored verbatim as a response of a ``judge`` run (resumable, concurrent, retried like
answers), then read into image verdicts with the source ``judge:<method>:<model>``. The OCR
method reads each Text image once and stores its verdict as it goes. Judge verdicts never
mix with human ones; the report compares the two.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from amvicc.catalogue import Catalogue, Prompt
from amvicc.errors import UserError
from amvicc.extras import require_extra
from amvicc.judge.methods import (
    RUBRIC_TEMPLATE,
    Decision,
    Method,
    decide_question,
    decide_rubric,
    rubric_context,
)
from amvicc.judge.ocr import (
    OCR_MODEL,
    TextExpectation,
    judge_reading,
    read_text,
    text_expectation,
)
from amvicc.judge.options import JudgeOptions, JudgeSummary
from amvicc.lifecycle import RunLifecycle
from amvicc.provenance import canonical_json
from amvicc.rubrics import Rubric, load_rubrics
from amvicc.store import (
    ResponseRecord,
    RunRecord,
    RunSpec,
    Store,
    VerdictRecord,
    image_judge_source,
)
from amvicc.vlm import SMOKE_WARNING, open_vlm
from amvicc.vlm.engine import AnswerEngine, WorkItem
from amvicc.vlm.images import SourceImage, generated_images
from amvicc.vlm.prompting import ANSWER_TEMPLATE, PromptTemplate, load_template

log = logging.getLogger(__name__)

# (question index, prompt kind) -> prompt
Prompts = dict[tuple[int, str], Prompt]


def run_judge(options: JudgeOptions, *, store: Store, catalogue: Catalogue) -> JudgeSummary:
    """Judge the images of a generation run and store the verdicts.

    Args:
        options: the job.
        store: the workspace.
        catalogue: the whole catalogue the images were made from (pairs are looked up in it).

    Raises:
        UserError: unknown run, no image to judge, a judge that cannot be opened.
    """
    started = time.perf_counter()
    if options.method == "ocr":
        require_extra("ocr", "--method ocr reads the text in images with RapidOCR")
    kinds = ("explicit",) if options.method in ("question", "ocr") else options.kinds
    wanted = set(options.indices if options.indices is not None else [q.index for q in catalogue])
    store.run(options.run_id)  # an unknown run fails before anything is read
    prompts: Prompts = {(p.question.index, p.kind): p for p in catalogue.prompts()}
    partners = {
        q.index: other.index
        for first, second in catalogue.pairs().values()
        for q, other in ((first, second), (second, first))
    }
    made = [
        row
        for row in store.images(run_id=options.run_id)
        if row.status == "ok" and row.question_index in wanted
    ]
    # Only the files of images this method judges are read.
    chosen = {
        row.question_index
        for row in made
        if row.prompt_kind in kinds
        and _applies(options.method, row.question_index, prompts, partners)
    }
    if not chosen:
        raise UserError(
            f"no image of run {options.run_id} can be judged with --method {options.method} "
            "(ocr judges explicit Text images; question judges explicit images)"
        )
    image_set = generated_images(store, options.run_id, chosen, kinds)
    if image_set.problems:
        log.warning("%s; judging the rest", image_set.problem_message(len(chosen)))
    judgeable = list(image_set.images[: options.limit] if options.limit else image_set.images)
    skipped = len(made) - len(judgeable)
    if options.method == "ocr":
        run, errors = _judge_ocr(store, judgeable, prompts, partners, options)
        source, smoke = image_judge_source("ocr", OCR_MODEL), False
    else:
        run, errors = _judge_with_vlm(store, judgeable, prompts, options)
        source, smoke = image_judge_source(options.method, run.model), bool(run.smoke)
    ids = {image.image_id for image in judgeable}
    values = Counter(v.value for v in store.verdicts(source=source) if v.image_id in ids)
    return JudgeSummary(
        judge_run=run.run_id,
        source=source,
        images=len(judgeable),
        verdicts=values,
        skipped=skipped,
        errors=errors,
        seconds=time.perf_counter() - started,
        smoke=smoke,
    )


def _applies(method: Method, index: int, prompts: Prompts, partners: dict[int, int]) -> bool:
    if method != "ocr":
        return True
    prompt = prompts[(index, "explicit")]
    return (
        prompt.question.category.code == "tx" and _expectation(index, prompts, partners) is not None
    )


def _expectation(index: int, prompts: Prompts, partners: dict[int, int]) -> TextExpectation | None:
    partner = prompts.get((partners[index], "explicit")) if index in partners else None
    return text_expectation(prompts[(index, "explicit")], partner)


def _judge_spec(
    store: Store, options: JudgeOptions, model: str, outputs: dict[str, Any], smoke: bool
) -> RunSpec:
    generation = store.run(options.run_id)
    if generation.stage != "generate":
        raise UserError(
            f"run {options.run_id!r} is an {generation.stage} run; judge a generate run"
        )
    return RunSpec(
        stage="judge",
        model=model,
        outputs={"method": options.method, "images": f"generated:{options.run_id}", **outputs},
        settings={"kinds": list(options.kinds), "limit": options.limit},
        label_policy=cast("Any", generation.label_policy),
        catalogue_sha256=generation.catalogue_sha256,
        smoke=smoke,
        command=options.command,
        name=options.run_name,
    )


def _judge_with_vlm(
    store: Store,
    images: Sequence[SourceImage],
    prompts: Prompts,
    options: JudgeOptions,
) -> tuple[RunRecord, int]:
    if not options.judge:
        raise UserError(f"--method {options.method} needs --judge MODEL (a VLM)")
    vlm = open_vlm(options.judge, api=options.api, local=options.local)
    if vlm.smoke:
        log.warning("%s %s", vlm.name, SMOKE_WARNING)
    rubrics = load_rubrics() if options.method == "rubric" else {}
    template = load_template(
        options.template, default=RUBRIC_TEMPLATE if options.method == "rubric" else ANSWER_TEMPLATE
    )
    outputs = {
        "template_sha256": template.sha256,
        "temperature": options.sampling.temperature,
        "max_tokens": options.sampling.max_tokens,
        "seed": options.sampling.seed,
        **vlm.outputs(),
    }
    if rubrics:
        outputs["rubrics"] = sorted(r.version_id for r in rubrics.values())
    spec = _judge_spec(store, options, options.judge, outputs, vlm.smoke)
    with RunLifecycle(store, spec, progress=options.progress, unit="img") as life:
        run = life.start()
        items = [_judge_item(image, prompts, rubrics, template, options) for image in images]
        engine = AnswerEngine(store, run, vlm, options.sampling, retries=options.api.max_retries)
        todo = engine.pending(items)
        log.info("judge run %s: %d of %d image(s) to ask about", run.run_id, len(todo), len(items))
        _, failed = engine.ask_and_finish(life, items, todo, desc=f"judge {options.method}")
    # Every stored reply of the run is read into a verdict (offline, idempotent).
    _store_vlm_verdicts(store, run, options, rubrics, template.name, prompts)
    return run, failed


def _judge_item(
    image: SourceImage,
    prompts: Prompts,
    rubrics: dict[str, Rubric],
    template: PromptTemplate,
    options: JudgeOptions,
) -> WorkItem:
    """What the judge is asked about one image: its rubric, or the image's question."""
    prompt = prompts[(image.index, image.prompt_kind or "explicit")]
    text = (
        template.render(**rubric_context(prompt, rubrics[prompt.question.category.code]))
        if rubrics
        else template.render(question=prompt.question)
    )
    return WorkItem(
        question=prompt.question,
        image_key=image.image_key,
        image=image.image,
        prompt=text,
        image_id=image.image_id,
        input_path=image.input_path,
        extra={"prompt_kind": prompt.kind, "method": options.method},
    )


def _store_vlm_verdicts(
    store: Store,
    run: RunRecord,
    options: JudgeOptions,
    rubrics: dict[str, Rubric],
    template: str,
    prompts: Prompts,
) -> None:
    """Read every stored reply of the judge run into a verdict (offline, idempotent)."""
    source = image_judge_source(options.method, run.model)
    verdicts = []
    for response in store.responses(run_id=run.run_id):
        if response.status != "ok" or response.image_id is None:
            continue
        kind = json.loads(response.request_json).get("prompt_kind", "explicit")
        prompt = prompts[(response.question_index, kind)]
        decision = (
            decide_rubric(response.text)
            if options.method == "rubric"
            else decide_question(response.text, prompt)
        )
        rubric = rubrics.get(prompt.question.category.code)
        verdicts.append(
            _verdict(
                source,
                decision,
                response.image_id,
                run,
                rubric,
                _vlm_detail(response, options, template, decision),
            )
        )
    store.add_verdicts(verdicts)


def _vlm_detail(
    response: ResponseRecord, options: JudgeOptions, template: str, decision: Decision
) -> dict[str, Any]:
    return {
        "method": options.method,
        "model": options.judge,
        "template": template,
        "temperature": options.sampling.temperature,
        "seed": json.loads(response.request_json).get("seed"),
        "response_id": response.response_id,
        "reply": response.text,
        "rule": decision.rule,
    }


def _verdict(
    source: str,
    decision: Decision,
    image_id: str,
    run: RunRecord,
    rubric: Rubric | None,
    detail: dict[str, Any],
) -> VerdictRecord:
    return VerdictRecord(
        source=source,
        value=decision.value,
        image_id=image_id,
        run_id=run.run_id,
        rubric_version=rubric.version_id if rubric else None,
        detail_json=canonical_json(detail),
    )


def _judge_ocr(
    store: Store,
    images: Sequence[SourceImage],
    prompts: Prompts,
    partners: dict[int, int],
    options: JudgeOptions,
) -> tuple[RunRecord, int]:
    from importlib.metadata import version

    from amvicc.judge.ocr import MIN_SCORE

    outputs = {"engine": f"rapidocr {version('rapidocr')}", "min_score": MIN_SCORE}
    spec = _judge_spec(store, options, OCR_MODEL, outputs, smoke=False)
    source = image_judge_source("ocr", OCR_MODEL)

    def read(chosen: Sequence[SourceImage]) -> set[str]:
        ids = [image.image_id for image in chosen if image.image_id is not None]
        judged = store.latest_image_values(source, ids)
        return {image_id for image_id in ids if image_id in judged}

    with RunLifecycle(store, spec, progress=options.progress, unit="img") as life:
        run = life.start()
        done = read(images)
        todo = [image for image in images if image.image_id not in done]
        log.info("judge run %s: %d of %d image(s) to read", run.run_id, len(todo), len(images))
        feed = life.share(todo, _image_key, done=read)
        bar = life.progress_bar(len(todo), desc="judge ocr")
        while (image := feed.take_one()) is not None:
            verdict = _ocr_verdict(image, prompts, partners, source, run)
            store.add_verdicts([verdict])
            bar.update(1)
        life.finish(
            "finished",
            {"images": len(images), "read_now": life.taken, "read_elsewhere": life.elsewhere},
        )
    return run, 0


def _image_key(image: SourceImage) -> str:
    return image.image_id or ""


def _ocr_verdict(
    image: SourceImage,
    prompts: Prompts,
    partners: dict[int, int],
    source: str,
    run: RunRecord,
) -> VerdictRecord:
    """Read one Text image and judge whether it shows the expected text."""
    assert image.image_id is not None
    expectation = _expectation(image.index, prompts, partners)
    assert expectation is not None
    detail: dict[str, Any] = {
        "method": "ocr",
        "model": OCR_MODEL,
        "expects": expectation.text,
        "present": expectation.present,
        "unlike": list(expectation.unlike),
    }
    try:
        reading = read_text(image.image.data)
    except ValueError as err:
        decision = Decision("undecided", "unreadable-image")
        detail["error"] = str(err)
    else:
        correct = judge_reading(reading, expectation)
        decision = Decision(
            "correct" if correct else "incorrect",
            "found" if reading.contains(expectation.text) else "not-found",
        )
        detail.update(texts=list(reading.texts), scores=list(reading.scores))
    detail["rule"] = decision.rule
    return _verdict(source, decision, image.image_id, run, None, detail)
