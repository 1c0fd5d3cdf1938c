"""Three-stage grading: extractor, an LLM judge only for what it left undecided, human audit."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.grade.grading import final_verdict, grade_run, run_catalogue
from amvicc.grade.llm_judge import JudgeSettings, LLMJudge, open_judge
from amvicc.store import (
    EXTRACTOR_SOURCE,
    ImageRecord,
    ResponseRecord,
    RunRecord,
    RunSpec,
    Store,
    VerdictRecord,
    human_source,
    llm_judge_source,
    new_id,
)
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault, last_user_text

# question 1: (a) Open (b) Closed, answer (a); question 2: the same, answer (b)
TEXTS = {
    1: "(a)",
    2: "The wings are folded shut, so Closed.",
    3: "I cannot determine the shape of the flame.",  # (a) Round (b) Thin -> undecided
    4: "Between (a) and (b), I lean towards the first one.",  # undecided (both labels)
    5: "It is something else entirely, maybe.",  # undecided (hedge)
}


def answered(store: Store, catalogue: Catalogue, texts: dict[int, str], **spec: Any) -> RunRecord:
    run = store.start_run(
        RunSpec(
            stage="answer",
            model="vlm",
            outputs={"n": len(texts), **spec},
            catalogue_sha256=catalogue.sha256,
            label_policy=spec.get("label_policy", "corrected"),
        )
    )
    for index, text in texts.items():
        store.add_response(
            ResponseRecord(
                response_id=new_id(),
                run_id=run.run_id,
                config_key=run.config_key,
                question_index=index,
                image_key="mmvp",
                prompt=f"question {index}",
                status="ok",
                text=text,
            ),
            json.dumps({"choices": [{"message": {"content": text}}]}).encode(),
        )
    return run


def judge_reply(request: dict[str, Any]) -> str:
    """A judge that reads the response in its prompt and answers by rule."""
    prompt = last_user_text(request)
    response = re.search(r'"""\n(.*)\n"""', prompt, re.DOTALL)
    text = response.group(1) if response else ""
    yesno = "Correct answer:" in prompt
    if "first one" in text:
        return "yes" if yesno else "A"
    if "flame" in text:
        return "no" if yesno else "NONE"
    return "Hmm, hard to say what this response means."  # does not parse


def judge(server: FakeOpenAIServer, mode: str = "choice", **api: Any) -> LLMJudge:
    return open_judge(
        "judge-llm",
        JudgeSettings(mode=mode),  # type: ignore[arg-type]
        api=ApiSettings(base_url=server.url, **api),
    )


@pytest.fixture
def judge_server() -> Any:
    with FakeOpenAIServer(chat=judge_reply) as server:
        yield server


def test_extractor_grades_everything_once(store: Store, catalogue: Catalogue) -> None:
    run = answered(store, catalogue, TEXTS)
    summary = grade_run(store, run.run_id)
    assert summary.extractor == {"a": 1, "b": 1, "undecided": 3}
    assert summary.audit_queue == 3 and summary.responses == 5
    assert summary.correct == 2 and summary.scored == 2  # 1 -> a (right), 2 -> b (right)
    verdicts = store.verdicts(source=EXTRACTOR_SOURCE)
    assert len(verdicts) == 5
    rules = {json.loads(v.detail_json)["rule"] for v in verdicts}
    assert {"label-only", "option-text", "hedge", "both-labels"} <= rules
    queue = {r.question_index for r in store.undecided_responses()}
    assert queue == {3, 4, 5}
    # grading again changes nothing and adds nothing
    again = grade_run(store, run.run_id)
    assert again.verdicts_added == 0 and again.extractor == summary.extractor


def test_failed_requests_are_not_graded(store: Store, catalogue: Catalogue) -> None:
    run = answered(store, catalogue, {1: "(a)"})
    store.add_response(
        ResponseRecord(
            response_id=new_id(), run_id=run.run_id, config_key=run.config_key,
            question_index=2, image_key="mmvp", prompt="q", status="error", error="HTTP 500",
        )
    )  # fmt: skip
    summary = grade_run(store, run.run_id)
    assert summary.responses == 1 and summary.failed == 1
    assert len(store.verdicts()) == 1


def test_judge_only_sees_undecided_and_unparseable_stays_undecided(
    store: Store, catalogue: Catalogue, judge_server: FakeOpenAIServer
) -> None:
    run = answered(store, catalogue, TEXTS)
    summary = grade_run(store, run.run_id, judge=judge(judge_server))
    assert len(judge_server.requests) == 3  # only 3, 4, 5: the extractor's undecided
    asked = [last_user_text(r.body) for r in judge_server.requests]
    assert not any("(a)\n" in p.split('"""')[1] for p in asked)
    assert summary.judge_values == {"a": 1, "no_answer": 1, "undecided": 1}
    by_index = {
        r.question_index: final_verdict(store.verdicts(response_id=r.response_id))
        for r in store.responses()
    }
    assert by_index[4] == ("a", llm_judge_source("judge-llm"))
    assert by_index[3] == ("no_answer", llm_judge_source("judge-llm"))
    assert by_index[5] == ("undecided", None)  # never counted as wrong
    assert by_index[1] == ("a", EXTRACTOR_SOURCE)
    assert {r.question_index for r in store.undecided_responses()} == {5}
    (verdict,) = [
        v for v in store.verdicts(source=llm_judge_source("judge-llm")) if v.value == "undecided"
    ]
    detail = json.loads(verdict.detail_json)
    assert detail["reply"].startswith("Hmm") and detail["model"] == "judge-llm"
    assert detail["mode"] == "choice" and detail["temperature"] == 0.0
    assert isinstance(detail["seed"], int) and "Which option" in detail["prompt"]
    assert json.loads(detail["raw"])["choices"][0]["message"]["content"] == detail["reply"]

    # the same judge again: nothing is asked
    again = grade_run(store, run.run_id, judge=judge(judge_server))
    assert len(judge_server.requests) == 3 and again.judge_reused == 3 and again.judge_asked == 0


