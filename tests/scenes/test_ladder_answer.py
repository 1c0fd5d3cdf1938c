"""``amvicc answer --ladder`` end to end: rungs asked, replies stored, three-stage grading."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amvicc.cli import main
from amvicc.ladder import COMPARATOR_VERSION, LadderQuestion, load_ladder, read_reply
from amvicc.scenes import ScenesOptions, run_scenes
from amvicc.store import EXTRACTOR_SOURCE, Store
from amvicc.testing.fake_openai import FakeOpenAIServer, last_user_text

WRONG_LEVEL = 4  # the scripted model answers rung 4 wrongly
UNREADABLE_LEVEL = 5  # and rung 5 with two numbers, which the comparator must not decide


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scenes") / "scenes"
    run_scenes(ScenesOptions(out=out, per_category=1, seed=3, categories=("qc", "pr")))
    return out


def _rungs_by_question(scenes: Path) -> dict[str, list[LadderQuestion]]:
    found: dict[str, list[LadderQuestion]] = {}
    for rungs in load_ladder(scenes / "ladder.jsonl").values():
        for rung in rungs:
            found.setdefault(rung.question, []).append(rung)
    return found


def _scripted(scenes: Path) -> Any:
    """A model that knows the answers: right on rungs 1-3, wrong on 4, unreadable on 5.

    The judge (asked without an image, with the correct answer in its prompt) says CORRECT.
    """
    by_question = _rungs_by_question(scenes)

    def reply(request: dict[str, Any]) -> str:
        text = last_user_text(request)
        if "Correct answer:" in text:
            return "CORRECT"
        question = text.splitlines()[0]
        if question not in by_question:
            return "(a)"  # a scene's own question, asked without --ladder
        rung = by_question[question][0]
        if rung.type == "integer":
            # questions of the same wording in different images may have other answers
            answers = {r.answer for r in by_question[question]}
            if rung.level == WRONG_LEVEL:
                return f"The answer is {max(int(a) for a in answers) + 7}."
            if rung.level == UNREADABLE_LEVEL:
                return "Either 1 or 2, I cannot tell."
            if len(answers) > 1:
                return "Either 1 or 2, I cannot tell."
            return f"I count {rung.answer}."
        if rung.type == "option":
            return "Either, I cannot tell."  # pair questions share wording: never guess
        if len({r.answer for r in by_question[question]}) > 1:
            return "Either, I cannot tell."
        return f"Answer: {rung.answer}"

    return reply


@pytest.fixture
def server(scenes: Path) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(chat=_scripted(scenes)) as fake:
        yield fake


def _answer(server: FakeOpenAIServer, scenes: Path, store: Path, *extra: str) -> int:
    return main(
        [
            "answer", "--model", "fake-vlm", "--base-url", server.url,
            "--catalogue", str(scenes / "catalogue.csv"), "--images", str(scenes / "images"),
            "--ladder", "--store", str(store), "-q", *extra,
        ]
    )  # fmt: skip


def _expected_values(store: Store, run_id: str) -> Counter[str]:
    """What the comparator should decide, worked out from each stored rung and reply."""
    values: Counter[str] = Counter()
    for response in store.responses(run_id=run_id):
        rung = LadderQuestion.from_manifest(json.loads(response.request_json)["rung"])
        values[read_reply(rung, response.text).value] += 1
    return values


def test_every_rung_is_asked_stored_and_graded(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert _answer(server, scenes, workspace) == 0
    out = capsys.readouterr().out
    assert "answered 20/20 ladder rungs" in out and "graded ladder run" in out
    ladder = load_ladder(scenes / "ladder.jsonl")
    with Store(workspace, create=False) as store:
        (run,) = store.runs(stage="ladder")
        assert not store.runs(stage="answer")  # the MMVP answers' runs stay apart
        assert run.config["ladder"] == str((scenes / "ladder.jsonl").resolve())
        responses = store.responses(run_id=run.run_id)
        assert len(responses) == 4 * 5 and all(r.status == "ok" for r in responses)
        for response in responses:
            rung = LadderQuestion.from_manifest(json.loads(response.request_json)["rung"])
            assert response.image_key == f"rung:{rung.level}"
            assert ladder[response.question_index][rung.level - 1] == rung
            assert response.prompt.splitlines()[0] == rung.question
        verdicts = store.verdicts(source=EXTRACTOR_SOURCE)
        by_level: dict[int, Counter[str]] = {}
        rung_of = {r.response_id: int(r.image_key.split(":")[1]) for r in responses}
        for verdict in verdicts:
            by_level.setdefault(rung_of[verdict.response_id or ""], Counter())[verdict.value] += 1
        # rung 4 answered wrongly everywhere, rung 5 never decided
        assert by_level[WRONG_LEVEL] == Counter(incorrect=4)
        assert by_level[UNREADABLE_LEVEL] == Counter(undecided=4)
        assert by_level[1]["incorrect"] == 0 and by_level[1]["correct"] > 0
        assert Counter(v.value for v in verdicts) == _expected_values(store, run.run_id)
        read = [json.loads(v.detail_json) for v in verdicts if v.value == "correct"]
        assert all(
            d["read"] is not None and d["comparator_version"] == COMPARATOR_VERSION for d in read
        )
        undecided = {r.response_id for r in store.undecided_responses()}
        assert undecided == {v.response_id for v in verdicts if v.value == "undecided"}
        # the audit sample draws from the comparator's decisions
        assert {s.stratum for s in store.audit_samples([run.run_id])} == {"extractor"}
    # rerunning asks nothing again
    requests = len(server.requests)
    assert _answer(server, scenes, workspace) == 0
    assert len(server.requests) == requests


def test_the_llm_judge_decides_only_what_the_comparator_could_not(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert _answer(server, scenes, workspace) == 0
    with Store(workspace, create=False) as store:
        undecided = {r.response_id for r in store.undecided_responses()}
    capsys.readouterr()
    assert main(
        ["grade", "--store", str(workspace), "--judge", "fake-judge",
         "--judge-base-url", server.url, "-q"]
    ) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"asked {len(undecided)} (reused 0): correct {len(undecided)}" in out
    with Store(workspace, create=False) as store:
        judged = store.verdicts(source="llm-judge:fake-judge")
        assert {v.response_id for v in judged} == undecided
        assert {v.value for v in judged} == {"correct"}
        detail = json.loads(judged[0].detail_json)
        assert "Correct answer:" in detail["prompt"] and detail["reply"] == "CORRECT"
        assert store.undecided_responses() == []
        # the comparator's incorrect answers are never overridden
        assert Counter(v.value for v in store.verdicts(source=EXTRACTOR_SOURCE))["incorrect"] == 4
    # judged again with the same settings: nothing asked
    requests = len(server.requests)
    assert main(
        ["grade", "--store", str(workspace), "--judge", "fake-judge",
         "--judge-base-url", server.url, "-q"]
    ) == 0  # fmt: skip
    assert len(server.requests) == requests


def test_bad_ladders_fail_with_one_line_before_any_request(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    lines = (scenes / "ladder.jsonl").read_text().splitlines()
    broken.write_text("\n".join([lines[0], '{"index": 2, "questions": [{"level": 9}]}']) + "\n")
    assert _answer(server, scenes, tmp_path / "ws", "--ladder", str(broken)) == 2
    err = capsys.readouterr().err
    assert f"{broken}, line 2: not a ladder entry (level must be one of 1-5" in err
    assert "Traceback" not in err

    short = tmp_path / "short.jsonl"
    short.write_text(lines[0] + "\n")
    assert _answer(server, scenes, tmp_path / "ws", "--ladder", str(short)) == 2
    assert f"{short} has no rungs for image(s) 2-4" in capsys.readouterr().err

    assert _answer(server, scenes, tmp_path / "ws", "--ladder", str(tmp_path / "none")) == 2
    assert "no ladder at" in capsys.readouterr().err
    assert server.requests == []
    assert not (tmp_path / "ws").exists() or not Store(tmp_path / "ws").runs()


def test_generated_images_have_no_ladder(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        ["answer", "--model", "fake-vlm", "--base-url", server.url, "--generated", "run-x",
         "--catalogue", str(scenes / "catalogue.csv"), "--ladder",
         "--store", str(tmp_path / "ws"), "-q"]
    )  # fmt: skip
    assert status == 2
    assert "the question ladder is asked about scene images" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("reply", "read", "value"),
    [
        ("I count 3 squares.", "3", "correct"),
        ("three", "3", "correct"),
        ("There are 4.", "4", "incorrect"),
        ("Maybe 3, maybe 4.", None, "undecided"),
        ("", None, "undecided"),
    ],
)
def test_integer_rungs_are_read_or_left_undecided(reply: str, read: str | None, value: str) -> None:
    rung = LadderQuestion(1, "How many squares are in the image?", "integer", "3")
    reading = read_reply(rung, reply)
    assert (reading.read, reading.value) == (read, value)


@pytest.mark.parametrize(
    ("rung", "reply", "read", "value"),
    [
        (LadderQuestion(3, "Is it larger?", "yes/no", "no", ("yes", "no")), "No.", "no", "correct"),
        (LadderQuestion(3, "Is it larger?", "yes/no", "no", ("yes", "no")), "Yes", "yes", "incorrect"),
        (LadderQuestion(3, "Which half?", "word", "left", ("left", "right")), "The LEFT half.", "left", "correct"),
        (LadderQuestion(3, "Which half?", "word", "left", ("left", "right")), "left or right", None, "undecided"),
        (LadderQuestion(2, "Open?", "option", "(b)", ("Open", "Closed")), "(b) Closed", "(b)", "correct"),
    ],
)  # fmt: skip
def test_typed_rungs_are_read_by_the_extractor(
    rung: LadderQuestion, reply: str, read: str | None, value: str
) -> None:
    reading = read_reply(rung, reply)
    assert (reading.read, reading.value) == (read, value)


def _comparator_outcomes(store: Store) -> dict[tuple[int, int], str]:
    """(image, level) -> the comparator's verdict, read straight from the store."""
    responses = {r.response_id: r for r in store.responses()}
    return {
        (responses[v.response_id or ""].question_index, int(responses[v.response_id or ""].image_key[5:])): v.value
        for v in store.verdicts(source=EXTRACTOR_SOURCE)
    }  # fmt: skip


