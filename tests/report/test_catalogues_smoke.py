"""The smoke VLM answers a scene set and MMVP in one workspace: the report keeps them apart.

The real path end to end: ``amvicc scenes build``, ``amvicc answer`` with ``tiny-llava``
(offline, random weights) on the scenes and on MMVP-named stand-in images, ``amvicc report``.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.report import build_report, render_report
from amvicc.store import Store
from amvicc.testing.mmvp_images import write_mmvp_images

MMVP_INDICES = "1-18"


def report_rows(
    capsys: pytest.CaptureFixture[str], store: Path, *extra: str
) -> list[dict[str, str]]:
    report = ["report", "--store", str(store), "--format", "csv", "--bootstrap", "0", "-q"]
    assert main([*report, *extra]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


@pytest.mark.slow
def test_smoke_vlm_on_scenes_and_mmvp_is_reported_apart_and_side_by_side(
    tmp_path: Path, isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = tmp_path / "scenes"
    assert main(["scenes", "build", "--out", str(scenes), "--per-category", "1"]) == 0
    images = write_mmvp_images(tmp_path / "mmvp", range(1, 19))
    alone, both = tmp_path / "mmvp-only", tmp_path / "both"
    answer = ["answer", "--model", "tiny-llava", "-q"]
    assert (
        main([*answer, "--images", str(images), "--index", MMVP_INDICES, "--store", str(alone)])
        == 0
    )
    shutil.copytree(alone, both)  # the same MMVP run, then the scenes beside it
    on_scenes = ["--catalogue", str(scenes / "catalogue.csv"), "--images", str(scenes / "images")]
    assert main([*answer, *on_scenes, "--store", str(both)]) == 0
    capsys.readouterr()

    mmvp = report_rows(capsys, alone)
    rows = report_rows(capsys, both)
    assert {r["catalogue"] for r in mmvp} == {"MMVP"}
    assert [r for r in rows if r["catalogue"] == "MMVP"] == mmvp
    scene_rows = [r for r in rows if r["catalogue"] == "scenes"]
    individual = [r for r in scene_rows if r["metric"] == "individual" and r["category"] == "all"]
    assert [(r["model"], r["total"]) for r in individual] == [("tiny-llava", "18")]
    # Scored apart, the scene answers have the numbers a report on the scene set gives them.
    own = report_rows(capsys, both, "--catalogue", str(scenes / "catalogue.csv"))
    assert {r["catalogue"] for r in own} == {"scenes", "MMVP"}  # now MMVP is the other one
    accuracies = [
        r
        for r in own
        if r["catalogue"] == "scenes" and r["condition"] == ""
        if r["metric"] in ("individual", "pair")
    ]
    assert scene_rows == accuracies

    with Store(both, create=False) as store:
        report = build_report(store, bootstrap=0, progress=False)
    side = report.catalogues.side_by_side
    assert set(side["label"]) == {"tiny-llava"} and set(side["catalogue"]) == {"MMVP", "scenes"}
    cell = side.set_index(["catalogue", "metric", "category"])
    for row in accuracies:
        mine = cell.loc[(row["catalogue"], row["metric"], row["category"])]
        assert (int(mine["correct"]), int(mine["total"])) == (
            int(row["correct"]),
            int(row["total"]),
        )
    html = render_report(report, "html")
    assert "MMVP and other catalogues" in html and "I · scenes" in html

    (scenes / "catalogue.csv").unlink()
    with Store(both, create=False) as store:
        gone = build_report(store, bootstrap=0, progress=False).catalogues
    assert [(n.label, n.catalogue) for n in gone.not_scored] == [("tiny-llava", "scenes")]
    assert "no longer exists" in gone.not_scored[0].reason
    assert report_rows(capsys, both) == mmvp
