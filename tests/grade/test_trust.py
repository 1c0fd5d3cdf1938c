"""AMVICC's own grading procedure, the human audit sample, and the report's trust tables."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.grade.grading import grade_run
from amvicc.grade.options import AuditSampleOptions
from amvicc.report import build_report
from amvicc.report.render import render_report
from amvicc.score.desk import ScoringDesk
from amvicc.store import EXTRACTOR_SOURCE, Store, procedure_source
from amvicc.testing.fake_openai import FakeOpenAIServer
from tests.grade.test_grading import answered
from tests.ladder_workspace import SECRET_LADDER_VLM, add_ladder_run

SYSTEM = (
    "You are a helpful and precise assistant for checking the quality of the answer. "
    "Please answer in only yes or no."
)
# Questions 1-40: the extractor reads (a) for odd, (b) for even indices (so every answer is
# right), except 9 and 10, which hedge and go to the LLM judge.
REPLIES = {i: ("(a)" if i % 2 else "(b)") for i in range(1, 41)}
REPLIES[9] = REPLIES[10] = "It is hard to say."
REPLIES[40] = "B."  # the procedure's judge garbles its verdict on this one


def _procedure_reply(request: dict[str, Any]) -> str:
    """AMVICC's grader: yes when the reply names the correct label; q40 it garbles."""
    text = request["messages"][-1]["content"][-1]["text"]
    correct = re.search(r"the correct answer is '(\(\w\))'", text)
    reply = re.search(r"Answer: '(.*)'$", text, re.DOTALL)
    assert correct and reply, text
    if reply.group(1) == "B.":
        return "I think so"
    return "yes" if correct.group(1) in reply.group(1) else "no"


def _server_reply(request: dict[str, Any]) -> str:
    if request["messages"][0]["role"] == "system":
        return _procedure_reply(request)
    return "A"  # the choice judge, for the two hedged replies


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(chat=_server_reply) as running:
        yield running


def _grade(workspace: Path, server: FakeOpenAIServer, *extra: str) -> int:
    return main(
        ["grade", "--store", str(workspace), "--judge", "judge-llm", "--judge-base-url",
         server.url, "-q", *extra]
    )  # fmt: skip


def test_the_audit_sample_is_seeded_and_stratified(store: Store, catalogue: Catalogue) -> None:
    run = answered(store, catalogue, REPLIES)
    options = AuditSampleOptions(fraction=0.1, minimum=5, seed=7)
    summary = grade_run(store, run.run_id, audit_sample=options)
    # 38 extractor-decided: max(ceil(3.8), 5) = 5; no judge, so no judge stratum.
    assert summary.audit_drawn == {"extractor": 5}
    drawn = [s.response_id for s in store.audit_samples()]
    assert grade_run(store, run.run_id, audit_sample=options).audit_drawn == {}  # kept
    assert [s.response_id for s in store.audit_samples()] == drawn
    # The same seed on another workspace with the same responses draws the same ones.
    other = Store(store.root.parent / "other")
    with other:
        for response in store.responses():
            other_run = other.run(run.run_id) if other.run_exists(run.run_id) else None
            if other_run is None:
                other.start_run(store_spec(store, run.run_id))
            other.add_response(response)
        grade_run(other, run.run_id, audit_sample=options)
        assert sorted(s.response_id for s in other.audit_samples()) == sorted(drawn)
        bigger = AuditSampleOptions(fraction=0.5, minimum=0, seed=7)
        grade_run(other, run.run_id, audit_sample=bigger)
        assert len(other.audit_samples()) == 19  # ceil(0.5 * 38), the first 5 kept


def store_spec(store: Store, run_id: str) -> Any:
    from amvicc.store import RunSpec

    run = store.run(run_id)
    return RunSpec(
        stage="answer",
        model=run.model,
        outputs=run.config,
        catalogue_sha256=run.catalogue_sha256,
        name=run.run_id,
    )


