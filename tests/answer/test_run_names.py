"""A run name is a name, never a path (issue 15, part 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_mmvp_images


@pytest.mark.parametrize("name", ["../../elsewhere", "../outside", "/tmp/abs", "a/b"])
def test_a_run_name_cannot_lead_outside_the_workspace(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 3))
    workspace = tmp_path / "deep" / "er" / "ws"
    with FakeOpenAIServer() as server:
        status = main(
            [
                "answer", "--model", "m", "--base-url", server.url, "--images", str(images),
                "--index", "1-2", "--run", name, "--store", str(workspace), "-q",
            ]
        )  # fmt: skip
        assert not server.requests  # refused before any request
    assert status == 2
    assert "not allowed" in capsys.readouterr().err
    outside = [p for p in tmp_path.rglob("*.json")]
    assert outside == []
