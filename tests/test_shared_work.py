"""Concurrent identical commands on one workspace share the work (issue 15, part 3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_mmvp_images

REPO = Path(__file__).resolve().parent.parent


def start(*args: str) -> subprocess.Popen[str]:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "NO_PROXY": "127.0.0.1",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "amvicc", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def test_two_identical_generate_commands_make_each_image_once(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    Store(workspace).close()
    args = [
        "generate", "--model", "flux", "--base-url", "", "--index", "1-6",
        "--max-connections", "2", "--store", str(workspace),
    ]  # fmt: skip
    with FakeOpenAIServer(latency=0.8) as server:
        args[4] = server.url
        first = start(*args)
        second = start(*args)
        results = [finish(first), finish(second)]
        requests = [r for r in server.requests if r.path == "/v1/images/generations"]
    for code, _, err in results:
        assert code == 0, err[-3000:]
    assert len(requests) == 12  # 6 questions x 2 prompts, once each
    with Store(workspace) as store:
        rows = store.images(current=False)
        assert len(rows) == 12 == len({(r.question_index, r.prompt_kind, r.sample) for r in rows})
        (run,) = store.runs()
        assert run.status == "finished"
        makers = Counter(json.loads(r.params_json)["process"] for r in rows)
    made = [int(out.split("made ")[1].split(",")[0]) for _, out, _ in results]
    assert sum(made) == 12 and min(made) > 0, (made, [out for _, out, _ in results])
    assert sum(makers.values()) == 12


def test_two_identical_answer_commands_ask_each_question_once(tmp_path: Path) -> None:
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 21))
    workspace = tmp_path / "ws"
    Store(workspace).close()
    with FakeOpenAIServer(latency=0.5) as server:
        args = [
            "answer", "--model", "m", "--base-url", server.url, "--images", str(images),
            "--index", "1-20", "--max-connections", "2", "--store", str(workspace),
        ]  # fmt: skip
        results = [finish(p) for p in (start(*args), start(*args))]
        asked = [r for r in server.requests if r.path == "/v1/chat/completions"]
    for code, _, err in results:
        assert code == 0, err[-3000:]
    assert len(asked) == 20
    with Store(workspace) as store:
        assert len(store.responses(current=False)) == 20
    counts = [int(out.split("(")[1].split(" asked now")[0]) for _, out, _ in results]
    assert sum(counts) == 20 and min(counts) > 0, [out for _, out, _ in results]


def test_a_killed_processes_claims_return_at_once(tmp_path: Path) -> None:
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 13))
    workspace = tmp_path / "ws"
    Store(workspace).close()
    with FakeOpenAIServer(latency=0.4) as server:
        args = [
            "answer", "--model", "m", "--base-url", server.url, "--images", str(images),
            "--index", "1-12", "--max-connections", "4", "--store", str(workspace),
        ]  # fmt: skip
        victim = start(*args)
        deadline = time.monotonic() + 120
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        with Store(workspace) as store:
            assert store.held_leases(next(iter(_scopes(store))))  # it held claims
        started = time.monotonic()
        code, _, err = finish(start(*args))
        assert code == 0, err[-3000:]
        assert time.monotonic() - started < 60  # not after the claims' 120 s time to live
    with Store(workspace) as store:
        assert len(store.responses()) == 12
        (run,) = store.runs()
        assert run.status == "finished"


def _scopes(store: Store) -> set[str]:
    rows = store.connection().execute("SELECT DISTINCT scope FROM leases")
    return {r[0] for r in rows}


# Every stage that works per item shares it (issue 20: one run lifecycle; issue 23, point 2).


def _answered_workspace(tmp_path: Path, indices: str = "1-12") -> tuple[Path, str]:
    """A workspace with a graded answer run of the fake model (every reply decided)."""
    from amvicc.cli import main

    images = write_mmvp_images(tmp_path / "mmvp", range(1, 13))
    workspace = tmp_path / "ws"
    with FakeOpenAIServer() as fast:
        args = [
            "answer", "--model", "m", "--base-url", fast.url, "--images", str(images),
            "--index", indices, "--store", str(workspace), "-q",
        ]  # fmt: skip
        assert main(args) == 0
    with Store(workspace) as store:
        (run,) = store.runs(stage="answer")
    return workspace, run.run_id


def _both(args: list[str]) -> list[tuple[int, str, str]]:
    results = [finish(p) for p in (start(*args), start(*args))]
    for code, _, err in results:
        assert code == 0, err[-3000:]
    return results


def test_two_identical_challenge_commands_send_each_second_turn_once(tmp_path: Path) -> None:
    workspace, run_id = _answered_workspace(tmp_path)
    with FakeOpenAIServer(latency=0.4) as slow:
        args = [
            "challenge", "--run", run_id, "--arm", "assertion", "--base-url", slow.url,
            "--max-connections", "2", "--store", str(workspace),
        ]  # fmt: skip
        results = _both(args)
        second_turns = [r for r in slow.requests if r.path == "/v1/chat/completions"]
    assert len(second_turns) == 12  # one per decided first turn, once
    asked = Counter(str(r.body["messages"]) for r in second_turns)
    assert max(asked.values()) == 1
    with Store(workspace) as store:
        (run,) = store.runs(stage="challenge")
        assert len(store.responses(run_id=run.run_id, current=False)) == 12
        assert run.status == "finished"
    counts = [int(out.split("(")[1].split(" asked now")[0]) for _, out, _ in results]
    assert sum(counts) == 12 and min(counts) > 0, [out for _, out, _ in results]


def test_two_identical_judge_commands_ask_about_each_image_once(tmp_path: Path) -> None:
    from amvicc.cli import main

    workspace = tmp_path / "ws"
    with FakeOpenAIServer() as fast:
        args = [
            "generate", "--model", "flux", "--base-url", fast.url, "--index", "1-10",
            "--store", str(workspace), "-q",
        ]  # fmt: skip
        assert main(args) == 0
    with Store(workspace) as store:
        (generation,) = store.runs(stage="generate")
    with FakeOpenAIServer(latency=0.4) as slow:
        args = [
            "judge", "--run", generation.run_id, "--method", "question", "--judge", "judge-vlm",
            "--base-url", slow.url, "--max-connections", "2", "--store", str(workspace),
        ]  # fmt: skip
        _both(args)
        asked = [r for r in slow.requests if r.path == "/v1/chat/completions"]
    assert len(asked) == 10  # the 10 explicit images, once each
    with Store(workspace) as store:
        (judge_run,) = store.runs(stage="judge")
        assert len(store.responses(run_id=judge_run.run_id, current=False)) == 10
        verdicts = store.verdicts(source="judge:question:judge-vlm", current=False)
        assert len(verdicts) == 10 == len({v.image_id for v in verdicts})


def test_two_identical_grade_judge_commands_send_each_request_once(tmp_path: Path) -> None:
    workspace, run_id = _answered_workspace(tmp_path)
    with FakeOpenAIServer(chat=lambda request: "A", latency=0.4) as slow:
        args = [
            "grade", "--run", run_id, "--judge", "judge-llm", "--judge-base-url", slow.url,
            "--all", "--max-connections", "2", "--store", str(workspace),
        ]  # fmt: skip
        _both(args)
        asked = [r for r in slow.requests if r.path == "/v1/chat/completions"]
    assert len(asked) == 12
    with Store(workspace) as store:
        judged = store.verdicts(source="llm-judge:judge-llm", current=False)
        extracted = store.verdicts(source="extractor", current=False)
    assert len(judged) == 12 == len({v.response_id for v in judged})
    assert len(extracted) == 12 == len({v.response_id for v in extracted})


def test_two_identical_scene_builds_draw_each_image_once(tmp_path: Path) -> None:
    out = tmp_path / "scenes"
    args = ["scenes", "build", "--out", str(out), "--per-category", "3", "--seed", "7"]
    results = _both(args)
    drawn = [int(o.split("; ")[1].split(" drawn now")[0]) for _, o, _ in results]
    assert sum(drawn) == 54, [o for _, o, _ in results]
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        f"{i}.png" for i in range(1, 55)
    )
    # The same build again draws nothing: every image is there, as this build wrote it.
    code, again, err = finish(start(*args))
    assert code == 0, err
    assert "; 0 drawn now" in again


def test_sigterm_marks_the_run_interrupted_and_gives_its_claims_back(tmp_path: Path) -> None:
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 13))
    workspace = tmp_path / "ws"
    Store(workspace).close()
    with FakeOpenAIServer(latency=0.5) as server:
        args = [
            "answer", "--model", "m", "--base-url", server.url, "--images", str(images),
            "--index", "1-12", "--max-connections", "2", "--store", str(workspace),
        ]  # fmt: skip
        victim = start(*args)
        deadline = time.monotonic() + 120
        while len(server.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        victim.send_signal(signal.SIGTERM)
        code, _, err = finish(victim)
    assert code == 128 + signal.SIGTERM, err[-2000:]
    assert "stopped by signal" in err and "Traceback" not in err
    with Store(workspace) as store:
        (run,) = store.runs()
        assert run.status == "interrupted"
        assert run.summary.get("error")
        assert all(not store.held_leases(scope) for scope in _scopes(store))
        kept = [r for r in store.responses() if r.status == "ok"]
    assert 0 < len(kept) < 12
