"""The report as an ordered list of sections: every output walks it, smoke-test models apart.

- every section has its two partials, and a new section is one more entry and two partials;
- the Markdown has the HTML's sections in the same order;
- smoke-test models are never compared or pooled with real ones, yet keep their CSV/JSON rows;
- failure modes are one row per model with the failing metrics named;
- the explorer's data stay inert inside the page.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from jinja2 import ChoiceLoader, FileSystemLoader

from amvicc.ladder import LADDER_LEVELS
from amvicc.report import build_report, render_report, templating
from amvicc.report import render as render_module
from amvicc.report.ladder import LEVELS
from amvicc.report.section import Section
from amvicc.report.sections import SECTIONS

if TYPE_CHECKING:
    from conftest import Workspace

TEMPLATES = Path(render_module.__file__).parent / "templates" / "sections"
PAIRS = [(9, 10), (61, 62), (13, 14), (41, 42)]  # tx, tx, qc, qc
INDICES = frozenset(i for pair in PAIRS for i in pair)
EVIL = "</script><script>alert(1)</script>"


def human(value: str) -> tuple[str, str]:
    return ("human:ann", value)


@pytest.fixture
def mixed(workspace: Workspace) -> Workspace:
    """Two real image models, a real VLM, and a smoke-test image model and VLM."""
    runs = {name: workspace.igm(name) for name in ("sd35", "flux")}
    runs["tiny-sd3"] = workspace.igm("tiny-sd3", smoke=True)
    vlms = {"llava": workspace.vlm("llava"), "tiny-llava": workspace.vlm("tiny-llava", smoke=True)}
    for number, (first, second) in enumerate(PAIRS):
        for index in (first, second):
            for name, run in runs.items():
                for kind in ("implicit", "explicit"):
                    right = name == "sd35" or (index + number) % 3 != 0
                    workspace.graded_image(
                        run, index, kind, human("correct" if right else "incorrect")
                    )
            for run in vlms.values():
                workspace.answer(run, index, "a" if index % 2 else "b")
    return workspace


def test_every_section_has_its_two_partials_and_a_unique_key() -> None:
    keys = [s.key for s in SECTIONS]
    assert len(keys) == len(set(keys))
    for section in SECTIONS:
        for extension in ("html", "md"):
            assert (TEMPLATES / f"{section.key}.{extension}.jinja").is_file(), section.key
    assert tuple(LADDER_LEVELS) == LEVELS  # the report's copy, kept to import lightly


def test_a_new_section_is_one_entry_and_two_partials(
    mixed: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sections").mkdir()
    (tmp_path / "sections" / "toy.html.jinja").write_text(
        "<p class='toy'>{{ view.models }} models</p>\n"
    )
    (tmp_path / "sections" / "toy.md.jinja").write_text("{{ view.models }} models, in Markdown\n")
    toy = Section(
        key="toy",
        title="A toy section",
        compute=lambda part: None if part.items is None else len(part.entries),
        rows=lambda count: __import__("amvicc.report.rows").report.rows.row_frame(
            model=["toy"], modality="vlm", category="all", metric="toy_models", value=[count]
        ),
        document=lambda count: {"toy": [count]},
        view=lambda count, page: {"models": count},
    )
    import amvicc.report.build as build_module
    import amvicc.report.sections as sections_module

    extended = (*SECTIONS[:-1], toy, SECTIONS[-1])
    for module in (sections_module, build_module, render_module):
        monkeypatch.setattr(module, "SECTIONS", extended)
    monkeypatch.setattr(build_module, "SECTION_BY_KEY", {s.key: s for s in extended})
    environment = templating._environment()
    monkeypatch.setattr(
        environment,
        "loader",
        ChoiceLoader([FileSystemLoader(str(tmp_path)), environment.loader]),
    )
    report = build_report(mixed.store, bootstrap=0, indices=INDICES)
    html = render_report(report, "html")
    assert '<section id="toy">' in html and "<p class='toy'>3 models</p>" in html
    assert '<section id="smoke-toy">' in html  # computed for the smoke-test models too
    assert '<a href="#toy">A toy section</a>' in html  # in the table of contents
    assert "3 models, in Markdown" in render_report(report, "md")
    rows = [r for r in csv.DictReader(io.StringIO(render_report(report, "csv")))]
    assert [r["value"] for r in rows if r["metric"] == "toy_models"] == ["3.000000", "2.000000"]
    assert json.loads(render_report(report, "json"))["toy"] == [3, 2]


def test_markdown_has_the_html_sections_in_the_same_order(mixed: Workspace) -> None:
    report = build_report(mixed.store, bootstrap=0, indices=INDICES)
    html = render_report(report, "html")
    markdown = render_report(report, "md")
    titles = re.findall(
        r'<section id="[a-z-]+">\s*(?:<details[^>]*>\s*<summary>)?<h2>([^<]+)</h2>', html
    )
    assert len(titles) >= 15 and titles[0] == "At a glance"
    headings = [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
    assert headings == titles


def test_smoke_test_models_are_never_compared_or_pooled_with_real_ones(
    mixed: Workspace,
) -> None:
    report = build_report(mixed.store, bootstrap=0, indices=INDICES)
    rows = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    compared = {(r["model"], r["condition"]) for r in rows if r["condition"].startswith("vs=")}
    assert ("flux", "vs=sd35") in compared or ("sd35", "vs=flux") in compared
    real, smoke = {"sd35", "flux", "llava"}, {"tiny-sd3", "tiny-llava"}
    for model, condition in compared:
        other = condition[3:]
        assert (model in real) == (other in real), (model, condition)
    pooled = [r for r in rows if r["condition"] == "concordance pooled" and r["category"] == "all"]
    assert {r["model"] for r in pooled} == {
        "VLMs pooled (1 model) × IGMs pooled (2 models)",  # llava × sd35, flux
        "VLMs pooled (1 model) × IGMs pooled (1 model)",  # tiny-llava × tiny-sd3, apart
    }
    # Every model keeps its accuracy rows in the CSV, and its smoke flag in the JSON.
    accuracies = {r["model"] for r in rows if r["condition"] == "" and r["metric"] == "pair"}
    assert accuracies == {"llava", "tiny-llava"}
    document = json.loads(render_report(report, "json"))
    flags = {r["label"]: r["smoke"] for r in document["metrics"]}
    assert flags == {
        "sd35": False,
        "flux": False,
        "llava": False,
        "tiny-sd3": True,
        "tiny-llava": True,
    }
    shared = [r for r in document["shared_failure_modes"] if r["category"] == "tx"]
    assert len(shared) == 2  # the real models' row, then the smoke-test models'
    assert all(not (set(r["igm_failing"]) & smoke) for r in shared[:1])
    # The page: the smoke-test models only in their own section.
    html = render_report(report, "html")
    before, after = html.split('<section id="smoke">')
    assert not any(name in before for name in smoke)
    assert "Smoke-test models (random weights: the numbers mean nothing)" in after[:600]
    assert "tiny-sd3 ⚠ smoke" in after and "tiny-llava ⚠ smoke" in after


def test_both_parts_share_one_scan_of_every_verdict_for_the_rubric_versions(
    mixed: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The methods section of each part names rubric versions read by one workspace scan."""
    store = mixed.store
    scans = []
    read = store.rubric_versions

    def counted() -> dict[str, tuple[str, ...]]:
        scans.append(1)
        return read()

    monkeypatch.setattr(store, "rubric_versions", counted)
    report = build_report(store, bootstrap=0, indices=INDICES, need="view")
    assert report.part(False)["methods"] is not None
    assert report.part(True)["methods"] is not None
    assert len(scans) == 1


