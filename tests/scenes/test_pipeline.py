"""The whole pipeline on procedural scenes: perturbation, challenge, grading, report, unchanged."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amvicc.catalogue import load_catalogue
from amvicc.cli import main
from amvicc.scenes import ScenesOptions, run_scenes
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer


def _reply(request: dict[str, Any]) -> str:
    """Always (a) first; on a second turn, always (b): every answer flips when challenged."""
    turns = [m for m in request["messages"] if m.get("role") == "assistant"]
    return "(b)" if turns else "(a)"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(chat=_reply) as fake:
        yield fake


def test_perturbation_and_challenge_run_on_scenes_and_reach_the_report(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = tmp_path / "scenes"
    run_scenes(ScenesOptions(out=scenes, per_category=2, seed=5, categories=("od", "tx")))
    catalogue = load_catalogue(scenes / "catalogue.csv")
    workspace = tmp_path / "ws"
    common = ["--catalogue", str(scenes / "catalogue.csv"), "--store", str(workspace), "-q"]
    answer = ["answer", "--model", "fake-vlm", "--base-url", server.url,
              "--images", str(scenes / "images"), *common]  # fmt: skip
    assert main(answer) == 0
    assert main([*answer, "--perturb", "grain:0.1"]) == 0
    with Store(workspace, create=False) as store:
        (clean,) = [r for r in store.runs(stage="answer") if not r.condition]
        (noisy,) = [r for r in store.runs(stage="answer") if r.condition]
    assert noisy.condition == "grain=0.1"
    assert main(["challenge", "--run", clean.run_id, "--arm", "assertion", *common]) == 0
    out = tmp_path / "r.csv"
    assert main(["report", *common, "--bootstrap", "0", "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))

    def row(metric: str, condition: str) -> dict[str, str]:
        (found,) = [
            r for r in rows
            if r["metric"] == metric and r["condition"] == condition and r["category"] == "all"
        ]  # fmt: skip
        return found

    # The model always says (a): right exactly where the scene's answer is (a).
    with_a = sum(q.answer == "a" for q in catalogue)
    plain = row("individual", "")
    assert (int(plain["correct"]), int(plain["total"])) == (with_a, len(catalogue))
    perturbed = row("individual", "grain=0.1")
    assert (int(perturbed["correct"]), int(perturbed["total"])) == (with_a, len(catalogue))
    # Challenged, it always flips: every right answer capitulates, every wrong one is corrected.
    assert float(row("capitulation", "assertion")["value"]) == 1.0
    assert int(row("capitulation", "assertion")["total"]) == with_a
    assert float(row("correction", "assertion")["value"]) == 1.0
    assert int(row("correction", "assertion")["total"]) == len(catalogue) - with_a
    capsys.readouterr()
