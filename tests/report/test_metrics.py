"""Hand-checked fractions for every metric, both missing policies, samples and intervals."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest

from amvicc.report import ReportOptions, build_report, collect_items, compute_metrics
from amvicc.report.metrics import (
    failure_modes,
    metric_table,
    shared_failure_modes,
)
from amvicc.report.units import bootstrap_intervals, pair_units
from amvicc.store import Store

if TYPE_CHECKING:
    from conftest import Workspace

TX = [9, 10, 61, 62, 65, 66, 91, 92, 133, 134, 201, 202, 277, 278]  # 7 pairs
TX_ONLY = ReportOptions(categories=("tx",), bootstrap=0)


def build_fixture(w: Workspace) -> None:
    """The fixture worked out by hand in the comments (category tx, 7 pairs)."""
    m1 = w.igm("m1")
    # implicit: pairs (9,10) ✓✓, (61,62) ✓✗, (65,66) ✗✗, (91,92) ✓ + never generated,
    # (133,134) ✓ + a tie, (201,202) ✓✓, (277,278) refused + ✓
    for index in (9, 10, 61, 91, 133, 201, 202, 278):
        w.graded_image(m1, index, "implicit", human("correct"))
    for index in (62, 65, 66):
        w.graded_image(m1, index, "implicit", human("incorrect"))
    w.graded_image(m1, 134, "implicit", human("correct"), human("incorrect", "bob"))
    w.image(m1, 277, "implicit", status="refused")
    # explicit: majorities, cant_tell as a not-correct vote, adjudication, undecided, sheets
    w.graded_image(
        m1, 9, "explicit", human("correct"), human("cant_tell", "bob"), human("correct", "carol")
    )
    w.graded_image(m1, 10, "explicit", human("cant_tell"), human("incorrect", "bob"))
    w.graded_image(m1, 61, "explicit", human("correct"), human("cant_tell", "bob"))
    w.graded_image(
        m1,
        62,
        "explicit",
        human("incorrect"),
        human("incorrect", "bob"),
        ("adjudication:erin", "correct"),
    )
    for index in (65, 66, 133, 201, 277, 278):
        w.graded_image(m1, index, "explicit", human("correct"))
    for index in (91, 92):
        w.graded_image(m1, index, "explicit", ("sheet:grades.csv:dan", "correct"), human("correct"))
    w.graded_image(m1, 134, "explicit", human("undecided"))
    w.graded_image(m1, 202, "explicit", human("incorrect"))

    v1 = w.vlm("v1")
    w.answer(v1, 9, "a")
    w.answer(v1, 10, "b")
    w.answer(v1, 61, "a")
    r62 = w.answer(v1, 62, "undecided")
    w.decide(r62, ("llm-judge:gpt", "b"))
    r65 = w.answer(v1, 65, "b")  # wrong, but a human audit says (a)
    w.decide(r65, human("a"))
    w.answer(v1, 66, "no_answer")
    w.response(v1, 91, status="error")
    w.answer(v1, 92, "b")
    w.answer(v1, 133, "undecided")
    r134 = w.answer(v1, 134, "undecided")
    w.decide(r134, ("llm-judge:x", "b"), ("llm-judge:y", "b"))
    w.answer(v1, 202, "b")  # 201 never answered
    w.answer(v1, 277, "a")
    w.answer(v1, 278, "a")
    # an answer about a generated image is not VLM accuracy
    w.response(v1, 9, image_key="someimageid", text="(b)")


def human(value: str, rater: str = "alice") -> tuple[str, str]:
    return (f"human:{rater}", value)


def cell(metrics: pd.DataFrame, label: str, metric: str, category: str = "tx") -> tuple[int, int]:
    row = metrics[
        (metrics["label"] == label)
        & (metrics["metric"] == metric)
        & (metrics["category"] == category)
    ]
    assert len(row) == 1, (label, metric, category)
    correct, total = int(row["correct"].iloc[0]), int(row["total"].iloc[0])
    value = row["value"].iloc[0]
    if total:
        assert value == pytest.approx(correct / total, abs=1e-12)
    return correct, total


FAIL = {
    ("m1", "individual_implicit"): (8, 14),
    ("m1", "pair_implicit"): (2, 7),
    ("m1", "individual_explicit"): (10, 14),
    ("m1", "pair_explicit"): (3, 7),
    ("v1", "individual"): (9, 14),
    ("v1", "pair"): (2, 7),
}
EXCLUDE = {
    ("m1", "individual_implicit"): (8, 11),
    ("m1", "pair_implicit"): (2, 4),
    ("m1", "individual_explicit"): (10, 12),
    ("m1", "pair_explicit"): (3, 5),
    ("v1", "individual"): (9, 10),
    ("v1", "pair"): (2, 3),
}


@pytest.mark.parametrize(("policy", "expected"), [("fail", FAIL), ("exclude", EXCLUDE)])
def test_every_metric_matches_the_hand_count(
    workspace: Workspace, policy: str, expected: dict[tuple[str, str], tuple[int, int]]
) -> None:
    build_fixture(workspace)
    metrics = compute_metrics(workspace.store, TX_ONLY, missing=policy)
    for (label, metric), fraction in expected.items():
        assert cell(metrics, label, metric) == fraction, (label, metric)
        assert cell(metrics, label, metric, "all") == fraction, (label, metric)
    assert set(metrics["metric"]) == {m for _, m in expected}


def test_missing_items_are_counted_with_their_reasons(workspace: Workspace) -> None:
    build_fixture(workspace)
    report = build_report(workspace.store, TX_ONLY)
    missing = report.missing.set_index(["label", "kind", "reason"])
    assert missing.loc[("m1", "implicit", "not_generated"), "indices"] == "92"
    assert missing.loc[("m1", "implicit", "unresolved"), "indices"] == "134"
    assert missing.loc[("m1", "implicit", "refused"), "indices"] == "277"
    assert missing.loc[("m1", "explicit", "unresolved"), "indices"] == "61"
    assert missing.loc[("m1", "explicit", "not_rated"), "indices"] == "134"
    assert missing.loc[("v1", "answer", "no_answer"), "indices"] == "66"
    assert missing.loc[("v1", "answer", "error"), "indices"] == "91"
    assert missing.loc[("v1", "answer", "undecided"), "indices"] == "133"
    assert missing.loc[("v1", "answer", "not_answered"), "indices"] == "201"
    assert report.missing["count"].sum() == 3 + 2 + 4
    in_table = report.metrics.set_index(["label", "metric", "category"])["missing"]
    assert in_table[("m1", "individual_implicit", "tx")] == 3
    assert in_table[("m1", "pair_implicit", "tx")] == 3  # three pairs touched by a missing item


def test_all_sums_the_categories_and_counts_never_generated_items(workspace: Workspace) -> None:
    build_fixture(workspace)
    options = ReportOptions(categories=("tx", "vp"), bootstrap=0)
    failed = compute_metrics(workspace.store, options)
    assert cell(failed, "m1", "individual_implicit", "vp") == (0, 18)
    assert cell(failed, "m1", "individual_implicit", "all") == (8, 32)
    assert cell(failed, "m1", "pair_implicit", "all") == (2, 16)
    excluded = compute_metrics(workspace.store, options, missing="exclude")
    assert cell(excluded, "m1", "individual_implicit", "vp") == (0, 0)
    row = excluded[(excluded["label"] == "m1") & (excluded["category"] == "vp")]
    assert row["value"].isna().all()  # nothing counted: undefined, not zero
    assert cell(excluded, "m1", "individual_implicit", "all") == (8, 11)


def test_label_policy_of_the_run_decides_vlm_correctness(workspace: Workspace) -> None:
    # MMVP's label of 99 is (a), corrected to (b); 100 is (b), corrected to (a).
    corrected = workspace.vlm("fixed")
    original = workspace.vlm("orig", labels="original")
    for run in (corrected, original):
        workspace.answer(run, 99, "b")
        workspace.answer(run, 100, "a")
    metrics = compute_metrics(workspace.store, categories=("sh",), bootstrap=0)
    assert cell(metrics, "fixed", "individual", "sh")[0] == 2
    assert cell(metrics, "orig", "individual", "sh")[0] == 0
    forced = compute_metrics(workspace.store, categories=("sh",), bootstrap=0, labels="original")
    assert cell(forced, "fixed", "individual", "sh")[0] == 0


def test_mean_and_pass_at_k(workspace: Workspace) -> None:
    run = workspace.igm("sampler")
    workspace.graded_image(run, 9, "implicit", human("correct"), sample=0)
    workspace.graded_image(run, 10, "implicit", human("incorrect"), sample=0)
    workspace.graded_image(run, 9, "implicit", human("incorrect"), sample=1)
    workspace.graded_image(run, 10, "implicit", human("correct"), sample=1)
    report = build_report(workspace.store, TX_ONLY, missing="exclude")
    assert cell(report.metrics, "sampler", "individual_implicit") == (2, 4)
    assert cell(report.metrics, "sampler", "pair_implicit") == (0, 2)
    samples = report.samples.set_index(["metric", "category"])
    row = samples.loc[("individual_implicit", "tx")]
    assert (row["k"], row["mean_at_k"], row["pass_correct"], row["pass_total"]) == (2, 0.5, 2, 2)
    row = samples.loc[("pair_implicit", "tx")]
    assert (row["mean_at_k"], row["pass_correct"], row["pass_total"]) == (0.0, 1, 1)
    failed = build_report(workspace.store, TX_ONLY)
    assert cell(failed.metrics, "sampler", "individual_implicit") == (2, 28)
    row = failed.samples.set_index(["metric", "category"]).loc[("pair_implicit", "tx")]
    assert (row["pass_correct"], row["pass_total"]) == (1, 7)


def test_failure_modes_and_shared_table(workspace: Workspace) -> None:
    build_fixture(workspace)
    options = ReportOptions(categories=("tx",), bootstrap=0)
    metrics = compute_metrics(workspace.store, options)
    failures = failure_modes(metrics, options)
    failing = set(zip(failures["label"], failures["metric"], strict=True))
    # 8/14 < 0.8, 10/14 = 0.714 < 0.8, 2/7 and 3/7 < 0.7, VLM 9/14 and 2/7
    assert failing == set(FAIL)
    lenient = ReportOptions(categories=("tx",), threshold_individual=0.7, threshold_pair=0.4)
    relaxed = failure_modes(metrics, lenient)
    assert set(zip(relaxed["label"], relaxed["metric"], strict=True)) == {
        ("m1", "individual_implicit"),  # 0.571 < 0.7
        ("m1", "pair_implicit"),  # 0.286 < 0.4
        ("v1", "individual"),  # 0.643 < 0.7
        ("v1", "pair"),
    }
    shared = shared_failure_modes(metrics, relaxed, ["tx"]).iloc[0]
    assert shared["igm_failing"] == ["m1"] and shared["vlm_failing"] == ["v1"]
    assert shared["cross_modal"] and shared["modalities"] == "igm+vlm"


def test_judge_basis_and_any(workspace: Workspace) -> None:
    run = workspace.igm("judged")
    a = workspace.graded_image(
        run, 9, "implicit", human("correct"), ("judge:ocr:rapidocr", "incorrect")
    )
    workspace.graded_image(run, 10, "implicit", ("judge:ocr:rapidocr", "correct"))
    workspace.graded_image(
        run,
        61,
        "implicit",
        human("correct"),
        human("incorrect", "bob"),
        ("judge:ocr:rapidocr", "correct"),
    )
    assert a
    by_human = compute_metrics(workspace.store, TX_ONLY)
    assert cell(by_human, "judged", "individual_implicit") == (1, 14)
    by_judge = compute_metrics(workspace.store, TX_ONLY, verdicts="judge:ocr:rapidocr")
    assert cell(by_judge, "judged", "individual_implicit") == (2, 14)
    by_any = compute_metrics(workspace.store, TX_ONLY, verdicts="any")
    # 9 by humans (correct), 10 by the judge (correct), 61 a human tie -> the judge (correct)
    assert cell(by_any, "judged", "individual_implicit") == (3, 14)


# --- bootstrap -------------------------------------------------------------------------------


def _units(rng: np.random.Generator, pairs: int) -> pd.DataFrame:
    both = rng.random(pairs) < 0.4
    one = ~both & (rng.random(pairs) < 0.5)
    return pd.DataFrame(
        {
            "entry": "m",
            "kind": "answer",
            "category": "all",
            "pair": np.arange(pairs),
            "ic": np.where(both, 2, np.where(one, 1, 0)),
            "it": 2,
            "pc": both.astype(int),
            "pt": 1,
        }
    )


def test_bootstrap_is_seeded_and_matches_scipy() -> None:
    from scipy.stats import bootstrap

    units = _units(np.random.default_rng(1), 150)
    options = ReportOptions(bootstrap=4000, seed=3)
    first = bootstrap_intervals(units, options)
    again = bootstrap_intervals(units, options)
    other = bootstrap_intervals(units, ReportOptions(bootstrap=4000, seed=4))
    pd.testing.assert_frame_equal(first, again)
    assert not first.equals(other)
    low, high = first.iloc[0][["ind_low", "ind_high"]]
    reference = bootstrap(
        (units["ic"].to_numpy(), units["it"].to_numpy()),
        lambda c, t: c.sum() / t.sum(),
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.012)
    assert high == pytest.approx(reference.high, abs=0.012)
    point = units["ic"].sum() / units["it"].sum()
    assert low < point < high


def test_bootstrap_resamples_pairs_not_items() -> None:
    # Every pair is either both right or both wrong: resampling pairs gives the pair metric's
    # spread to the individual metric too (items never split from their pair).
    rng = np.random.default_rng(2)
    both = rng.random(40) < 0.5
    units = pd.DataFrame(
        {
            "entry": "m",
            "kind": "answer",
            "category": "all",
            "pair": range(40),
            "ic": np.where(both, 2, 0),
            "it": 2,
            "pc": both.astype(int),
            "pt": 1,
        }
    )
    row = bootstrap_intervals(units, ReportOptions(bootstrap=500)).iloc[0]
    assert row["ind_low"] == row["pair_low"] and row["ind_high"] == row["pair_high"]


def test_intervals_in_the_metric_table(workspace: Workspace) -> None:
    build_fixture(workspace)
    options = ReportOptions(categories=("tx",), bootstrap=300, seed=11)
    items = collect_items(workspace.store, options)
    first = metric_table(items, options)
    assert first.equals(metric_table(items, options))
    assert (first["ci_low"] <= first["value"] + 1e-12).all()
    assert (first["value"] <= first["ci_high"] + 1e-12).all()
    units = pair_units(items, options)
    assert set(units["pair"]) == {(i + 1) // 2 for i in TX}


def test_exact_fractions_survive_the_csv(workspace: Workspace) -> None:
    from amvicc.report import render_report

    build_fixture(workspace)
    text = render_report(build_report(workspace.store, TX_ONLY), "csv")
    row = next(line for line in text.splitlines() if line.startswith("m1,igm,tx,pair_implicit,"))
    assert (
        row == f"m1,igm,tx,pair_implicit,{float(Fraction(2, 7)):.6f},2,7,,,,MMVP"
    )  # plain: no condition


def test_empty_workspace_has_nothing_to_report(store: Store) -> None:
    from amvicc.errors import UserError

    with pytest.raises(UserError, match="nothing to report"):
        compute_metrics(store)


def test_a_model_with_two_configurations_is_reported_twice(workspace: Workspace) -> None:
    generated = workspace.igm("dalle3")
    imported = workspace.igm("dalle3", stage="import")
    workspace.graded_image(generated, 9, "implicit", human("correct"))
    workspace.graded_image(imported, 9, "implicit", human("incorrect"))
    metrics = compute_metrics(workspace.store, TX_ONLY)
    labels = sorted(set(metrics["label"]))
    assert labels == sorted(f"dalle3 [{run.run_id}]" for run in (generated, imported))
    assert set(metrics["model"]) == {"dalle3"}
    report = build_report(workspace.store, TX_ONLY)
    reasons = set(report.missing["reason"])
    assert {"not_generated", "blank_in_sheet"} <= reasons  # an import's empty slot is a blank cell
