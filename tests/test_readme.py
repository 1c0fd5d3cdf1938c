"""The README's "From Python" snippet runs as written (offline, on the smoke models)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_block(section: str) -> str:
    text = README.read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", body, re.DOTALL)
    assert match, f"no python block under {section!r}"
    return match.group(1)


@pytest.mark.slow
def test_from_python_snippet_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    isolated_environment: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(_python_block("From Python"), str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "tiny-sd3" in out and "made 4" in out  # both prompts of both questions
    assert "answered 2/2" in out  # the explicit images, one per question
    assert "graded run" in out and "judge:question:tiny-llava" in out
    assert "Scoring 4 images (2 raters each)" in out  # the app served, then closed
    assert (tmp_path / "amvicc-runs" / "amvicc.sqlite").is_file()
    report = namespace["report"]
    assert report.format == "md" and "tiny-sd3" in report.text  # type: ignore[attr-defined]
    assert len(namespace["verdicts"]) > 0  # type: ignore[arg-type]
