"""Grading a ladder run: the typed comparator, then an LLM judge, then the human audit.

A ladder run (``amvicc answer --ladder``) stores one reply per rung of GRIP's question ladder,
each with its rung (question, type, answer) in the reply's request record, so grading needs
nothing but the store. The three stages are the MMVP answers' own:

1. the typed comparator (:func:`amvicc.ladder.read_reply`: numbers parsed, words normalised,
   options by the extractor) reads every reply, under the ``extractor`` source; a reply it
   read under an older comparator version is read again (the old row stays as history);
2. an LLM judge, if given, sees the question, the correct answer and each reply the
   comparator left undecided (``all_replies``: every reply) and says ``CORRECT``,
   ``INCORRECT`` or ``NONE``; it never overrides the comparator;
3. what is still undecided goes to the scoring app's audit queue, with a seeded sample of the
   automatic decisions.

Verdicts say ``correct`` / ``incorrect`` outright: the answer is derived from the scene, so
no label policy can change it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

from amvicc.api import gather_bounded
from amvicc.grade.grading import RunGrades, draw_audit_sample, final_verdict
from amvicc.ladder import COMPARATOR_VERSION, LadderQuestion, read_reply, response_rung
from amvicc.provenance import canonical_json, config_key
from amvicc.store import (
    EXTRACTOR_SOURCE,
    LLM_JUDGE_PREFIX,
    ResponseRecord,
    Store,
    VerdictRecord,
)
from amvicc.vlm.prompting import load_template, render_with_system

if TYPE_CHECKING:
    from amvicc.grade.llm_judge import LLMJudge
    from amvicc.grade.options import AuditSampleOptions

LADDER_JUDGE_TEMPLATE = "grade_judge_ladder.jinja"
_WORD = re.compile(r"^[\W_]*(correct|incorrect|none)[\W_]*$", re.IGNORECASE)


def parse_verdict(reply: str) -> str | None:
    """``CORRECT`` -> ``correct``, ``INCORRECT`` -> ``incorrect``, ``NONE`` -> ``no_answer``.

    The first non-empty line must be the bare word (markdown and punctuation aside).
    """
    line = next((ln.strip() for ln in reply.strip().splitlines() if ln.strip()), "")
    match = _WORD.match(line)
    if match is None:
        return None
    word = match.group(1).lower()
    return "no_answer" if word == "none" else word


def grade_ladder_run(
    store: Store,
    run_id: str,
    *,
    judge: LLMJudge | None = None,
    progress: bool = False,
    audit_sample: AuditSampleOptions | None = None,
) -> RunGrades:
    """Grade a ladder run's current replies in three stages (see the module docstring)."""
    run = store.run(run_id)
    responses = store.responses(run_id=run_id)
    answered = [r for r in responses if r.status == "ok"]
    rungs = {r.response_id: response_rung(r) for r in answered}
    latest = store.latest_verdicts_by_response(run_id)
    values: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    undecided: list[ResponseRecord] = []
    verdicts: list[VerdictRecord] = []
    reread = reread_changed = 0
    for response in answered:
        reading = read_reply(rungs[response.response_id], response.text)
        values[reading.value] += 1
        rules[reading.rule] += 1
        if reading.correct is None:
            undecided.append(response)
        stored = [v for v in latest.get(response.response_id, ()) if v.source == EXTRACTOR_SOURCE]
        if stored:
            version = json.loads(stored[-1].detail_json).get("comparator_version", 0)
            older = version < COMPARATOR_VERSION
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
                detail_json=canonical_json(
                    {
                        "read": reading.read,
                        "rule": reading.rule,
                        "comparator_version": COMPARATOR_VERSION,
                    }
                ),
            )
        )
    added = store.add_verdicts(verdicts, skip_unchanged=False)

    asked = reused = errors = 0
    judged: Counter[str] = Counter()
    if judge is not None and judge.procedure is None:
        targets = answered if judge.all_replies else undecided
        tally = asyncio.run(_judge(store, run_id, judge, targets, rungs, latest, progress))
        asked, reused, errors, judged = tally.asked, tally.reused, tally.errors, tally.values
        added += tally.added

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
        scored += 1
        correct += value == "correct"
    drawn: Counter[str] = Counter()
    if audit_sample is not None:
        drawn = draw_audit_sample(store, run_id, strata, audit_sample)
    return RunGrades(
        run_id=run_id,
        model=run.model,
        smoke=bool(run.smoke),
        responses=len(answered),
        failed=len(responses) - len(answered),
        extractor=values,
        rules=rules,
        judge_asked=asked,
        judge_reused=reused,
        judge_values=judged,
        judge_errors=errors,
        audit_queue=audit,
        correct=correct,
        scored=scored,
        verdicts_added=added,
        reread=reread,
        reread_changed=reread_changed,
        audit_drawn=drawn,
        judge_source=judge.source if judge is not None and judge.procedure is None else None,
        ladder=True,
        procedure_skipped=judge.procedure if judge is not None else None,
    )


class _Tally:
    def __init__(self) -> None:
        self.asked = self.reused = self.errors = self.added = 0
        self.values: Counter[str] = Counter()


async def _judge(
    store: Store,
    run_id: str,
    judge: LLMJudge,
    targets: list[ResponseRecord],
    rungs: dict[str, LadderQuestion],
    latest: dict[str, list[VerdictRecord]],
    progress: bool,
) -> _Tally:
    from tqdm import tqdm

    template = load_template(None, default=LADDER_JUDGE_TEMPLATE)
    # The ladder's template is part of what makes two of the judge's verdicts comparable.
    key = config_key({"judge": judge.key, "ladder_template": template.sha256})
    tally = _Tally()
    todo: list[ResponseRecord] = []
    for response in targets:
        previous = [v for v in latest.get(response.response_id, []) if v.source == judge.source]
        if previous and json.loads(previous[-1].detail_json).get("judge_key") == key:
            tally.reused += 1
        else:
            todo.append(response)

    async def one(response: ResponseRecord) -> None:
        rung = rungs[response.response_id]
        system, prompt = render_with_system(
            template, rung=rung, expected=rung.expected, response=response.text or ""
        )
        seed = judge.seed_for(response.response_id)
        reply = await judge.vlm.ask(
            None,
            prompt,
            temperature=judge.settings.temperature,
            max_tokens=judge.settings.max_tokens,
            seed=seed,
            system=system,
        )
        tally.asked += 1
        if not reply.ok or reply.text is None:
            tally.errors += 1
            return
        value = parse_verdict(reply.text) or "undecided"
        tally.values[value] += 1
        detail: dict[str, Any] = {
            "judge_key": key,
            "model": judge.vlm.name,
            "template": template.name,
            "prompt": prompt,
            "temperature": judge.settings.temperature,
            "seed": seed,
            "max_tokens": judge.settings.max_tokens,
            "reply": reply.text,
        }
        verdict = VerdictRecord(
            source=judge.source,
            value=value,
            response_id=response.response_id,
            run_id=run_id,
            detail_json=canonical_json(detail),
        )
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
