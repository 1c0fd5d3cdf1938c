"""Tokens and cost per model, prices from the user's YAML; smoke models on their own pairs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from amvicc.cli import main
from amvicc.provenance import canonical_json
from amvicc.report import ReportOptions, build_report, collect_items, render_report
from amvicc.store import ImageRecord, ResponseRecord, new_id

if TYPE_CHECKING:
    from conftest import Workspace

PRICES = """
currency: USD
models:
  llava:
    input_per_million: 2.0
    output_per_million: 10.0
  "sd*":
    per_image: 0.04
"""


@pytest.fixture
def spent(workspace: Workspace, tmp_path: Path) -> Path:
    vlm = workspace.vlm("llava")
    for index, tokens, status in ((9, (100, 20), "ok"), (10, (200, 30), "ok"), (9, None, "error")):
        workspace.store.add_response(
            ResponseRecord(
                response_id=new_id(),
                run_id=vlm.run_id,
                config_key=vlm.config_key,
                question_index=index,
                image_key="mmvp",
                prompt="q",
                status=status,  # type: ignore[arg-type]
                text="(a)" if status == "ok" else None,
                prompt_tokens=tokens[0] if tokens else None,
                completion_tokens=tokens[1] if tokens else None,
            )
        )
    workspace.answer(vlm, 61, "a")  # outside the report's questions: not counted
    igm = workspace.igm("sd35")
    for index, status, usage in (
        (9, "ok", {"input_tokens": 50}),
        (10, "ok", None),
        (10, "failed", None),
    ):
        workspace.store.add_image(
            ImageRecord(
                image_id=new_id(),
                run_id=igm.run_id,
                config_key=igm.config_key,
                question_index=index,
                prompt_kind="explicit",
                sample=0,
                prompt="p",
                seed=1,
                status=status,  # type: ignore[arg-type]
                params_json=canonical_json({"usage": usage} if usage else {}),
            )
        )
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    return prices


def test_tokens_and_cost_by_hand(workspace: Workspace, spent: Path) -> None:
    options = ReportOptions(indices=frozenset({9, 10}), bootstrap=0, prices=spent)
    report = build_report(workspace.store, options)
    usage = report.analyses.usage.set_index("label")
    llava = usage.loc["llava"]
    assert (llava.requests, llava.failed, llava.with_usage) == (3, 1, 2)
    assert (llava.prompt_tokens, llava.completion_tokens) == (300, 50)
    assert llava.cost == pytest.approx(300 * 2.0 / 1e6 + 50 * 10.0 / 1e6)
    assert llava.note == "partial: 1 of 3 request(s) reported no token usage"
    sd35 = usage.loc["sd35"]
    assert (sd35.requests, sd35.failed, sd35.with_usage, sd35.prompt_tokens) == (3, 1, 1, 50)
    assert sd35.cost == pytest.approx(3 * 0.04) and sd35.note == ""  # the glob's price
    rows = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    cost = next(r for r in rows if r["model"] == "llava" and r["metric"] == "cost")
    assert (cost["condition"], cost["correct"], cost["total"]) == ("usage", "2", "3")
    html = render_report(report, "html")
    assert "partial: 1 of 3 request(s)" in html and "0.04 USD per image" in html


def test_without_prices_tokens_only(workspace: Workspace, spent: Path) -> None:
    report = build_report(workspace.store, indices=frozenset({9, 10}), bootstrap=0)
    usage = report.analyses.usage.set_index("label")
    assert usage.loc["llava"].note == "no price given"
    assert "amvicc ships none" in render_report(report, "html")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: [1, 2]", "needs a 'models:' mapping"),
        ("models:\n  llava: {per_token: 1}", "unknown price 'per_token'"),
        ("models:\n  llava: {per_image: -1}", "not a number >= 0"),
        ("models: {llava: [", "is not valid YAML"),
    ],
)
def test_bad_prices_fail_in_one_line(
    workspace: Workspace,
    spent: Path,
    text: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spent.write_text(text)
    root = str(workspace.store.root)
    assert main(["report", "--store", root, "--prices", str(spent), "--format", "csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_smoke_models_are_scored_on_their_own_pairs(workspace: Workspace) -> None:
    real = workspace.igm("sd35")
    smoke = workspace.igm("tiny", smoke=True)
    for index in (9, 10, 61, 62):
        workspace.graded_image(real, index, "explicit", ("human:a", "correct"))
    workspace.graded_image(smoke, 9, "explicit", ("human:a", "correct"))
    options = ReportOptions(indices=frozenset({9, 10, 61, 62}), smoke_indices=frozenset({9}))
    items = collect_items(workspace.store, options).frame
    assert sorted(items.loc[items["label"] == "tiny", "question_index"].unique()) == [9, 10]
    assert len(items[items["label"] == "sd35"]) == 8
    report = build_report(workspace.store, options)
    html = render_report(report, "html")
    assert html.index("Smoke-test image models") > html.index("Image generation models (IGMs)")
    assert html.index("<table") < html.index("Smoke-test image models")
    root = str(workspace.store.root)
    assert main(["report", "--store", root, "--index", "9-10", "--smoke-index", "299"]) == 2
    # Outside every real model's questions, the smoke model's other categories stay empty.
    assert main(["report", "--store", root, "--smoke-index", "299", "-o", "-"]) == 0
    # The JSON records the smoke indices asked for (the parsed ranges once crashed it).
    out = workspace.store.root / "smoke.json"
    args = ["report", "--store", root, "--smoke-index", "9-10,299", "--format", "json"]
    assert main([*args, "-o", str(out)]) == 0
    assert json.loads(out.read_text())["options"]["smoke_indices"] == [9, 10, 299]
