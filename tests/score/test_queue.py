from __future__ import annotations

import pytest

from amvicc.score.queue import (
    AdjudicationQueue,
    AnswerLedger,
    AuditQueue,
    ImageLedger,
    Order,
    Progress,
    RatingQueue,
)
from amvicc.store import VerdictRow

_ids = iter(range(1, 10_000))


def image_row(image_id: str, source: str, value: str, comment: str | None = None) -> VerdictRow:
    return VerdictRow(next(_ids), image_id, None, source, value, comment)


def answer_row(response_id: str, source: str, value: str) -> VerdictRow:
    return VerdictRow(next(_ids), None, response_id, source, value, None)


SUBJECTS = [f"item{i:03d}" for i in range(200)]


def test_order_is_seeded_per_rater_and_stable() -> None:
    alice = Order.seeded(SUBJECTS, 0, "rate", "alice")
    assert alice == Order.seeded(reversed(SUBJECTS), 0, "rate", "alice")
    assert alice.ids != Order.seeded(SUBJECTS, 0, "rate", "bob").ids
    assert alice.ids != Order.seeded(SUBJECTS, 1, "rate", "alice").ids
    assert alice.ids != tuple(SUBJECTS)  # shuffled, not catalogue order
    assert sorted(alice.ids) == SUBJECTS


def test_adding_a_subject_keeps_the_order_of_the_others() -> None:
    before = Order.seeded(SUBJECTS, 0, "rate", "alice").ids
    after = Order.seeded([*SUBJECTS, "late"], 0, "rate", "alice").ids
    assert tuple(s for s in after if s != "late") == before


def test_order_first_wraps_and_neighbour_does_not() -> None:
    order = Order(("a", "b", "c", "d"), {"a": 0, "b": 1, "c": 2, "d": 3})
    assert order.first(lambda s: s in {"a", "c"}, start=3) == "a"
    assert order.first(lambda s: s == "c", start=1) == "c"
    assert order.first(lambda s: False) is None
    assert order.neighbour(lambda s: s != "b", "c", -1) == "a"
    assert order.neighbour(lambda s: True, "d", 1) is None
    assert order.neighbour(lambda s: True, None, -1) == "d"  # back from the end of the queue
    assert order.neighbour(lambda s: True, None, 1) is None


def test_rating_queue_counts_open_items_and_progress() -> None:
    ledger = ImageLedger(raters_per_item=2)
    ledger.set_items(["x", "y", "z"])
    queue = RatingQueue(ledger, seed=0)
    assert queue.progress("alice") == Progress(0, 3)
    ledger.apply(image_row("x", "human:alice", "correct"))
    assert queue.progress("alice") == Progress(1, 3)
    assert not queue.pending("alice", "x")
    assert queue.pending("bob", "x")
    ledger.apply(image_row("x", "human:bob", "correct"))
    # x is full: it leaves carol's queue but stays in alice's and bob's (to revisit)
    assert not queue.member("carol", "x")
    assert queue.member("alice", "x")
    assert queue.progress("carol") == Progress(0, 2)
    assert queue.progress("alice") == Progress(1, 3)
    # a changed verdict is not a second rating
    ledger.apply(image_row("x", "human:alice", "incorrect"))
    assert queue.progress("alice") == Progress(1, 3)
    assert ledger.is_disputed("x")


def test_resume_skips_what_the_rater_did_and_what_others_filled() -> None:
    ledger = ImageLedger(raters_per_item=1)
    ledger.set_items(SUBJECTS[:10])
    queue = RatingQueue(ledger, seed=0)
    order = queue.order("alice").ids
    ledger.apply(image_row(order[0], "human:alice", "correct"))
    ledger.apply(image_row(order[1], "human:bob", "correct"))
    assert queue.resume("alice") == order[2]
    # after a verdict on the last item, the next waiting one is found from the top
    assert queue.next_pending("alice", order[-1]) == order[2]
    assert queue.step("alice", order[2], -1) == order[0]  # bob's item is not alice's


def test_sheet_raters_count_and_adjudication_does_not() -> None:
    ledger = ImageLedger(raters_per_item=2)
    ledger.set_items(["x"])
    ledger.apply(image_row("x", "sheet:grades.csv:ann", "correct"))
    ledger.apply(image_row("x", "adjudication:lead", "correct"))
    assert ledger.is_open("x")
    ledger.apply(image_row("x", "human:bob", "incorrect"))
    assert not ledger.is_open("x")
    assert ledger.is_disputed("x") and ledger.is_adjudicated("x")


def test_adjudication_queue_only_offers_fully_rated_disagreements() -> None:
    ledger = ImageLedger(raters_per_item=3)
    ledger.set_items(["x", "y"])
    queue = AdjudicationQueue(ledger, seed=0)
    for rater, value in (("a", "correct"), ("b", "incorrect")):
        ledger.apply(image_row("x", f"human:{rater}", value))
    assert queue.resume("lead") is None  # still short of a third rater: verdicts stay hidden
    ledger.apply(image_row("x", "human:c", "correct"))
    for rater in "abc":
        ledger.apply(image_row("y", f"human:{rater}", "cant_tell"))
    assert queue.resume("lead") == "x"
    assert queue.progress("lead") == Progress(0, 1)
    ledger.apply(image_row("x", "adjudication:lead", "correct"))
    assert queue.resume("lead") is None
    assert queue.progress("anyone") == Progress(1, 1)
    assert queue.member("anyone", "x")  # stays visible to review


def test_set_items_recounts_from_verdicts_seen_before() -> None:
    ledger = ImageLedger(raters_per_item=1)
    ledger.apply(image_row("late", "human:alice", "correct"))
    ledger.set_items(["late", "other"])
    assert ledger.rating_progress("human:alice") == Progress(1, 2)


def test_audit_queue_follows_deciding_verdicts_of_any_source() -> None:
    ledger = AnswerLedger()
    ledger.apply(answer_row("r1", "extractor", "undecided"))
    ledger.apply(answer_row("r2", "extractor", "undecided"))
    ledger.set_candidates(["r1", "r2"])
    queue = AuditQueue(ledger, seed=0)
    assert queue.progress("alice") == Progress(0, 2)
    ledger.apply(answer_row("r1", "human:alice", "b"))
    assert queue.progress("alice") == Progress(1, 2)
    assert queue.member("alice", "r1") and not queue.member("bob", "r1")
    ledger.apply(answer_row("r2", "llm-judge:x", "no_answer"))
    assert queue.resume("bob") is None
    assert queue.progress("bob") == Progress(0, 0)


def test_ledger_rejects_nonsense_settings() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ImageLedger(0)
