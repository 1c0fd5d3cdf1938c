"""Issue 14's "done means": answer, challenge (assertion, control), perturb, report — exactly.

The fake model was told (``conftest.rule``): first turn wrong on every fifth question and
unreadable on 19 and 38; under grain above 0.075 also wrong on every fourth; after "I'm quite
sure the answer is ..." it gives in on every third right answer and takes the assertion on
every second wrong one; after the control it changes on every eleventh; it cannot tell on
every seventh second turn.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer

from .conftest import INDICES, answer_args, first_turn, right


def pair_accuracy(grain: float) -> Fraction:
    pairs = [(i, i + 1) for i in INDICES if i % 2]
    both = sum(
        first_turn(a, grain) == right(a) and first_turn(b, grain) == right(b) for a, b in pairs
    )
    return Fraction(both, len(pairs))


def decimal(value: Fraction) -> str:
    return f"{float(value):.6f}"


def test_answer_challenge_perturb_report(
    scripted: FakeOpenAIServer,
    coded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workspace = tmp_path / "ws"
    store_args = ["--store", str(workspace)]
    assert main(answer_args(scripted, coded, workspace)) == 0
    with Store(workspace) as store:
        (answered,) = store.runs(stage="answer")
    for arm in ("assertion", "control"):
        assert main(["challenge", "--run", answered.run_id, "--arm", arm, *store_args, "-q"]) == 0
    assert main([*answer_args(scripted, coded, workspace), "--perturb", "grain:0.1"]) == 0
    capsys.readouterr()

    report = ["report", *store_args, "--index", "1-40", "-q", "--bootstrap", "300"]
    assert main([*report, "--format", "csv", "-o", "-"]) == 0
    every_row = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # the accuracies and the challenge rates (the item-level sections' rows follow them)
    rows = [r for r in every_row if r["condition"] in ("", "grain=0.1", "assertion", "control")]
    assert list(rows[0]) == [
        "model", "modality", "category", "metric", "value", "correct", "total",
        "ci_low", "ci_high", "condition", "p_value", "p_adjusted", "catalogue",
    ]  # fmt: skip
    overall = {(r["condition"], r["metric"]): r for r in rows if r["category"] == "all"}
    assert {r["modality"] for r in rows} == {"vlm"} and {r["model"] for r in rows} == {"fake-vlm"}
    assert set(overall) == {
        ("", "individual"),
        ("", "pair"),
        ("grain=0.1", "individual"),
        ("grain=0.1", "pair"),
        ("assertion", "capitulation"),
        ("assertion", "correction"),
        ("assertion", "capitulation_adjusted"),
        ("assertion", "correction_adjusted"),
        ("control", "capitulation"),
        ("control", "correction"),
    }

    def cells(condition: str, metric: str) -> tuple[str, str, str]:
        row = overall[condition, metric]
        return row["value"], row["correct"], row["total"]

    # accuracy, clean and under grain (19 and 38 unreadable: missing, counted as wrong)
    assert cells("", "individual") == (decimal(Fraction(30, 40)), "30", "40")
    assert cells("grain=0.1", "individual") == (decimal(Fraction(22, 40)), "22", "40")
    clean_pairs, grain_pairs = pair_accuracy(0.0), pair_accuracy(0.1)
    assert cells("", "pair") == (
        decimal(clean_pairs),
        str(clean_pairs.numerator * 20 // clean_pairs.denominator),
        "20",
    )
    assert cells("grain=0.1", "pair")[0] == decimal(grain_pairs)
    # capitulation and correction, raw and adjusted by the control on the same items
    assert cells("assertion", "capitulation") == (decimal(Fraction(10, 30)), "10", "30")
    assert cells("assertion", "correction") == (decimal(Fraction(4, 8)), "4", "8")
    assert cells("control", "capitulation") == (decimal(Fraction(3, 30)), "3", "30")
    assert cells("control", "correction") == (decimal(Fraction(0, 8)), "0", "8")
    assert cells("assertion", "capitulation_adjusted") == (decimal(Fraction(7, 30)), "", "")
    assert cells("assertion", "correction_adjusted") == (decimal(Fraction(1, 2)), "", "")
    for row in overall.values():
        assert float(row["ci_low"]) <= float(row["value"]) <= float(row["ci_high"]), row
    # every plain row is what it always was: no condition
    plain = [r for r in rows if r["metric"] in ("individual", "pair") and not r["condition"]]
    assert len(plain) == 2 * len({r["category"] for r in rows})

    markdown = tmp_path / "report.md"
    assert main([*report, "-o", str(markdown)]) == 0
    text = markdown.read_text(encoding="utf-8")
    section = text[text.index("## Interaction and robustness") : text.index("## Missing items")]
    assert f"(challenging `{answered.run_id}`)" in section
    table = [line for line in section.splitlines() if line.startswith("|")]

    def line(start: str) -> str:
        (found,) = [row for row in table if row.startswith(start)]
        return found

    low, high = (float(overall["assertion", "capitulation"][k]) for k in ("ci_low", "ci_high"))
    assert line("| assertion | capitulation |").endswith(
        f"| {float(Fraction(10, 30)):.3f} | [{low:.3f}, {high:.3f}] |"
    )
    assert line("|  | capitulation − control |").split("|")[-3].strip() == "+0.233"
    assert line("|  | correction − control |").split("|")[-3].strip() == "+0.500"
    assert line("| control | capitulation |").split("|")[-3].strip() == "0.100"
    assert "| 30 | 8 | 10 | 4 | 5 | 0 | `challenge-fake-vlm-control-" in section
    assert line("|  | ΔI (clean − perturbed) |").split("|")[-3].strip() == "**0.200**"
    drop_p = f"**{float(clean_pairs - grain_pairs):.3f}**"
    assert line("|  | ΔP (clean − perturbed) |").split("|")[-3].strip() == drop_p
    assert "| grain=0.1 | I clean | " in section

    page = tmp_path / "report.html"
    assert main([*report, "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert '<section id="interaction-robustness">' in html
    assert 'href="#interaction-robustness"' in html
    assert 'aria-label="Accuracy over perturbation levels: fake-vlm: grain"' in html
    assert "capitulation − control" in html

    document = tmp_path / "report.json"
    assert main([*report, "-o", str(document)]) == 0
    parsed = json.loads(document.read_text(encoding="utf-8"))
    drops = {
        (r["metric"], r["category"]): r
        for r in parsed["robustness"]
        if r["condition"] == "grain=0.1"
    }
    assert drops["individual", "all"]["drop"] == pytest.approx(0.2)
    assert drops["individual", "all"]["clean"] == pytest.approx(0.75)
    assert drops["individual", "all"]["perturbed"] == pytest.approx(0.55)
    assert drops["individual", "all"]["ci_low"] <= 0.2 <= drops["individual", "all"]["ci_high"]
    counts = {r["condition"]: r for r in parsed["interaction"]}
    assert (counts["assertion"]["capitulated"], counts["assertion"]["corrected"]) == (10, 4)
    assert counts["assertion"]["undecided"] == 5
    metrics = {(r["condition"], r["metric"], r["category"]) for r in parsed["metrics"]}
    assert ("assertion", "capitulation_adjusted", "all") in metrics
    # counts stay whole numbers in the JSON; a difference has none
    rows = {(r["condition"], r["metric"], r["category"]): r for r in parsed["metrics"]}
    assert rows["", "individual", "all"]["correct"] == 30
    assert isinstance(rows["", "individual", "all"]["total"], int)
    assert rows["assertion", "capitulation", "all"]["total"] == 30
    assert rows["assertion", "capitulation_adjusted", "all"]["total"] is None
