"""Text from models, prompts and raters stays data in every report and export (issue 15, part 2)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from amvicc.cli import main
from amvicc.report import build_report, render_report
from amvicc.store import VerdictRecord, human_source

if TYPE_CHECKING:
    from conftest import Workspace

EVIL_MODEL = '<img src=x onerror="alert(1)">`|**[x](javascript:alert(2))'
EVIL_RATER = "<script>alert(3)</script>"
FORMULA = '=HYPERLINK("http://evil.example","click")'


@pytest.fixture
def hostile(workspace: Workspace) -> Workspace:
    run = workspace.igm(EVIL_MODEL)
    vlm = workspace.vlm("=cmd|' /C calc'!A0")
    for index in (9, 10):
        image = workspace.image(run, index, "explicit")
        workspace.rate(image, (human_source(EVIL_RATER), "correct"), ("human:bob", "incorrect"))
        workspace.answer(vlm, index, "a")
    workspace.store.add_verdict(
        VerdictRecord(human_source("carol"), "incorrect", image_id=image, comment=FORMULA)
    )
    return workspace


def test_markdown_shows_names_as_text_never_as_html(hostile: Workspace) -> None:
    md = render_report(build_report(hostile.store, bootstrap=0), "md")
    assert "<img" not in md and "<script" not in md
    assert "&lt;img src=x" in md and "&lt;script&gt;" in md
    assert "](javascript:" not in md  # no link can be made from data
    for line in md.splitlines():
        if line.startswith("| ") and "img src" in line:
            cells = line.count(" | ")  # a '|' in a name never adds a column
            header = next(h for h in md.splitlines() if h.startswith("| Model"))
            assert cells <= header.count(" | ") + 1


def test_csv_is_exact_by_default_and_excel_safe_when_asked(
    hostile: Workspace, tmp_path: Path
) -> None:
    root = str(hostile.store.root)
    exact, safe = tmp_path / "exact.csv", tmp_path / "safe.csv"
    base = ["report", "--store", root, "--format", "csv", "--bootstrap", "0", "-q"]
    assert main([*base, "-o", str(exact)]) == 0
    assert main([*base, "-o", str(safe), "--excel-safe"]) == 0
    assert "=cmd|' /C calc'!A0" in set(pd.read_csv(exact)["model"])
    labels = {row["model"] for row in csv.DictReader(safe.open(encoding="utf-8"))}
    assert "'=cmd|' /C calc'!A0" in labels
    assert all(not label.startswith(("=", "+", "-", "@")) for label in labels)

    export, export_safe = tmp_path / "v.csv", tmp_path / "v-safe.csv"
    assert main(["score", "export", "--store", root, "-o", str(export)]) == 0
    assert main(["score", "export", "--store", root, "-o", str(export_safe), "--excel-safe"]) == 0
    assert FORMULA in set(pd.read_csv(export)["comment"].dropna())
    rows = list(csv.DictReader(io.StringIO(export_safe.read_text(encoding="utf-8"))))
    assert "'" + FORMULA in {r["comment"] for r in rows}
    for row in rows:
        assert not any(v.startswith(("=", "+", "@")) for v in row.values())
        # numbers stay numbers
        assert row["question_index"].isdigit()
