"""Outputs never land on the workspace's own files, and every file is written whole (issue 23.1).

``-o`` (report, score export) and ``scenes build --out`` pointing at a workspace's database, its
stored images, input copies or API bodies are one line and exit 2, the workspace intact; a write
cut off midway leaves the previous file; a scene build killed between writing and renaming
resumes on the next run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.resources import resource_dir
from amvicc.store import DATABASE_NAME, Store
from tests.test_hostile_input import amvicc, one_line

RUN_STORED = "answer-m-1234abcd"


def _digest(folder: Path) -> dict[str, str]:
    """Every file's hash; the database's by its content (a checkpoint rewrites its bytes)."""
    digest = {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(DATABASE_NAME)
    }
    database = folder / DATABASE_NAME
    if database.is_file():
        with contextlib.closing(sqlite3.connect(database)) as connection:
            dump = "\n".join(connection.iterdump())
        digest[DATABASE_NAME] = hashlib.sha256(dump.encode()).hexdigest()
    return digest


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding AMVICC's DALL·E 3 grade sheet, a stored image, input and body."""
    root = tmp_path_factory.mktemp("outputs") / "ws"
    sheet = resource_dir("grades") / "dalle3_grades.csv"
    assert main(["import-grades", str(sheet), "--model", "dalle3", "--store", str(root), "-q"]) == 0
    with Store(root) as store:
        store.write_file("images/ab/abcdef.png", b"\x89PNG stored image")
        store.write_file("inputs/0123.jpg", b"\xff\xd8\xff stored input")
        store.write_file(f"responses/{RUN_STORED}/r1.json", b'{"stored": "body"}')
    return root


@pytest.fixture
def workspace(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of the workspace for each test (a failing guard would destroy it)."""
    return Path(shutil.copytree(pristine, tmp_path / "ws"))


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


TARGETS: dict[str, Callable[[Path], Path]] = {
    "database": lambda ws: ws / DATABASE_NAME,
    "wal": lambda ws: ws / f"{DATABASE_NAME}-wal",
    "shm": lambda ws: ws / f"{DATABASE_NAME}-shm",
    "image": lambda ws: ws / "images" / "ab" / "abcdef.png",
    "new-image": lambda ws: ws / "images" / "new.csv",
    "input": lambda ws: ws / "inputs" / "0123.jpg",
    "body": lambda ws: ws / "responses" / RUN_STORED / "r1.json",
    "dotdot": lambda ws: ws / "scenes" / ".." / DATABASE_NAME,
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_report_and_export_never_write_over_the_workspace(
    workspace: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digest(workspace)
    path = TARGETS[target](workspace)
    store = ["--store", str(workspace)]
    _refused(["report", *store, "--format", "csv", "-o", str(path), "-q"], capsys, str(path))
    _refused(["score", "export", *store, "-o", str(path)], capsys, "workspace")
    assert _digest(workspace) == before
    with Store(workspace, create=False) as opened:  # the workspace still opens, whole
        assert [run.stage for run in opened.runs()] == ["import"]
        assert len(opened.verdicts()) == 590


def test_a_link_into_the_workspace_is_refused(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "results.csv"
    link.symlink_to(workspace / DATABASE_NAME)
    before = _digest(workspace)
    _refused(["report", "--store", str(workspace), "--format", "csv", "-o", str(link)], capsys)
    _refused(["score", "export", "--store", str(workspace), "-o", str(link)], capsys)
    assert _digest(workspace) == before


def test_outputs_beside_the_database_are_written(workspace: Path, tmp_path: Path) -> None:
    store = ["--store", str(workspace)]
    report = workspace / "results.md"
    assert main(["report", *store, "--format", "md", "--bootstrap", "0", "-o", str(report)]) == 0
    assert report.read_text(encoding="utf-8").startswith("#")
    export = workspace / "exports" / "verdicts.csv"
    assert main(["score", "export", *store, "-o", str(export)]) == 0
    assert export.read_text(encoding="utf-8").count("\n") == 591
    assert sorted(p.name for p in export.parent.iterdir()) == ["verdicts.csv"]  # no leftovers
    report.unlink()
    shutil.rmtree(export.parent)


@pytest.mark.parametrize("where", ["workspace", "images", "new-images", "responses"])
def test_scenes_are_never_built_into_the_workspace(
    workspace: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if where == "new-images":  # a workspace of imported sheets has no images/ yet
        shutil.rmtree(workspace / "images")
    out = workspace if where == "workspace" else workspace / where.removeprefix("new-")
    before = _digest(workspace)
    _refused(["scenes", "build", "--out", str(out), "--per-category", "1"], capsys, "--out")
    assert _digest(workspace) == before


def test_a_new_workspace_is_never_made_inside_another_ones_files(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = workspace / "images" / "ws"
    sheet = resource_dir("grades") / "dalle3_grades.csv"
    argv = ["import-grades", str(sheet), "--model", "dalle3", "--store", str(inner)]
    _refused(argv, capsys, "--store")
    assert not inner.exists()


def test_a_report_cut_off_while_writing_keeps_the_last_good_one(
    workspace: Path, tmp_path: Path
) -> None:
    """A write stopped midway (here: a file-size cap, as a full disk or a kill would) leaves
    the previous report.html whole, never a 0-byte or half-written one."""
    copy = workspace
    report = copy / "report.html"
    good = "<!doctype html><p>the last good report</p>\n"
    report.write_text(good, encoding="utf-8")
    proc = amvicc("report", "--store", str(copy), "--bootstrap", "0", "-q", file_size=48 << 10)
    one_line(proc, "report.html")
    assert report.read_text(encoding="utf-8") == good
    assert [p.name for p in copy.iterdir() if p.name.endswith(".tmp")] == []


def test_a_scene_build_killed_before_its_renames_resumes(tmp_path: Path) -> None:
    out = tmp_path / "scenes"
    argv = ["scenes", "build", "--out", str(out), "--per-category", "1", "--categories", "tx"]
    assert main([argv[0], "-q", *argv[1:]]) == 0
    built = _digest(out)
    # what a build killed between writing and renaming leaves, in this version and earlier ones
    (out / "images" / "2.png.tmp").write_bytes(b"half an image")
    (out / "images" / f".1.png.{_dead_pid()}.1.tmp").write_bytes(b"half an image")
    (out / "catalogue.csv.tmp").write_text("index,pa")
    (out / f".scenes.jsonl.{_dead_pid()}.7.tmp").write_text("{")
    assert main(argv) == 0
    assert _digest(out) == built


def _dead_pid() -> int:
    """A process id that no running process has."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid
