"""A killed answering process resumes where it stopped; its path imports no heavy library."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from amvicc.cli import main
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import reply_by_index

HEAVY = ("torch", "diffusers", "transformers", "pandas")


def command(server: FakeOpenAIServer, images: Path, workspace: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "amvicc.answer", "--model", "fake-vlm", "--base-url", server.url,
        "--images", str(images), "--store", str(workspace), "-q", *extra,
    ]  # fmt: skip


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def stored_ok(workspace: Path) -> int:
    database = workspace / "amvicc.sqlite"
    if not database.is_file():
        return 0
    try:
        with sqlite3.connect(database, timeout=5) as conn:
            return int(
                conn.execute("SELECT COUNT(*) FROM responses WHERE status = 'ok'").fetchone()[0]
            )
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def test_resume_after_kill(images: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    with FakeOpenAIServer(chat=reply_by_index(lambda i: f"({'ab'[i % 2]})"), latency=0.1) as server:
        process = subprocess.Popen(
            command(server, images, workspace, "--index", "1-60", "--max-connections", "2"),
            env=environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while stored_ok(workspace) < 10 and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done_before = stored_ok(workspace)
        assert 10 <= done_before < 60
        first_requests = len(server.requests)

        assert main(["answer", *command(server, images, workspace, "--index", "1-60")[3:]]) == 0
        # only what was not stored is asked again (at most the requests in flight were lost)
        asked_again = len(server.requests) - first_requests
        assert asked_again == 60 - done_before

    with Store(workspace, create=False) as store:
        (run,) = store.runs()
        assert run.status == "finished"
        slots = Counter(
            (r.question_index, r.sample) for r in store.responses(current=False) if r.status == "ok"
        )
        assert len(slots) == 60 and set(slots.values()) == {1}  # no slot answered twice
        assert all(store.path(r.raw_path or "").is_file() for r in store.responses())


def test_answering_path_imports_no_heavy_library(images: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(chat=lambda request: "(a)") as server:
        result = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                *command(server, images, tmp_path / "ws", "--index", "1-3")[1:],
            ],
            env=environment(),
            capture_output=True,
            text=True,
            check=True,
        )
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "openai" in imported and "amvicc" in imported
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
