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
