"""A plain (non-editable) install finds the catalogue, rubrics and pipeline files."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_carries_and_finds_its_data(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(REPO),
        ],
        check=True,
    )
    (wheel,) = (tmp_path / "dist").glob("amvicc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "amvicc/_data/prompts/amvicc.csv" in names
    assert "amvicc/_data/rubrics/tx.md" in names
    assert any(n.startswith("amvicc/_data/pipelines/") for n in names)
    assert "amvicc/_data/grades/dalle3_grades.csv" in names  # AMVICC's published grades
    assert "amvicc/_data/grades/SOURCE.md" in names
    assert "amvicc/score/static/score.css" in names
    assert "amvicc/score/static/keyboard.js" in names
    # Scenes draw their text with the bundled font only, and the wheel carries its licence.
    assert "amvicc/scenes/fonts/DejaVuSans-Bold.ttf" in names
    assert "amvicc/scenes/fonts/LICENSE-DejaVu.txt" in names

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    probe = (
        "import amvicc, amvicc.resources as r, amvicc.rubrics as ru;"
        "print(amvicc.__file__);"
        "print(r.resource_dir('pipelines'));"
        "from amvicc.imports.published import published_sheets;"
        "print(all(p.is_file() for p, _ in published_sheets()));"
        "print(len(amvicc.load_catalogue().prompts()), len(ru.load_rubrics()));"
        "from amvicc.score.app import CSS, keyboard_script;"
        "print('.amvicc-image' in CSS, '__SHORTCUTS__' not in keyboard_script())"
    )
    # Run outside the source tree, with the installed copy first on the path.
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith(str(target))
    assert out[1] == str(target / "amvicc" / "_data" / "pipelines")
    assert out[2] == "True"  # the demo's published grade sheets
    assert out[3] == "600 9"
    assert out[4] == "True True"  # the scoring page's CSS and script load from the wheel
