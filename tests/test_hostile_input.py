"""Bad input and a failing machine: one clear line and exit 2, never a traceback (issue 15, part 1).

Each case runs the real command in a fresh process, as a user would, and checks that stderr is
one line naming what is wrong and where, that nothing stored before is lost, and that a run
stopped by the workspace (read-only, full) is recorded as interrupted, not running.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import resource
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from amvicc.cli import main
from amvicc.resources import default_catalogue_path
from amvicc.store import DATABASE_NAME, Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_mmvp_images

REPO = Path(__file__).resolve().parent.parent
GIB = 1 << 30


def amvicc(
    *args: str,
    cwd: Path | None = None,
    memory: int = 3 * GIB,
    file_size: int | None = None,
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    """``python -m amvicc ARGS`` in a fresh process, its memory capped (a runaway fails fast)."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "AMVICC_TEST_KEY": "not-a-real-key",
    }
    return subprocess.run(
        [sys.executable, "-m", "amvicc", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        preexec_fn=limits,
        timeout=timeout,
        check=False,
    )


def one_line(proc: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Assert exit 2 with one line on stderr holding every fragment; return the line."""
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


# --- --index ----------------------------------------------------------------------------------


def test_a_huge_index_range_is_checked_before_it_is_expanded() -> None:
    proc = amvicc("prompts", "show", "--index", "1-99999999999999999999", memory=GIB, timeout=60)
    one_line(proc, "1-99999999999999999999", "beyond the catalogue", "1 to 300")


@pytest.mark.parametrize(
    "verb",
    [
        ["generate", "--model", "tiny-sd3"],
        ["answer", "--model", "tiny-llava", "--images", "."],
        ["report", "--format", "csv"],
    ],
)
def test_every_verb_checks_index_ranges_against_the_catalogue(
    verb: list[str], tmp_path: Path
) -> None:
    Store(tmp_path / "ws").close()
    proc = amvicc(*verb, "--store", str(tmp_path / "ws"), "--index", "2-5000000000000", memory=GIB)
    one_line(proc, "beyond the catalogue")


# --- CSV cells larger than Python's default field limit -----------------------------------------


def _catalogue_with_cell(tmp_path: Path, size: int) -> Path:
    rows = list(csv.reader(default_catalogue_path().read_text(encoding="utf-8").splitlines()))
    rows[3][4] = "x" * size  # line 4, column 5: question 3's text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path = tmp_path / f"catalogue-{size}.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_long_cell_under_the_limit_reads(tmp_path: Path) -> None:
    proc = amvicc("prompts", "check", str(_catalogue_with_cell(tmp_path, 200_000)))
    assert "Traceback" not in proc.stderr and "field larger" not in proc.stderr
    # the long question differs from its pair's: a problem of the catalogue, not of reading
    assert proc.returncode == 1 and "has two different questions" in proc.stdout


def test_a_cell_over_the_limit_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = _catalogue_with_cell(tmp_path, 1_200_000)
    proc = amvicc("prompts", "check", str(path))
    one_line(proc, path.name, "line 4, column 5", "1 MiB per cell")


def test_a_grade_sheet_cell_over_the_limit(tmp_path: Path) -> None:
    sheet = tmp_path / "grades.csv"
    sheet.write_text(
        "ID,Correct_im,Correct_ex,Comments\n1,Y,N,fine\n2,N,N," + "z" * 1_100_000 + "\n",
        encoding="utf-8",
    )
    proc = amvicc("import-grades", str(sheet), "--model", "m", "--store", str(tmp_path / "ws"))
    one_line(proc, "grades.csv", "line 3, column 4", "1 MiB")
    assert not (tmp_path / "ws").exists()


# --- images that cannot be decoded ------------------------------------------------------------


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def half_a_jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((256, 256), 60).convert("RGB").save(buffer, format="JPEG")
    data = buffer.getvalue()
    return data[: len(data) // 2]


def test_bombs_and_truncated_jpegs_are_listed_as_unreadable(tmp_path: Path) -> None:
    folder = write_mmvp_images(tmp_path / "mmvp", range(1, 7))
    (folder / "2.png").write_bytes(png_claiming(20_000, 20_000))
    (folder / "4.png").unlink()
    (folder / "4.jpg").write_bytes(half_a_jpeg())
    args = ["answer", "--model", "tiny-llava", "--images", str(folder), "--index", "1-6"]
    proc = amvicc(*args, "--store", str(tmp_path / "ws"), "-q")
    line = one_line(proc, "2 of 6 images", "unreadable: 2, 4", "--skip-missing")
    assert "too large" in line or "truncated" in line
    with Store(tmp_path / "ws") as store:
        assert store.runs() == []  # nothing asked before the images were checked


def test_skip_missing_answers_the_rest_despite_a_bomb(tmp_path: Path) -> None:
    folder = write_mmvp_images(tmp_path / "mmvp", range(1, 5))
    (folder / "3.png").write_bytes(png_claiming(20_000, 20_000))
    proc = amvicc(
        "answer", "--model", "tiny-llava", "--images", str(folder), "--index", "1-4",
        "--skip-missing", "--store", str(tmp_path / "ws"), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "unreadable: 3" in proc.stderr
    with Store(tmp_path / "ws") as store:
        assert sorted(r.question_index for r in store.responses()) == [1, 2, 4]


# --- workspaces that are not workspaces -------------------------------------------------------


def test_a_store_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    for verb in (["generate", "--model", "tiny-sd3"], ["report"], ["grade"]):
        proc = amvicc(*verb, "--store", str(tmp_path / "notes.txt"))
        one_line(proc, "notes.txt", "is a file")
    assert (tmp_path / "notes.txt").read_text() == "hello"


def test_a_database_that_is_not_sqlite(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / DATABASE_NAME).write_text("not a database at all" * 100)
    for verb in (["report"], ["grade"], ["generate", "--model", "tiny-sd3", "--limit", "1"]):
        proc = amvicc(*verb, "--store", str(tmp_path / "ws"))
        one_line(proc, DATABASE_NAME, "not a usable amvicc database")
    assert (tmp_path / "ws" / DATABASE_NAME).read_text().startswith("not a database")


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` made read-only: by permissions, or (as root, whom they do not stop) by a
    read-only bind mount; skips where neither is possible."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        try:
            yield folder
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    bind = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {bind.stderr.strip()}")
    try:
        remount = subprocess.run(
            ["mount", "-o", "remount,ro,bind", str(view)], capture_output=True, check=False
        )
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        yield view
    finally:
        subprocess.run(["umount", str(view)], capture_output=True, check=False)
        view.rmdir()


def _workspace_with_answers(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    folder = write_mmvp_images(tmp_path / "mmvp", range(1, 5))
    workspace = tmp_path / "ws"
    args = ["answer", "--model", "m", "--base-url", server.url, "--images", str(folder)]
    assert main([*args, "--index", "1-2", "--store", str(workspace), "-q"]) == 0
    return workspace


def test_a_read_only_workspace(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        workspace = _workspace_with_answers(tmp_path, server)
        before = (workspace / DATABASE_NAME).read_bytes()
        sheet = tmp_path / "grades.csv"
        sheet.write_text("ID,Correct_im,Correct_ex\n1,Y,N\n", encoding="utf-8")
        with read_only(workspace) as view:
            answer = [
                "answer", "--model", "m", "--base-url", server.url,
                "--images", str(tmp_path / "mmvp"), "--index", "1-4", "--store", str(view),
            ]  # fmt: skip
            for verb in (answer, ["grade", "--store", str(view)]):
                one_line(amvicc(*verb), "read-only", str(view))
            one_line(
                amvicc("import-grades", str(sheet), "--model", "m", "--store", str(view)),
                "read-only",
            )
            # reading still works
            report = amvicc("report", "--store", str(view), "--format", "csv", "-q")
            assert report.returncode == 0, report.stderr
    assert (workspace / DATABASE_NAME).read_bytes() == before
    with Store(workspace) as store:
        assert len(store.responses()) == 2


# --- a full disk ------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(tmp_path: Path, size: str = "8m") -> Iterator[Path | None]:
    """A tmpfs of ``size`` where this process may mount one (root), else None."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        yield None
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def fill(folder: Path, leave: int) -> Path:
    """Fill a file system until about ``leave`` bytes are free; returns the filler file."""
    filler = folder / "filler"
    free = shutil.disk_usage(folder).free - leave
    with filler.open("wb") as out:
        out.write(b"\0" * max(0, free))
    return filler


def largest_file(folder: Path) -> int:
    """The size of the largest file in a folder (the database or its write-ahead log)."""
    return max(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def noisy_png(request: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((256, 256), 80).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


FullDisk = Callable[..., tuple[subprocess.CompletedProcess[str], Path]]


@pytest.fixture(params=["tmpfs", "file-size-limit"])
def full_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FullDisk]:
    """Run a command whose writes fail partway: on a full tmpfs (root), or with a cap on the
    size of every file it writes (anyone)."""
    with small_disk(tmp_path) as disk:
        if request.param == "tmpfs" and disk is None:
            pytest.skip("cannot mount a tmpfs here (not root)")

        def run(*args: str, workspace: Path, leave: int, file_size: int) -> tuple[Any, Path]:
            """``leave``: bytes left free on the tmpfs; ``file_size``: the cap otherwise."""
            if request.param == "tmpfs":
                assert disk is not None
                target = disk / "ws"
                shutil.copytree(workspace, target)
                filler = fill(disk, leave)
                proc = amvicc(*args, "--store", str(target))
                filler.unlink()
                return proc, target
            return amvicc(*args, "--store", str(workspace), file_size=file_size), workspace

        yield run


def test_a_full_disk_during_answer_keeps_every_reply_and_interrupts_the_run(
    tmp_path: Path, full_disk: FullDisk
) -> None:
    with FakeOpenAIServer() as server:
        workspace = _workspace_with_answers(tmp_path, server)
        images = write_mmvp_images(tmp_path / "mmvp", range(1, 301))
        args = ["answer", "--model", "m", "--base-url", server.url, "--images", str(images)]
        size = largest_file(workspace) + 96_000
        proc, where = full_disk(*args, "-q", workspace=workspace, leave=96_000, file_size=size)
        line = one_line(proc)
        assert "full" in line or "space" in line or "too large" in line, line
        with Store(where) as store:
            (run,) = store.runs(stage="answer")
            assert run.status == "interrupted", (line, len(store.responses()))
            kept = len(store.responses())
            assert 2 <= kept < 300
        # the same command, with room again, resumes and finishes
        assert main([*args, "--store", str(where), "-q"]) == 0
        with Store(where) as store:
            assert len(store.responses()) == 300
            assert store.runs(stage="answer")[0].status == "finished"


def test_a_full_disk_during_generate(tmp_path: Path, full_disk: FullDisk) -> None:
    with FakeOpenAIServer(images=noisy_png) as server:
        workspace = tmp_path / "ws"
        Store(workspace).close()
        args = [
            "generate", "--model", "openai:gpt-image-1", "--base-url", server.url,
            "--index", "1-20", "--max-connections", "2",
        ]  # fmt: skip
        proc, where = full_disk(
            *args,
            "-q",
            workspace=workspace,
            leave=400_000,
            file_size=largest_file(workspace) + 60_000,
        )
        one_line(proc)
        with Store(where) as store:
            (run,) = store.runs(stage="generate")
            assert run.status == "interrupted"
            made = [i for i in store.images() if i.status == "ok"]
            assert all(store.path(i.path or "").is_file() for i in made)
        assert main([*args, "--store", str(where), "-q"]) == 0
        with Store(where) as store:
            assert sum(i.status == "ok" for i in store.images()) == 40


# --- options of API image models, and -o - ----------------------------------------------------


def test_unknown_api_options_go_in_the_request_body(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        proc = amvicc(
            "generate", "--model", "flux", "--base-url", server.url, "--index", "1",
            "--option", "foo=bar", "--option", "num_inference_steps=4", "--option", "quality=hd",
            "--store", str(tmp_path / "ws"), "-q",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        bodies = [r.body for r in server.requests if r.path == "/v1/images/generations"]
    assert len(bodies) == 2
    assert all(
        b["foo"] == "bar" and b["num_inference_steps"] == 4 and b["quality"] == "hd" for b in bodies
    )


def test_the_help_of_option_says_so() -> None:
    proc = amvicc("generate", "--help")
    assert "extra_body" in proc.stdout


@pytest.mark.parametrize(
    "verb",
    [
        ["report", "--format", "csv", "-q"],
        ["report", "--format", "md", "-q"],
        ["report", "--format", "json", "-q"],
        ["score", "export", "--format", "csv"],
    ],
)
def test_dash_o_dash_is_standard_output(verb: list[str], tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        workspace = _workspace_with_answers(tmp_path, server)
    proc = amvicc(*verb, "--store", str(workspace), "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    assert not (tmp_path / "-").exists()
    assert not (workspace / "report.json").exists()


def test_index_ranges_are_sets_that_never_expand() -> None:
    # In a process of its own with its memory capped: code that expanded the range would
    # take the machine's memory, not fail.
    probe = """
from amvicc.catalogue import load_catalogue, parse_index_ranges
from amvicc.errors import UserError
huge = parse_index_ranges("3,1-99999999999999999999")
assert 10**19 in huge and 0 not in huge and huge.highest == 99999999999999999999
assert parse_index_ranges("1-3,99, 279-280") == {1, 2, 3, 99, 279, 280}
try:
    load_catalogue().select(indices=huge)
except UserError as err:
    assert "beyond the catalogue" in str(err)
else:
    raise AssertionError("not refused")
print("ok")
"""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))

    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        preexec_fn=cap,
        timeout=120,
        check=False,
    )
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]
