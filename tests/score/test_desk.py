from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from amvicc.agreement import resolve
from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.errors import UserError
from amvicc.rubrics import load_rubrics
from amvicc.score.desk import ImageTaken, ScoringDesk, clean_comment, normalise_rater
from amvicc.score.queue import Progress
from amvicc.store import (
    ImageRecord,
    Store,
    VerdictRecord,
    adjudication_source,
    human_source,
)


def rate_all(desk: ScoringDesk, rater: str, value: str | dict[str, str]) -> list[str]:
    """Rate everything in the rater's queue; returns the images in the order shown."""
    shown = []
    current = desk.resume("rate", rater)
    while current is not None:
        shown.append(current)
        chosen = value if isinstance(value, str) else value[current]
        current = desk.decide("rate", rater, current, chosen)
    return shown


def test_verdict_is_committed_with_rater_rubric_version_and_comment(
    workspace: Any, catalogue: Catalogue
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    first = desk.resume("rate", "alice")
    assert first in workspace.image_ids
    following = desk.decide("rate", "alice", first, "incorrect", "  wings are open  ")
    assert following not in (None, first)
    (verdict,) = workspace.store.verdicts(image_id=first)
    item = next(i for i in desk.images if i.image_id == first)
    assert verdict.source == human_source("alice")
    assert verdict.value == "incorrect"
    assert verdict.comment == "wings are open"
    assert verdict.rubric_version == load_rubrics()[item.category.code].version_id
    assert verdict.created_at


def test_changing_a_verdict_adds_a_row_and_repeating_it_adds_none(
    workspace: Any, catalogue: Catalogue
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    first = desk.resume("rate", "alice")
    desk.decide("rate", "alice", first, "correct")
    desk.decide("rate", "alice", first, "correct")  # a double press
    desk.decide("rate", "alice", first, "correct", "on second look")  # a comment is a change
    desk.decide("rate", "alice", first, "cant_tell", "on second look")
    history = workspace.store.verdicts(image_id=first, current=False)
    assert [(v.value, v.comment) for v in history] == [
        ("correct", None),
        ("correct", "on second look"),
        ("cant_tell", "on second look"),
    ]
    (current,) = workspace.store.verdicts(image_id=first)
    assert current.value == "cant_tell"
    view = desk.image_view("rate", "alice", first)
    assert view.mine is not None and view.mine.value == "cant_tell"
    assert view.progress == Progress(1, 6)


def test_each_rater_gets_their_own_order(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=3)
    alice = rate_all(desk, "alice", "correct")
    bob = rate_all(desk, "bob", "correct")
    assert sorted(alice) == sorted(bob) == sorted(workspace.image_ids)
    assert alice != bob
    # the same seed gives the same order after a restart; another seed another one
    assert ScoringDesk(workspace.store, catalogue).queues["rate"].order("carol").ids == (
        ScoringDesk(workspace.store, catalogue).queues["rate"].order("carol").ids
    )
    assert (
        ScoringDesk(workspace.store, catalogue, seed=7).queues["rate"].order("carol").ids
        != ScoringDesk(workspace.store, catalogue).queues["rate"].order("carol").ids
    )


def test_resume_after_a_restart(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    order = desk.queues["rate"].order("alice").ids
    current = desk.resume("rate", "alice")
    for _ in range(3):
        current = desk.decide("rate", "alice", current, "correct")  # type: ignore[arg-type]
    # a new desk (the server was killed) over a fresh connection resumes at the 4th image
    with Store(workspace.root, create=False) as reopened:
        restarted = ScoringDesk(reopened, catalogue)
        assert restarted.resume("rate", "alice") == order[3] == current
        assert restarted.image_view("rate", "alice", current).progress == Progress(3, 6)
        assert restarted.step("rate", "alice", current, -1) == order[2]


def test_double_rating_fills_items_then_disagreements_reach_adjudication(
    workspace: Any, catalogue: Catalogue
) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=2)
    disagree = set(workspace.image_ids[:2])
    rate_all(desk, "alice", "correct")
    rate_all(
        desk, "bob", {i: "incorrect" if i in disagree else "correct" for i in workspace.image_ids}
    )
    # every image has its two raters: carol has nothing to rate, and sees no one's verdicts
    assert desk.resume("rate", "carol") is None
    assert desk.image_view("rate", "carol", None).progress == Progress(0, 0)
    assert desk.image_view("rate", "carol", workspace.image_ids[0]).raters == ()
    adjudicated = []
    current = desk.resume("adjudicate", "carol")
    while current is not None:
        view = desk.image_view("adjudicate", "carol", current)
        assert sorted(r.value for r in view.raters) == ["correct", "incorrect"]
        assert {r.label for r in view.raters} == {"Rater 1", "Rater 2"}
        adjudicated.append(current)
        current = desk.decide("adjudicate", "carol", current, "correct", "rubric says so")
    assert set(adjudicated) == disagree
    for image_id in disagree:
        verdicts = workspace.store.verdicts(image_id=image_id)
        raters = [v.value for v in verdicts if v.source.startswith("human:")]
        (adjudication,) = [v for v in verdicts if v.source == adjudication_source("carol")]
        assert resolve(raters, adjudication.value).how == "adjudicated"
    assert desk.statistics().overall.adjudicated == 2
    # an adjudicator who rated the image sees their own verdict marked
    labels = {r.label for r in desk.image_view("adjudicate", "bob", adjudicated[0]).raters}
    assert "Rater 2 (you)" in labels or "Rater 1 (you)" in labels


def test_verdicts_from_another_process_are_picked_up(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=1)
    target = desk.resume("rate", "alice")
    assert target is not None
    with Store(workspace.root, create=False) as other:
        other.add_verdict(VerdictRecord(human_source("bob"), "correct", image_id=target))
    assert desk.resume("rate", "alice") != target
    assert desk.image_view("rate", "alice", None).progress == Progress(0, 5)


def test_images_generated_while_serving_join_the_queue(
    workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    _, more = build.generation_run(
        workspace.store, catalogue, model="late-model", start=10, count=2
    )
    assert desk.image_view("rate", "alice", None).progress == Progress(0, 6)
    desk.reload_images()
    assert {i.image_id for i in desk.images} == {*workspace.image_ids, *more}
    assert desk.image_view("rate", "alice", None).progress == Progress(0, 8)


def test_only_ok_images_of_generation_runs_and_chosen_runs(
    workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    store = workspace.store
    run = store.run(workspace.run_id)
    failed = ImageRecord("f" * 32, run.run_id, run.config_key, 50, "implicit", 0, "p", 1, "failed")
    store.add_image(failed)
    other_run, other_ids = build.generation_run(store, catalogue, model="other", count=2, start=20)
    assert len(ScoringDesk(store, catalogue).images) == 8
    only = ScoringDesk(store, catalogue, run_ids=[other_run])
    assert {i.image_id for i in only.images} == set(other_ids)
    answer_run = store.runs(stage="answer")[0].run_id
    with pytest.raises(UserError, match="generation runs"):
        ScoringDesk(store, catalogue, run_ids=[answer_run])
    with pytest.raises(UserError, match="no run 'nope'"):
        ScoringDesk(store, catalogue, run_ids=["nope"])


def test_a_run_made_from_another_catalogue_is_refused(
    workspace: Any, catalogue: Catalogue, tmp_path: Path
) -> None:
    other = tmp_path / "other.csv"
    other.write_bytes(Path(catalogue.source).read_bytes() + b"\n")
    custom = load_catalogue(other)
    with pytest.raises(UserError, match="another catalogue"):
        ScoringDesk(workspace.store, custom, run_ids=[workspace.run_id])
    # without --run such runs are left out (with a warning), not an error
    assert ScoringDesk(workspace.store, custom).images == ()


def test_audit_screen_decides_undecided_answers(workspace: Any, catalogue: Catalogue) -> None:
    store = workspace.store
    desk = ScoringDesk(store, catalogue)
    assert {a.response_id for a in desk.answers} == set(workspace.response_ids)
    generated = next(a for a in desk.answers if a.response_id == workspace.response_ids[-1])
    assert generated.image_path == store.image(workspace.image_ids[0]).path
    assert all(a.image_path for a in desk.answers)
    current = desk.resume("audit", "alice")
    decided = []
    for value in ("a", "b", "no_answer", "a"):
        assert current is not None
        view = desk.answer_view("alice", current)
        assert view.item is not None and view.item.text.startswith("Hard to say")
        decided.append((current, value))
        current = desk.decide("audit", "alice", current, value)
    assert current is None
    assert store.undecided_responses() == []
    for response_id, value in decided:
        (mine,) = store.verdicts(response_id=response_id, source=human_source("alice"))
        assert mine.value == value
    assert desk.answer_view("alice", None).progress == Progress(4, 4)
    assert desk.step("audit", "alice", None, -1) == decided[-1][0]


def test_new_undecided_answers_join_the_audit_queue(
    workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    fresh = build.undecided_answers(workspace.store, catalogue, model="later-vlm", count=2)
    desk.reload_answers()
    assert set(fresh) <= {a.response_id for a in desk.answers}


def test_wrong_values_and_subjects_are_user_errors(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    image = workspace.image_ids[0]
    with pytest.raises(UserError, match="not a verdict"):
        desk.decide("rate", "alice", image, "a")
    with pytest.raises(UserError, match="not a verdict"):
        desk.decide("audit", "alice", workspace.response_ids[0], "correct")
    with pytest.raises(UserError, match="not in the scoring queue"):
        desk.decide("rate", "alice", "0" * 32, "correct")
    with pytest.raises(UserError, match="not in the audit queue"):
        desk.decide("audit", "alice", image, "a")
    with pytest.raises(UserError, match="2000"):
        desk.decide("rate", "alice", image, "correct", "x" * 2001)
    with pytest.raises(UserError, match="name"):
        desk.decide("rate", "  ", image, "correct")
    assert workspace.store.verdicts(image_id=image) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [(" Ann  Lee ", "Ann Lee"), ("<b>x</b>", "<b>x</b>"), ("Zoë", "Zoë")],
)
def test_rater_names_are_kept_as_data(name: str, expected: str) -> None:
    assert normalise_rater(name) == expected


@pytest.mark.parametrize("name", ["", "   ", "a" * 41, "bad\x00name", "tab\u200bhidden"])
def test_bad_rater_names_are_refused(name: str) -> None:
    with pytest.raises(UserError):
        normalise_rater(name)


def test_comments_are_trimmed() -> None:
    assert clean_comment("  ") is None
    assert clean_comment(None) is None
    assert clean_comment(" a\nb ") == "a\nb"


def test_eight_raters_at_once_lose_and_duplicate_nothing(
    tmp_path: Path, catalogue: Catalogue, build: Any
) -> None:
    with Store(tmp_path / "ws") as store:
        _, image_ids = build.generation_run(store, catalogue, count=250, size=4)
        desk = ScoringDesk(store, catalogue, raters_per_item=8)
        raters = [f"rater{n}" for n in range(8)]
        errors: list[BaseException] = []
        barrier = threading.Barrier(len(raters))

        def work(rater: str) -> None:
            try:
                barrier.wait()
                values = ("correct", "incorrect", "cant_tell")
                current = desk.resume("rate", rater)
                count = 0
                while current is not None:
                    current = desk.decide("rate", rater, current, values[count % 3])
                    count += 1
                assert count == 250
            except BaseException as err:  # reported below, with the thread's rater
                errors.append(err)

        threads = [threading.Thread(target=work, args=(r,)) for r in raters]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        rows = store.verdicts(current=False)
        assert len(rows) == 2000
        pairs = Counter((v.image_id, v.source) for v in rows)
        assert len(pairs) == 2000  # no rater rated an image twice
        assert {image for image, _ in pairs} == set(image_ids)
        assert Counter(source for _, source in pairs) == {human_source(r): 250 for r in raters}
        for rater in raters:
            assert desk.image_view("rate", rater, None).progress == Progress(250, 250)


# --- reservations: raters at once never over-fill an image (issue 15, part 3) -----------------


def test_eight_raters_on_two_apps_never_exceed_two_raters_per_image(
    tmp_path: Path, catalogue: Catalogue, build: Any
) -> None:
    store = Store(tmp_path / "ws")
    build.generation_run(store, catalogue, count=40)
    # two apps on one workspace (two servers), four raters on each
    desks = [ScoringDesk(store, catalogue, raters_per_item=2) for _ in range(2)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def rater(number: int) -> None:
        try:
            desk = desks[number % 2]
            name = f"rater{number}"
            barrier.wait(timeout=30)
            current = desk.resume("rate", name)
            while current is not None:
                current = desk.decide("rate", name, current, "correct")
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=rater, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    per_image = Counter(v.image_id for v in store.verdicts(current=False) if v.image_id)
    assert len(per_image) == 40
    assert max(per_image.values()) == 2 and min(per_image.values()) == 2, per_image.most_common(3)
    store.close()


def test_an_image_held_for_one_rater_is_offered_to_no_other(
    workspace: Any, catalogue: Catalogue
) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=1)
    image = desk.resume("rate", "alice")
    assert image is not None
    others = {desk.resume("rate", name) for name in ("bob", "carol", "dave")}
    assert image not in others  # held for alice: it counts as her rating
    # a page showing it to bob anyway (stale, or walked to with Next): his verdict is refused
    with pytest.raises(ImageTaken, match="got its 1 raters") as taken:
        desk.decide("rate", "bob", image, "incorrect")
    assert taken.value.following != image
    assert desk.decide("rate", "alice", image, "correct") != image
    assert [v.source for v in workspace.store.verdicts(image_id=image)] == [human_source("alice")]
    # a rater may always change their own verdict
    desk.decide("rate", "alice", image, "incorrect")


def test_reservations_expire(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=1, reservation_s=0.3)
    held = {desk.resume("rate", name) for name in ("a", "b", "c", "d", "e", "f")}
    assert None not in held and len(held) == 6  # six raters hold the six images
    assert desk.resume("rate", "g") is None
    time.sleep(0.4)
    assert desk.resume("rate", "g") is not None  # nobody rated them: the holds ran out
