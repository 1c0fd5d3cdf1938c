"""A yes/no judge's verdict keeps its meaning under either label policy.

MMVP's original and corrected labels differ at questions 99, 100, 279 and 280. A judge asked
under the corrected labels whether a reply gives the corrected answer, and saying "no", has not
said that the reply chose the other option; reporting under the original labels must not turn
that "no" into a correct answer.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.grade.grading import grade_run
from amvicc.grade.llm_judge import JudgeSettings, open_judge
from amvicc.report.items import collect_items
from amvicc.report.options import ReportOptions
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer, last_user_text
from tests.grade.test_grading import answered

CHANGED = (99, 100, 279, 280)
# Every reply hedges, so the extractor leaves it to the judge; the judge says yes for 99 and
# 100 and no for 279 and 280.
REPLIES = {index: f"It is hard to say (question {index})." for index in CHANGED}


def _judge_reply(request: dict[str, Any]) -> str:
    match = re.search(r"question (\d+)\)", last_user_text(request))
    return "yes" if match and int(match.group(1)) in (99, 100) else "no"


@pytest.fixture
def graded(store: Store, catalogue: Catalogue) -> Store:
    run = answered(store, catalogue, REPLIES)
    with FakeOpenAIServer(chat=_judge_reply) as server:
        judge = open_judge(
            "judge-llm", JudgeSettings(mode="yesno"), api=ApiSettings(base_url=server.url)
        )
        summary = grade_run(store, run.run_id, judge=judge)
    assert summary.judge_asked == 4
    return store


def _outcomes(store: Store, labels: str | None) -> dict[int, str]:
    options = ReportOptions(labels=labels, indices=frozenset(CHANGED), bootstrap=0)  # type: ignore[arg-type]
    frame = collect_items(store, options).frame
    return dict(zip(frame["question_index"], frame["outcome"], strict=True))


def test_under_the_labels_the_judge_was_shown(graded: Store) -> None:
    assert _outcomes(graded, None) == {
        99: "correct",
        100: "correct",
        279: "incorrect",
        280: "incorrect",
    }


def test_under_the_other_labels_a_no_never_becomes_correct(graded: Store) -> None:
    outcomes = _outcomes(graded, "original")
    # "yes" to the corrected answer: the reply chose it, which the original labels call wrong.
    assert outcomes[99] == outcomes[100] == "incorrect"
    # "no" to the corrected answer says nothing about the original one: missing, not correct.
    assert outcomes[279] == outcomes[280] == "missing"
    items = collect_items(
        graded, ReportOptions(labels="original", indices=frozenset(CHANGED), bootstrap=0)
    )
    reasons = items.frame.set_index("question_index")["reason"]
    assert reasons[279] == reasons[280] == "other_labels"