def test_yesno_mode_records_the_judges_word(
    store: Store, catalogue: Catalogue, judge_server: FakeOpenAIServer
) -> None:
    run = answered(store, catalogue, TEXTS)
    grade_run(store, run.run_id, judge=judge(judge_server, mode="yesno"))
    prompts = [last_user_text(r.body) for r in judge_server.requests]
    assert all("Correct answer:" in p for p in prompts)
    verdicts = {
        r.question_index: store.verdicts(
            response_id=r.response_id, source=llm_judge_source("judge-llm")
        )
        for r in store.responses()
        if r.question_index in (3, 4)
    }
    # question 4's answer is (b) under the corrected labels: "yes" means the reply chose (b)
    assert verdicts[4][0].value == catalogue.question(4).answer
    assert json.loads(verdicts[4][0].detail_json)["judged_correct"] is True
    # "no" on question 3 (answer (a)): "not (a)", never "(b)" (the label-policy test says why)
    assert verdicts[3][0].value == "not_a"
    assert json.loads(verdicts[3][0].detail_json)["judged_correct"] is False


def test_judge_errors_store_nothing_and_are_asked_again(
    store: Store, catalogue: Catalogue, judge_server: FakeOpenAIServer
) -> None:
    run = answered(store, catalogue, {3: TEXTS[3]})
    judge_server.inject(Fault.http(500))
    summary = grade_run(store, run.run_id, judge=judge(judge_server, max_retries=0))
    assert summary.judge_errors == 1
    assert store.verdicts(source=llm_judge_source("judge-llm")) == []
    grade_run(store, run.run_id, judge=judge(judge_server, max_retries=0))
    assert len(store.verdicts(source=llm_judge_source("judge-llm"))) == 1


