from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.judge.methods import decide_rubric
from amvicc.judge.options import JudgeOptions
from amvicc.judge.runner import run_judge
from amvicc.report import judge_agreement
from amvicc.store import Store, VerdictRecord, human_source
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault, last_user_text
from amvicc.testing.mmvp_images import reply_by_index
from amvicc.vlm.engine import SamplingParams

from .conftest import add_generation, text_png

QUESTION_REPLIES = {
    1: "(a) Open",  # shows (a): correct
    2: "The wings are open.",  # shows (b) Closed: incorrect
    3: "I cannot tell from this image.",  # undecided, never incorrect
    4: "**(b) Thin**",  # shows (b): correct
}


def _options(
    run_id: str, method: str, server: FakeOpenAIServer | None, **extra: object
) -> JudgeOptions:
    api = ApiSettings(base_url=server.url, max_retries=3, timeout=5) if server else ApiSettings()
    settings: dict[str, object] = {"judge": "judge-vlm", "api": api, "progress": False, **extra}
    return JudgeOptions(run_id=run_id, method=method, **settings)  # type: ignore[arg-type]


def test_question_judge_closes_the_loop_and_resumes(store: Store, catalogue: Catalogue) -> None:
    run_id, ids = add_generation(
        store, catalogue, [(i, "explicit") for i in QUESTION_REPLIES] + [(1, "implicit")]
    )
    with FakeOpenAIServer(chat=reply_by_index(QUESTION_REPLIES.__getitem__)) as server:
        server.inject(Fault.http(500), Fault.http(429, retry_after=0.05))
        summary = run_judge(_options(run_id, "question", server), store=store, catalogue=catalogue)
        assert summary.source == "judge:question:judge-vlm"
        assert summary.images == 4 and summary.skipped == 1  # implicit: rubric only
        assert summary.verdicts == {"correct": 2, "incorrect": 1, "undecided": 1}
        asked = len(server.requests)
        again = run_judge(_options(run_id, "question", server), store=store, catalogue=catalogue)
        assert len(server.requests) == asked  # resumed: nothing asked twice
        assert again.verdicts == summary.verdicts
    verdicts = {v.image_id: v for v in store.verdicts(source="judge:question:judge-vlm")}
    assert {ids[(i, "explicit")]: verdicts[ids[(i, "explicit")]].value for i in (1, 2, 3, 4)} == {
        ids[(1, "explicit")]: "correct",
        ids[(2, "explicit")]: "incorrect",
        ids[(3, "explicit")]: "undecided",
        ids[(4, "explicit")]: "correct",
    }
    detail = json.loads(verdicts[ids[(2, "explicit")]].detail_json)
    assert detail["reply"] == "The wings are open." and detail["method"] == "question"
    assert detail["model"] == "judge-vlm" and detail["temperature"] == 0.0
    assert isinstance(detail["seed"], int) and detail["template"] == "answer.jinja"
    assert verdicts[ids[(1, "explicit")]].run_id == summary.judge_run
    assert store.run(summary.judge_run).stage == "judge"
    # Judge replies are stored, but they are no VLM answers: nothing reaches the audit queue.
    assert store.undecided_responses() == []


def test_rubric_judge_reads_grades_and_sees_the_rubric(store: Store, catalogue: Catalogue) -> None:
    slots = [(9, "implicit"), (9, "explicit"), (10, "explicit")]
    run_id, ids = add_generation(store, catalogue, slots)
    replies = {9: "All criteria hold.\nGRADE: C", 10: "The key is visible. **GRADE: I**"}

    def chat(request: dict[str, object]) -> str:
        text = last_user_text(request)
        if "implicit prompt" in text:
            return "I am not sure what to say."
        return reply_by_index(replies.__getitem__)(request)

    with FakeOpenAIServer(chat=chat) as server:
        summary = run_judge(_options(run_id, "rubric", server), store=store, catalogue=catalogue)
        prompts = [last_user_text(r.body) for r in server.requests]
    assert summary.verdicts == {"correct": 1, "incorrect": 1, "undecided": 1}
    explicit = next(p for p in prompts if "explicit prompt" in p and "Z key clearly visible" in p)
    assert "legible and spelled correctly" in explicit  # the Text rubric's explicit criteria
    assert 'answer the question "Can you see the key "Z" in the image?" with: (a) Yes' in explicit
    verdict = store.verdicts(image_id=ids[(9, "implicit")], source="judge:rubric:judge-vlm")[0]
    assert (
        verdict.value == "undecided"
        and verdict.rubric_version
        and verdict.rubric_version.startswith("tx@1:")
    )


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("GRADE: C", "correct"),
        ("grade: i", "incorrect"),
        ("First GRADE: C, on reflection GRADE: I", "incorrect"),
        ("**GRADE:** (C)", "correct"),
        ("The image is correct.", "undecided"),
        ("", "undecided"),
        (None, "undecided"),
    ],
)
def test_rubric_grades_parse_or_stay_undecided(reply: str | None, value: str) -> None:
    assert decide_rubric(reply).value == value


