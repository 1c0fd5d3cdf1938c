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
import re
from typing import TYPE_CHECKING, Any

from amvicc.grade.grading import (
    JudgeTally,
    Reading,
    RunGrades,
    judge_replies,
    read_every_reply,
    settle,
)
from amvicc.ladder import COMPARATOR_VERSION, LadderQuestion, read_reply, response_rung
from amvicc.provenance import config_key
from amvicc.store import ResponseRecord, Store, VerdictRecord
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

    def read(response: ResponseRecord) -> Reading:
        reading = read_reply(rungs[response.response_id], response.text)
        return Reading(reading.value, reading.rule, {"read": reading.read, "rule": reading.rule})

    first = read_every_reply(
        store,
        run_id,
        answered,
        read,
        version_field="comparator_version",
        version=COMPARATOR_VERSION,
    )
    added = first.added
    judged = JudgeTally()
    if judge is not None and judge.procedure is None:
        targets = answered if judge.all_replies else first.undecided
        judged = asyncio.run(_judge(store, run_id, judge, targets, rungs, first.latest, progress))
        added += judged.added
    settled = settle(
        store, run_id, answered, lambda _response, value: value == "correct", audit_sample
    )
    return RunGrades.from_stages(
        run,
        responses,
        first,
        judged,
        settled,
        added=added,
        judge_source=judge.source if judge is not None and judge.procedure is None else None,
        ladder=True,
        procedure_skipped=judge.procedure if judge is not None else None,
    )


async def _judge(
    store: Store,
    run_id: str,
    judge: LLMJudge,
    targets: list[ResponseRecord],
    rungs: dict[str, LadderQuestion],
    latest: dict[str, list[VerdictRecord]],
    progress: bool,
) -> JudgeTally:
    template = load_template(None, default=LADDER_JUDGE_TEMPLATE)
    # The ladder's template is part of what makes two of the judge's verdicts comparable.
    key = config_key({"judge": judge.key, "ladder_template": template.sha256})

    async def ask(response: ResponseRecord) -> tuple[str | None, dict[str, Any]]:
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
        if not reply.ok or reply.text is None:
            return None, {}
        detail = {
            "judge_key": key,
            "model": judge.vlm.name,
            "template": template.name,
            "prompt": prompt,
            "temperature": judge.settings.temperature,
            "seed": seed,
            "max_tokens": judge.settings.max_tokens,
            "reply": reply.text,
        }
        return parse_verdict(reply.text) or "undecided", detail

    return await judge_replies(
        store, run_id, judge, targets, latest, key=key, ask=ask, progress=progress
    )