def test_the_report_counts_levels_chains_and_baselines(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert _answer(server, scenes, workspace) == 0
    with Store(workspace, create=False) as store:
        outcomes = _comparator_outcomes(store)
    # an ordinary answer run beside it: the report has both, the ladder apart
    plain = ["answer", "--model", "fake-vlm", "--base-url", server.url, "--catalogue",
             str(scenes / "catalogue.csv"), "--images", str(scenes / "images"),
             "--store", str(workspace), "-q"]  # fmt: skip
    assert main(plain) == 0
    images = sorted({index for index, _ in outcomes})
    ladder = load_ladder(scenes / "ladder.jsonl")
    csv_path = tmp_path / "r.csv"
    assert main(["report", "--store", str(workspace), "--catalogue", str(scenes / "catalogue.csv"),
                 "-o", str(csv_path), "-q"]) == 0  # fmt: skip
    rows = {
        (r["category"], r["metric"]): r
        for r in csv.DictReader(csv_path.open())
        if r["condition"] == "ladder"
    }
    for level in range(1, 6):
        right = sum(outcomes[(i, level)] == "correct" for i in images)
        missing = sum(outcomes[(i, level)] == "undecided" for i in images)
        row = rows[("all", f"ladder L{level}")]
        assert (int(row["correct"]), int(row["total"])) == (right, len(images))
        assert float(row["value"]) == pytest.approx(right / len(images))
        assert float(rows[("all", f"ladder L{level} missing")]["value"]) == missing
        answers = Counter(ladder[i][level - 1].answer for i in images)
        baseline = float(rows[("all", f"ladder L{level} baseline")]["value"])
        assert baseline == pytest.approx(max(answers.values()) / len(images))
    assert int(rows[("all", "ladder L4")]["correct"]) == 0  # the script always errs there
    # Chains: 1-3 are never wrong, 4 always is: a chain breaks at 4 unless a rung before it
    # could not be read, which makes its break unknown.
    clean = sum(all(outcomes[(i, lv)] == "correct" for lv in (1, 2, 3)) for i in images)
    assert int(rows[("all", "ladder first failed 4")]["correct"]) == clean
    assert int(rows[("all", "ladder first failed unknown")]["correct"]) == len(images) - clean
    for level in ("1", "2", "3", "5", "none"):
        assert int(rows[("all", f"ladder first failed {level}")]["correct"]) == 0
    # per category: qc and pr, two images each
    assert {c for c, m in rows if m == "ladder L1"} == {"qc", "pr", "all"}
    assert int(rows[("qc", "ladder L1")]["total"]) == 2

    # under --missing exclude the unreadable level 5 has nothing left to count (and the plain
    # run, every answer undecided, has no item left: that once crashed the failure modes)
    md = tmp_path / "r.md"
    assert main(["report", "--store", str(workspace), "--catalogue", str(scenes / "catalogue.csv"),
                 "--missing", "exclude", "-o", str(md), "-q"]) == 0  # fmt: skip
    text = md.read_text()
    assert "## Question ladder (procedural scenes)" in text
    (level5,) = [line for line in text.splitlines() if line.startswith("| 5 counterfactual")]
    assert level5.split("|")[-3].strip() == str(len(images))  # missing: all of them
    assert "| – | – | – |" in level5  # no decided rung: no accuracy
    assert "## Results" in text  # the ordinary answers' tables are there too

    out = tmp_path / "r.json"
    assert main(["report", "--store", str(workspace), "--catalogue", str(scenes / "catalogue.csv"),
                 "-o", str(out), "-q"]) == 0  # fmt: skip
    document = json.loads(out.read_text())
    (entry,) = document["ladder"]["entries"]
    assert entry["model"] == "fake-vlm" and entry["catalogue"] == "scenes"
    assert len(document["ladder"]["levels"]) == 5 * 3


def test_a_workspace_of_ladder_runs_alone_is_reported(
    server: FakeOpenAIServer, scenes: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    assert _answer(server, scenes, workspace) == 0
    for fmt in ("html", "md", "csv", "json"):
        out = tmp_path / f"r.{fmt}"
        assert main(["report", "--store", str(workspace), "-o", str(out), "-q"]) == 0
        text = out.read_text()
        assert "ladder" in text and "fake-vlm" in text
    assert "<h2>Question ladder (procedural scenes)</h2>" in (tmp_path / "r.html").read_text()
    assert (
        json.loads((tmp_path / "r.json").read_text())["ladder"]["entries"][0]["label"] == "fake-vlm"
    )
