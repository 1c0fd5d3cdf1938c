from __future__ import annotations

from pathlib import Path

import pytest

from amvicc.resources import build_folder_once


def test_a_failed_build_leaves_nothing_and_a_finished_one_is_reused(tmp_path: Path) -> None:
    target = tmp_path / "model"

    def broken(folder: Path) -> None:
        (folder / "weights").write_text("half")
        raise RuntimeError("killed midway")

    with pytest.raises(RuntimeError):
        build_folder_once(target, broken, complete="DONE")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []  # no staging folder left behind

    calls = []

    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "weights").write_text("whole")
        (folder / "DONE").write_text("")

    assert build_folder_once(target, build, complete="DONE") == target
    assert build_folder_once(target, build, complete="DONE") == target
    assert len(calls) == 1
    assert (target / "weights").read_text() == "whole"


def test_an_unfinished_folder_is_rebuilt(tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / "stale").write_text("from a build that never finished")
    build_folder_once(target, lambda f: (f / "DONE").write_text(""), complete="DONE")
    assert sorted(p.name for p in target.iterdir()) == ["DONE"]
