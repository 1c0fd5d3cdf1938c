"""Runs on other catalogues (a procedural scene set beside MMVP) are scored apart.

The workspaces are written with the store API: an MMVP answer run and a scene-set answer run
of the same VLM, each recording its catalogue as ``amvicc answer`` does, so the numbers are
known exactly. ``tests/report/test_catalogues_smoke.py`` runs the real smoke VLM instead.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from amvicc.catalogue import Catalogue, catalogue_file, load_catalogue
from amvicc.errors import UserError
from amvicc.report import build_report, compute_metrics, render_report
from amvicc.report.entries import catalogue_names, load_entries
from amvicc.scenes.options import ScenesOptions
from amvicc.scenes.runner import run_scenes
from amvicc.store import RunRecord, RunSpec, Store

if TYPE_CHECKING:
    from conftest import Workspace

FAST = {"bootstrap": 0, "progress": False}
MMVP_INDICES = range(1, 19)


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scene set of one pair per category (18 questions); tests may not change it."""
    out = tmp_path_factory.mktemp("catalogues") / "scenes"
    return run_scenes(ScenesOptions(out=out, per_category=1, seed=1)).catalogue


def answer_run(
    workspace: Workspace, model: str, catalogue: Catalogue, **settings: object
) -> RunRecord:
    """An answer run on ``catalogue``, recording it as ``amvicc answer`` does."""
    spec = RunSpec(
        stage="answer",
        model=model,
        outputs={"images": "mmvp", "catalogue_sha256": catalogue.sha256},
        settings={"catalogue": catalogue_file(catalogue), **settings},
        catalogue_sha256=catalogue.sha256,
    )
    return workspace.store.start_run(spec)


def fill_mmvp(workspace: Workspace) -> None:
    """The VLM always answers (a) on MMVP: half the items right, no pair."""
    run = answer_run(workspace, "vlm", load_catalogue())
    for index in MMVP_INDICES:
        workspace.answer(run, index, "a")


def fill_scenes(workspace: Workspace, scene_file: Path, *, model: str = "vlm") -> RunRecord:
    """The VLM answers every scene right."""
    scenes = load_catalogue(scene_file)
    run = answer_run(workspace, model, scenes)
    for question in scenes:
        workspace.answer(run, question.index, question.answer)
    return run


def csv_rows(store: Store, **changes: object) -> list[dict[str, str]]:
    text = render_report(build_report(store, **{**FAST, **changes}), "csv")
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def mmvp_only(workspace: Workspace, tmp_path: Path) -> Iterator[Workspace]:
    """A second workspace, holding only the MMVP run."""
    with Store(tmp_path / "mmvp-only") as store:
        other = type(workspace)(store)
        fill_mmvp(other)
        yield other


def test_scene_runs_leave_the_main_numbers_as_mmvp_alone_gives_them(
    workspace: Workspace, mmvp_only: Workspace, scene_file: Path
) -> None:
    fill_mmvp(workspace)
    fill_scenes(workspace, scene_file)
    both = csv_rows(workspace.store)
    alone = csv_rows(mmvp_only.store)
    assert {r["catalogue"] for r in alone} == {"MMVP"}
    assert [r for r in both if r["catalogue"] == "MMVP"] == alone
    overall = {
        (r["catalogue"], r["metric"]): (r["correct"], r["total"])
        for r in both
        if r["model"] == "vlm" and r["category"] == "all" and r["condition"] == ""
    }
    assert overall == {
        ("MMVP", "individual"): ("9", "300"),  # 18 answered of 300, half of them right
        ("MMVP", "pair"): ("0", "150"),
        ("scenes", "individual"): ("18", "18"),
        ("scenes", "pair"): ("9", "9"),
    }
    # The Python API gives the report's catalogue only, with its name on every row.
    metrics = compute_metrics(workspace.store, bootstrap=0)
    assert set(metrics["catalogue"]) == {"MMVP"} and set(metrics["label"]) == {"vlm"}


def test_side_by_side_puts_each_catalogue_s_own_numbers_and_their_difference(
    workspace: Workspace, scene_file: Path
) -> None:
    fill_mmvp(workspace)
    fill_scenes(workspace, scene_file)
    report = build_report(workspace.store, **FAST)
    assert [e.label for e in report.entries] == ["vlm"]  # the MMVP run, named plainly
    (other,) = report.catalogues.others
    assert other.name == "scenes" and other.items.catalogue.source == str(scene_file)
    # Scored apart, the scene run has the numbers a report on the scene set gives it.
    own = build_report(workspace.store, catalogue=scene_file, **FAST)
    assert own.catalogues.name == "scenes" and [o.name for o in own.catalogues.others] == ["MMVP"]
    columns = ["metric", "category", "value", "correct", "total", "missing"]
    assert other.metrics[columns].equals(own.metrics[columns])

    side = report.catalogues.side_by_side
    assert set(side["label"]) == {"vlm"} and set(side["reference"]) == {"MMVP"}
    cell = side.set_index(["catalogue", "metric", "category"])
    assert cell.loc[("MMVP", "individual", "all"), "value"] == pytest.approx(9 / 300)
    assert cell.loc[("scenes", "individual", "all"), "value"] == 1.0
    assert cell.loc[("scenes", "individual", "all"), "difference"] == pytest.approx(1 - 9 / 300)
    assert cell.loc[("MMVP", "pair", "od"), "missing"] > 0  # missing counts come along
    assert cell["difference"].loc["MMVP"].isna().all()  # the reference has none

    html = render_report(report, "html")
    assert '<section id="catalogues">' in html and "MMVP and other catalogues" in html
    assert "I · scenes" in html and "ΔI scenes − MMVP" in html and "+0.970" in html
    assert "Results on scenes" in html and "Catalogue: <strong>MMVP</strong>" in html
    markdown = render_report(report, "md")
    assert "## MMVP and other catalogues" in markdown and "### Side by side" in markdown
    document = render_report(report, "json")
    assert '"side_by_side"' in document and '"name": "scenes"' in document


