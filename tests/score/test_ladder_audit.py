"""Stage 3 of ladder grading: people audit ladder replies on the scoring app's audit screen."""

from __future__ import annotations

import itertools
import json
import logging
import re
from typing import Any

import pytest

from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.errors import UserError
from amvicc.ladder import LEVEL_NAMES, response_rung, rung_key
from amvicc.score.app import AUDIT_VERDICTS, ScoringApp, keyboard_script
from amvicc.score.desk import ScoringDesk
from amvicc.score.export import verdicts_export
from amvicc.score.items import AnswerItem, RungItem, image_file
from amvicc.score.queue import Progress
from amvicc.score.views import escape
from amvicc.store import EXTRACTOR_SOURCE, VerdictRecord, human_source


def rung_items(desk: ScoringDesk) -> dict[str, RungItem]:
    items = {a.response_id: a for a in desk.answers if isinstance(a, RungItem)}
    assert len(items) == len([a for a in desk.answers if not isinstance(a, AnswerItem)])
    return items


def test_ladder_replies_are_audited_whatever_catalogue_the_app_serves(
    ladder_workspace: Any, catalogue: Catalogue, caplog: pytest.LogCaptureFixture
) -> None:
    store = ladder_workspace.store
    undecided = {r.response_id for r in store.undecided_responses()}
    sampled = {s.response_id for s in store.audit_samples()}
    assert len(undecided) == 6 and len(sampled) == 4
    scenes = load_catalogue(ladder_workspace.scenes / "catalogue.csv")
    # The shipped MMVP catalogue (the app's default) and the scenes' own: the same rung items.
    for served in (catalogue, scenes):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="amvicc.score.items"):
            items = rung_items(ScoringDesk(store, served))
        assert caplog.records == []
        assert items.keys() == undecided | sampled
        assert {r for r, item in items.items() if item.sampled} == sampled
    for response in store.responses(run_id=ladder_workspace.run_id):
        item = items[response.response_id]
        assert item.rung == response_rung(response)
        assert response.image_key == rung_key(item.rung.level)
        assert item.text == response.text
        assert item.image_path == response.input_path
        assert image_file(store, item.image_path) is not None
        assert item.values == ("correct", "incorrect", "no_answer")
    # what the comparator could not read: the counting rungs
    assert {items[r].rung.type for r in undecided} == {"integer"}


def test_a_ladder_reply_without_a_readable_rung_is_left_out_with_a_warning(
    ladder_workspace: Any, catalogue: Catalogue, caplog: pytest.LogCaptureFixture
) -> None:
    store = ladder_workspace.store
    broken = store.undecided_responses()[0]
    with store.transaction() as conn:
        conn.execute(
            'UPDATE responses SET request_json = \'{"rung": {"level": 9}}\' WHERE response_id = ?',
            (broken.response_id,),
        )
    with caplog.at_level(logging.WARNING, logger="amvicc.score.items"):
        items = rung_items(ScoringDesk(store, catalogue))
    assert len(items) == 9 and broken.response_id not in items
    assert "1 ladder repl(ies) have no readable rung" in caplog.text


def test_auditing_ladder_replies_stores_human_verdicts_and_empties_the_queue(
    ladder_workspace: Any, catalogue: Catalogue
) -> None:
    store = ladder_workspace.store
    desk = ScoringDesk(store, catalogue)
    assert desk.answer_view("alice", None).progress == Progress(0, 10)
    values = itertools.cycle(("correct", "incorrect", "no_answer"))
    given: dict[str, str] = {}
    current = desk.resume("audit", "alice")
    while current is not None:
        item = desk.answer_view("alice", current).item
        assert isinstance(item, RungItem) and current not in given
        with pytest.raises(UserError, match="not a verdict on this answer; use one of correct"):
            desk.decide("audit", "alice", current, "a")  # an MMVP option: not for a rung
        before = len(store.undecided_responses())
        value = next(values)
        following = desk.decide("audit", "alice", current, value)
        # an undecided reply leaves the undecided list; a sampled one was never on it
        assert len(store.undecided_responses()) == before - (not item.sampled)
        given[current] = value
        current = following
    assert len(given) == 10 and store.undecided_responses() == []
    for response_id, value in given.items():
        (mine,) = store.verdicts(response_id=response_id, source=human_source("alice"))
        assert mine.value == value and json.loads(mine.detail_json) == {"screen": "audit"}
    assert desk.answer_view("alice", None).progress == Progress(10, 10)
    # After a restart nothing waits, for alice or anyone (one person's decision settles a
    # reply, as for MMVP answers), and alice can walk back to her verdicts.
    again = ScoringDesk(store, catalogue)
    assert again.resume("audit", "alice") is None and again.resume("audit", "bob") is None
    last = again.step("audit", "alice", None, -1)
    assert last is not None
    mine = again.answer_view("alice", last).mine
    assert mine is not None and mine.value == given[last]