def test_amvicc_procedure_audit_and_agreement_end_to_end(
    store: Store, catalogue: Catalogue, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    answered(store, catalogue, REPLIES)
    # Stage 2 for the two hedged replies, and the audit sample (10 %, at least 20 / 2).
    assert _grade(store.root, server, "--audit-minimum", "20") == 0
    out = capsys.readouterr().out
    assert "audit sample drew 20 extractor-decided, 2 llm-judge-decided" in out
    # AMVICC's procedure over every reply, as its own source.
    assert _grade(store.root, server, "--all", "--judge-template", "amvicc") == 0
    assert "procedure:amvicc:judge-llm: asked 40" in capsys.readouterr().out
    asked = [r.body for r in server.requests if r.body["messages"][0]["role"] == "system"]
    assert len(asked) == 40
    # Requests go concurrently, in no fixed order: find question 1's among them.
    assert all(r["messages"][0]["content"] == SYSTEM and r["temperature"] == 0.2 for r in asked)
    users = {r["messages"][1]["content"][-1]["text"] for r in asked}
    question = catalogue.question(1)
    assert (
        f"Given the following question '{question.text} {question.options_text}', the correct "
        "answer is '(a)'. Does the following answer correctly answer the question? "
        "Answer: '(a)'"
    ) in users
    source = procedure_source("amvicc", "judge-llm")
    assert len(store.verdicts(source=source)) == 40
    # Grading again asks nothing: every reply was judged under these settings.
    assert _grade(store.root, server, "--all", "--judge-template", "amvicc") == 0
    assert len([r for r in server.requests if r.body["messages"][0]["role"] == "system"]) == 40

    # A person audits the sample in the scoring app: it is in the queue, blind.
    desk = ScoringDesk(store, catalogue)
    sampled = {s.response_id: s for s in store.audit_samples()}
    assert sampled.keys() <= {a.response_id for a in desk.answers}
    assert all(a.sampled for a in desk.answers if a.response_id in sampled)
    audited = sorted(r for r, s in sampled.items() if s.stratum == "extractor")[:10]
    for number, response_id in enumerate(audited):
        value = sampled[response_id].value
        if number < 2:  # the auditor disagrees with the extractor twice
            value = "b" if value == "a" else "a"
        desk.decide("audit", "alice", response_id, value)
    assert desk.queues["audit"].progress("alice").done == 10

    report = build_report(store, bootstrap=0, indices=frozenset(range(1, 41)))
    errors = report.audit_errors.set_index("stage")
    assert errors.loc["extractor", ["sampled", "audited", "errors"]].tolist() == [20, 10, 2]
    low, high = proportion_confint(2, 10, alpha=0.05, method="wilson")
    assert errors.loc["extractor", "ci_low"] == pytest.approx(low)
    assert errors.loc["extractor", "ci_high"] == pytest.approx(high)
    assert errors.loc["llm-judge", "audited"] == 0
    procedures = report.procedures.set_index(["grading", "metric"])
    # "no" to the hedged 9 and 10; q40's verdict garbled: missing, which AMVICC counts wrong.
    assert procedures.loc[(source, "individual"), ["correct", "total", "missing"]].tolist() == [
        37,
        40,
        1,
    ]
    agreement = report.grading_agreement
    pair = agreement[(agreement["first"] == EXTRACTOR_SOURCE) & (agreement["second"] == source)]
    assert pair["items"].tolist() == [37] and pair["percent"].tolist() == [1.0]
    human = agreement[
        (agreement["first"] == EXTRACTOR_SOURCE) & (agreement["second"] == "human audit")
    ]
    assert human["items"].tolist() == [10] and human["disagreements"].tolist() == [2]
    text = render_report(report, "md")
    assert "## Grading procedures" in text and "## Grading agreement" in text
    assert "## Audited error rates" in text and "| vlm | extractor | 20 | 10 | 2 | 20.0% |" in text


def test_verdicts_of_an_older_extractor_are_read_again(store: Store, catalogue: Catalogue) -> None:
    import json

    from amvicc.extract import EXTRACTOR_VERSION
    from amvicc.store import VerdictRecord

    revised = "My answer: (b). Hold on — checking the image again, it's really (a)."
    run = answered(store, catalogue, {1: revised, 2: "(b)"})
    old = {"rule": "answer-marker", "extractor_version": EXTRACTOR_VERSION - 1}
    for response in store.responses():
        value = "b"  # what version 1 read from both: the abandoned (b), and (b)
        store.add_verdict(
            VerdictRecord(
                EXTRACTOR_SOURCE, value, response_id=response.response_id, run_id=run.run_id,
                detail_json=json.dumps(old),
            )
        )  # fmt: skip
    summary = grade_run(store, run.run_id, audit_sample=None)
    assert (summary.reread, summary.reread_changed) == (2, 1)
    assert "re-read 2 replies an older version graded: 1 changed" in "\n".join(summary.lines())
    history = store.verdicts(source=EXTRACTOR_SOURCE, current=False)
    assert len(history) == 4  # two old rows kept, two new ones
    current = {v.response_id: v for v in store.verdicts(source=EXTRACTOR_SOURCE)}
    assert {json.loads(v.detail_json)["extractor_version"] for v in current.values()} == {
        EXTRACTOR_VERSION
    }
    assert sorted(v.value for v in current.values()) == ["a", "b"]
    # Once re-read, grading again adds nothing.
    assert grade_run(store, run.run_id).reread == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--audit-fraction", "2"], "--audit-fraction 2.0 is not between 0 and 1"),
        (["--all"], "--all and --judge-template need a judge model"),
        (["--judge", "m", "--judge-template", "nowhere.jinja"], "nowhere.jinja does not exist"),
    ],
)
def test_bad_grading_options_are_one_line_exit_2(
    store: Store,
    catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    answered(store, catalogue, {1: "(a)"})
    assert main(["grade", "--store", str(store.root), "-q", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_ladder_audit_counts_in_the_audited_error_rates(
    store: Store, catalogue: Catalogue, tmp_path: Path
) -> None:
    run = answered(store, catalogue, REPLIES)
    grade_run(store, run.run_id, audit_sample=AuditSampleOptions(fraction=0.1, minimum=5, seed=7))
    add_ladder_run(store.root, tmp_path / "scenes")
    (ladder,) = store.runs(stage="ladder")
    sampled = {s.response_id: s for s in store.audit_samples([ladder.run_id])}
    assert len(sampled) == 4 and {s.stratum for s in sampled.values()} == {"extractor"}
    assert {s.value for s in sampled.values()} == {"correct", "incorrect"}
    # A person audits three of the four comparator decisions on the scoring app's audit
    # screen: no answer where it read one, the opposite of what it read, and the same.
    desk = ScoringDesk(store, catalogue)
    audited = sorted(sampled)[:3]
    opposite = {"correct": "incorrect", "incorrect": "correct"}
    for value, response_id in zip(
        ("no_answer", opposite[sampled[audited[1]].value], sampled[audited[2]].value),
        audited,
        strict=True,
    ):
        desk.decide("audit", "alice", response_id, value)
    report = build_report(store, bootstrap=0, indices=frozenset(range(1, 41)))
    errors = report.audit_errors.set_index(["label", "stage"])
    label = f"{SECRET_LADDER_VLM} · ladder"
    assert errors.loc[(label, "extractor"), ["sampled", "audited", "errors"]].tolist() == [4, 3, 2]
    low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert errors.loc[(label, "extractor"), "ci_low"] == pytest.approx(low)
    assert errors.loc[(label, "extractor"), "ci_high"] == pytest.approx(high)
    # the MMVP answers' own sample is counted as before, apart from the ladder's
    assert errors.loc[("vlm", "extractor"), ["sampled", "audited"]].tolist() == [5, 0]
    text = render_report(report, "md")
    assert f"| {label} | extractor | 4 | 3 | 2 | 66.7% |" in text
    # --models selects the ladder runs too
    only = build_report(store, bootstrap=0, indices=frozenset(range(1, 41)), models=("vlm",))
    assert set(only.audit_errors["label"]) == {"vlm"}
