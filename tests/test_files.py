"""The shared writer and reader of files (amvicc.files): atomic writes, leftovers, guards."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from amvicc.errors import UserError
from amvicc.files import (
    UnreadableFile,
    check_output,
    is_leftover,
    read_regular_file,
    sweep_leftovers,
    temporary_path,
    write_atomic,
    write_output,
)
from amvicc.store import DATABASE_NAME
from tests.test_outputs import _dead_pid


def test_write_atomic_replaces_whole_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.txt"
    write_atomic(target, "first")
    target.chmod(0o600)
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old")

    def killed(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_leftovers_of_ended_writers_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    mine = temporary_path(tmp_path / "a.png")
    mine.write_bytes(b"in flight")
    dead = tmp_path / f".b.png.{_dead_pid()}.{threading.get_ident()}.tmp"
    dead.write_bytes(b"left by a killed writer")
    other = tmp_path / ".notes.tmp"
    other.write_text("not ours")
    assert not is_leftover(mine) and is_leftover(dead) and not is_leftover(other)
    assert sweep_leftovers(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, other.name])


def test_write_output_refuses_and_explains(tmp_path: Path) -> None:
    (tmp_path / DATABASE_NAME).write_bytes(b"SQLite format 3\x00")
    with pytest.raises(UserError, match="database"):
        write_output(tmp_path / DATABASE_NAME, "x")
    with pytest.raises(UserError, match="stored images"):
        write_output(tmp_path / "Images" / "x.png", "x")
    assert write_output(tmp_path / "report.csv", "a,b\n") == (tmp_path / "report.csv").resolve()
    with pytest.raises(UserError, match="is a folder"):
        check_output(tmp_path)
    assert check_output(tmp_path / "new" / "r.csv") == (tmp_path / "new" / "r.csv").resolve()


def test_only_regular_files_are_read_and_up_to_a_cap(tmp_path: Path) -> None:
    regular = tmp_path / "1.png"
    regular.write_bytes(b"x" * 100)
    assert read_regular_file(regular, limit=100) == b"x" * 100
    with pytest.raises(UnreadableFile, match="larger than"):
        read_regular_file(regular, limit=99)
    fifo = tmp_path / "2.png"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile, match="FIFO"):
        read_regular_file(fifo, limit=100)
    device = tmp_path / "3.png"
    device.symlink_to("/dev/zero")
    with pytest.raises(UnreadableFile, match="character device"):
        read_regular_file(device, limit=100)
    link = tmp_path / "4.png"
    link.symlink_to(regular)
    assert read_regular_file(link, limit=100) == b"x" * 100
    with pytest.raises(UnreadableFile, match="folder"):
        read_regular_file(tmp_path, limit=100)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "5.png"))
    try:
        with pytest.raises(UnreadableFile, match="socket"):
            read_regular_file(tmp_path / "5.png", limit=100)
    finally:
        server.close()
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "6.png", limit=100)