def test_final_verdict_precedence() -> None:
    def v(source: str, value: str) -> VerdictRecord:
        return VerdictRecord(source=source, value=value, response_id="r")

    judge_b = v(llm_judge_source("j"), "b")
    assert final_verdict([v(EXTRACTOR_SOURCE, "a"), judge_b]) == ("a", EXTRACTOR_SOURCE)
    assert final_verdict([v(EXTRACTOR_SOURCE, "undecided"), judge_b]) == ("b", judge_b.source)
    # Two LLM judges that disagree leave it undecided (the report's rule too).
    judges_split = [judge_b, v(llm_judge_source("k"), "a")]
    assert final_verdict([v(EXTRACTOR_SOURCE, "undecided"), *judges_split]) == ("undecided", None)
    people = [v(human_source("ann"), "b"), v(human_source("bob"), "b")]
    assert final_verdict([v(EXTRACTOR_SOURCE, "a"), *people]) == ("b", "human")
    tie = [v(human_source("ann"), "a"), v(human_source("bob"), "b")]
    assert final_verdict([v(EXTRACTOR_SOURCE, "undecided"), *tie]) == ("undecided", None)
    settled = [*tie, v("adjudication:cat", "no_answer")]
    assert final_verdict(settled) == ("no_answer", "human")


def test_generated_explicit_images_are_scored_against_what_they_show(
    store: Store, catalogue: Catalogue
) -> None:
    generation = store.start_run(RunSpec(stage="generate", model="igm", outputs={}))
    answers = store.start_run(
        RunSpec(stage="answer", model="vlm", outputs={"g": 1}, catalogue_sha256=catalogue.sha256)
    )
    for index, kind, text in [
        (1, "explicit", "Open"),
        (2, "explicit", "Open"),
        (1, "implicit", "Open"),
    ]:
        image_id = new_id()
        store.add_image(
            ImageRecord(
                image_id=image_id, run_id=generation.run_id, config_key=generation.config_key,
                question_index=index, prompt_kind=kind, sample=0, prompt="p", seed=0, status="ok",  # type: ignore[arg-type]
            ),
            b"png",
        )  # fmt: skip
        store.add_response(
            ResponseRecord(
                response_id=new_id(), run_id=answers.run_id, config_key=answers.config_key,
                question_index=index, image_key=image_id, image_id=image_id, prompt="q",
                status="ok", text=text,
            )
        )  # fmt: skip
    summary = grade_run(store, answers.run_id)
    # explicit 1 shows (a) Open: right; explicit 2 shows (b) Closed: wrong; implicit: no answer
    assert summary.scored == 2 and summary.correct == 1


def test_catalogue_must_be_the_runs(store: Store, catalogue: Catalogue, tmp_path: Path) -> None:
    run = answered(store, catalogue, {1: "(a)"})
    other = tmp_path / "other.csv"
    other.write_text(
        Path(catalogue.source).read_text(encoding="utf-8").replace("butterfly", "moth")
    )
    with pytest.raises(UserError, match="another catalogue"):
        run_catalogue(store.run(run.run_id), other)


def test_grade_cli(
    store: Store,
    catalogue: Catalogue,
    judge_server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workspace = str(store.root)
    assert main(["grade", "--store", workspace]) == 2
    assert "no answer run" in capsys.readouterr().err
    run = answered(store, catalogue, TEXTS)
    assert main(["grade", "--store", workspace, "--run", "nope"]) == 2
    assert run.run_id in capsys.readouterr().err  # the known runs are listed
    status = main(
        ["grade", "--store", workspace, "--run", run.run_id, "--judge", "judge-llm",
         "--judge-base-url", judge_server.url, "-q"]
    )  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    assert "extractor   (a) 1  (b) 1  undecided 3" in out
    assert "llm judge   llm-judge:judge-llm: asked 3" in out and "audit queue 1" in out
    assert len(judge_server.requests) == 3
