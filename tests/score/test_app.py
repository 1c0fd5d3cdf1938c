from __future__ import annotations

import io
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from gradio_client import Client
from PIL import Image

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.score.app import ScoringApp, keyboard_script
from amvicc.score.desk import ScoringDesk
from amvicc.score.guard import LoginThrottle
from amvicc.score.items import image_file
from amvicc.score.server import ScoringServer, serve
from amvicc.score.views import SHORTCUTS, escape
from amvicc.store import ImageRecord, human_source

DATA_ITEM = re.compile(r'data-item="([0-9a-f]*)"')
IMAGE_LINK = re.compile(
    r'<img alt="the image to judge" src="(amvicc/image/([0-9a-f]+)\?sig=[0-9a-f]+)"'
)


def _rgb(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").tobytes()


def shown(details: str) -> str:
    """The subject a screen's details panel shows ("" when the queue is done)."""
    match = DATA_ITEM.search(details)
    assert match is not None, details
    return match.group(1)


def secrets_of(workspace: Any, build: Any) -> list[str]:
    """What the page must never show: model names, run ids, the workspace's path."""
    runs = [r.run_id for r in workspace.store.runs()]
    return [build.secret_model, build.secret_vlm, *runs, str(workspace.root.resolve()), "/tmp"]


# --- handlers, without a server ---------------------------------------------------------------


def test_handlers_rate_and_render_blind_escaped_pages(
    workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    app = ScoringApp(ScoringDesk(workspace.store, catalogue), login=False)
    name = "<script>alert('x')</script> ${1+1}"
    outputs = app.start(name, None)
    typed, remembered, _, _, header, adjudicate, audit = outputs[:7]
    subject, image, details, rubric, comment = outputs[7:]
    assert adjudicate is None and audit is None  # other screens start afresh
    assert typed == remembered == name
    assert "<script>" not in header and escape(name) in header
    assert subject == shown(details) and subject in workspace.image_ids
    link = IMAGE_LINK.search(image)
    assert link is not None and link.group(2) == subject
    assert image.startswith(f'<div class="amvicc-image" data-item="{subject}">')
    assert 'class="amvicc-upcoming"' in image  # the next image is fetched ahead
    assert "Rubric:" in rubric and comment == ""
    pages = [header, image, details, rubric]
    # a comment with markup is stored verbatim and shown escaped when the rater comes back
    outputs = app.decide("rate", "correct", typed, subject, "<b>bold</b> {{x}}", None)
    pages += outputs[1:4]
    assert shown(outputs[2]) != subject
    back = app.move("rate", -1, typed, outputs[0], None)
    assert back[0] == subject
    assert back[4] == "<b>bold</b> {{x}}"  # the textbox holds the text itself
    assert "&lt;b&gt;bold&lt;/b&gt; &#123;&#123;x&#125;&#125;" in back[2]
    assert 'data-value="correct"' in back[2]
    (verdict,) = workspace.store.verdicts(source=human_source(name))
    assert verdict.comment == "<b>bold</b> {{x}}"
    pages += back[1:4]
    audit = app.open_screen("audit", typed, None, None)
    assert "Hard to say &lt;b&gt;" in audit[2] and "&#36;&#123;x&#125;" in audit[2]
    pages += audit[1:3]
    pages.append(app.statistics(typed, None))
    for page in pages:
        for secret in secrets_of(workspace, build):
            assert secret not in page


def test_explicit_images_show_the_question_and_the_answer_to_show(
    workspace: Any, catalogue: Catalogue
) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    app = ScoringApp(desk, login=False)
    explicit = next(i for i in desk.images if i.kind == "explicit")
    implicit = next(i for i in desk.images if i.kind == "implicit")
    _, _, details, rubric, _ = app.render("rate", "alice", explicit.image_id)
    shows = explicit.question.option(explicit.question.explicit_answer)  # type: ignore[arg-type]
    assert escape(explicit.question.text) in details
    assert f"The image should show: <b>({shows.label}) {escape(shows.text)}</b>" in details
    assert "A **correct** explicit image" in rubric
    _, _, details, rubric, _ = app.render("rate", "alice", implicit.image_id)
    assert "MMVP question" not in details and "should show" not in details
    assert "A **correct** implicit image" in rubric


def test_handlers_need_a_rater(workspace: Any, catalogue: Catalogue) -> None:
    desk = ScoringDesk(workspace.store, catalogue)
    with pytest.raises(UserError, match="type your name"):
        ScoringApp(desk, login=False).decide("rate", "correct", None, "x", None, None)
    with pytest.raises(UserError, match="sign in"):
        ScoringApp(desk, login=True).open_screen("rate", "alice", None, None)
    # the first page load without a remembered name shows the sign-in box
    outputs = ScoringApp(desk, login=False).start(None, None, quiet=True)
    assert outputs[0] is None and outputs[2]["visible"] is True and outputs[3]["visible"] is False
    assert len(outputs) == len(ScoringApp(desk, login=False).start("ann", None))
    # pressing Start without a name says what to do
    with pytest.raises(UserError, match="type your name"):
        ScoringApp(desk, login=False).start("  ", None)


def test_only_files_inside_the_workspace_are_read(
    workspace: Any, catalogue: Catalogue, tmp_path: Any, build: Any
) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(build.png(1))
    store = workspace.store
    assert image_file(store, "../outside.png") is None
    assert image_file(store, str(outside)) is None
    (store.root / "images" / "link.png").symlink_to(outside)
    assert image_file(store, "images/link.png") is None
    assert image_file(store, "amvicc.sqlite") is None  # not an image
    assert image_file(store, store.image(workspace.image_ids[0]).path) is not None
    # an image row pointing outside shows as missing, not as the outside file
    run = store.run(workspace.run_id)
    store.add_image(
        ImageRecord(
            "e" * 32,
            run.run_id,
            run.config_key,
            60,
            "implicit",
            0,
            "p",
            1,
            "ok",
            path="../outside.png",
        )
    )
    app = ScoringApp(ScoringDesk(store, catalogue), login=False)
    image = app.render("rate", "alice", "e" * 32)[1]
    assert "missing" in image and "<img" not in image


def test_keyboard_script_covers_every_shortcut() -> None:
    script = keyboard_script()
    for screen, shortcuts in SHORTCUTS.items():
        for shortcut in shortcuts:
            for key in shortcut.keys:
                assert f'"{key}": "{shortcut.action}"' in script, (screen, key)
    assert "TEXTAREA" in script and "Escape" in script


# --- the running app, driven over HTTP by gradio_client ----------------------------------------


@pytest.fixture
def server(workspace: Any, catalogue: Catalogue, build: Any) -> Iterator[ScoringServer]:
    running = serve(ScoringDesk(workspace.store, catalogue), port=build.free_port(), quiet=True)
    yield running
    running.close()


def test_client_rates_and_resumes_in_a_new_session(
    server: ScoringServer, workspace: Any, catalogue: Catalogue
) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    order = ScoringDesk(workspace.store, catalogue).queues["rate"].order("alice").ids
    client = Client(server.url, verbose=False)
    outputs = client.predict("alice", api_name="/sign_in")
    assert shown(outputs[3]) == order[0]
    # a screen's outputs over the API: image, details, rubric, comment (states stay server-side)
    outputs = client.predict("", api_name="/rate_correct")
    assert shown(outputs[1]) == order[1]
    outputs = client.predict("unsure", api_name="/rate_cant_tell")
    assert shown(outputs[1]) == order[2]
    values = {
        v.image_id: (v.value, v.comment) for v in workspace.store.verdicts(source="human:alice")
    }
    assert values == {order[0]: ("correct", None), order[1]: ("cant_tell", "unsure")}
    # a new session (the browser was closed) resumes at the first image still waiting
    again = Client(server.url, verbose=False)
    outputs = again.predict("alice", api_name="/sign_in")
    assert shown(outputs[3]) == order[2]
    assert ">2</b> of <b" in outputs[3]


def test_login_decides_who_rates_and_guards_every_route(
    login_server: ScoringServer, workspace: Any
) -> None:
    alice = Client(login_server.url, auth=("alice", "pw-a"), verbose=False)
    first = shown(alice.predict(api_name="/open_rate")[1])
    alice.predict("", api_name="/rate_incorrect")
    (verdict,) = workspace.store.verdicts(image_id=first)
    assert verdict.source == "human:alice"
    with pytest.raises(ValueError, match=r"(?i)invalid|auth|login|credential"):
        Client(login_server.url, auth=("alice", "wrong"), verbose=False)
    response = httpx.get(f"{login_server.url}gradio_api/info")
    assert response.status_code == 401


def test_images_are_served_by_signed_links_only(server: ScoringServer, workspace: Any) -> None:
    client = Client(server.url, verbose=False)
    image = client.predict("alice", api_name="/sign_in")[2]
    link = IMAGE_LINK.search(image)
    assert link is not None
    subject = link.group(2)
    served = httpx.get(server.url + link.group(1))
    assert served.status_code == 200
    assert served.headers["content-type"] == "image/png"
    stored = (workspace.root / workspace.store.image(subject).path).read_bytes()
    # the same pixels, re-encoded without metadata (tests/score/test_blinding.py)
    assert _rgb(served.content) == _rgb(stored)
    forged = link.group(1)[:-1] + ("0" if link.group(1)[-1] != "0" else "1")
    assert httpx.get(server.url + forged).status_code == 404
    other = (
        workspace.image_ids[-1] if subject != workspace.image_ids[-1] else workspace.image_ids[0]
    )
    assert httpx.get(f"{server.url}amvicc/image/{other}").status_code == 404
    assert (
        httpx.get(f"{server.url}amvicc/image/{other}?sig={link.group(1)[-32:]}").status_code == 404
    )


def test_workspace_files_are_never_served_by_gradio(server: ScoringServer, workspace: Any) -> None:
    root = workspace.root.resolve()
    image = root / workspace.store.image(workspace.image_ids[0]).path
    for path in (image, root / "amvicc.sqlite"):
        response = httpx.get(f"{server.url}gradio_api/file={path}")
        assert response.status_code == 403, path


def test_eight_clients_at_once_lose_nothing(
    workspace: Any, catalogue: Catalogue, build: Any
) -> None:
    desk = ScoringDesk(workspace.store, catalogue, raters_per_item=8)
    server = serve(desk, port=build.free_port(), quiet=True)
    raters = [f"rater{n}" for n in range(8)]
    errors: list[BaseException] = []

    def work(rater: str) -> None:
        try:
            client = Client(server.url, verbose=False)
            client.predict(rater, api_name="/sign_in")
            for _ in range(3):
                client.predict("", api_name="/rate_correct")
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(r,)) for r in raters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    server.close()
    assert errors == []
    rows = [v for v in workspace.store.verdicts(current=False) if v.image_id]
    assert len(rows) == 24
    assert Counter(v.source for v in rows) == {human_source(r): 3 for r in raters}
    assert len({(v.image_id, v.source) for v in rows}) == 24


# --- the login guards the image route; no uploads; slow password guessing (issue 15) ----------


def test_the_image_route_is_behind_the_login(login_server: ScoringServer, workspace: Any) -> None:
    alice = Client(login_server.url, auth=("alice", "pw-a"), verbose=False)
    link = IMAGE_LINK.search(alice.predict(api_name="/open_rate")[0])
    assert link is not None
    url = login_server.url + link.group(1)
    assert httpx.get(url).status_code == 401  # a valid signature, no session
    with httpx.Client() as browser:
        signed_in = browser.post(
            f"{login_server.url}login", data={"username": "bob", "password": "pw-b"}
        )
        assert signed_in.status_code == 200
        served = browser.get(url)
        assert served.status_code == 200 and served.headers["content-type"] == "image/png"


@pytest.mark.parametrize("route", ["gradio_api/upload", "upload", "gradio_api/upload/"])
def test_uploads_are_refused(server: ScoringServer, route: str) -> None:
    response = httpx.post(f"{server.url}{route}", files={"files": ("x.txt", b"x" * 2048)})
    assert response.status_code == 403


def test_failed_logins_are_slowed_down(workspace: Any, catalogue: Catalogue, build: Any) -> None:
    throttle = LoginThrottle(free=2, base_delay=0.4)
    running = serve(
        ScoringDesk(workspace.store, catalogue),
        port=build.free_port(),
        auth=[("alice", "pw-a")],
        quiet=True,
        throttle=throttle,
    )
    try:
        times = []
        for _ in range(4):
            started = time.perf_counter()
            wrong = httpx.post(
                f"{running.url}login", data={"username": "alice", "password": "guess"}
            )
            times.append(time.perf_counter() - started)
            assert wrong.status_code == 400
        assert times[0] < 0.4 and times[1] < 0.4  # a typo or two costs nothing
        assert times[2] >= 0.4 and times[3] >= 0.8  # then each guess waits longer
        right = httpx.post(f"{running.url}login", data={"username": "alice", "password": "pw-a"})
        assert right.status_code == 200
        assert throttle.delay("127.0.0.1") == 0.0  # a success clears the count
    finally:
        running.close()
