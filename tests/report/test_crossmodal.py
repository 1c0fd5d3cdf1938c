"""Item-level sections against hand-computed values: concordance, blind spots, comparisons,
explicit − implicit gains, baselines, and their rows in the CSV, JSON and HTML.

The fixture: 10 pairs (qc: 13/14, 41/42, 47/48; tx: 9/10, 61/62, 65/66, 91/92, 133/134,
201/202, 277/278), two VLMs and two image models. Each model's item outcomes are listed per
pair below (1 right, 0 wrong), in the report's pair order (qc before tx, AMVICC's order).
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest

from amvicc.catalogue import load_catalogue
from amvicc.report import ReportOptions, build_report, collect_items, compare_models, concordance
from amvicc.report.outcomes import collect_outcomes
from amvicc.report.render import render_report
from amvicc.report.stats import Resampler

if TYPE_CHECKING:
    from conftest import Workspace

PAIRS = [(13, 14), (41, 42), (47, 48), (9, 10), (61, 62), (65, 66), (91, 92), (133, 134)]
PAIRS += [(201, 202), (277, 278)]
INDICES = frozenset(i for pair in PAIRS for i in pair)
OUTCOMES = {
    ("v1", "answer"): "11 10 00 | 11 11 01 10 11 00 10",
    ("v2", "answer"): "11 11 11 | 11 00 11 11 01 11 10",
    ("m1", "explicit"): "11 11 01 | 11 01 10 11 11 00 10",
    ("m1", "implicit"): "11 11 11 | 11 11 11 11 11 11 10",
    ("m2", "explicit"): "00 11 00 | 11 11 11 01 00 11 00",
    ("m2", "implicit"): "11 11 11 | 11 11 11 11 11 11 11",
}
OPTIONS = ReportOptions(indices=INDICES, bootstrap=0)


def items_of(code: str) -> list[int]:
    return [int(c) for c in code if c in "01"]


def fill(w: Workspace) -> None:
    catalogue = load_catalogue()
    runs = {name: w.vlm(name) for name in ("v1", "v2")}
    runs |= {name: w.igm(name) for name in ("m1", "m2")}
    order = [i for pair in PAIRS for i in pair]
    for (model, kind), code in OUTCOMES.items():
        for index, right in zip(order, items_of(code), strict=True):
            if kind == "answer":
                answer = catalogue.question(index).answer
                w.answer(runs[model], index, answer if right else "ab".replace(answer, ""))
            else:
                value = "correct" if right else "incorrect"
                w.graded_image(runs[model], index, kind, ("human:ann", value))  # type: ignore[arg-type]


@pytest.fixture
def filled(workspace: Workspace) -> Workspace:
    fill(workspace)
    return workspace


def row(table: pd.DataFrame, **where: object) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= (table[column] == value).to_numpy()
    assert mask.sum() == 1, (where, mask.sum())
    return table[mask].iloc[0]


def test_outcomes_follow_the_fixture(filled: Workspace) -> None:
    items = collect_items(filled.store, OPTIONS)
    outcomes = collect_outcomes(items, "fail")
    assert list(outcomes.pairs["category"]) == ["qc"] * 3 + ["tx"] * 7
    for (model, kind), code in OUTCOMES.items():
        entry = next(e.key for e in items.entries if e.model == model)
        column = outcomes.column(entry, kind)
        assert column is not None
        assert outcomes.codes[column].ravel().tolist() == items_of(code)


def test_concordance_matches_hand_computed_tables(filled: Workspace) -> None:
    table = concordance(filled.store, OPTIONS)
    # v1 × m1, tx: pairs 9 ✓✓, 61 ✓✗, 65 ✗✗, 91 ✗✓, 133 ✓✓, 201 ✗✗, 277 ✗✗.
    tx = row(table, vlm="v1", igm="m1", category="tx")
    assert (tx.both_pass, tx.vlm_only, tx.igm_only, tx.both_fail, tx.pairs) == (2, 1, 1, 3, 7)
    assert tx.missing == 0
    assert tx.agreement == pytest.approx(5 / 7)
    assert tx.kappa == pytest.approx(5 / 12)  # (5/7 − 25/49) / (1 − 25/49)
    assert tx.phi == pytest.approx(5 / 12)  # (2·3 − 1·1) / √(3·4·3·4)
    assert tx.odds_ratio == pytest.approx(6.0)
    assert tx.fisher_p == pytest.approx(17 / 35)  # P(a=0, 2, 3) = (4 + 12 + 1) / 35
    # qc: 13 ✓✓, 41 ✗✓, 47 ✗✗: no pair only the VLM passes, so the odds ratio is infinite.
    qc = row(table, vlm="v1", igm="m1", category="qc")
    assert (qc.both_pass, qc.vlm_only, qc.igm_only, qc.both_fail) == (1, 0, 1, 1)
    assert qc.kappa == pytest.approx(0.4) and qc.phi == pytest.approx(0.5)
    assert qc.odds_ratio == np.inf and qc.fisher_p == pytest.approx(1.0)
    overall = row(table, vlm="v1", igm="m1", category="all")
    assert (overall.both_pass, overall.vlm_only, overall.igm_only, overall.both_fail) == (
        3,
        1,
        2,
        4,
    )
    assert overall.agreement == pytest.approx(0.7) and overall.kappa == pytest.approx(0.4)
    assert overall.phi == pytest.approx(10 / 600**0.5)
    assert overall.fisher_p == pytest.approx(132 / 252)  # (6 + 60 + 60 + 6) / C(10, 5)
    # Pooled: a modality passes a pair when both of its two models do.
    pooled = table[(table["scope"] == "pooled") & (table["category"] == "all")].iloc[0]
    assert pooled.vlm == "VLMs pooled (2 models)" and pooled.igm == "IGMs pooled (2 models)"
    assert (pooled.both_pass, pooled.vlm_only, pooled.igm_only, pooled.both_fail) == (1, 1, 1, 7)
    assert pooled.kappa == pytest.approx(0.375) and pooled.odds_ratio == pytest.approx(7.0)
    assert pooled.fisher_p == pytest.approx(17 / 45)
    assert len(table) == (4 + 1) * 3  # 2 × 2 combinations and pooled, × (qc, tx, all)


def test_concordance_intervals_resample_pairs(filled: Workspace) -> None:
    options = ReportOptions(indices=INDICES, bootstrap=300, seed=4)
    table = concordance(filled.store, options)
    weights = Resampler(300, 4, 0.95).weights(10)
    assert weights is not None
    vlm = np.array([1, 0, 0, 1, 1, 0, 0, 1, 0, 0])  # v1's pair outcomes
    igm = np.array([1, 1, 0, 1, 0, 0, 1, 1, 0, 0])  # m1's explicit pair outcomes
    kappas, agreements = [], []
    for w in weights:
        a = w @ (vlm * igm)
        b = w @ (vlm * (1 - igm))
        c = w @ ((1 - vlm) * igm)
        d = w @ ((1 - vlm) * (1 - igm))
        n = a + b + c + d
        agreements.append((a + d) / n)
        expected = ((a + b) * (a + c) + (c + d) * (b + d)) / n**2
        kappas.append(((a + d) / n - expected) / (1 - expected))
    got = row(table, vlm="v1", igm="m1", category="all")
    assert [got.agreement_low, got.agreement_high] == pytest.approx(
        np.percentile(agreements, [2.5, 97.5])
    )
    assert [got.kappa_low, got.kappa_high] == pytest.approx(np.percentile(kappas, [2.5, 97.5]))


def test_shared_blind_spots(filled: Workspace) -> None:
    report = build_report(filled.store, OPTIONS)
    spots = report.analyses.blind_spots
    assert list(spots["pair"]) == [139]  # 277/278: both VLMs and both image models fail it
    assert spots.iloc[0]["vlms"] == ["v1", "v2"] and spots.iloc[0]["igms"] == ["m1", "m2"]
    (shown,) = report.blind_spots
    assert {(e.label, e.question_index) for e in shown.evidence} == {
        (m, i) for m in ("m1", "m2", "v1", "v2") for i in (277, 278)
    }
    replies = [e.text for e in shown.evidence if e.modality == "vlm"]
    assert "I think (a)" in replies  # v1's reply to 277, one click away in the HTML
    html = render_report(report, "html")
    assert '<details class="spot"><summary><strong>pair 139</strong>' in html


def test_model_comparisons_match_hand_computed_values(filled: Workspace) -> None:
    table = compare_models(filled.store, OPTIONS)
    pick = {"model": "m1", "versus": "m2", "metric": "individual_explicit"}
    qc = row(table, category="qc", **pick)
    assert (qc.correct, qc.versus_correct, qc.units) == (5, 2, 6)
    assert qc.difference == pytest.approx(0.5)
    assert (qc.model_only, qc.versus_only) == (3, 0)
    assert qc.p_value == pytest.approx(0.25)  # 2 · 0.5³
    tx = row(table, category="tx", **pick)
    assert tx.difference == 0 and (tx.correct, tx.versus_correct) == (9, 9)
    assert (tx.model_only, tx.versus_only) == (4, 4)
    assert tx.p_value == pytest.approx(1.0)
    assert [qc.p_holm, tx.p_holm] == pytest.approx([0.5, 1.0])  # Holm over (0.25, 1.0)
    overall = row(table, category="all", **pick)
    assert overall.difference == pytest.approx(0.15) and overall.p_value == pytest.approx(
        2 * 562 / 2048  # McNemar: 7 against 4 discordant items, 2 · P(X ≤ 4), X ~ B(11, ½)
    )
    assert np.isnan(overall.p_holm)
    pair = row(table, category="tx", model="m1", versus="m2", metric="pair_explicit")
    assert pair.difference == pytest.approx(-1 / 7) and (pair.model_only, pair.versus_only) == (
        2,
        3,
    )
    vlms = row(table, category="all", model="v1", versus="v2", metric="pair")
    assert (vlms.correct, vlms.versus_correct) == (4, 7)  # pairs both answers right
    assert set(table["condition"]) == {"vs=m2", "vs=v2"}


def test_comparison_intervals_are_paired(filled: Workspace) -> None:
    options = ReportOptions(indices=INDICES, bootstrap=400, seed=1)
    table = compare_models(filled.store, options)
    weights = Resampler(400, 1, 0.95).weights(10)
    assert weights is not None
    m1 = np.array([2, 2, 1, 2, 1, 1, 2, 2, 0, 1])  # m1's right explicit items per pair
    m2 = np.array([0, 2, 0, 2, 2, 2, 1, 0, 2, 0])
    differences = (weights @ (m1 - m2)) / (weights @ np.full(10, 2))
    got = row(table, category="all", model="m1", versus="m2", metric="individual_explicit")
    assert [got.ci_low, got.ci_high] == pytest.approx(np.percentile(differences, [2.5, 97.5]))


def test_explicit_implicit_gain(filled: Workspace) -> None:
    analyses = build_report(filled.store, OPTIONS).analyses
    gains = analyses.gains
    m1 = gains[gains["model"] == "m1"]
    tx = row(m1, category="tx", metric="individual_gain")
    assert tx.difference == pytest.approx(-4 / 14) and (tx.model_only, tx.versus_only) == (0, 4)
    assert tx.p_value == pytest.approx(0.125)
    overall = row(m1, category="all", metric="individual_gain")
    assert overall.value == pytest.approx(14 / 20) and overall.versus_value == pytest.approx(
        19 / 20
    )
    assert overall.p_value == pytest.approx(0.0625)
    pairs = row(m1, category="all", metric="pair_gain")
    assert pairs.difference == pytest.approx(-0.4) and (pairs.model_only, pairs.versus_only) == (
        0,
        4,
    )
    assert set(gains["condition"]) == {"explicit-implicit"}
    lost = analyses.pair_gains[(analyses.pair_gains["model"] == "m1")]
    assert sorted(lost.loc[lost["gain"] == -1, "pair"]) == [24, 31, 33, 101]  # 47, 61, 65, 201
    assert (lost["gain"] >= -1).all() and len(lost) == 10


def test_constant_answer_baselines(filled: Workspace) -> None:
    table = build_report(filled.store, OPTIONS).analyses.baselines
    a = row(table, baseline="always (a)", category="all", metric="individual")
    assert (a.correct, a.total) == (10, 20)  # every pair here is one (a) and one (b)
    pair = row(table, baseline="always (b)", category="tx", metric="pair")
    assert (pair.correct, pair.total, pair.value) == (0, 7, 0.0)
    chance = row(table, baseline="chance", category="qc", metric="pair")
    assert chance.value == 0.25


def test_new_numbers_are_in_the_csv_json_markdown_and_html(filled: Workspace) -> None:
    report = build_report(filled.store, ReportOptions(indices=INDICES, bootstrap=50))
    rows = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    kappa = [
        r
        for r in rows
        if r["model"] == "v1 × m1" and r["metric"] == "concordance_kappa" and r["category"] == "tx"
    ]
    assert len(kappa) == 1 and kappa[0]["condition"] == "concordance"
    assert float(kappa[0]["value"]) == pytest.approx(5 / 12, abs=5e-7)
    assert kappa[0]["ci_low"] and kappa[0]["total"] == "7"
    odds = next(
        r
        for r in rows
        if r["model"] == "v1 × m1"
        and r["metric"] == "concordance_odds_ratio"
        and r["category"] == "tx"
    )
    assert float(odds["p_value"]) == pytest.approx(17 / 35, abs=1e-6)
    comparison = next(
        r for r in rows if r["metric"] == "individual_explicit_difference" and r["category"] == "qc"
    )
    assert (comparison["model"], comparison["condition"]) == ("m1", "vs=m2")
    assert comparison["p_adjusted"] == "0.5"
    gain = next(
        r
        for r in rows
        if r["metric"] == "pair_gain" and r["category"] == "all" and r["model"] == "m1"
    )
    assert float(gain["value"]) == pytest.approx(-0.4) and gain["condition"] == "explicit-implicit"
    baseline = next(r for r in rows if r["model"] == "always (a)" and r["category"] == "all")
    assert baseline["condition"] == "baseline"
    document = json.loads(render_report(report, "json"))
    assert {"concordance", "comparisons", "explicit_implicit_gains", "constant_baselines"} <= set(
        document["analyses"]
    )
    assert document["analyses"]["shared_blind_spots"][0]["pair"] == 139
    markdown = render_report(report, "md")
    # Markdown punctuation from the data is escaped: renders as "(2 models)"
    assert r"### VLMs pooled \(2 models\) × IGMs pooled \(2 models\)" in markdown
    assert "## Explicit − implicit gain" in markdown and "## Constant-answer baselines" in markdown
    html = render_report(report, "html")
    for section in (
        "concordance",
        "blind-spots",
        "item-heatmap",
        "comparisons",
        "gains",
        "baselines",
    ):
        assert f'<section id="{section}">' in html
    # One picture (questions × models); the charts and the matrices are HTML.
    assert html.count("data:image/png;base64,") == 1
    assert "<h3>I Ex</h3>" in html and "+0.150" in html  # m1 − m2, all categories


def test_missing_items_leave_the_comparison_under_exclude(workspace: Workspace) -> None:
    m1, m2 = workspace.igm("m1"), workspace.igm("m2")
    for index in (9, 10, 61, 62):
        workspace.graded_image(m1, index, "explicit", ("human:ann", "correct"))
    for index in (9, 10, 61):
        workspace.graded_image(m2, index, "explicit", ("human:ann", "incorrect"))
    indices = frozenset({9, 10, 61, 62})
    fail = compare_models(workspace.store, ReportOptions(indices=indices, bootstrap=0))
    exclude = compare_models(
        workspace.store, ReportOptions(indices=indices, bootstrap=0, missing="exclude")
    )
    pick = {"model": "m1", "versus": "m2", "metric": "individual_explicit", "category": "all"}
    assert row(fail, **pick).units == 4 and row(fail, **pick).difference == pytest.approx(1.0)
    assert row(fail, **pick).missing == 1  # counted as m2's failure
    assert row(exclude, **pick).units == 3 and row(exclude, **pick).missing == 1
    pair = row(exclude, **{**pick, "metric": "pair_explicit"})
    assert pair.units == 1  # the pair 61/62 leaves with its missing item


def test_many_models_are_drawn_as_a_strip_and_colour_grids() -> None:
    from amvicc.report.pixels import cell_strip
    from amvicc.report.sections.item_heatmap import PALETTE

    codes = np.random.default_rng(1).integers(0, 4, (12, 300))
    strip = cell_strip(codes, [("qc", "Quantity", 100), ("tx", "Text", 200)], PALETTE)
    assert strip.height == 12 * strip.row_height and strip.uri.startswith("data:image/png;base64,")
    (qc, tx) = strip.groups
    assert qc[2] == 0 and tx[2] == qc[3] + 6  # a gap between the bands, labelled in HTML
    assert strip.width == qc[3] + 6 + tx[3] <= 960


def test_names_are_escaped_in_every_new_section(workspace: Workspace) -> None:
    vlm, igm = workspace.vlm("<i>v</i>"), workspace.igm("a&<b>")
    other = workspace.igm("m2")
    for index in (9, 10):
        workspace.answer(vlm, index, "b")  # wrong on 9: both fail the pair
        for run in (igm, other):
            workspace.graded_image(run, index, "explicit", ("human:a", "incorrect"))
    html = render_report(build_report(workspace.store, indices=frozenset({9, 10})), "html")
    assert "<i>v</i>" not in html and "&lt;i&gt;v&lt;/i&gt;" in html
    assert "a&<b>" not in html and "a&amp;&lt;b&gt;" in html
    assert '<details class="spot">' in html  # the blind spot, names escaped inside too
