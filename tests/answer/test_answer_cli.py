"""``amvicc answer`` end to end against a local OpenAI-compatible server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from amvicc.cli import main
from amvicc.store import EXTRACTOR_SOURCE, ImageRecord, RunSpec, Store, new_id
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault, iter_image_parts, last_user_text
from amvicc.testing.mmvp_images import image_bytes, reply_by_index, write_mmvp_images


def answer(server: FakeOpenAIServer, images: Path, store: Path, *extra: str) -> int:
    return main(
        [
            "answer", "--model", "fake-vlm", "--base-url", server.url, "--images", str(images),
            "--store", str(store), "-q", *extra,
        ]
    )  # fmt: skip


def extractor_values(store: Store) -> dict[tuple[int, int], str]:
    by_response = {v.response_id: v.value for v in store.verdicts(source=EXTRACTOR_SOURCE)}
    return {
        (r.question_index, r.sample): by_response[r.response_id]
        for r in store.responses()
        if r.status == "ok"
    }


def test_all_300_questions_survive_faults_and_regrade_offline(
    server: FakeOpenAIServer, images: Path, tmp_path: Path, cycle: Any
) -> None:
    server.inject(
        Fault.http(429, retry_after=0.1),
        Fault.http(500),
        Fault.http(503),
        Fault.hang(2.5),
        Fault.malformed(),
        Fault.malformed(),
    )
    workspace = tmp_path / "ws"
    assert answer(server, images, workspace, "--max-connections", "8", "--timeout", "1") == 0
    assert server.pending_faults() == 0
    with Store(workspace, create=False) as store:
        (run,) = store.runs(stage="answer")
        responses = store.responses(run_id=run.run_id)
        assert len(responses) == 300 and all(r.status == "ok" for r in responses)
        # the two malformed bodies are kept as error rows, superseded by the retried replies
        history = store.responses(run_id=run.run_id, current=False)
        malformed = [r for r in history if r.status == "error"]
        assert len(malformed) == 2
        assert all(
            store.path(r.raw_path or "").read_bytes() == b"{this is not json" for r in malformed
        )
        first = extractor_values(store)
        assert first == {(i, 0): cycle.value(i) for i in range(1, 301)}
        assert len(store.undecided_responses()) == 75  # every 4th reply hedges
        verdicts_before = len(store.verdicts(current=False))

    requests_before = len(server.requests)
    assert main(["grade", "--store", str(workspace), "-q"]) == 0
    assert len(server.requests) == requests_before  # not a single request to the model
    with Store(workspace, create=False) as store:
        assert extractor_values(store) == first
        assert len(store.verdicts(current=False)) == verdicts_before  # nothing changed


def test_every_reply_is_stored_with_its_request(
    server: FakeOpenAIServer, images: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_KEY", "sk-secret-value")
    workspace = tmp_path / "ws"
    extra = ("--index", "1-4", "--seed", "3", "--api-key-env", "LOCAL_KEY")
    assert answer(server, images, workspace, *extra) == 0
    assert server.requests[0].authorization == "Bearer sk-secret-value"
    with Store(workspace, create=False) as store:
        (run,) = store.runs()
        assert run.stage == "answer" and run.model == "fake-vlm" and not run.smoke
        assert run.label_policy == "corrected" and run.status == "finished"
        assert run.config["base_url"] == server.url and run.config["api_key_env"] == "LOCAL_KEY"
        assert "sk-secret-value" not in run.config_json + (run.command or "")
        for response in store.responses():
            body = json.loads(store.path(response.raw_path or "").read_bytes())
            assert body["choices"][0]["message"]["content"] == response.text
            request = json.loads(response.request_json)
            assert request["model"] == "fake-vlm" and request["max_tokens"] == 512
            assert request["temperature"] == 0.0 and isinstance(request["seed"], int)
            assert response.latency_s and response.prompt_tokens and response.completion_tokens
            # the image the model saw is copied into the workspace, content-addressed
            assert response.input_path and response.input_path.startswith("inputs/")
            assert store.path(response.input_path).read_bytes() == image_bytes(
                response.question_index
            )
        prompts = {r.question_index: r.prompt for r in store.responses()}
        raw = b"".join(store.path(r.raw_path or "").read_bytes() for r in store.responses())
    assert b"sk-secret-value" not in raw
    assert prompts[1] == (
        "Are the butterfly's wings closer to being open or closed?\n(a) Open (b) Closed\n"
        "Answer with the option's letter from the given choices directly."
    )
    sent = [last_user_text(r.body) for r in server.requests]
    assert sorted(sent) == sorted(prompts.values())
    seeds = {r.body["seed"] for r in server.requests}
    assert len(seeds) == 4  # one seed per item, derived from --seed and the slot


def test_rerun_asks_nothing_and_errors_are_retried(
    images: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(chat=reply_by_index(lambda i: "(a)")) as server:
        workspace = tmp_path / "ws"
        # one connection: the first two items fail twice each (the first try and one retry)
        server.inject(*[Fault.http(500) for _ in range(4)])
        assert (
            answer(
                server,
                images,
                workspace,
                "--index",
                "1-10",
                "--max-retries",
                "1",
                "--max-connections",
                "1",
            )
            == 1
        )
        err = capsys.readouterr().err
        assert "2 request(s) failed" in err and "rerun the same command" in err
        with Store(workspace, create=False) as store:
            (run,) = store.runs()
            assert run.status == "failed" and run.summary["errors"] == 2
            errors = [r for r in store.responses() if r.status == "error"]
            assert len(errors) == 2 and all(r.error and "HTTP 500" in r.error for r in errors)
            # failed requests are not graded (never counted as wrong answers)
            graded = {v.response_id for v in store.verdicts()}
            assert not graded & {r.response_id for r in errors}
        before = len(server.requests)
        assert answer(server, images, workspace, "--index", "1-10") == 0
        assert len(server.requests) - before == 2  # only the two failed slots
        before = len(server.requests)
        assert answer(server, images, workspace, "--index", "1-10") == 0
        assert len(server.requests) == before
        with Store(workspace, create=False) as store:
            assert store.runs()[0].status == "finished"
            assert len(store.responses()) == 10


def test_missing_images_are_listed_before_any_request(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_mmvp_images(
        tmp_path / "imgs", [i for i in range(1, 21) if i not in (4, 5, 6, 17)]
    )
    (folder / "9.png").write_bytes(b"not an image at all")
    status = answer(server, folder, tmp_path / "ws", "--index", "1-20")
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "5 of 20 images" in err and "missing: 4-6, 17" in err and "unreadable: 9" in err
    assert "--skip-missing" in err
    assert server.requests == []
    assert answer(server, folder, tmp_path / "ws", "--index", "1-20", "--skip-missing") == 0
    assert len(server.requests) == 15


def test_snapshot_layout_and_jpegs(server: FakeOpenAIServer, tmp_path: Path) -> None:
    snapshot = tmp_path / "MMVP"
    write_mmvp_images(snapshot / "MMVP Images", range(1, 5), suffix=".jpg")
    (snapshot / "Questions.csv").write_text("Index,Question,Options,Correct Answer\n")
    assert answer(server, snapshot, tmp_path / "ws", "--index", "1-4") == 0
    with Store(tmp_path / "ws", create=False) as store:
        paths = [r.input_path or "" for r in store.responses()]
    assert len(paths) == 4 and all(p.endswith(".jpg") for p in paths)


def test_repeats_and_custom_template(
    server: FakeOpenAIServer, images: Path, tmp_path: Path
) -> None:
    template = tmp_path / "mine.jinja"
    template.write_text("Q{{ question.index }}: {{ question.text }} {{ question.options_text }}")
    workspace = tmp_path / "ws"
    extra = (
        "--index",
        "1-3",
        "--repeats",
        "3",
        "--temperature",
        "0.7",
        "--template",
        str(template),
    )
    assert answer(server, images, workspace, *extra) == 0
    with Store(workspace, create=False) as store:
        responses = store.responses()
        assert Counter(r.question_index for r in responses) == {1: 3, 2: 3, 3: 3}
        assert {r.sample for r in responses} == {0, 1, 2}
        assert responses[0].prompt.startswith("Q1: Are the butterfly's wings")
        seeds = {json.loads(r.request_json)["seed"] for r in responses}
        assert len(seeds) == 9
        assert {json.loads(r.request_json)["temperature"] for r in responses} == {0.7}
    # a different template is a different run: its replies never mix with the old ones
    assert answer(server, images, workspace, "--index", "1-3") == 0
    with Store(workspace, create=False) as store:
        assert len(store.runs()) == 2


def test_bad_template_is_one_line(
    server: FakeOpenAIServer, images: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "bad.jinja"
    template.write_text("{{ question.text }}\n{{ nonsense.here }}")
    assert answer(server, images, tmp_path / "ws", "--index", "1", "--template", str(template)) == 2
    err = capsys.readouterr().err
    assert "nonsense" in err and len(err.strip().splitlines()) == 1
    template.write_text("{% for x in %}")
    assert answer(server, images, tmp_path / "ws", "--index", "1", "--template", str(template)) == 2
    assert "line 1" in capsys.readouterr().err
    assert server.requests == []


def test_original_labels_are_the_runs_policy(
    server: FakeOpenAIServer, images: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    assert answer(server, images, workspace, "--index", "99-100", "--original-labels") == 0
    with Store(workspace, create=False) as store:
        (run,) = store.runs()
        assert run.label_policy == "original"


def make_generation_run(store: Store) -> dict[tuple[int, str], str]:
    """A finished generation run with images for questions 1-2, both prompt kinds."""
    run = store.start_run(RunSpec(stage="generate", model="tiny-sd3", outputs={"x": 1}, smoke=True))
    ids: dict[tuple[int, str], str] = {}
    for index in (1, 2):
        for kind in ("implicit", "explicit"):
            image_id = new_id()
            store.add_image(
                ImageRecord(
                    image_id=image_id,
                    run_id=run.run_id,
                    config_key=run.config_key,
                    question_index=index,
                    prompt_kind=kind,  # type: ignore[arg-type]
                    sample=0,
                    prompt=f"prompt {index} {kind}",
                    seed=1,
                    status="ok",
                ),
                image_bytes(index),
            )
            ids[(index, kind)] = image_id
    store.finish_run(run.run_id, "finished")
    return ids


def test_answers_about_generated_images(server: FakeOpenAIServer, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    with Store(workspace) as store:
        ids = make_generation_run(store)
        (generation,) = store.runs()
    status = main(
        ["answer", "--model", "fake-vlm", "--base-url", server.url, "--generated",
         generation.run_id, "--store", str(workspace), "-q"]
    )  # fmt: skip
    assert status == 0
    with Store(workspace, create=False) as store:
        answers = [r for r in store.responses() if r.run_id != generation.run_id]
        # explicit images only by default: they have a correct answer (the option they show)
        assert {(r.question_index, r.image_key) for r in answers} == {
            (1, ids[(1, "explicit")]),
            (2, ids[(2, "explicit")]),
        }
        for response in answers:
            assert response.image_id == response.image_key
            assert response.input_path == store.image(response.image_key).path
            assert json.loads(response.request_json)["prompt_kind"] == "explicit"
    status = main(
        ["answer", "--model", "fake-vlm", "--base-url", server.url, "--generated",
         generation.run_id, "--kind", "both", "--store", str(workspace), "-q"]
    )  # fmt: skip
    assert status == 0
    # --kind selects images (like --index); the run is the same, its explicit answers reused
    assert len(server.requests) == 4
    with Store(workspace, create=False) as store:
        assert len([r for r in store.responses() if r.image_id]) == 4


def test_generated_needs_a_generation_run(
    server: FakeOpenAIServer, images: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert answer(server, images, workspace, "--index", "1") == 0
    with Store(workspace, create=False) as store:
        (run,) = store.runs()
    status = main(
        [
            "answer",
            "--model",
            "m",
            "--base-url",
            server.url,
            "--generated",
            run.run_id,
            "--store",
            str(workspace),
        ]
    )
    assert status == 2
    assert "takes a generate run" in capsys.readouterr().err


def test_answer_runs_the_llm_judge_on_undecided_replies(
    server: FakeOpenAIServer, images: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(chat=lambda request: "B") as judge:
        extra = ("--index", "1-8", "--judge", "judge-llm", "--judge-base-url", judge.url)
        assert answer(server, images, tmp_path / "ws", *extra) == 0
        assert len(judge.requests) == 2  # indices 2 and 6 hedge (see the cycle)
        assert all(not list(iter_image_parts(r.body)) for r in judge.requests)
    with Store(tmp_path / "ws", create=False) as store:
        assert store.undecided_responses() == []
        judged = store.verdicts(source="llm-judge:judge-llm")
        assert {v.value for v in judged} == {"b"} and len(judged) == 2


def test_selections_add_up_in_one_run(
    server: FakeOpenAIServer, images: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    assert answer(server, images, workspace, "--index", "1-4") == 0
    assert answer(server, images, workspace, "--categories", "tx", "--limit", "2") == 0
    with Store(workspace, create=False) as store:
        assert len(store.runs()) == 1
        assert len(store.responses()) == 6
        assert len(store.verdicts(source=EXTRACTOR_SOURCE)) == 6  # all graded
