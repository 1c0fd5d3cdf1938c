from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from amvicc.store import Store

REPO = Path(__file__).resolve().parents[2]
PROMPTS = 16


def _count_rows(database: Path) -> int:
    if not database.is_file():
        return 0
    try:
        with sqlite3.connect(database, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM images").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # the schema is not created yet


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.slow
def test_kill_9_mid_run_leaves_no_partial_image_and_resumes(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    workspace = tmp_path / "ws"
    args = ["--model", "tiny-sd3", "--limit", str(PROMPTS), "--store", str(workspace), "-q"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "amvicc.generate", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    database = workspace / "amvicc.sqlite"
    deadline = time.monotonic() + 240
    while _count_rows(database) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()

    store = Store(workspace)
    made = store.images()
    assert 3 <= len(made) < PROMPTS
    for record in made:  # every stored row points at a complete image
        assert record.status == "ok" and record.path is not None
        with Image.open(store.path(record.path)) as image:
            image.load()
    files = {p for p in (workspace / "images").rglob("*.png")}
    referenced = {store.path(r.path) for r in made if r.path}
    assert referenced <= files and len(files - referenced) <= 1  # at worst one unrecorded file

    # What a killed writer might leave: its temporary file (its pid is gone) is swept on resume,
    # a live writer's is not.
    orphan = workspace / "images" / "ab" / f".abc.png.{_dead_pid()}.1.tmp"
    live = workspace / "images" / "ab" / f".abd.png.{os.getpid()}.1.tmp"
    for temporary in (orphan, live):
        temporary.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(b"\x89PNG partial")

    resumed = run_cli(*args[:-1])
    assert resumed.returncode == 0, resumed.stderr
    assert f"made {PROMPTS - len(made)}, skipped {len(made)}" in resumed.stdout
    all_rows = store.images(current=False)
    slots = {(r.question_index, r.prompt_kind, r.sample) for r in all_rows}
    assert len(all_rows) == len(slots) == PROMPTS  # nothing made twice
    assert store.runs()[0].status == "finished"
    assert not orphan.exists() and live.exists()
