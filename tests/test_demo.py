"""`amvicc demo` end to end: offline, smoke models, judges, report; then a rater joins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from amvicc.catalogue import load_catalogue
from amvicc.cli.demo import demo_indices
from amvicc.score.desk import ScoringDesk
from amvicc.store import Store
from amvicc.testing.mmvp_images import write_mmvp_images


def _demo(workspace: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AMVICC_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    demo = [sys.executable, "-m", "amvicc.demo", "--store", str(workspace), "--pairs", "1"]
    return subprocess.run(
        [*demo, "-q", *extra],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )


@pytest.mark.slow
def test_demo_runs_offline_and_leaves_a_report_that_compares_judges_with_humans(
    tmp_path: Path,
) -> None:
    workspace, cache = tmp_path / "demo", tmp_path / "cache"
    first = _demo(workspace, cache)
    assert first.returncode == 0, first.stderr
    assert "mean nothing about real models" in first.stdout
    assert f"amvicc score --store {workspace}" in first.stdout
    assert first.stdout.index("import-grades") < first.stdout.index("amvicc generate")
    report = workspace / "report.html"
    html = report.read_text()
    assert "smoke-test model" in html and "tiny-sd3" in html and "tiny-llava" in html
    # The first screen is AMVICC's published image-model matrix, named as the paper names
    # them; the smoke-test models are in a section of their own, after every real one, and
    # no other section names them.
    real, smoke = html.split('<section id="smoke">')
    first_table = html[html.index("<table") : html.index("</table>")]
    for model in ("DALL·E 3", "Gemini 2.5 Flash Image", "SD 3.5 Large"):
        assert model in first_table
    results = real[real.index('<section id="results">') :]
    assert ">0.773<" in results[: results.index("</table>")]  # DALL·E 3, I Ex, all
    assert "tiny" not in real
    assert '<a href="#smoke">' in real[: real.index("</header>")]  # the opening warning
    assert "<strong>0.981481</strong> (53/54)" in html  # the ` Y` cell the paper counted
    # The smoke VLM answered procedural scenes, scored apart against their own catalogue.
    scenes = workspace / "scenes"
    assert f"amvicc scenes -q build --out {scenes}" in first.stdout
    assert f"--catalogue {scenes / 'catalogue.csv'}" in first.stdout
    catalogues = smoke[smoke.index('<section id="smoke-catalogues">') :]
    assert "MMVP and other catalogues" in catalogues and "Results on scenes" in catalogues
    assert "tiny-llava" in catalogues and "tiny-llava" in smoke[: smoke.index("</div>")]
    assert "--ladder" in first.stdout
    ladder = smoke[smoke.index('<section id="smoke-ladder">') :]
    assert "tiny-llava" in ladder and "Chain breaks at" in ladder
    # Failure modes: a matrix, one row per image model (three).
    failures = real[real.index('<section id="failure-modes">') :]
    assert failures[: failures.index("</section>")].count("<tr") == 1 + 3

    indices = demo_indices(1)
    catalogue = load_catalogue()
    assert {catalogue.question(i).category.code for i in indices} == {
        c.code for c in catalogue.categories()
    }
    with Store(workspace, create=False) as store:
        assert [r.model for r in store.runs(stage="import")] == [
            "DALL·E 3",
            "Gemini 2.5 Flash Image",
            "SD 3.5 Large",
        ]
        generate = store.runs(stage="generate")
        assert [r.smoke for r in generate] == [1]
        images = store.images(run_id=generate[0].run_id)
        assert len(images) == 2 * len(indices) and {i.status for i in images} == {"ok"}
        (answered,) = store.runs(stage="answer")
        assert answered.config["catalogue"] == str((scenes / "catalogue.csv").resolve())
        assert len(store.responses(run_id=answered.run_id)) == 18  # 1 pair × 9 categories × 2
        # ... and GRIP's question ladder about the same scenes: five rungs per image
        (ladder,) = store.runs(stage="ladder")
        assert len(store.responses(run_id=ladder.run_id)) == 18 * 5
        sources = {v.source for v in store.verdicts()}
        assert {"judge:question:tiny-llava", "judge:ocr:rapidocr", "extractor"} <= sources
        made = len(store.images(current=False))

        # A rater scores the Text images; the refreshed report then compares OCR with them.
        desk = ScoringDesk(store, catalogue, raters_per_item=1)
        ocr = {v.image_id: v.value for v in store.verdicts(source="judge:ocr:rapidocr")}
        for image_id in ocr:
            desk.decide("rate", "ann", image_id, "incorrect")

    # Resumes: nothing is made or asked again; with MMVP's images (stand-ins here) the VLM
    # answers MMVP too, and the report puts its two catalogues side by side.
    images = write_mmvp_images(tmp_path / "mmvp", indices)
    second = _demo(workspace, cache, "--images", str(images))
    assert second.returncode == 0, second.stderr
    assert "answered 18/18 (0 asked now)" in second.stdout  # the scenes, from the first run
    assert "answered 90/90 ladder rungs (0 asked now)" in second.stdout
    with Store(workspace, create=False) as store:
        assert len(store.images(current=False)) == made
        assert len(store.runs(stage="answer")) == 2
    side = report.read_text()[report.read_text().index('<section id="smoke-catalogues">') :]
    assert "Side by side" in side and "I · scenes" in side and "ΔI scenes − MMVP" in side
    refreshed = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.report",
            "--store",
            str(workspace),
            "--index",
            ",".join(map(str, indices)),
            "--format",
            "json",
            "-o",
            "-",
            "-q",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    judges = json.loads(refreshed.stdout)["judge_validation"]
    rows = [r for r in judges if r["judge"] == "judge:ocr:rapidocr" and r["category"] == "all"]
    assert rows and rows[0]["items"] == len(ocr)
    wrong = sum(value == "correct" for value in ocr.values())
    assert rows[0]["accuracy"] == pytest.approx(1 - wrong / len(ocr))
