"""The scoring app in a real Chromium, driven by the keyboard (Debian's chromium, pip playwright)."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amvicc.agreement import cohen_kappa
from amvicc.catalogue import Catalogue
from amvicc.score.desk import ScoringDesk
from amvicc.score.server import ScoringServer, serve
from amvicc.store import Store, adjudication_source, human_source

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
COMMENT = "<b>x</b> ${7*7} {{7*7}} 123"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
    ),
]


@pytest.fixture
def study(
    tmp_path: Path, catalogue: Catalogue, build: Any
) -> Iterator[tuple[Store, ScoringServer]]:
    with Store(tmp_path / "ws") as store:
        build.generation_run(store, catalogue, count=4, size=64)
        build.undecided_answers(store, catalogue, count=1)
        desk = ScoringDesk(store, catalogue, raters_per_item=2)
        server = serve(
            desk, port=build.free_port(), auth=[("alice", "pw-a"), ("bob", "pw-b")], quiet=True
        )
        yield store, server
        server.close()


def shown_item(page: Any, screen: str = "rate") -> str:
    value: str = page.get_attribute(f"#{screen}-details [data-item]", "data-item")
    return value


def press_and_wait(page: Any, key: str, screen: str = "rate") -> str:
    """Press a key, wait for the screen to show another subject, return it."""
    before = shown_item(page, screen)
    page.keyboard.press(key)
    page.wait_for_function(
        "([screen, before]) => {"
        "  const el = document.querySelector('#' + screen + '-details [data-item]');"
        "  return el !== null && el.dataset.item !== before; }",
        arg=[screen, before],
    )
    return shown_item(page, screen)


def log_in(browser: Any, url: str, user: str, password: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    page.goto(url)
    page.get_by_label("username").fill(user)
    page.get_by_label("password").fill(password)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#rate-details [data-item]")
    return page


def test_rate_with_the_keyboard_resume_adjudicate_and_see_kappa(
    study: tuple[Store, ScoringServer], build: Any
) -> None:
    from playwright.sync_api import sync_playwright

    store, server = study
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            alice = log_in(browser, server.url, "alice", "pw-a")
            assert "Keys:" in alice.inner_text("#rate-details + * , body")
            order = [shown_item(alice)]
            order.append(press_and_wait(alice, "1"))
            order.append(press_and_wait(alice, "2"))
            # typing a comment (digits included) gives no verdict; Esc leaves the box
            alice.keyboard.press("/")
            alice.keyboard.type(COMMENT)
            alice.keyboard.press("Escape")
            assert shown_item(alice) == order[2]
            assert len(store.verdicts(source=human_source("alice"))) == 2
            order.append(press_and_wait(alice, "3"))
            given = {
                v.image_id: (v.value, v.comment)
                for v in store.verdicts(source=human_source("alice"))
            }
            assert given == {
                order[0]: ("correct", None),
                order[1]: ("incorrect", None),
                order[2]: ("cant_tell", COMMENT),
            }

            # reload: the login cookie holds, and rating resumes at the fourth image
            alice.reload()
            alice.wait_for_selector("#rate-details [data-item]")
            assert shown_item(alice) == order[3]
            assert "Rated 3 of 4" in alice.inner_text("#rate-details")
            # back to the third image: the rater's own verdict and comment, escaped, as data
            assert press_and_wait(alice, "ArrowLeft") == order[2]
            details = alice.inner_text("#rate-details")
            assert "Your verdict: Can't tell" in details and COMMENT in details
            assert press_and_wait(alice, "ArrowRight") == order[3]
            assert press_and_wait(alice, "1") == ""  # all done
            assert "Rated 4 of 4" in alice.inner_text("#rate-details")
            page = alice.content()
            for secret in (build.secret_model, build.secret_vlm, str(store.root.resolve())):
                assert secret not in page
            for run in store.runs():
                assert run.run_id not in page
            assert alice.dialogs == []

            # bob calls every image correct: two disagreements with alice
            bob = log_in(browser, server.url, "bob", "pw-b")
            while shown_item(bob):
                press_and_wait(bob, "c")
            assert len(store.verdicts(source=human_source("bob"))) == 4
            bob.get_by_role("tab", name="Adjudicate").click()
            bob.wait_for_selector("#adjudicate-details [data-item]")
            disputed = {order[1], order[2]}
            first = shown_item(bob, "adjudicate")
            assert first in disputed
            assert "Rater 2 (you): Correct" in bob.inner_text("#adjudicate-details")
            assert press_and_wait(bob, "2", "adjudicate") in disputed - {first}
            assert press_and_wait(bob, "1", "adjudicate") == ""
            decided = {
                v.image_id: v.value for v in store.verdicts(source=adjudication_source("bob"))
            }
            assert set(decided) == disputed

            bob.get_by_role("tab", name="Statistics").click()
            bob.wait_for_selector("#statistics tr[data-category='all'] .amvicc-kappa")
            shown_kappa = bob.inner_text("#statistics tr[data-category='all'] .amvicc-kappa")
            alice_values = [given.get(i, ("correct",))[0] for i in order]
            expected = cohen_kappa(alice_values, ["correct"] * 4)
            assert shown_kappa == ("–" if math.isnan(expected) else f"{expected:.2f}")
            assert "Cohen's κ" in bob.inner_text("#statistics")

            bob.get_by_role("tab", name="Audit answers").click()
            bob.wait_for_selector("#audit-details [data-item]")
            (response,) = store.undecided_responses()
            assert shown_item(bob, "audit") == response.response_id
            assert "Hard to say <b>" in bob.inner_text("#audit-details")
            assert press_and_wait(bob, "b", "audit") == ""
            (audit,) = store.verdicts(response_id=response.response_id, source=human_source("bob"))
            assert audit.value == "b"
            assert store.undecided_responses() == []
            assert bob.dialogs == []
        finally:
            browser.close()


def test_audit_ladder_replies_and_mmvp_answers_with_their_own_keys(
    tmp_path: Path, catalogue: Catalogue, build: Any
) -> None:
    from playwright.sync_api import sync_playwright

    build.ladder_run(tmp_path / "ws", tmp_path / "scenes")
    with Store(tmp_path / "ws") as store:
        (mmvp,) = build.undecided_answers(store, catalogue, count=1)
        server = serve(
            ScoringDesk(store, catalogue), port=build.free_port(), auth=[("ann", "pw")], quiet=True
        )
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    ann = log_in(browser, server.url, "ann", "pw")
                    ann.get_by_role("tab", name="Audit answers").click()
                    ann.wait_for_selector("#audit-details [data-item]")
                    expected: dict[str, str] = {}
                    first_rung = True
                    current = shown_item(ann, "audit")
                    while current:
                        kind = ann.get_attribute("#audit-details [data-item]", "data-kind")
                        keys = ann.inner_text("#audit-keys")
                        if current == mmvp:
                            assert kind is None and "(a)" in keys
                            assert ann.is_visible("#audit-a") and ann.is_visible("#audit-b")
                            assert ann.is_hidden("#audit-correct")
                            key, value = "1", "a"
                        else:
                            assert kind == "ladder" and "Correct answer" in keys
                            assert "The correct answer:" in ann.inner_text("#audit-details")
                            assert ann.is_visible("#audit-correct") and ann.is_hidden("#audit-a")
                            key, value = ("i", "incorrect") if first_rung else ("1", "correct")
                            if first_rung:  # an MMVP key gives a ladder reply no verdict
                                ann.keyboard.press("b")
                                ann.wait_for_timeout(500)
                                assert shown_item(ann, "audit") == current
                                assert store.verdicts(response_id=current, source="human:ann") == []
                                first_rung = False
                        expected[current] = value
                        current = press_and_wait(ann, key, "audit")
                    assert len(expected) == 11 and mmvp in expected
                    given = {v.response_id: v.value for v in store.verdicts(source="human:ann")}
                    assert given == expected
                    assert store.undecided_responses() == []
                    assert ann.dialogs == []
                finally:
                    browser.close()
        finally:
            server.close()
