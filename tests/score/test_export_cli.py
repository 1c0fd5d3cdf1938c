from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.score.desk import ScoringDesk
from amvicc.score.export import verdicts_export
from amvicc.score.logins import read_logins
from amvicc.store import Store, VerdictRecord, sheet_source


def test_export_writes_every_verdict_with_history(
    workspace: Any, catalogue: Catalogue, tmp_path: Path, build: Any
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    first = desk.resume("rate", "alice")
    assert first is not None
    desk.decide("rate", "alice", first, "correct", 'has "quotes", commas\nand a newline')
    desk.decide("rate", "alice", first, "incorrect")
    workspace.store.add_verdict(
        VerdictRecord(sheet_source("grades.csv", "ann"), "correct", image_id=first)
    )
    out = tmp_path / "out" / "verdicts.csv"
    assert (
        main(["score", "export", "--store", str(workspace.root), "--format", "csv", "-o", str(out)])
        == 0
    )
    frame = pd.read_csv(out, keep_default_na=False)
    assert len(frame) == len(workspace.store.verdicts(current=False)) == 4 + 3
    mine = frame[frame["source"] == "human:alice"]
    assert list(mine["value"]) == ["correct", "incorrect"]
    assert list(mine["current"]) == [False, True]
    assert mine["comment"].iloc[0] == 'has "quotes", commas\nand a newline'
    assert set(mine["rater"]) == {"alice"}
    assert set(mine["model"]) == {build.secret_model}
    item = next(i for i in desk.images if i.image_id == first)
    assert set(mine["category"]) == {item.category.code}
    assert set(mine["prompt_kind"]) == {item.kind}
    assert mine["rubric_version"].iloc[0].startswith(item.category.code + "@")
    sheet = frame[frame["source_kind"] == "sheet"]
    assert list(sheet["rater"]) == ["ann"]
    responses = frame[frame["subject"] == "response"]
    assert len(responses) == 4 and set(responses["source"]) == {"extractor"}


def test_export_people_only_as_json_lines(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    first = desk.resume("audit", "bob")
    assert first is not None
    desk.decide("audit", "bob", first, "b")
    frame = verdicts_export(workspace.store, catalogue, people_only=True)
    assert list(frame["source"]) == ["human:bob"]
    assert frame["response_id"].iloc[0] == first


def test_export_to_standard_output(workspace: Any) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.score",
            "export",
            "--store",
            str(workspace.root),
            "--format",
            "jsonl",
            "--people-only",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == ""  # no person has judged anything yet
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.score",
            "export",
            "--store",
            str(workspace.root),
            "--format",
            "jsonl",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in io.StringIO(result.stdout)]
    assert len(rows) == 4 and {r["value"] for r in rows} == {"undecided"}


def test_missing_workspace_is_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    assert main(["score", "export", "--store", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no amvicc workspace" in err
    assert main(["score", "--store", str(tmp_path / "none")]) == 2


def test_serving_an_empty_workspace_is_refused(tmp_path: Path, capsys: Any) -> None:
    Store(tmp_path / "ws").close()
    assert main(["score", "--store", str(tmp_path / "ws")]) == 2
    assert "nothing to score" in capsys.readouterr().err


def test_bad_auth_is_refused_before_serving(workspace: Any, capsys: Any) -> None:
    assert main(["score", "--store", str(workspace.root), "--auth", "nopassword"]) == 2
    assert "USER:PASSWORD" in capsys.readouterr().err
    assert main(["score", "--store", str(workspace.root), "--raters-per-item", "0"]) == 2


def test_logins_from_flags_and_file(tmp_path: Path) -> None:
    logins = tmp_path / "raters.txt"
    logins.write_text("# study raters\nbob:s3cret:with:colons\n\n  carol : pw \n", encoding="utf-8")
    assert read_logins(["alice:pw"], logins) == [
        ("alice", "pw"),
        ("bob", "s3cret:with:colons"),
        ("carol", " pw"),
    ]
    with pytest.raises(UserError, match="given twice"):
        read_logins(["alice:x", "alice:y"], None)
    logins.write_text("ok:1\n:nouser\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"raters\.txt:2"):
        read_logins([], logins)
    with pytest.raises(UserError, match="cannot read"):
        read_logins([], tmp_path / "missing.txt")


def test_help_names_every_action() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "amvicc", "score", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for word in (
        "serve",
        "export",
        "--raters-per-item",
        "--auth-file",
        "--host",
        "amvicc score export --format csv",
    ):
        assert word in result.stdout


def test_serve_from_the_command_line_and_stop_with_ctrl_c(workspace: Any, build: Any) -> None:
    port = build.free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "amvicc",
            "score",
            "--store",
            str(workspace.root),
            "--port",
            str(port),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        while line and "Scoring" not in line:
            line = process.stderr.readline()
        assert f"at http://127.0.0.1:{port}" in line
        assert "6 images (2 raters each) and 4 undecided answers" in line
        assert build.secret_model not in line
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and build.secret_model not in page.text
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
