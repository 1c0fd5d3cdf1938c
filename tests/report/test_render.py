"""The four output formats and the ``amvicc report`` verb."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from amvicc.cli import main
from amvicc.report import build_report, render_report

if TYPE_CHECKING:
    from conftest import Workspace

TX = [9, 10, 61, 62, 65, 66, 91, 92, 133, 134, 201, 202, 277, 278]
SECRET = "sk-should-never-show-0123"
SECTIONS = (
    "overview",
    "glance",
    "results",
    "cross-modal",
    "explorer",
    "failure-modes",
    "shared-failure-modes",
    "interaction-robustness",
    "samples",
    "missing",
    "agreement",
    "judges",
    "gallery",
    "methods",
)


def human(value: str, rater: str = "alice") -> tuple[str, str]:
    return (f"human:{rater}", value)


@pytest.fixture
def filled(workspace: Workspace) -> Workspace:
    """Every section has something to show: two IGMs (one smoke, two samples), a VLM,
    two raters, an image judge, files for thumbnails and a missing item."""
    real = workspace.igm("sd35")
    smoke = workspace.igm("tiny-sd3", smoke=True)
    vlm = workspace.vlm("llava")
    for n, index in enumerate(TX):
        good = n % 3 != 0
        image = workspace.image(real, index, "explicit", data=workspace.png((20 * n, 100, 50)))
        workspace.rate(
            image,
            human("correct" if good else "incorrect"),
            human("correct" if n % 4 else "incorrect", "bob"),
            ("judge:ocr:rapidocr", "correct" if n % 2 else "incorrect"),
        )
        if index != 278:
            workspace.graded_image(real, index, "implicit", human("correct"))
        for sample in range(2):
            workspace.graded_image(smoke, index, "implicit", human("incorrect"), sample=sample)
        workspace.answer(vlm, index, "a")
    return workspace


def test_csv_has_exactly_the_columns(filled: Workspace) -> None:
    text = render_report(build_report(filled.store, categories=("tx", "qc")), "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [
        "model",
        "modality",
        "category",
        "metric",
        "value",
        "correct",
        "total",
        "ci_low",
        "ci_high",
        "condition",
        "p_value",
        "p_adjusted",
        "catalogue",
    ]
    body = [r for r in rows[1:] if r[9] == ""]  # the accuracies; other rows have a condition
    assert {r[12] for r in rows[1:]} == {"MMVP"}  # every row is on the shipped catalogue
    assert {r[1] for r in body} == {"igm", "vlm"}
    assert {r[2] for r in body} == {"tx", "qc", "all"}
    metrics = {r[3] for r in body}
    assert metrics == {
        "individual_implicit",
        "individual_explicit",
        "pair_implicit",
        "pair_explicit",
        "individual",
        "pair",
    }
    for row in body:
        assert re.fullmatch(r"\d\.\d{6}", row[4]), row
        assert float(row[4]) == pytest.approx(int(row[5]) / int(row[6]), abs=5e-7)
    assert len(body) == 2 * 3 * 4 + 1 * 3 * 2
    without = render_report(build_report(filled.store, categories=("tx",), bootstrap=0), "csv")
    assert without.splitlines()[0] == (
        "model,modality,category,metric,value,correct,total,condition,p_value,p_adjusted,catalogue"
    )


def test_json_carries_smoke_flags_and_every_table(filled: Workspace) -> None:
    document = json.loads(render_report(build_report(filled.store, categories=("tx",)), "json"))
    models = {m["label"]: m for m in document["models"]}
    assert models["tiny-sd3"]["smoke"] is True and models["sd35"]["smoke"] is False
    assert models["tiny-sd3"]["samples"] == 2
    assert document["smoke_models"] == ["tiny-sd3"]
    assert all(row["smoke"] == (row["label"] == "tiny-sd3") for row in document["metrics"])
    assert document["thresholds"] == {"individual": 0.8, "pair": 0.7}
    for key in (
        "failure_modes",
        "shared_failure_modes",
        "missing",
        "samples",
        "agreement",
        "judge_validation",
    ):
        assert document[key], key
    assert SECRET not in json.dumps(document)


def test_markdown_tables_mark_smoke_models(filled: Workspace) -> None:
    text = render_report(build_report(filled.store, categories=("tx",)), "md")
    assert "⚠ Smoke-test models:** tiny-sd3" in text
    assert "| Model | Metric | tx | all |" in text
    # 13/14: 278 never generated, and the table says so next to the number
    assert "| sd35 | I Im | 0.929 (1 missing) | 0.929 (1 missing) |" in text
    assert "| tiny-sd3 ⚠ smoke | I Im | **0.000** | 0.000 |" in text  # failure modes in bold
    assert "## Failure modes" in text and "## Shared failure modes" in text
    assert SECRET not in text


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        for name in ("src", "href"):
            if values.get(name) and tag != "a":
                self.sources.append(str(values[name]))


def test_html_is_self_contained_with_every_section_filled(filled: Workspace) -> None:
    html = render_report(build_report(filled.store, categories=("tx",)), "html")
    parser = _Links()
    parser.feed(html)
    assert set(SECTIONS) <= parser.ids
    assert parser.sources and all(s.startswith("data:image/") for s in parser.sources)
    assert "http://" not in html and "https://" not in html
    # The questions × models picture, once for the real models and once for the smoke-test
    # one; the charts and matrices are HTML.
    assert html.count("data:image/png;base64,") == 2
    assert html.count("data:image/jpeg;base64,") >= 1  # thumbnails in the gallery
    assert "⚠ Smoke-test models:</strong>" in html and "tiny-sd3 ⚠ smoke" in html
    assert 'class="fail"' in html
    real, smoke = html.split('<section id="smoke">')
    assert "tiny-sd3" not in real  # the smoke-test model only in its own section
    for empty in (
        "No models to report",
        "No failure modes",
        "No item was rated by two",
        "No automatic image judge",
        "No failing item",
    ):
        assert empty not in html, empty
    # The two samples per slot are the smoke-test model's: its section has the samples table.
    assert "Every model has one sample" in real and '<section id="smoke-samples">' in smoke
    # no challenge or perturbed run here: the section says how to make one
    assert "No challenge run (<code>amvicc challenge" in html
    assert "No perturbed run beside its clean run" in html
    assert "judge:ocr:rapidocr" in html and "human:alice vs human:bob" in html
    assert "I think (a)" in html  # a failing VLM answer's raw text
    assert "[redacted]" in html and SECRET not in html
    assert "OPENAI_API_KEY" in html  # the variable's name is fine


def test_cli_writes_html_into_the_store_by_default(
    filled: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(filled.store.root)
    assert main(["report", "--store", root, "--categories", "tx", "-q"]) == 0
    assert (
        (filled.store.root / "report.html")
        .read_text(encoding="utf-8")
        .startswith("<!DOCTYPE html>")
    )
    out = filled.store.root.parent / "out.md"
    assert main(["report", "--store", root, "-o", str(out), "--bootstrap", "0", "-q"]) == 0
    assert out.read_text(encoding="utf-8").startswith("# AMVICC report")
    assert main(["report", "--store", root, "--format", "json", "-o", "-", "--bootstrap", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["models"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--models", "nope"],
            "no model matches 'nope'; models in the workspace: llava, sd35, tiny-sd3",
        ),
        (["--verdicts", "judge:ocr:other"], "judges: judge:ocr:rapidocr"),
        (["--categories", "zz"], "unknown category 'zz'"),
        (["-o", "report.pdf"], "cannot tell the format"),
    ],
)
def test_cli_mistakes_are_one_line(
    filled: Workspace, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status = main(["report", "--store", str(filled.store.root), *argv])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_models_filter_with_globs(filled: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(filled.store.root)
    assert (
        main(
            [
                "report",
                "--store",
                root,
                "--models",
                "sd*,llava",
                "--format",
                "csv",
                "--bootstrap",
                "0",
            ]
        )
        == 0
    )
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["model"] for r in rows if not r["condition"]} == {"sd35", "llava"}


def test_missing_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--store", str(tmp_path / "nothing")]) == 2
    assert "no amvicc workspace" in capsys.readouterr().err


def test_python_dash_m(filled: Workspace) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.report",
            "--store",
            str(filled.store.root),
            "--format",
            "csv",
            "--bootstrap",
            "0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "model,modality,category,metric,value,correct,total,condition,p_value,p_adjusted,"
        "catalogue\n"
    )


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_never_load_jinja(filled: Workspace, fmt: str, tmp_path: Path) -> None:
    # Importing Jinja and the compiled templates is start-up time only pages need.
    code = (
        "import sys\n"
        "from amvicc.cli import main\n"
        f"code = main(['report', '--store', {str(filled.store.root)!r}, '--format', {fmt!r},"
        f" '-o', {str(tmp_path / 'out')!r}, '--bootstrap', '0'])\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jinja2'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "out").stat().st_size > 0


def test_the_writing_of_csv_and_json_is_timed(filled: Workspace) -> None:
    # -v prints the timings: the CSV's rows and text and the JSON's writing are steps too.
    report = build_report(filled.store)
    render_report(report, "csv")
    render_report(report, "json")
    assert {"render.rows", "render.csv", "render.json"} <= set(report.timings)
    assert all(report.timings[k] >= 0 for k in ("render.rows", "render.csv", "render.json"))


def test_index_selection_widens_to_pairs_and_serialises(filled: Workspace) -> None:
    # Regression: the JSON writer choked on the selected indices (a frozenset).
    report = build_report(filled.store, indices=frozenset({9, 61}))
    assert [q.index for q in report.catalogue] == [9, 10, 61, 62]
    document = json.loads(render_report(report, "json"))
    assert document["options"]["indices"] == [9, 61]
    rows = [r for r in document["metrics"] if r["label"] == "sd35" and r["category"] == "all"]
    assert {r["total"] for r in rows if r["metric"].startswith("individual")} == {4}
