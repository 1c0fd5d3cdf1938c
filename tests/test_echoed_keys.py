"""A key the server echoes back is found nowhere: not in the workspace, not in the output (23.3).

A careless server (or proxy) repeats the request's ``Authorization`` header in its error body
(401, 500). answer, challenge, generate and ``grade --judge`` store that body verbatim, its
message as the row's error, and print a one-line error: all of them pass through the same
redaction as URLs and options first. The check is blunt on purpose: after every command, no
file of the workspace (database included) and no byte of stdout or stderr holds the key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from amvicc.redaction import REDACTED
from amvicc.testing.fake_openai import FakeOpenAIServer, Fault
from amvicc.testing.mmvp_images import write_mmvp_images
from tests.test_hostile_input import amvicc

KEY = "sk-echo-TEST-9f8e7d6c5b4a39281706"
KEY_ENV = "AMVICC_ECHO_KEY"


def _run(*args: str, env_key: bool = True) -> tuple[int, str]:
    """A command in a fresh process with the key in its environment; status and output."""
    import os

    os.environ[KEY_ENV] = KEY
    try:
        proc = amvicc(*args, timeout=180)
    finally:
        del os.environ[KEY_ENV]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, proc.stdout + proc.stderr


def _files_holding_the_key(root: Path) -> list[str]:
    found = [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and KEY.encode() in p.read_bytes()
    ]
    database = root / "amvicc.sqlite"
    with closing(sqlite3.connect(database)) as connection:
        if KEY in "\n".join(connection.iterdump()):
            found.append("amvicc.sqlite (rows)")
    return found


@pytest.fixture
def echoing() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def test_an_echoed_key_is_stored_and_printed_nowhere(
    echoing: FakeOpenAIServer, tmp_path: Path
) -> None:
    store = ["--store", str(tmp_path / "ws")]
    api = ["--base-url", echoing.url, "--api-key-env", KEY_ENV, "--max-retries", "0"]
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 5))
    answer = ["answer", "--model", "m", *api, "--images", str(images), "--index", "1-4", *store]
    outputs: list[str] = []

    # answer: two replies fail with the key in their bodies, then the rest are answered
    echoing.inject(Fault.echo(500), Fault.echo(502))
    status, output = _run(*answer)
    outputs.append(output)
    assert status in (0, 1) and echoing.pending_faults() == 0  # 1: some requests failed
    assert sum(KEY in (r.authorization or "") for r in echoing.requests) >= 4  # it was sent
    status, output = _run(*answer)  # the failed ones again
    outputs.append(output)

    # a 401 echo stops the command with one line
    echoing.inject(Fault.echo(401))
    status, output = _run(*answer[:2], "another-model", *answer[3:])
    outputs.append(output)
    assert status == 2 and "401" in output

    # challenge: second turns that fail with an echo
    from amvicc.store import Store

    with Store(tmp_path / "ws") as opened:
        (run,) = opened.runs(stage="answer", model="m")
    echoing.inject(Fault.echo(500), Fault.echo(500))
    status, output = _run("challenge", "--run", run.run_id, "--arm", "control", *api, *store)
    outputs.append(output)
    assert echoing.pending_faults() == 0

    # grade --judge: judge requests that fail with an echo, and a 401 that stops it
    judge = ["--judge", "m", "--judge-base-url", echoing.url, "--judge-api-key-env", KEY_ENV]
    echoing.inject(Fault.echo(500), Fault.echo(503))
    status, output = _run("grade", *judge, "--all", "--max-retries", "0", *store)
    outputs.append(output)
    echoing.inject(Fault.echo(401))
    status, output = _run("grade", *judge, "--all", "--max-retries", "0", *store)
    outputs.append(output)

    # generate through an OpenAI-compatible image route
    echoing.inject(Fault.echo(500), Fault.echo(500))
    generate = ["generate", "--model", "openai:gpt-image-1", *api, "--index", "1-2", *store]
    status, output = _run(*generate)
    outputs.append(output)
    echoing.inject(Fault.echo(401))
    status, output = _run(*generate)
    outputs.append(output)
    assert status == 2

    assert echoing.pending_faults() == 0
    with Store(tmp_path / "ws") as opened:  # the echoes were stored, redacted
        errors = [r.error or "" for r in opened.responses(current=False)]
        errors += [i.error or "" for i in opened.images(current=False)]
    assert sum(REDACTED in e for e in errors) >= 4, errors
    assert _files_holding_the_key(tmp_path / "ws") == []
    for output in outputs:
        assert KEY not in output, output
