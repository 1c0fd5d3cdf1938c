"""The scoring page: Gradio Blocks over a :class:`~amvicc.score.desk.ScoringDesk`.

Screens (tabs): rate images, adjudicate disagreements, audit undecided VLM answers, and
statistics. Each verdict button commits to the store before the next item shows. Keyboard
shortcuts are a page script generated from :data:`amvicc.score.views.KEYMAPS` (Gradio has
none built in). The rater is the login user when the app runs with ``auth``, else a name typed
once and remembered by the browser. Everything the handlers need to know about a session is
the rater and the subject each screen shows; where a rater resumes is asked of the store, so
closing the browser or restarting the server loses nothing.

Images are served by one route (:meth:`ScoringApp.image_response`, with links from
:mod:`amvicc.score.links`), ``amvicc/image/<id>?sig=...``: the page names an image by its opaque id only (no model, no run, no path of the machine), the signature lets
only links the app handed to a rater fetch anything, and only the queues' images are served,
from inside the workspace. Gradio itself serves no file from disk (``allowed_paths`` is empty
and the workspace is on its blocked list).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import gradio as gr
from PIL.Image import DecompressionBombError
from starlette.requests import Request
from starlette.responses import Response

from amvicc.errors import UserError
from amvicc.score.desk import ImageTaken, ScoringDesk, normalise_rater
from amvicc.score.guard import signed_in_user
from amvicc.score.items import image_file, pixels_only
from amvicc.score.links import ImageLinks
from amvicc.score.queue import Direction, Screen
from amvicc.score.views import (
    KEYMAPS,
    LADDER_AUDIT,
    answer_details_html,
    audit_keymap,
    escape,
    image_details_html,
    image_html,
    rater_html,
    rubric_markdown,
    shortcuts_html,
    statistics_html,
)

log = logging.getLogger(__name__)

SCREENS: tuple[Screen, ...] = ("rate", "adjudicate", "audit")
TAB_LABELS: dict[Screen, str] = {
    "rate": "Rate images",
    "adjudicate": "Adjudicate",
    "audit": "Audit answers",
}
NON_VERDICT_ACTIONS = frozenset({"previous", "next", "comment"})
# Not a secret: the browser only keeps the rater's name; a fixed key lets it survive restarts.
BROWSER_STORAGE_KEY = "amvicc-score-rater"
BROWSER_STORAGE_SECRET = "amvicc-score-rater-name"


def _static(name: str) -> str:
    """A file of ``amvicc/score/static/`` (real CSS and JavaScript, shipped in the wheel)."""
    return (resources.files("amvicc.score") / "static" / name).read_text(encoding="utf-8")


CSS = _static("score.css")


def keyboard_script() -> str:
    """The page script that maps keys to the visible screen's buttons.

    Keys are ignored while the rater types (comment or name box; Esc leaves the box). After a
    verdict key, further verdict keys wait until the next item is shown, so a double press
    cannot judge an image the rater has not seen. The audit screen's keymap follows the kind
    of answer shown (``data-kind`` of its details panel: ``audit:ladder`` for a ladder reply).
    """
    table = {
        keymap: {key: s.action for s in shortcuts for key in s.keys}
        for keymap, shortcuts in KEYMAPS.items()
    }
    script = _static("keyboard.js")
    return script.replace("__SHORTCUTS__", json.dumps(table))


#: The audit screen's verdict buttons: an MMVP answer's and a ladder reply's (``no_answer`` is
#: both's). Each answer shows only its own kind's (see :func:`amvicc.score.views.audit_keymap`).
AUDIT_VERDICTS: tuple[str, ...] = tuple(
    dict.fromkeys(
        s.action
        for keymap in ("audit", LADDER_AUDIT)
        for s in KEYMAPS[keymap]
        if s.action not in NON_VERDICT_ACTIONS
    )
)


@dataclass
class ScreenWidgets:
    """The components of one judging screen.

    Attributes:
        legend: the keyboard legend, when it changes with the subject (the audit screen).
        toggled: the verdict buttons shown or hidden with the subject (the audit screen's).
    """

    screen: Screen
    subject: gr.State
    image: gr.HTML
    details: gr.HTML
    comment: gr.Textbox
    rubric: gr.Markdown | None
    buttons: dict[str, gr.Button] = field(default_factory=dict)
    legend: gr.HTML | None = None
    toggled: tuple[str, ...] = ()

    @property
    def outputs(self) -> list[Any]:
        """What every handler of this screen updates, in the order it returns them."""
        rubric = [self.rubric] if self.rubric is not None else []
        legend = [self.legend] if self.legend is not None else []
        toggled = [self.buttons[action] for action in self.toggled]
        return [self.subject, self.image, self.details, *rubric, self.comment, *toggled, *legend]


class ScoringApp:
    """The handlers and layout of the scoring page.

    Args:
        desk: the queues and the store.
        login: the app runs with Gradio's login; the rater is the login user.
    """

    def __init__(self, desk: ScoringDesk, *, login: bool) -> None:
        self.desk = desk
        self.login = login
        self.links = ImageLinks()

    def image_response(self, request: Request) -> Response:
        """The image route: a queue's image, if the link's signature is valid, pixels only.

        With a login, the request must also carry a signed-in session (Gradio's cookie), like
        every other route of the app: a link copied out of the page opens nothing elsewhere.
        The file is served as a PNG of its pixels (:func:`~amvicc.score.items.pixels_only`):
        its text chunks, EXIF and XMP name models and cameras.
        """
        if self.login and signed_in_user(request) is None:
            return Response("sign in first", status_code=401)
        subject = request.path_params["subject"]
        if not self.links.valid(subject, request.query_params.get("sig", "")):
            return Response("not found", status_code=404)
        found = image_file(self.desk.store, self.desk.image_path(subject))
        if found is None:
            return Response("not found", status_code=404)
        path, _ = found
        try:
            data = pixels_only(path)
        except (OSError, ValueError, SyntaxError, DecompressionBombError) as err:  # a broken file
            log.warning("cannot serve image %s: %s", subject, err)
            return Response("not an image", status_code=404)
        return Response(
            data, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"}
        )

    # --- handlers (plain functions of component values; tested without a browser) -----------

    def rater(self, typed: str | None, request: gr.Request | None) -> str:
        """The session's rater: the login user, else the typed name.

        Raises:
            UserError: nobody signed in yet.
        """
        if self.login:
            username = getattr(request, "username", None)
            if not username:
                raise UserError("sign in first (reload the page)")
            return normalise_rater(username)
        if not typed:
            raise UserError("type your name first")
        return normalise_rater(typed)

    def render(self, screen: Screen, rater: str, subject: str | None) -> list[Any]:
        """A screen's outputs for one subject (None: the rater's queue is done).

        The audit screen also shows the verdict buttons of the answer's kind (an MMVP
        answer's options, or a ladder reply's correct / another answer), hiding the others,
        and the legend of their keys.
        """
        if screen == "audit":
            answer = self.desk.answer_view(rater, subject)
            shown = answer.item.response_id if answer.item else None
            keymap = audit_keymap(answer.item)
            offered = {s.action for s in KEYMAPS[keymap]}
            return [
                shown,
                self.image(screen, rater, shown),
                answer_details_html(answer),
                (answer.mine.comment if answer.mine else None) or "",
                *(gr.update(visible=action in offered) for action in AUDIT_VERDICTS),
                shortcuts_html(keymap),
            ]
        view = self.desk.image_view(screen, rater, subject)
        item = view.item
        return [
            item.image_id if item else None,
            self.image(screen, rater, item.image_id if item else None),
            image_details_html(view, screen),
            rubric_markdown(view.rubric, item.kind if item else None),
            (view.mine.comment if view.mine else None) or "",
        ]

    def image(self, screen: Screen, rater: str, subject: str | None) -> str:
        """The image panel: a signed link to the subject's image, and the next one prefetched."""
        if subject is None:
            return image_html(None, None)
        if image_file(self.desk.store, self.desk.image_path(subject)) is None:
            return image_html(None, subject)
        upcoming = self.desk.upcoming(screen, rater, subject)
        return image_html(
            self.links.url(subject), subject, self.links.url(upcoming) if upcoming else None
        )

    def open_screen(
        self, screen: Screen, typed: str | None, subject: str | None, request: gr.Request | None
    ) -> list[Any]:
        """A tab was opened: show what it showed before, else where the rater resumes."""
        rater = self.rater(typed, request)
        if screen == "audit":
            self.desk.reload_answers()
        if subject is None:
            subject = self.desk.resume(screen, rater)
        return self.render(screen, rater, subject)

    def decide(
        self,
        screen: Screen,
        value: str,
        typed: str | None,
        subject: str | None,
        comment: str | None,
        request: gr.Request | None,
    ) -> list[Any]:
        """A verdict button: commit the verdict, then show the next subject waiting."""
        rater = self.rater(typed, request)
        if subject is None:
            raise UserError("nothing is shown to judge")
        try:
            following = self.desk.decide(screen, rater, subject, value, comment)
        except ImageTaken as taken:
            gr.Warning(str(taken))
            following = taken.following
        return self.render(screen, rater, following)

    def move(
        self,
        screen: Screen,
        direction: Direction,
        typed: str | None,
        subject: str | None,
        request: gr.Request | None,
    ) -> list[Any]:
        """Previous / next: show the neighbouring subject in the rater's order."""
        rater = self.rater(typed, request)
        return self.render(screen, rater, self.desk.step(screen, rater, subject, direction))

    def start(
        self, typed: str | None, request: gr.Request | None, *, quiet: bool = False
    ) -> list[Any]:
        """The page loaded, or a name was typed: greet the rater and resume rating.

        Args:
            typed: the name typed (or remembered by the browser).
            request: Gradio's request (its ``username`` when the app has a login).
            quiet: show the sign-in box instead of an error when there is no valid name
                (the page loading without a remembered name).

        Returns:
            The rater, the name the browser keeps, the visibility of the sign-in and main
            areas, the header, the adjudication and audit screens' subjects (reset), and the
            rating screen.
        """
        try:
            rater = self.rater(typed, request)
        except UserError:
            if not quiet:
                raise
            return [
                None,
                None,
                gr.update(visible=True),
                gr.update(visible=False),
                rater_html(None),
                None,
                None,
                None,
                image_html(None, None),
                "",
                "",
                "",
            ]
        self.desk.reload_images()
        subject = self.desk.resume("rate", rater)
        return [
            None if self.login else rater,
            None if self.login else rater,
            gr.update(visible=False),
            gr.update(visible=True),
            rater_html(rater),
            None,
            None,
            *self.render("rate", rater, subject),
        ]

    def sign_out(self) -> list[Any]:
        """Forget the typed name (another rater takes the browser)."""
        return [None, None, gr.update(visible=True), gr.update(visible=False), rater_html(None)]

    def statistics(self, typed: str | None, request: gr.Request | None) -> str:
        """The statistics tab."""
        self.rater(typed, request)
        return statistics_html(self.desk.statistics())

    # --- layout ------------------------------------------------------------------------------

    def build(self) -> Any:
        """The Blocks of the page, with every event wired."""
        with gr.Blocks(title="amvicc score", analytics_enabled=False) as blocks:
            typed = gr.State(None)
            remembered = gr.BrowserState(
                None, storage_key=BROWSER_STORAGE_KEY, secret=BROWSER_STORAGE_SECRET
            )
            with gr.Row():
                gr.Markdown("## amvicc · human scoring")
                header = gr.HTML(rater_html(None), elem_id="rater", js_on_load=None)
                switch = gr.Button(
                    "Switch rater", size="sm", visible=not self.login, elem_id="switch-rater"
                )
            with gr.Column(visible=False) as sign_in_area:
                name = gr.Textbox(
                    label="Your name (kept with every verdict you give)",
                    max_length=40,
                    autofocus=True,
                    elem_id="rater-name",
                )
                begin = gr.Button("Start rating", variant="primary", elem_id="start")
            with gr.Column(visible=False) as main, gr.Tabs():
                screens: dict[Screen, ScreenWidgets] = {}
                tabs: dict[Screen, gr.Tab] = {}
                for screen in SCREENS:
                    with gr.Tab(TAB_LABELS[screen], id=screen) as tabs[screen]:
                        screens[screen] = self._screen(screen)
                with gr.Tab("Statistics", id="statistics") as statistics_tab:
                    stats = gr.HTML(elem_id="statistics", js_on_load=None)
                    refresh = gr.Button("Refresh", size="sm", elem_id="statistics-refresh")

            def load(remembered: str | None, request: gr.Request) -> list[Any]:
                with _shown_to_user():
                    return self.start(remembered, request, quiet=True)

            def sign_in(typed: str | None, request: gr.Request) -> list[Any]:
                with _shown_to_user():
                    return self.start(typed, request)

            def show_statistics(typed: str | None, request: gr.Request) -> str:
                with _shown_to_user():
                    return self.statistics(typed, request)

            start_outputs = [
                typed,
                remembered,
                sign_in_area,
                main,
                header,
                screens["adjudicate"].subject,
                screens["audit"].subject,
                *screens["rate"].outputs,
            ]
            blocks.load(load, [remembered], start_outputs, api_name="load")
            begin.click(sign_in, [name], start_outputs, api_name="sign_in", show_progress="hidden")
            name.submit(
                sign_in, [name], start_outputs, api_visibility="private", show_progress="hidden"
            )
            switch.click(
                self.sign_out,
                None,
                [typed, remembered, sign_in_area, main, header],
                api_name="sign_out",
            )
            for screen, widgets in screens.items():
                self._wire(widgets, typed, tabs[screen])
            statistics_tab.select(show_statistics, [typed], [stats], api_visibility="private")
            refresh.click(show_statistics, [typed], [stats], api_name="statistics")
        return blocks

    def _screen(self, screen: Screen) -> ScreenWidgets:
        subject = gr.State(None)
        # The audit screen holds the buttons of both kinds of answer; the ladder's start hidden.
        keymaps = (screen, LADDER_AUDIT) if screen == "audit" else (screen,)
        with gr.Row():
            with gr.Column(scale=3):
                image = gr.HTML(elem_id=f"{screen}-image", js_on_load=None)
            with gr.Column(scale=2):
                details = gr.HTML(elem_id=f"{screen}-details", js_on_load=None)
                buttons: dict[str, gr.Button] = {}
                with gr.Row():
                    for keymap in keymaps:
                        verdicts = [
                            s for s in KEYMAPS[keymap] if s.action not in NON_VERDICT_ACTIONS
                        ]
                        for number, shortcut in enumerate(verdicts):
                            if shortcut.action in buttons:
                                continue
                            buttons[shortcut.action] = gr.Button(
                                f"{shortcut.label} ({shortcut.keys[0]})",
                                variant="primary" if number == 0 else "secondary",
                                min_width=90,
                                visible=keymap == screen,
                                elem_id=f"{screen}-{shortcut.action}",
                            )
                comment = gr.Textbox(
                    label="Comment (optional; / to write, Esc to leave)",
                    lines=2,
                    max_length=2000,
                    elem_id=f"{screen}-comment",
                )
                with gr.Row():
                    buttons["previous"] = gr.Button("← Previous", elem_id=f"{screen}-previous")
                    buttons["next"] = gr.Button("Next →", elem_id=f"{screen}-next")
                legend = gr.HTML(shortcuts_html(screen), elem_id=f"{screen}-keys", js_on_load=None)
                rubric = None if screen == "audit" else gr.Markdown(elem_id=f"{screen}-rubric")
        if screen == "audit":
            return ScreenWidgets(
                screen, subject, image, details, comment, None, buttons, legend, AUDIT_VERDICTS
            )
        return ScreenWidgets(screen, subject, image, details, comment, rubric, buttons)

    def _wire(self, widgets: ScreenWidgets, typed: gr.State, tab: gr.Tab) -> None:
        screen = widgets.screen
        for action, button in widgets.buttons.items():
            if action in NON_VERDICT_ACTIONS:
                direction: Direction = -1 if action == "previous" else 1
                button.click(
                    self._mover(screen, direction),
                    [typed, widgets.subject],
                    widgets.outputs,
                    api_name=f"{screen}_{action}",
                    **QUICK,
                )
            else:
                button.click(
                    self._decider(screen, action),
                    [typed, widgets.subject, widgets.comment],
                    widgets.outputs,
                    api_name=f"{screen}_{action}",
                    **QUICK,
                )

        def opened(typed: str | None, subject: str | None, request: gr.Request) -> list[Any]:
            with _shown_to_user():
                return self.open_screen(screen, typed, subject, request)

        tab.select(opened, [typed, widgets.subject], widgets.outputs, api_name=f"open_{screen}")

    # Gradio passes gr.Request to a parameter annotated with it, so handlers are closures with
    # plain signatures (a functools.partial would hide the annotation).

    def _decider(self, screen: Screen, value: str) -> Any:
        def decide(
            typed: str | None, subject: str | None, comment: str | None, request: gr.Request
        ) -> list[Any]:
            with _shown_to_user():
                return self.decide(screen, value, typed, subject, comment, request)

        return decide

    def _mover(self, screen: Screen, direction: Direction) -> Any:
        def move(typed: str | None, subject: str | None, request: gr.Request) -> list[Any]:
            with _shown_to_user():
                return self.move(screen, direction, typed, subject, request)

        return move


# Verdicts and navigation are short and thread-safe: no spinner over the page.
QUICK: dict[str, Any] = {"show_progress": "hidden", "queue": False}


@contextmanager
def _shown_to_user() -> Iterator[None]:
    """Show a :class:`UserError` in the page as Gradio's error message, not a server error."""
    try:
        yield
    except UserError as err:
        raise gr.Error(escape(err), print_exception=False) from None