def test_mmvp_answers_and_ladder_replies_share_one_queue(
    workspace: Any, catalogue: Catalogue, build: Any, tmp_path: Any
) -> None:
    build.ladder_run(workspace.root, tmp_path / "scenes")
    desk = ScoringDesk(workspace.store, catalogue)
    app = ScoringApp(desk, login=False)
    mmvp = [a for a in desk.answers if isinstance(a, AnswerItem)]
    ladder = list(rung_items(desk).values())
    assert {a.response_id for a in mmvp} == set(workspace.response_ids) and len(ladder) == 10
    assert desk.answer_view("alice", None).progress == Progress(0, 14)
    # each kind takes its own verdicts, and shows its own buttons
    with pytest.raises(UserError, match="use one of a, b, no_answer"):
        desk.decide("audit", "alice", mmvp[0].response_id, "correct")
    with pytest.raises(UserError, match="use one of correct, incorrect, no_answer"):
        desk.decide("audit", "alice", ladder[0].response_id, "b")
    shown = {
        kind: {
            action
            for action, update in zip(
                AUDIT_VERDICTS, app.render("audit", "alice", subject)[4:-1], strict=True
            )
            if update["visible"]
        }
        for kind, subject in (("mmvp", mmvp[0].response_id), ("ladder", ladder[0].response_id))
    }
    assert shown == {
        "mmvp": {"a", "b", "no_answer"},
        "ladder": {"correct", "incorrect", "no_answer"},
    }
    mmvp_details = app.render("audit", "alice", mmvp[0].response_id)[2]
    assert "data-kind" not in mmvp_details and "Which option does the reply choose?" in mmvp_details
    desk.decide("audit", "alice", mmvp[0].response_id, "a")
    desk.decide("audit", "alice", ladder[0].response_id, "incorrect")
    assert desk.answer_view("alice", None).progress == Progress(2, 14)
    values = {v.response_id: v.value for v in workspace.store.verdicts(source="human:alice")}
    assert values == {mmvp[0].response_id: "a", ladder[0].response_id: "incorrect"}


def test_the_audit_screen_shows_the_rung_and_the_reply_never_the_decision(
    ladder_workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    store = ladder_workspace.store
    app = ScoringApp(ScoringDesk(store, catalogue), login=False)
    items = rung_items(app.desk)
    option = next(i for i in items.values() if i.sampled and i.rung.type == "option")
    subject, image, details, comment, *buttons, legend = app.render(
        "audit", "alice", option.response_id
    )
    rung = option.rung
    assert subject == option.response_id and comment == ""
    assert f'data-item="{subject}" data-kind="ladder"' in details
    assert (
        f'level <b class="amvicc-level">{rung.level}</b>: {escape(LEVEL_NAMES[rung.level])}'
        in details
    )
    assert f"Question: {escape(rung.question)}" in details
    assert rung.choices is not None and f"<b>(b)</b> {escape(rung.choices[1])}" in details
    assert f"The correct answer: <b>{escape(rung.expected)}</b>" in details
    assert '<pre class="amvicc-response">(a)</pre>' in details
    assert "Your verdict: none yet" in details
    assert f'data-item="{subject}"' in image and "<img" in image
    visible = {a for a, update in zip(AUDIT_VERDICTS, buttons, strict=True) if update["visible"]}
    assert visible == {"correct", "incorrect", "no_answer"}
    assert "<kbd>1 / C</kbd> Correct answer" in legend and "<kbd>2 / I</kbd> Another" in legend
    assert "(a)" not in legend
    # Blind: the page does not change when the comparator's decision does.
    (decision,) = store.verdicts(response_id=option.response_id, source=EXTRACTOR_SOURCE)
    flipped = "incorrect" if decision.value == "correct" else "correct"
    store.add_verdict(VerdictRecord(EXTRACTOR_SOURCE, flipped, response_id=option.response_id))
    assert app.render("audit", "alice", option.response_id)[2] == details
    # A reply the comparator could not read, escaped; the page names no model, run or path.
    hedged = next(i for i in items.values() if not i.sampled)
    page = app.render("audit", "alice", hedged.response_id)
    assert escape(build.hedged_count) in page[2] and "<b>1</b>" not in page[2]
    for shown in [image, details, legend, *page[1:4], page[-1]]:
        for secret in (build.secret_ladder_vlm, ladder_workspace.run_id, str(store.root), "/tmp"):
            assert secret not in shown
    # the verdict and comment are kept, and shown under the ladder's own label
    following = app.decide("audit", "correct", "alice", hedged.response_id, "says 1 at last", None)
    assert following[0] != hedged.response_id
    (mine,) = store.verdicts(response_id=hedged.response_id, source=human_source("alice"))
    assert (mine.value, mine.comment) == ("correct", "says 1 at last")
    back = app.render("audit", "alice", hedged.response_id)
    assert 'Your verdict: <b data-value="correct">Correct answer</b>' in back[2]
    assert back[3] == "says 1 at last"


def test_the_page_script_switches_to_the_ladder_keys() -> None:
    script = keyboard_script()
    match = re.search(r"const shortcuts = (\{.*?\});", script)
    assert match is not None
    table = json.loads(match.group(1))
    navigation = {"ArrowLeft": "previous", "ArrowRight": "next", "/": "comment"}
    assert table["audit:ladder"] == {
        "1": "correct",
        "c": "correct",
        "2": "incorrect",
        "i": "incorrect",
        "3": "no_answer",
        "n": "no_answer",
        **navigation,
    }
    assert table["audit"] == {"1": "a", "a": "a", "2": "b", "b": "b", "3": "no_answer",
                              "n": "no_answer", **navigation}  # fmt: skip
    assert 'shortcuts[screen + ":" + kind]' in script


def test_export_leaves_a_ladder_replys_category_empty(
    ladder_workspace: Any, catalogue: Catalogue
) -> None:
    frame = verdicts_export(ladder_workspace.store, catalogue)
    rungs = frame[frame["image_key"].str.startswith("rung:")]
    assert len(rungs) == 10 and set(rungs["source"]) == {EXTRACTOR_SOURCE}
    # scene 1 is not MMVP question 1, whose category the catalogue would otherwise give it
    assert rungs["category"].isna().all()