def test_a_workspace_on_one_catalogue_gets_no_other_catalogue_section(
    workspace: Workspace,
) -> None:
    fill_mmvp(workspace)
    report = build_report(workspace.store, **FAST)
    assert not report.catalogues.any and report.catalogues.side_by_side.empty
    html = render_report(report, "html")
    assert 'id="catalogues"' not in html and "Catalogue: <strong>MMVP</strong>" in html


def test_a_scene_run_whose_catalogue_is_gone_or_changed_is_listed_not_scored(
    workspace: Workspace, mmvp_only: Workspace, scene_file: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "scenes" / "catalogue.csv"
    copy.parent.mkdir()
    shutil.copy(scene_file, copy)
    fill_mmvp(workspace)
    fill_scenes(workspace, copy)
    alone = csv_rows(mmvp_only.store)
    copy.write_text(copy.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    report = build_report(workspace.store, **FAST)
    (changed,) = report.catalogues.not_scored
    assert "has changed since its runs" in changed.reason
    copy.unlink()
    report = build_report(workspace.store, **FAST)
    (gone,) = report.catalogues.not_scored
    assert gone.label == "vlm" and gone.file == str(copy.resolve())
    assert "no longer exists" in gone.reason and not report.catalogues.others
    assert csv_rows(workspace.store) == alone  # in no table, never mixed in
    html = render_report(report, "html")
    assert '<tr class="not-scored">' in html and "no longer exists" in html
    assert "Not scored" in render_report(report, "md")


def test_a_generate_run_that_did_not_record_its_file_is_listed_not_scored(
    workspace: Workspace,
) -> None:
    fill_mmvp(workspace)
    # As amvicc wrote generate runs before it recorded their catalogue file.
    spec = RunSpec(
        stage="generate",
        model="painter",
        outputs={"steps": 4, "catalogue_sha256": "ab" * 32},
        catalogue_sha256="ab" * 32,
    )
    run = workspace.store.start_run(spec)
    workspace.graded_image(run, 1, "implicit", ("human:ann", "correct"))
    report = build_report(workspace.store, **FAST)
    assert [e.label for e in report.entries] == ["vlm"]
    (entry,) = report.catalogues.not_scored
    assert entry.label == "painter" and "--catalogue FILE" in entry.reason


def test_a_workspace_with_only_scene_runs_names_the_catalogue_to_report_with(
    workspace: Workspace, scene_file: Path
) -> None:
    fill_scenes(workspace, scene_file)
    with pytest.raises(UserError, match=r"they used scenes \(.*catalogue\.csv\).*--catalogue"):
        compute_metrics(workspace.store, bootstrap=0)
    metrics = compute_metrics(workspace.store, catalogue=scene_file, bootstrap=0)
    assert set(metrics["catalogue"]) == {"scenes"}


def test_two_catalogues_of_one_name_get_their_hash_added(
    workspace: Workspace, scene_file: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere" / "scenes"
    run_scenes(ScenesOptions(out=other, per_category=1, seed=2))
    fill_mmvp(workspace)
    fill_scenes(workspace, scene_file)
    fill_scenes(workspace, other / "catalogue.csv")
    shipped = load_catalogue()
    entries = load_entries(workspace.store)
    names = catalogue_names(shipped, [e for e in entries if e.catalogue_file])
    first, second = (load_catalogue(p).sha256 for p in (scene_file, other / "catalogue.csv"))
    assert names == {
        "shipped": "MMVP",
        first: f"scenes {first[:8]}",
        second: f"scenes {second[:8]}",
    }
    report = build_report(workspace.store, **FAST)
    assert [o.name for o in report.catalogues.others] == [names[first], names[second]]
    # One model on three catalogues: each beside MMVP.
    side = report.catalogues.side_by_side
    assert list(dict.fromkeys(side["catalogue"])) == ["MMVP", names[first], names[second]]


def test_without_catalogue_a_workspace_of_one_scene_set_is_reported_on_it(
    workspace: Workspace, scene_file: Path, tmp_path: Path
) -> None:
    from amvicc.report import ReportOptions, run_report

    fill_scenes(workspace, scene_file)
    summary = run_report(
        ReportOptions(format="csv", bootstrap=0, progress=False), store=workspace.store
    )
    rows = list(csv.DictReader(io.StringIO(summary.text)))
    assert {r["catalogue"] for r in rows} == {"scenes"}
    (overall,) = [
        r for r in rows
        if r["metric"] == "individual" and r["category"] == "all" and r["condition"] == ""
    ]  # fmt: skip
    assert (overall["correct"], overall["total"]) == ("18", "18")  # every scene, right

    # Two scene sets and no MMVP run: nothing says which, so it is the user's choice.
    other = tmp_path / "elsewhere" / "scenes"
    run_scenes(ScenesOptions(out=other, per_category=1, seed=2))
    fill_scenes(workspace, other / "catalogue.csv", model="vlm2")
    with pytest.raises(UserError, match="report with --catalogue set to one of them"):
        run_report(ReportOptions(format="csv", bootstrap=0, progress=False), store=workspace.store)