def test_failure_modes_are_one_row_per_model_naming_the_failing_metrics(
    mixed: Workspace,
) -> None:
    report = build_report(mixed.store, bootstrap=0, indices=INDICES)
    html = render_report(report, "html")
    section = html[html.index('<section id="failure-modes">') :]
    section = section[: section.index("</section>")]
    assert section.count("<tr>") + section.count("<tr ") == 2 + 2 + 1  # headers, 2 IGMs, 1 VLM
    flux = section[section.index("flux") : section.index("</tr>", section.index("flux"))]
    assert flux.count('class="fail text"') == 2  # qc and tx
    assert "I Ex" in flux and 'title="I Im 0.' in flux  # the values on hover
    failures = report.failures
    assert set(failures["label"]) >= {"flux"} and "sd35" not in set(failures["label"])


def test_the_explorer_data_stay_inert_in_the_page(workspace: Workspace) -> None:
    run = workspace.igm(EVIL)
    vlm = workspace.vlm("llava")
    for index in (9, 10):
        workspace.graded_image(run, index, "explicit", human("incorrect"))
        workspace.response(vlm, index, text=f"{EVIL} (a)")
    html = render_report(build_report(workspace.store, bootstrap=0), "html")
    data = html[
        html.index('id="explorer-data">') : html.index(
            "</script>", html.index('id="explorer-data">')
        )
    ]
    assert "<" not in data and "\\u003c/script\\u003e" in data
    assert html.count("<script>alert(1)</script>") == 0
