"""Three-stage grading of stored responses: extractor, LLM judge, human audit.

1. The deterministic extractor reads every successful response (source ``extractor``). A
   response whose stored extractor verdict came from an older extractor version is read again
   and gets a new row (the old one stays as history); the summary says how many changed.
2. An LLM judge, if given, reads only what the extractor left undecided (source
   ``llm-judge:<model>``); it never overrides the extractor. With ``all_replies`` it reads
   every reply (its verdicts still never override the extractor's); a grading procedure
   (``amvicc``) always does, under its own source, and never decides the three-stage verdict.
3. What is still undecided is the human audit queue (``Store.undecided_responses``), shown by
   the scoring UI; so is a seeded, stratified sample of the automatic decisions (per run:
   extractor-decided and LLM-judge-decided), whose audit gives each stage's error rate.

Grading reads only the store: re-grading sends no request to the answering model, and a
response already judged under the same judge settings is not sent to the judge again. Verdicts
are appended (a re-grade that changes nothing adds nothing). A verdict's value is the option the
response chose; correctness is computed against the question's answer under the run's label
policy (or, for a generated explicit image, against the option the prompt asked it to show).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from amvicc.api import gather_bounded
from amvicc.catalogue import Catalogue, Option, Question
from amvicc.errors import UserError
from amvicc.extract import EXTRACTOR_VERSION, extract_choice
from amvicc.ladder import COMPARATOR_VERSION
from amvicc.provenance import canonical_json, derive_seed
from amvicc.store import (
    EXTRACTOR_SOURCE,
    LLM_JUDGE_PREFIX,
    AuditSampleRecord,
    ResponseRecord,
    RunRecord,
    Store,
    VerdictRecord,
)
from amvicc.vlm.replies import DECIDED, final_verdict, run_catalogue

if TYPE_CHECKING:
    from amvicc.grade.llm_judge import LLMJudge
    from amvicc.grade.options import AuditSampleOptions

__all__ = ["DECIDED", "RunGrades", "correct_option", "final_verdict", "grade_run", "run_catalogue"]


@dataclass(frozen=True)
class RunGrades:
    """What grading one run found.

    Attributes:
        responses: successful responses graded.
        failed: responses whose request failed (not graded; the next answer run retries them).
        extractor: extractor verdicts by value (``a``, ``b``, ``undecided``).
        rules: how often each extractor rule decided (or left undecided).
        judge_asked: responses sent to the LLM judge now.
        judge_reused: undecided responses the judge had already judged with these settings.
        judge_values: the judge's verdicts given now, by value.
        judge_errors: judge requests that failed (asked again next time).
        audit_queue: responses still undecided: the human audit queue.
        correct: responses whose final verdict is the correct answer.
        scored: responses with a final verdict and a known correct answer.
        verdicts_added: new verdict rows.
    """

    run_id: str
    model: str
    smoke: bool
    responses: int
    failed: int
    extractor: Counter[str]
    rules: Counter[str]
    judge_asked: int = 0
    judge_reused: int = 0
    judge_values: Counter[str] = field(default_factory=Counter)
    judge_errors: int = 0
    audit_queue: int = 0
    correct: int = 0
    scored: int = 0
    verdicts_added: int = 0
    reread: int = 0
    reread_changed: int = 0
    audit_drawn: Counter[str] = field(default_factory=Counter)
    judge_source: str | None = None
    ladder: bool = False
    procedure_skipped: str | None = None

    @classmethod
    def from_stages(
        cls,
        run: RunRecord,
        responses: list[ResponseRecord],
        first: FirstStage,
        judged: JudgeTally,
        settled: Settled,
        *,
        added: int,
        judge_source: str | None,
        ladder: bool = False,
        procedure_skipped: str | None = None,
    ) -> RunGrades:
        """The account of a run graded by :func:`read_every_reply`, the judge and :func:`settle`."""
        answered = sum(1 for r in responses if r.status == "ok")
        return cls(
            run_id=run.run_id,
            model=run.model,
            smoke=bool(run.smoke),
            responses=answered,
            failed=len(responses) - answered,
            extractor=first.values,
            rules=first.rules,
            judge_asked=judged.asked,
            judge_reused=judged.reused,
            judge_values=judged.values,
            judge_errors=judged.errors,
            audit_queue=settled.audit,
            correct=settled.correct,
            scored=settled.scored,
            verdicts_added=added,
            reread=first.reread,
            reread_changed=first.reread_changed,
            audit_drawn=settled.drawn,
            judge_source=judge_source,
            ladder=ladder,
            procedure_skipped=procedure_skipped,
        )

    def lines(self) -> list[str]:
        """A short human-readable account, one fact a line."""
        smoke = " (smoke-test model: the numbers mean nothing)" if self.smoke else ""
        ex = self.extractor
        lines = [
            f"graded {'ladder ' if self.ladder else ''}run {self.run_id}{smoke}: "
            f"{self.responses} responses"
            + (f", {self.failed} failed requests not graded" if self.failed else ""),
            f"  comparator  correct {ex['correct']}  incorrect {ex['incorrect']}  "
            f"undecided {ex['undecided']}"
            if self.ladder
            else f"  extractor   (a) {ex['a']}  (b) {ex['b']}  undecided {ex['undecided']}",
        ]
        if self.procedure_skipped and self.ladder:
            lines.append(
                f"  procedure {self.procedure_skipped} grades MMVP answers only: not asked "
                "about ladder replies"
            )
        if self.reread:
            reader = (
                f"comparator v{COMPARATOR_VERSION}"
                if self.ladder
                else f"extractor v{EXTRACTOR_VERSION}"
            )
            lines.append(
                f"  {reader} re-read {self.reread} replies an older version "
                f"graded: {self.reread_changed} changed (new rows; the old ones stay as history)"
            )
        if self.judge_asked or self.judge_reused or self.judge_errors:
            jv = self.judge_values
            no = jv["not_a"] + jv["not_b"]
            lines.append(
                f"  llm judge   {self.judge_source}: asked {self.judge_asked} (reused "
                f"{self.judge_reused}): correct {jv['correct']}  incorrect {jv['incorrect']}  "
                f"no answer {jv['no_answer']}  unparseable {jv['undecided']}  "
                f"errors {self.judge_errors}"
                if self.ladder
                else f"  llm judge   {self.judge_source}: asked {self.judge_asked} (reused "
                f"{self.judge_reused}): (a) {jv['a']}  (b) {jv['b']}  no answer {jv['no_answer']}  "
                + (f"not the shown answer {no}  " if no else "")
                + f"unparseable {jv['undecided']}  errors {self.judge_errors}"
            )
        lines.append(f"  audit queue {self.audit_queue} undecided (rate them in `amvicc score`)")
        if self.audit_drawn:
            drawn = ", ".join(
                f"{n} {stratum}-decided" for stratum, n in sorted(self.audit_drawn.items())
            )
            lines.append(f"  audit sample drew {drawn} (audit them in `amvicc score`)")
        if self.scored:
            lines.append(
                f"  accuracy    {self.correct}/{self.scored} = {self.correct / self.scored:.3f} "
                "of the decided answers (quick look; `amvicc report` has the metrics)"
            )
        return lines


def correct_option(store: Store, response: ResponseRecord, question: Question) -> Option | None:
    """The option a response should have chosen, or None when no answer is right.

    MMVP's own image: the question's answer (under the catalogue's label policy). A generated
    image: the option its explicit prompt asked it to show; images from implicit prompts have
    no correct answer.
    """
    if response.image_id is None:
        return question.option(question.answer)
    try:
        kind = store.image(response.image_id).prompt_kind
    except KeyError:
        return None
    if kind == "explicit" and question.explicit_answer is not None:
        return question.option(question.explicit_answer)
    return None


def grade_run(
    store: Store,
    run_id: str,
    *,
    judge: LLMJudge | None = None,
    catalogue: Catalogue | None = None,
    progress: bool = False,
    audit_sample: AuditSampleOptions | None = None,
) -> RunGrades:
    """Grade a run's current responses in three stages (see the module docstring).

    Args:
        store: the workspace.
        run_id: the answering run.
        judge: the LLM judge for extractor-undecided responses (None: stage 2 is skipped).
        catalogue: the run's catalogue (default: the one it recorded).
        progress: show a progress bar while the judge works.
        audit_sample: draw the human audit sample of this run's automatic decisions.
    """
    run = store.run(run_id)
    catalogue = catalogue or run_catalogue(run)
    responses = store.responses(run_id=run_id)
    answered = [r for r in responses if r.status == "ok"]
    questions = {r.response_id: _question(catalogue, r) for r in answered}

    def read(response: ResponseRecord) -> Reading:
        extraction = extract_choice(response.text, questions[response.response_id])
        return Reading(extraction.value, extraction.rule, {"rule": extraction.rule})

    first = read_every_reply(
        store, run_id, answered, read, version_field="extractor_version", version=EXTRACTOR_VERSION
    )
    latest, undecided, added = first.latest, first.undecided, first.added

    judged = JudgeTally()
    targets = answered if judge is not None and judge.all_replies else undecided
    if judge is not None and judge.procedure is not None:
        # A procedure grades against the correct answer; replies without one are not its.
        targets = [
            r for r in targets if correct_option(store, r, questions[r.response_id]) is not None
        ]
    if judge is not None and targets:

        async def ask(response: ResponseRecord) -> tuple[str | None, dict[str, Any]]:
            assert judge is not None
            question = questions[response.response_id]
            correct = correct_option(store, response, question)
            judgement = await judge.judge(
                question, response.text or "", correct, response_id=response.response_id
            )
            return judgement.value, judgement.detail(judge, judge.seed_for(response.response_id))

        judged = asyncio.run(
            judge_replies(
                store, run_id, judge, targets, latest, key=judge.key, ask=ask, progress=progress
            )
        )
        added += judged.added

    def is_correct(response: ResponseRecord, value: str) -> bool | None:
        right = correct_option(store, response, questions[response.response_id])
        return answer_correct(value, right.label if right is not None else None)

    settled = settle(store, run_id, answered, is_correct, audit_sample)
    return RunGrades.from_stages(
        run,
        responses,
        first,
        judged,
        settled,
        added=added,
        judge_source=judge.source if judge is not None else None,
    )


@dataclass(frozen=True)
class Reading:
    """What stage 1 read in one reply: the verdict value, the rule, and what to store."""

    value: str
    rule: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class FirstStage:
    """What stage 1 did to a run: its values and rules, the undecided, and what it re-read."""

    values: Counter[str]
    rules: Counter[str]
    undecided: list[ResponseRecord]
    added: int
    reread: int
    reread_changed: int
    latest: dict[str, list[VerdictRecord]]


def read_every_reply(
    store: Store,
    run_id: str,
    answered: list[ResponseRecord],
    read: Callable[[ResponseRecord], Reading],
    *,
    version_field: str,
    version: int,
) -> FirstStage:
    """Stage 1 over a run: read every reply, store what changed (source ``extractor``).

    A reply already read to the same value by the same reader version adds nothing; one read
    by an older version is read again and gets a new row (the old one stays as history).
    ``version_field`` names the reader's version in the detail (missing: version 1, the
    extractor's first, which predates the field).
    """
    values: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    undecided: list[ResponseRecord] = []
    verdicts: list[VerdictRecord] = []
    reread = reread_changed = 0
    # What is stored is read inside the write transaction: an identical grading running at the
    # same time (two identical imports, each grading its run) then adds nothing twice.
    with store.transaction():
        latest = store.latest_verdicts_by_response(run_id)
        for response in answered:
            reading = read(response)
            values[reading.value] += 1
            rules[reading.rule] += 1
            if reading.value == "undecided":
                undecided.append(response)
            stored = [
                v for v in latest.get(response.response_id, ()) if v.source == EXTRACTOR_SOURCE
            ]
            if stored:
                older = json.loads(stored[-1].detail_json).get(version_field, 1) < version
                reread += older
                reread_changed += older and stored[-1].value != reading.value
                if stored[-1].value == reading.value and not older:
                    continue  # a re-grade that changes nothing adds nothing
            verdicts.append(
                VerdictRecord(
                    source=EXTRACTOR_SOURCE,
                    value=reading.value,
                    response_id=response.response_id,
                    run_id=run_id,
                    detail_json=canonical_json({**reading.detail, version_field: version}),
                )
            )
        added = store.add_verdicts(verdicts, skip_unchanged=False)
    return FirstStage(values, rules, undecided, added, reread, reread_changed, latest)


@dataclass(frozen=True)
class Settled:
    """A run's replies after every stage: the audit queue, the score, the sample drawn."""

    audit: int
    correct: int
    scored: int
    drawn: Counter[str]


def settle(
    store: Store,
    run_id: str,
    answered: list[ResponseRecord],
    is_correct: Callable[[ResponseRecord, str], bool | None],
    audit_sample: AuditSampleOptions | None,
) -> Settled:
    """Each reply's final verdict: undecided ones are the audit queue, the rest are scored.

    The automatic decisions, by the stage that made them, are the strata the audit sample
    is drawn from.
    """
    latest = store.latest_verdicts_by_response(run_id)
    audit = correct = scored = 0
    strata: dict[str, list[tuple[str, str]]] = {"extractor": [], "llm-judge": []}
    for response in answered:
        value, source = final_verdict(latest.get(response.response_id, []))
        if value == "undecided":
            audit += 1
            continue
        if source == EXTRACTOR_SOURCE:
            strata["extractor"].append((response.response_id, value))
        elif source is not None and source.startswith(LLM_JUDGE_PREFIX):
            strata["llm-judge"].append((response.response_id, value))
        outcome = is_correct(response, value)
        if outcome is not None:
            scored += 1
            correct += outcome
    drawn: Counter[str] = Counter()
    if audit_sample is not None:
        drawn = draw_audit_sample(store, run_id, strata, audit_sample)
    return Settled(audit, correct, scored, drawn)


def answer_correct(value: str, answer: str | None) -> bool | None:
    """Whether a verdict value is the correct answer; None when it cannot tell.

    ``a`` / ``b`` against the answer; ``no_answer`` is not correct; a yes/no judge's
    ``not_x`` is wrong when x is the answer and says nothing otherwise (the judge was shown
    another answer, under another label policy).
    """
    if answer is None or value not in DECIDED:
        return None
    if value.startswith("not_"):
        return False if value == f"not_{answer}" else None
    return value == answer


def draw_audit_sample(
    store: Store,
    run_id: str,
    strata: dict[str, list[tuple[str, str]]],
    options: AuditSampleOptions,
) -> Counter[str]:
    """Draw the seeded, stratified human audit sample of a run's automatic decisions.

    Each stratum's responses are ordered by a hash of (seed, response id), and the first
    ``max(ceil(fraction * n), minimum)`` (at most n) are drawn: the same seed draws the same
    responses, and a response graded later does not reshuffle those drawn before.

    Returns:
        How many responses were newly drawn, per stratum.
    """
    already = {s.response_id for s in store.audit_samples([run_id])}
    new: list[AuditSampleRecord] = []
    drawn: Counter[str] = Counter()
    for stratum, members in strata.items():
        if not members:
            continue
        size = min(len(members), max(math.ceil(options.fraction * len(members)), options.minimum))
        ordered = sorted(members, key=lambda m: derive_seed(options.seed, "audit", m[0]))
        taken = sum(1 for m in ordered if m[0] in already)
        for response_id, value in ordered:
            if taken >= size:
                break
            if response_id in already:
                continue
            new.append(AuditSampleRecord(response_id, run_id, stratum, value, options.seed))
            taken += 1
            drawn[stratum] += 1
    store.add_audit_samples(new)
    return drawn


def _question(catalogue: Catalogue, response: ResponseRecord) -> Question:
    try:
        return catalogue.question(response.question_index)
    except KeyError:
        raise UserError(
            f"response {response.response_id} is about question {response.question_index}, "
            f"which {catalogue.source} does not have; pass the run's catalogue with --catalogue"
        ) from None


@dataclass
class JudgeTally:
    """What the LLM judge did to a run's replies."""

    asked: int = 0
    reused: int = 0
    errors: int = 0
    added: int = 0
    values: Counter[str] = field(default_factory=Counter)


async def judge_replies(
    store: Store,
    run_id: str,
    judge: LLMJudge,
    targets: list[ResponseRecord],
    latest: dict[str, list[VerdictRecord]],
    *,
    key: str,
    ask: Callable[[ResponseRecord], Awaitable[tuple[str | None, dict[str, Any]]]],
    progress: bool,
) -> JudgeTally:
    """Stage 2 over a run: ask the judge about each target not yet judged under ``key``.

    ``ask`` returns the verdict value (None: the request failed, nothing is stored and the
    next grading asks again) and the detail to store, which must hold ``judge_key``.
    """
    from tqdm import tqdm

    tally = JudgeTally()
    todo: list[ResponseRecord] = []
    for response in targets:
        previous = [v for v in latest.get(response.response_id, []) if v.source == judge.source]
        if previous and json.loads(previous[-1].detail_json).get("judge_key") == key:
            tally.reused += 1
        else:
            todo.append(response)

    async def one(response: ResponseRecord) -> None:
        value, detail = await ask(response)
        tally.asked += 1
        if value is None:
            tally.errors += 1
            return
        tally.values[value] += 1
        verdict = VerdictRecord(
            source=judge.source,
            value=value,
            response_id=response.response_id,
            run_id=run_id,
            detail_json=canonical_json(detail),
        )
        # Always recorded: the detail (settings, raw reply) is what makes it reusable.
        tally.added += store.add_verdicts([verdict], skip_unchanged=False)

    bar = cast(
        "tqdm[object]",
        tqdm(total=len(todo), unit="req", desc=f"judge {judge.vlm.name}", disable=not progress),
    )
    try:
        await gather_bounded(todo, one, limit=judge.vlm.concurrency, progress=bar)
    finally:
        bar.close()
        await judge.vlm.aclose()
    return tally