@pytest.mark.slow
def test_ocr_judge_reads_text_images(store: Store, catalogue: Catalogue) -> None:
    texts = {277: "SUGAR", 278: "SUGAR", 91: "POLICE", 92: "POLICE"}
    slots = [(i, "explicit") for i in texts] + [(1, "explicit"), (277, "implicit")]
    run_id, ids = add_generation(
        store, catalogue, slots, draw=lambda index, kind: text_png(texts.get(index, ""))
    )
    summary = run_judge(_options(run_id, "ocr", None, judge=None), store=store, catalogue=catalogue)
    assert summary.source == "judge:ocr:rapidocr"
    assert summary.images == 4 and summary.skipped == 2  # an implicit image; 1 is not Text
    values = {
        i: store.verdicts(image_id=ids[(i, "explicit")], source=summary.source)[0] for i in texts
    }
    # 277 demands SUGAR; 278 demands UGA, which SUGAR only contains; 92 demands no POLICE.
    assert {i: v.value for i, v in values.items()} == {
        277: "correct",
        278: "incorrect",
        91: "correct",
        92: "incorrect",
    }
    assert "SUGAR" in json.loads(values[277].detail_json)["texts"]
    again = run_judge(_options(run_id, "ocr", None, judge=None), store=store, catalogue=catalogue)
    assert again.verdicts == summary.verdicts
    assert len(store.verdicts(source=summary.source, current=False)) == 4


def test_judge_agreement_with_humans_matches_hand_computation(
    store: Store, catalogue: Catalogue
) -> None:
    slots = [(i, "explicit") for i in range(1, 9)]
    _, ids = add_generation(store, catalogue, slots)
    # human, judge per image: tp=3, fp=1, tn=3, fn=1
    pairs = ["cc", "cc", "cc", "ic", "ii", "ii", "ii", "ci"]
    name = {"c": "correct", "i": "incorrect"}
    verdicts = []
    for image_id, (human, judge) in zip(ids.values(), pairs, strict=True):
        verdicts.append(VerdictRecord(human_source("ann"), name[human], image_id=image_id))
        verdicts.append(VerdictRecord("judge:ocr:rapidocr", name[judge], image_id=image_id))
    store.add_verdicts(verdicts)
    table = judge_agreement(store)
    row = table[(table["category"] == "all") & (table["label"] != "all")].iloc[0]
    assert (row["tp"], row["fp"], row["tn"], row["fn"]) == (3, 1, 3, 1)
    assert row["accuracy"] == pytest.approx(6 / 8)
    assert row["false_positive_rate"] == pytest.approx(1 / 4)
    assert row["recall"] == pytest.approx(3 / 4)
    # By hand: po = 6/8, pe = (4/8)(4/8) + (4/8)(4/8) = 1/2, kappa = (3/4 - 1/2) / (1/2) = 1/2.
    assert row["kappa"] == pytest.approx(0.5)
    humans = [name[h] for h, _ in pairs]
    judges = [name[j] for _, j in pairs]
    assert math.isclose(row["kappa"], cohen_kappa_score(humans, judges))


def test_judge_mistakes_are_one_line(store: Store, catalogue: Catalogue, tmp_path: Path) -> None:
    run_id, _ = add_generation(store, catalogue, [(1, "explicit")])
    workspace = str(store.root)
    for argv, fragment in [
        (["--run", run_id, "--method", "question"], "needs --judge MODEL"),
        (["--run", "nope", "--method", "ocr"], "no run 'nope'"),
        (["--run", run_id, "--method", "ocr"], "no image of run"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "amvicc.judge", "--store", workspace, *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        assert fragment in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_judge_cli_runs_the_question_method(
    store: Store, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, _ = add_generation(store, catalogue, [(1, "explicit"), (2, "explicit")])
    with FakeOpenAIServer(chat=lambda request: "(a)") as server:
        status = main(
            [
                "judge",
                "--store",
                str(store.root),
                "--run",
                run_id,
                "--method",
                "question",
                "--judge",
                "m",
                "--base-url",
                server.url,
                "-q",
            ]
        )
    assert status == 0
    assert "judge:question:m: 2 image(s) judged" in capsys.readouterr().out
    assert SamplingParams().temperature == 0.0
