"""Grader self-preference (issue 23, point 7): LLM judges of two providers grade three providers'
answers, one judge favouring its own family; people audit some answers; the report's grading
section shows each judge's acceptance of its own provider's models against the others', with
intervals, and its agreement with the audit split the same way.

The workspace is built the way a user builds it: answer runs, then ``amvicc grade --judge ...
--all`` against a local OpenAI-compatible fake server (the test helpers' ``FakeOpenAIServer``,
serving both providers' judges), then a person's audits.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.report import build_report, render_report
from amvicc.report.self_preference import OTHERS, OWN, provider
from amvicc.store import (
    ResponseRecord,
    RunRecord,
    RunSpec,
    Store,
    VerdictRecord,
    human_source,
    new_id,
)
from amvicc.testing.fake_openai import FakeOpenAIServer, last_user_text

QUESTIONS = range(1, 41)
# The answering models, each signing its replies with its family (what a biased judge notices).
ANSWERERS = {
    "openai:gpt-4o": "openai",
    "openrouter:anthropic/claude-3.5-sonnet": "anthropic",
    "openrouter:google/gemini-2.0-flash": "google",
}
BIASED_JUDGE = "openai:gpt-4o-mini"  # says yes to every reply of its own family
FAIR_JUDGE = "openrouter:anthropic/claude-3-haiku"


def _chosen(catalogue: Catalogue, index: int, wrong: bool) -> str:
    answer = catalogue.question(index).answer
    return ("b" if answer == "a" else "a") if wrong else answer


def _answered(store: Store, catalogue: Catalogue, model: str, family: str) -> RunRecord:
    """An answer run of ``model``: every fourth reply wrong, each signed with its family."""
    run = store.start_run(
        RunSpec(stage="answer", model=model, outputs={"n": 40}, catalogue_sha256=catalogue.sha256)
    )
    for index in QUESTIONS:
        chosen = _chosen(catalogue, index, wrong=index % 4 == 0)
        store.add_response(
            ResponseRecord(
                response_id=new_id(),
                run_id=run.run_id,
                config_key=run.config_key,
                question_index=index,
                image_key="mmvp",
                prompt=f"question {index}",
                status="ok",
                text=f"The answer is ({chosen}). [{family}]",
            )
        )
    return run


def _judge(request: dict[str, Any]) -> str:
    """A yes/no judge: honest, except that gpt-4o-mini accepts every OpenAI-family reply."""
    prompt = last_user_text(request)
    correct = re.search(r"Correct answer: \((\w)\)", prompt)
    reply = re.search(r'"""\n(.*)\n"""', prompt, re.DOTALL)
    assert correct and reply, prompt
    if request["model"] == "gpt-4o-mini" and "[openai]" in reply.group(1):
        return "yes"
    return "yes" if f"({correct.group(1)})" in reply.group(1) else "no"


@pytest.fixture
def graded(store: Store, catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-test-not-a-real-key")
    for model, family in ANSWERERS.items():
        _answered(store, catalogue, model, family)
    with FakeOpenAIServer(chat=_judge) as server:
        for judge in (BIASED_JUDGE, FAIR_JUDGE):
            argv = ["grade", "--store", str(store.root), "--judge", judge, "--judge-base-url"]
            argv += [server.url, "--judge-mode", "yesno", "--all", "--no-audit-sample", "-q"]
            assert main(argv) == 0
    # A person audits every fifth answer of every model (as the scoring app stores an audit:
    # the option read, under the auditor's source).
    audits = []
    for response in store.responses():
        if response.question_index % 5 == 0:
            chosen = re.search(r"\((\w)\)", response.text or "")
            assert chosen
            audits.append(
                VerdictRecord(
                    human_source("alice"), chosen.group(1), response_id=response.response_id
                )
            )
    store.add_verdicts(audits)
    return store


def test_each_judge_is_compared_on_its_own_providers_answers_and_the_others(
    graded: Store,
) -> None:
    assert [provider(m) for m in (*ANSWERERS, BIASED_JUDGE, FAIR_JUDGE)] == [
        "openai",
        "anthropic",
        "google",
        "openai",
        "anthropic",
    ]
    report = build_report(graded, bootstrap=0, indices=frozenset(QUESTIONS))
    table = report.self_preference.set_index(["judge", "scope"])
    biased = f"llm-judge:{BIASED_JUDGE}"
    own, others = table.loc[(biased, OWN)], table.loc[(biased, OTHERS)]
    # Its own family: all 40 accepted, 10 of them wrong; the others' 30 right of 80 judged.
    assert (own["judged"], own["accepted"]) == (40, 40)
    assert (others["judged"], others["accepted"]) == (80, 60)
    assert own["models"] == ["openai:gpt-4o"]
    assert own["acceptance"] == 1.0 and others["acceptance"] == 0.75
    assert [own["acceptance_low"], own["acceptance_high"]] == pytest.approx(
        proportion_confint(40, 40, alpha=0.05, method="wilson")
    )
    low, high = confint_proportions_2indep(40, 40, 60, 80, method="newcomb", compare="diff")
    assert own["difference"] == pytest.approx(0.25)
    assert [own["difference_low"], own["difference_high"]] == pytest.approx([low, high])
    # The audit (questions 5, 10, ... 40: 8 per model; 20 and 40 answered wrongly) agrees with
    # the judge on the other families' answers, not on its own: it accepted 2 that people reject.
    assert (own["audited"], own["agreed"], own["false_accepts"]) == (8, 6, 2)
    assert (others["audited"], others["agreed"], others["false_accepts"]) == (16, 16, 0)
    assert [own["agreement_low"], own["agreement_high"]] == pytest.approx(
        proportion_confint(6, 8, alpha=0.05, method="wilson")
    )
    fair = f"llm-judge:{FAIR_JUDGE}"
    assert table.loc[(fair, OWN), "acceptance"] == table.loc[(fair, OTHERS), "acceptance"] == 0.75
    assert table.loc[(fair, OWN), "difference"] == 0.0
    assert table.loc[(fair, OWN), "agreement"] == table.loc[(fair, OTHERS), "agreement"] == 1.0

    html = render_report(report, "html")
    section = html[html.index('<section id="grading">') :]
    section = section[: section.index("</section>")]
    assert "Grader self-preference" in section and biased in section
    assert "+0.250" in section and "own provider" in section and "other providers" in section
    assert "Grader self-preference" in render_report(report, "md")
    document = json.loads(render_report(report, "json"))
    assert len(document["grader_self_preference"]) == 4  # two judges × two sides


def test_no_table_without_judges_of_known_providers(store: Store, catalogue: Catalogue) -> None:
    run = _answered(store, catalogue, "openai:gpt-4o", "openai")
    assert main(["grade", "--store", str(store.root), "--run", run.run_id, "-q"]) == 0
    report = build_report(store, bootstrap=0, indices=frozenset(QUESTIONS))
    assert report.self_preference.empty
    assert "Grader self-preference" not in render_report(report, "html")
