"""Deciding items: the vectorised rules against amvicc.agreement, and property tests."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from amvicc.agreement import resolve
from amvicc.catalogue import load_catalogue
from amvicc.report import ReportOptions, build_report, collect_items, judge_agreement
from amvicc.report.items import Items, ModelEntry
from amvicc.report.metrics import metric_table
from amvicc.report.raters import rater_agreement
from amvicc.report.subjects import subject_codes
from amvicc.report.verdicts import (
    _human_image_values,
    answer_values,
    human_image_decisions,
    image_values,
    resolve_votes,
)
from amvicc.store import ImageVerdictCodes

if TYPE_CHECKING:
    from conftest import Workspace

TX = [9, 10, 61, 62, 65, 66, 91, 92, 133, 134, 201, 202, 277, 278]
VALUES = ["correct", "incorrect", "cant_tell"]


def human(value: str, rater: str = "alice") -> tuple[str, str]:
    return (f"human:{rater}", value)


# --- resolve_votes is amvicc.agreement.resolve, vectorised -----------------------------------

subjects = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=3),
    st.tuples(
        st.lists(st.sampled_from(["a", "b", "no_answer"]), max_size=5),
        st.one_of(st.none(), st.sampled_from(["a", "b"])),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(subjects)
def test_resolve_votes_equals_agreement_resolve(
    data: dict[str, tuple[list[str], str | None]],
) -> None:
    votes = pd.DataFrame(
        [(subject, value) for subject, (values, _) in data.items() for value in values],
        columns=["subject_id", "value"],
    )
    adjudicated = pd.Series(
        {subject: adj for subject, (_, adj) in data.items() if adj is not None}, dtype="object"
    )
    result = resolve_votes(votes, adjudicated)
    for subject, (values, adj) in data.items():
        expected = resolve(values, adj)
        if expected.how == "none":  # neither a vote nor an adjudication: no row
            assert subject not in result.index
            continue
        got = result.loc[subject]
        assert got["how"] == expected.how
        assert (None if pd.isna(got["value"]) else got["value"]) == expected.value
        assert got["raters"] == expected.raters


def test_resolve_votes_on_nothing() -> None:
    empty = pd.DataFrame(columns=["subject_id", "value"])
    assert resolve_votes(empty).empty


def _verdicts(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(s, src, v, i, None, None) for i, (s, src, v) in enumerate(rows)],
        columns=["subject_id", "source", "value", "verdict_id", "comment", "rubric_version"],
    )


def test_cant_tell_is_a_vote_that_the_image_is_not_correct() -> None:
    verdicts = _verdicts(
        [
            ("x", "human:a", "incorrect"),
            ("x", "human:b", "cant_tell"),  # agree: not correct
            ("y", "human:a", "correct"),
            ("y", "human:b", "cant_tell"),  # tie
            ("z", "human:a", "correct"),
            ("z", "human:b", "undecided"),  # undecided is no vote
            ("w", "human:a", "correct"),
            ("w", "sheet:s.csv:c", "incorrect"),
            ("w", "adjudication:e", "cant_tell"),  # adjudicated not correct
        ]
    )
    values = image_values(verdicts)
    assert values.loc["x", "value"] == "incorrect" and values.loc["x", "how"] == "unanimous"
    assert pd.isna(values.loc["y", "value"]) and values.loc["y", "how"] == "tie"
    assert values.loc["z", "value"] == "correct"
    assert values.loc["w", "value"] == "incorrect" and values.loc["w", "how"] == "adjudicated"


IMAGE_SOURCES = ["human:a", "sheet:s.csv:c", "adjudication:e", "adjudication:f", "judge:x:y"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.sampled_from(IMAGE_SOURCES),
            st.sampled_from([*VALUES, "undecided"]),
        ),
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_human_decisions_on_codes_equal_those_on_the_frame(
    rows: list[tuple[int, str, str]], rng: Any
) -> None:
    # decide_images counts the human votes on codes; the frame's rule is the reference. Verdict
    # ids are shuffled so that "latest" is not the order of the rows.
    ids = list(range(len(rows)))
    rng.shuffle(ids)
    sources = sorted({source for _, source, _ in rows}, key=IMAGE_SOURCES.index)
    values = sorted({value for _, _, value in rows})
    codes = ImageVerdictCodes(
        image_rows=np.array([image for image, _, _ in rows], dtype=np.int64),
        source_codes=np.array([sources.index(s) for _, s, _ in rows], dtype=np.int64),
        value_codes=np.array([values.index(v) for _, _, v in rows], dtype=np.int64),
        verdict_ids=np.array(ids, dtype=np.int64),
        sources=tuple(sources),
        values=tuple(values),
    )
    frame = pd.DataFrame(rows, columns=["subject_id", "source", "value"]).assign(verdict_id=ids)
    expected = _human_image_values(frame)
    value, rated = human_image_decisions(codes, 6)
    for image in range(6):
        assert rated[image] == (image in expected.index)
        if image in expected.index:
            wanted = expected.loc[image, "value"]
            assert value[image] == (None if pd.isna(wanted) else wanted)
        else:
            assert value[image] is None


def test_answer_precedence_human_then_extractor_then_llm() -> None:
    verdicts = _verdicts(
        [
            ("r1", "extractor", "a"),
            ("r1", "llm-judge:g", "b"),  # the extractor decided: the LLM judge does not count
            ("r2", "extractor", "undecided"),
            ("r2", "llm-judge:g", "b"),
            ("r3", "extractor", "a"),
            ("r3", "human:ann", "b"),  # a human audit overrides
            ("r4", "extractor", "undecided"),
            ("r4", "llm-judge:g", "a"),
            ("r4", "llm-judge:h", "b"),  # LLM judges tie: undecided
            ("r5", "extractor", "a"),
            ("r5", "extractor", "no_answer"),  # the latest extractor verdict is taken as given
        ]
    )
    latest = verdicts.drop_duplicates(["subject_id", "source"], keep="last")
    decided = answer_values(latest)
    assert decided.to_dict() == {"r1": "a", "r2": "b", "r3": "b", "r5": "no_answer"}


# --- agreement against scikit-learn and statsmodels ------------------------------------------


def test_rater_agreement_kappa_matches_scikit_learn(workspace: Workspace) -> None:
    rng = np.random.default_rng(5)
    run = workspace.igm("rated")
    alice, bob, carol = (rng.choice(VALUES, size=len(TX)) for _ in range(3))
    for index, a, b, c in zip(TX, alice, bob, carol, strict=True):
        workspace.graded_image(run, index, "implicit", human(a), human(b, "bob"), human(c, "carol"))
    items = collect_items(workspace.store, ReportOptions(categories=("tx",)))
    table = rater_agreement(items).set_index("raters")
    pair = table.loc["human:alice vs human:bob"]
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(alice, bob))
    assert pair["percent"] == pytest.approx(float(np.mean(alice == bob)))
    assert pair["items"] == len(TX)
    fleiss = table.loc["human:alice, human:bob, human:carol"]
    assert fleiss["statistic"] == "Fleiss' κ"
    # Fleiss' κ by hand: P̄ from agreeing pairs per item, P̄e from the label shares.
    ratings = np.stack([alice, bob, carol], axis=1)
    counts = np.array([[np.sum(row == v) for v in VALUES] for row in ratings])
    p_item = (np.sum(counts**2, axis=1) - 3) / (3 * 2)
    shares = counts.sum(axis=0) / counts.sum()
    expected = (p_item.mean() - np.sum(shares**2)) / (1 - np.sum(shares**2))
    assert fleiss["kappa"] == pytest.approx(expected)


def test_judge_agreement_per_model_and_category(workspace: Workspace) -> None:
    run = workspace.igm("judged")
    judge = "judge:question:tiny-vlm"
    # human, judge: TP, TP, FP, TN, FN, FN(judge cant_tell), and a human tie (left out)
    pairs = [
        ("correct", "correct"),
        ("correct", "correct"),
        ("incorrect", "correct"),
        ("incorrect", "incorrect"),
        ("correct", "incorrect"),
        ("correct", "cant_tell"),
    ]
    for index, (truth, said) in zip(TX, pairs, strict=False):
        workspace.graded_image(run, index, "explicit", human(truth), (judge, said))
    workspace.graded_image(
        run, TX[6], "explicit", human("correct"), human("incorrect", "bob"), (judge, "correct")
    )
    table = judge_agreement(workspace.store, categories=("tx",))
    row = table[(table["label"] == "judged") & (table["category"] == "all")].iloc[0]
    assert (row["tp"], row["fp"], row["tn"], row["fn"], row["items"]) == (2, 1, 1, 2, 6)
    assert row["accuracy"] == pytest.approx(3 / 6)
    assert row["false_positive_rate"] == pytest.approx(1 / 2)
    assert row["recall"] == pytest.approx(2 / 4)
    said = ["correct", "correct", "correct", "incorrect", "incorrect", "incorrect"]
    truth = ["correct", "correct", "incorrect", "incorrect", "correct", "correct"]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(said, truth))
    assert set(table["label"]) == {"judged", "all models"}
    assert set(table["category"]) == {"tx", "all"}


# --- property tests on the metrics -----------------------------------------------------------

CATALOGUE = load_catalogue().select(indices=range(1, 41))
OUTCOMES = st.sampled_from(["correct", "incorrect", "missing"])


def _items(outcomes: list[str], samples: int) -> Items:
    questions = CATALOGUE.questions
    rows = []
    position = 0
    for sample in range(samples):
        for q in questions:
            outcome = outcomes[position % len(outcomes)]
            position += 1
            rows.append(
                {
                    "entry": "e",
                    "label": "m",
                    "modality": "vlm",
                    "kind": "answer",
                    "question_index": q.index,
                    "pair": q.pair,
                    "category": q.category.code,
                    "sample": sample,
                    "subject_id": f"s{q.index}-{sample}",
                    "status": "ok",
                    "value": None,
                    "outcome": outcome,
                    "reason": "error" if outcome == "missing" else "",
                }
            )
    entry = ModelEntry("e", "m", "m", "vlm", False, samples, "corrected", ("run",))
    empty = pd.DataFrame(columns=["subject_id", "source", "value", "verdict_id"])
    return Items((entry,), pd.DataFrame(rows), empty, empty, CATALOGUE, "human")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(OUTCOMES, min_size=1, max_size=80),
    st.integers(1, 3),
    st.sampled_from(["fail", "exclude"]),
)
def test_metric_properties(outcomes: list[str], samples: int, policy: str) -> None:
    options = ReportOptions(missing=policy, bootstrap=0)  # type: ignore[arg-type]
    items = _items(outcomes, samples)
    table = metric_table(items, options)
    defined = table[table["total"] > 0]
    assert ((defined["value"] >= 0) & (defined["value"] <= 1)).all()
    assert (table["correct"] <= table["total"]).all()
    per_category = (
        table[table["category"] != "all"].groupby("metric")[["correct", "total", "missing"]].sum()
    )
    overall = table[table["category"] == "all"].set_index("metric")[["correct", "total", "missing"]]
    pd.testing.assert_frame_equal(
        per_category.sort_index(), overall.sort_index(), check_dtype=False
    )
    wide = table.pivot_table(index="category", columns="metric", values="total")
    pairs = len(CATALOGUE.pairs())
    missing_items = int((items.frame["outcome"] == "missing").sum())
    if policy == "fail":
        assert overall.loc["individual", "total"] == 2 * pairs * samples
        assert overall.loc["pair", "total"] == pairs * samples
        values = table.pivot_table(index="category", columns="metric", values="value")
        assert (values["pair"] <= values["individual"] + 1e-12).all()
    else:
        assert overall.loc["individual", "total"] == 2 * pairs * samples - missing_items
        assert (wide["pair"] * 2 <= wide["individual"] + 1e-12).all()
    assert overall.loc["individual", "missing"] == missing_items


def test_report_of_a_fixture_has_every_table(workspace: Workspace) -> None:
    run = workspace.igm("m")
    for index in TX:
        workspace.graded_image(run, index, "implicit", human("correct"), ("judge:ocr:r", "correct"))
    report = build_report(workspace.store, categories=("tx",), bootstrap=50)
    assert not report.metrics.empty and not report.judges.empty
    assert report.metrics["ci_low"].notna().all()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(VALUES), st.sampled_from(VALUES)), min_size=1, max_size=40)
)
def test_kappa_from_counts_equals_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    from amvicc.agreement import cohen_kappa, cohen_kappa_from_table

    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    table = [[sum(1 for a, b in pairs if (a, b) == (x, y)) for y in VALUES] for x in VALUES]
    expected = cohen_kappa(first, second)
    got = cohen_kappa_from_table(table)
    if np.isnan(expected):
        assert np.isnan(got) or len(set(first) | set(second)) < 2
    else:
        assert got == pytest.approx(expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(VALUES), min_size=3, max_size=3), min_size=1, max_size=30))
def test_fleiss_from_counts_equals_statsmodels(ratings: list[list[str]]) -> None:
    from amvicc.agreement import fleiss_kappa, fleiss_kappa_from_counts

    counts = [[item.count(v) for v in VALUES] for item in ratings]
    expected = fleiss_kappa(ratings)
    got = fleiss_kappa_from_counts(counts)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected)


@pytest.mark.parametrize("basis", ["human", "any", "judge:ocr:rapidocr"])
def test_items_decided_on_image_positions_equal_those_matched_by_id(
    workspace: Workspace, basis: str
) -> None:
    # decide_items counts votes on each verdict's place among the images it read; the same
    # items decided by image id (with_basis' way) must come out identical, whatever the basis:
    # superseded images, unrated and failed ones, ties, adjudications and judges included.
    rng = np.random.default_rng(11)
    runs = [workspace.igm("flux"), workspace.igm("sd")]
    sources = [
        "human:alice",
        "human:bob",
        "adjudication:carol",
        "adjudication:dave",
        "judge:ocr:rapidocr",
    ]
    for run in runs:
        for index in TX:
            for kind in ("implicit", "explicit"):
                if rng.random() < 0.2:
                    workspace.graded_image(run, index, kind, human("correct"))  # superseded
                if rng.random() < 0.1:
                    workspace.image(run, index, kind, status="failed")
                    continue
                image_id = workspace.image(run, index, kind)
                votes = [
                    (source, str(rng.choice([*VALUES, "undecided"])))
                    for source in sources
                    if rng.random() < 0.6
                ]
                workspace.rate(image_id, *votes)
    items = collect_items(workspace.store, ReportOptions(verdicts=basis))
    by_id = replace(items, basis="other").with_basis(basis)
    pd.testing.assert_frame_equal(items.frame, by_id.frame)
    assert set(items.frame["reason"]) >= {"", "failed", "not_generated", "not_rated"}


@pytest.mark.parametrize("smoke_indices", [None, frozenset({9, 10})])
def test_verdicts_found_by_item_row_equal_those_found_by_id(
    workspace: Workspace, smoke_indices: frozenset[int] | None
) -> None:
    # decide_items gives each image verdict the row of its image's item, so splitting off the
    # smoke-test models and coding the subjects hash no id; found by id, they must be the same,
    # --smoke-index's renumbered rows and the verdicts on images it leaves out included.
    rng = np.random.default_rng(5)
    for run in (workspace.igm("flux"), workspace.igm("tiny", smoke=True)):
        for index in TX:
            for kind in ("implicit", "explicit"):
                if rng.random() < 0.3:
                    workspace.graded_image(run, index, kind, human("correct"))  # superseded
                image_id = workspace.image(run, index, kind)
                workspace.rate(image_id, human(str(rng.choice(VALUES))), human("correct", "bob"))
    items = collect_items(workspace.store, ReportOptions(smoke_indices=smoke_indices))
    by_id = replace(items, image_verdicts=items.image_verdicts.drop(columns="item"))
    smoke = {e.key for e in items.entries if e.smoke}
    subjects = []
    parts = zip(items.split(smoke, set()), by_id.split(smoke, set()), strict=True)
    for part, part_by_id in parts:
        assert part is not None and part_by_id is not None
        pd.testing.assert_frame_equal(
            part.image_verdicts.drop(columns="item"), part_by_id.image_verdicts
        )
        coded, coded_by_id = subject_codes(part).image, subject_codes(part_by_id).image
        np.testing.assert_array_equal(coded.subject, coded_by_id.subject)
        subjects.append(coded.subject)
    found = np.concatenate(subjects)
    assert (found >= 0).sum() > 50
    # verdicts on the smoke-test images --smoke-index leaves out judge no item
    assert (found == -1).any() == (smoke_indices is not None)
