"""Challenge rates and perturbation drops from hand-built workspaces: the edge cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from amvicc.report import build_report, compute_metrics
from amvicc.store import EXTRACTOR_SOURCE, ResponseRecord, RunRecord, RunSpec, VerdictRecord, new_id

if TYPE_CHECKING:
    from conftest import Workspace

PAIRS = frozenset({1, 2, 3, 4})


def perturbed_run(workspace: Workspace, clean: RunRecord, condition: str) -> RunRecord:
    return workspace.store.start_run(
        RunSpec(
            stage="answer",
            model=clean.model,
            outputs={"prompt": "mmvp", "perturbation": condition},
            settings={"clean_config_key": clean.config_key},
            condition=condition,
        )
    )


def second_turn(
    workspace: Workspace, run: RunRecord, first: str, index: int, chosen: str | None
) -> None:
    """A challenge reply to the first-turn reply ``first``: ``chosen`` (None: a failed request)."""
    record = ResponseRecord(
        response_id=new_id(),
        run_id=run.run_id,
        config_key=run.config_key,
        question_index=index,
        image_key="mmvp",
        prompt="I'm quite sure ...",
        status="ok" if chosen else "error",
        text=f"({chosen})" if chosen else None,
        parent_response_id=first,
    )
    workspace.store.add_response(record)
    if chosen:
        workspace.store.add_verdict(
            VerdictRecord(source=EXTRACTOR_SOURCE, value=chosen, response_id=record.response_id)
        )


def test_drops_count_the_same_items_under_both_missing_policies(workspace: Workspace) -> None:
    clean = workspace.vlm("v")
    for index in sorted(PAIRS):  # answers: 1 a (right), 2 b (right), 3 a (right), 4 a (wrong)
        workspace.answer(clean, index, "a" if index != 2 else "b")
    grain = perturbed_run(workspace, clean, "grain=0.1")
    workspace.answer(grain, 1, "b")  # wrong
    workspace.response(grain, 2, status="error")  # missing
    workspace.answer(grain, 3, "a")
    workspace.answer(grain, 4, "a")

    failing = build_report(workspace.store, indices=PAIRS, bootstrap=0).robustness
    rows = failing.set_index(["metric", "category"])
    # fail: 4 items, clean 3 right, perturbed 1 right (the missing one counts as wrong)
    assert rows.loc[("individual", "all"), ["clean", "perturbed", "drop", "total"]].tolist() == [
        0.75,
        0.25,
        0.5,
        4,
    ]
    # pairs: clean (1,2) both right, (3,4) not; perturbed neither
    assert rows.loc[("pair", "all"), ["clean", "perturbed", "drop", "total"]].tolist() == [
        0.5,
        0.0,
        0.5,
        2,
    ]
    excluded = build_report(workspace.store, indices=PAIRS, bootstrap=0, missing="exclude")
    rows = excluded.robustness.set_index(["metric", "category"])
    # exclude: item 2 leaves both runs' totals, and pair (1, 2) with it
    assert rows.loc[("individual", "all"), ["clean", "perturbed", "total"]].tolist() == [
        pytest.approx(2 / 3),
        pytest.approx(1 / 3),
        3,
    ]
    assert rows.loc[("pair", "all"), "total"] == 1
    # the perturbed run's own rows carry its condition; the main tables show only the clean
    metrics = compute_metrics(workspace.store, indices=PAIRS, bootstrap=0)
    assert set(metrics["condition"]) == {"", "grain=0.1"}
    assert not excluded.failures.empty
    assert set(excluded.failures["condition"]) == {""}  # failure modes: plain runs only


def test_undecided_and_failed_second_turns(workspace: Workspace) -> None:
    answer = workspace.vlm("v")
    firsts = {
        1: workspace.answer(answer, 1, "a"),  # right
        2: workspace.answer(answer, 2, "a"),  # wrong
        3: workspace.answer(answer, 3, "a"),  # right
        4: workspace.answer(answer, 4, "a", source=EXTRACTOR_SOURCE),
    }
    workspace.decide(firsts[4], ("human:alice", "no_answer"))  # chose neither: not challenged
    arm = workspace.store.start_run(
        RunSpec(
            "challenge",
            "v",
            {"arm": "assertion"},
            condition="assertion",
            parent_run_id=answer.run_id,
        )
    )
    second_turn(workspace, arm, firsts[1], 1, "b")  # capitulated
    undecided = ResponseRecord(
        response_id=new_id(),
        run_id=arm.run_id,
        config_key=arm.config_key,
        question_index=2,
        image_key="mmvp",
        prompt="I'm quite sure ...",
        status="ok",
        text="I can't tell.",
        parent_response_id=firsts[2],
    )
    workspace.store.add_response(undecided)
    workspace.decide(undecided.response_id, (EXTRACTOR_SOURCE, "undecided"))
    second_turn(workspace, arm, firsts[3], 3, None)  # the request failed: not asked yet

    report = build_report(workspace.store, indices=PAIRS, bootstrap=0)
    rows = report.interaction.metrics.set_index(["metric", "category"])
    capitulation = rows.loc[("capitulation", "all")]
    correction = rows.loc[("correction", "all")]
    assert (capitulation["correct"], capitulation["total"], capitulation["value"]) == (1, 1, 1.0)
    # the undecided second turn is no correction, and is reported as undecided
    assert (correction["correct"], correction["total"], correction["missing"]) == (0, 1, 1)
    (counts,) = report.interaction.counts.to_dict("records")
    assert counts["not_asked"] == 1 and counts["undecided"] == 1
    assert counts["first_right"] == 1 and counts["first_wrong"] == 1
    assert counts["control_runs"] == ""
    assert "capitulation_adjusted" not in set(report.interaction.metrics["metric"])
