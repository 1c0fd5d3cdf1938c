"""The HTML of each screen of the scoring app, with every piece of data escaped.

Rater names, comments, prompts and VLM replies are data: they go through :func:`escape`,
which also neutralises ``$`` and braces because Gradio's HTML component renders its value
through a template. Images are referenced by signed URLs naming only their opaque id (see
:mod:`amvicc.score.app`), so the page carries no file path of the machine.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from amvicc.catalogue import PromptKind, Question
from amvicc.rubrics import Rubric
from amvicc.score.desk import AnswerView, ImageView
from amvicc.score.items import AuditItem, RungItem
from amvicc.score.queue import Mark, Progress, Screen
from amvicc.score.stats import Statistics

VALUE_LABELS = {
    "correct": "Correct",
    "incorrect": "Incorrect",
    "cant_tell": "Can't tell",
    "a": "(a)",
    "b": "(b)",
    "no_answer": "No answer",
}
#: How a ladder reply's verdicts read: whether it gives the rung's answer.
RUNG_LABELS = {
    "correct": "Correct answer",
    "incorrect": "Another answer",
    "no_answer": "No answer",
}


@dataclass(frozen=True)
class Shortcut:
    """A key (or keys) that presses one button of a screen.

    Attributes:
        keys: ``KeyboardEvent.key`` values (letters lower-case).
        action: the button's name; its element id is ``<screen>-<action>``.
        label: what the button says.
    """

    keys: tuple[str, ...]
    action: str
    label: str


_NAVIGATION = (
    Shortcut(("ArrowLeft",), "previous", "Previous"),
    Shortcut(("ArrowRight",), "next", "Next"),
    Shortcut(("/",), "comment", "Write a comment (Esc leaves the box)"),
)
_IMAGE_VERDICTS = (
    Shortcut(("1", "c"), "correct", VALUE_LABELS["correct"]),
    Shortcut(("2", "i"), "incorrect", VALUE_LABELS["incorrect"]),
    Shortcut(("3", "t"), "cant_tell", VALUE_LABELS["cant_tell"]),
)
#: The keyboard shortcuts of each screen: the page's script and its legend both come from here.
SHORTCUTS: dict[Screen, tuple[Shortcut, ...]] = {
    "rate": (*_IMAGE_VERDICTS, *_NAVIGATION),
    "adjudicate": (*_IMAGE_VERDICTS, *_NAVIGATION),
    "audit": (
        Shortcut(("1", "a"), "a", VALUE_LABELS["a"]),
        Shortcut(("2", "b"), "b", VALUE_LABELS["b"]),
        Shortcut(("3", "n"), "no_answer", VALUE_LABELS["no_answer"]),
        *_NAVIGATION,
    ),
}
#: The audit screen's keymap while it shows a ladder reply (see :func:`audit_keymap`).
LADDER_AUDIT = "audit:ladder"
#: Every keymap of the page: each screen's, and the audit screen's for ladder replies, whose
#: keys sit where an MMVP answer's do (1 / 2 the two verdicts, 3 no answer) with their own
#: letters. The page script picks the audit keymap by the kind of the answer shown.
KEYMAPS: dict[str, tuple[Shortcut, ...]] = dict(SHORTCUTS.items())
KEYMAPS[LADDER_AUDIT] = (
    Shortcut(("1", "c"), "correct", RUNG_LABELS["correct"]),
    Shortcut(("2", "i"), "incorrect", RUNG_LABELS["incorrect"]),
    Shortcut(("3", "n"), "no_answer", RUNG_LABELS["no_answer"]),
    *_NAVIGATION,
)
_KEY_NAMES = {"ArrowLeft": "←", "ArrowRight": "→"}


def audit_keymap(item: AuditItem | None) -> str:
    """The keymap (and so the verdict buttons) of the audit screen for the answer shown."""
    return LADDER_AUDIT if isinstance(item, RungItem) else "audit"


def escape(text: object) -> str:
    """HTML-escape data, also ``$``, ``{`` and ``}`` (template syntax in Gradio's HTML)."""
    return (
        html.escape(str(text), quote=True)
        .replace("$", "&#36;")
        .replace("{", "&#123;")
        .replace("}", "&#125;")
    )


def verdict_label(value: str) -> str:
    """A verdict value as the buttons name it."""
    return VALUE_LABELS.get(value, value)


# --- the header and the legend ---------------------------------------------------------------


def rater_html(rater: str | None) -> str:
    """Who is rating, shown at the top of the page."""
    if rater is None:
        return '<p class="amvicc-rater">Not signed in.</p>'
    return f'<p class="amvicc-rater">Rating as <b>{escape(rater)}</b></p>'


def shortcuts_html(keymap: str) -> str:
    """The legend of a keymap's keyboard shortcuts (a screen's, or :data:`LADDER_AUDIT`)."""
    keys = " · ".join(
        f"<kbd>{' / '.join(escape(_KEY_NAMES.get(k, k.upper())) for k in s.keys)}</kbd> "
        f"{escape(s.label)}"
        for s in KEYMAPS[keymap]
    )
    return f'<p class="amvicc-keys">Keys: {keys}</p>'


# --- images ----------------------------------------------------------------------------------


def image_html(src: str | None, subject: str | None, upcoming: str | None = None) -> str:
    """The image shown for a subject; a notice when the queue is done or the file is missing.

    Args:
        src: the image's URL (None when its file is missing).
        subject: the image's or response's id (None when the queue is done).
        upcoming: the URL of the image likely to come next, fetched now so it shows at once.
    """
    if subject is None:
        return '<div class="amvicc-image amvicc-empty"><p>Nothing left to do here.</p></div>'
    if src is None:
        return (
            f'<div class="amvicc-image amvicc-missing" data-item="{escape(subject)}">'
            "<p>The image file is missing from the workspace. Rate it <b>Can't tell</b> or "
            "skip it.</p></div>"
        )
    prefetch = (
        f'<img class="amvicc-upcoming" alt="" aria-hidden="true" src="{escape(upcoming)}">'
        if upcoming
        else ""
    )
    return (
        f'<div class="amvicc-image" data-item="{escape(subject)}">'
        f'<img alt="the image to judge" src="{escape(src)}">{prefetch}</div>'
    )


def _progress_html(progress: Progress, verb: str) -> str:
    return (
        f'<p class="amvicc-progress">{verb} <b class="amvicc-done">{progress.done}</b> of '
        f'<b class="amvicc-total">{progress.total}</b></p>'
    )


def _mine_html(mine: Mark | None, whose: str, labels: dict[str, str] = VALUE_LABELS) -> str:
    if mine is None:
        return f'<p class="amvicc-mine">{whose}: none yet</p>'
    comment = f" — “{escape(mine.comment)}”" if mine.comment else ""
    label = labels.get(mine.value, mine.value)
    return (
        f'<p class="amvicc-mine">{whose}: <b data-value="{escape(mine.value)}">'
        f"{escape(label)}</b>{comment}</p>"
    )


def _options_html(question: Question) -> str:
    return "".join(
        f"<li><b>({escape(o.label)})</b> {escape(o.text)}</li>" for o in question.options
    )


def image_details_html(view: ImageView, screen: Screen) -> str:
    """The side panel of the rating and adjudication screens."""
    verb = "Adjudicated" if screen == "adjudicate" else "Rated"
    progress = _progress_html(view.progress, verb)
    item = view.item
    if item is None:
        done = (
            "No disagreement is waiting for adjudication."
            if screen == "adjudicate"
            else "You have rated every image that needs you. Thank you!"
        )
        return f'<div class="amvicc-details" data-item="">{progress}<p>{done}</p></div>'
    parts = [
        f'<div class="amvicc-details" data-item="{escape(item.image_id)}">',
        progress,
        f"<p>Category: <b>{escape(item.category.name)}</b></p>",
        f'<p>Prompt (<b class="amvicc-kind">{escape(item.kind)}</b>):</p>',
        f'<blockquote class="amvicc-prompt">{escape(item.prompt)}</blockquote>',
    ]
    shows = item.shows
    if shows is not None:
        parts += [
            f"<p>MMVP question: {escape(item.question.text)}</p>",
            f"<ul>{_options_html(item.question)}</ul>",
            f'<p class="amvicc-shows">The image should show: <b>({escape(shows.label)}) '
            f"{escape(shows.text)}</b></p>",
        ]
    for rater in view.raters:
        comment = f" — “{escape(rater.comment)}”" if rater.comment else ""
        parts.append(
            f'<p class="amvicc-rater-verdict">{escape(rater.label)}: '
            f"<b>{escape(verdict_label(rater.value))}</b>{comment}</p>"
        )
    whose = "Adjudication" if screen == "adjudicate" else "Your verdict"
    parts += [_mine_html(view.mine, whose), "</div>"]
    return "".join(parts)


def rubric_markdown(rubric: Rubric | None, kind: PromptKind | None) -> str:
    """The rubric of the image's category for its prompt kind, as Markdown.

    Rubrics are project files (trusted), so their notes keep their Markdown.
    """
    if rubric is None or kind is None:
        return ""
    criteria = "\n".join(f"- {c}" for c in rubric.criteria(kind))
    failures = "\n".join(f"- {f}" for f in rubric.failures)
    return (
        f"### Rubric: {rubric.category.name} (version {rubric.version})\n\n"
        f"A **correct** {kind} image:\n\n{criteria}\n\nTypical failures:\n\n{failures}\n\n"
        f"{rubric.notes}"
    )


# --- answers ---------------------------------------------------------------------------------


def answer_details_html(view: AnswerView) -> str:
    """The side panel of the audit screen: the question and the verbatim reply."""
    progress = _progress_html(view.progress, "Decided")
    item = view.item
    if item is None:
        return (
            f'<div class="amvicc-details" data-item="">{progress}'
            "<p>No answer is waiting for a decision.</p></div>"
        )
    if isinstance(item, RungItem):
        return _rung_details_html(item, view.mine, progress)
    return (
        f'<div class="amvicc-details" data-item="{escape(item.response_id)}">{progress}'
        f"<p>Category: <b>{escape(item.question.category.name)}</b></p>"
        f"<p>Question: {escape(item.question.text)}</p><ul>{_options_html(item.question)}</ul>"
        "<p>The model replied:</p>"
        f'<pre class="amvicc-response">{escape(item.text)}</pre>'
        "<p>Which option does the reply choose? (Not whether it is right.)</p>"
        f"{_mine_html(view.mine, 'Your verdict')}</div>"
    )


def _rung_details_html(item: RungItem, mine: Mark | None, progress: str) -> str:
    """A ladder reply: the rung (level, question, the correct answer) and the verbatim reply.

    The correct answer is shown because the auditor judges whether the reply gives it (what
    the comparator does); what any grader decided stays hidden. ``data-kind`` tells the page
    script to use the ladder's keys.
    """
    rung = item.rung
    choices = ""
    if rung.type == "option" and rung.choices is not None:
        choices = "".join(
            f"<li><b>({label})</b> {escape(text)}</li>"
            for label, text in zip("ab", rung.choices, strict=True)
        )
        choices = f"<ul>{choices}</ul>"
    empty = "" if item.text.strip() else '<p class="amvicc-empty-reply">(The reply is empty.)</p>'
    return (
        f'<div class="amvicc-details" data-item="{escape(item.response_id)}" data-kind="ladder">'
        f"{progress}"
        f'<p>Question ladder, level <b class="amvicc-level">{rung.level}</b>: '
        f"{escape(item.level_name)}</p>"
        f"<p>Question: {escape(rung.question)}</p>{choices}"
        f'<p class="amvicc-expected">The correct answer: <b>{escape(rung.expected)}</b></p>'
        "<p>The model replied:</p>"
        f'<pre class="amvicc-response">{escape(item.text)}</pre>{empty}'
        "<p>Does the reply's final answer give the correct answer, another answer, or none "
        "(no answer, a refusal, or no decision between answers)?</p>"
        f"{_mine_html(mine, 'Your verdict', RUNG_LABELS)}</div>"
    )


# --- statistics ------------------------------------------------------------------------------


def _number(value: float, percent: bool = False) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def statistics_html(stats: Statistics) -> str:
    """The statistics tab: agreement per category, then each rater's counts."""
    head = (
        "<tr><th>Category</th><th>Images</th><th>Rated</th><th>Double-rated</th>"
        "<th>Agreement</th><th>Cohen's κ</th><th>Disputed</th><th>Adjudicated</th></tr>"
    )
    rows = "".join(
        f'<tr data-category="{escape(r.code)}"><td>{escape(r.name)}</td><td>{r.items}</td>'
        f"<td>{r.rated}</td><td>{r.double_rated}</td>"
        f'<td class="amvicc-agreement">{_number(r.agreement, percent=True)}</td>'
        f'<td class="amvicc-kappa">{_number(r.kappa)}</td>'
        f"<td>{r.disputed}</td><td>{r.adjudicated}</td></tr>"
        for r in stats.categories
    )
    codes = [r.code for r in stats.categories if r.code != "all"]
    rater_head = (
        "<tr><th>Rater</th><th>Rated</th><th>Can't tell</th>"
        + "".join(f"<th>{escape(code)}</th>" for code in codes)
        + "</tr>"
    )
    rater_rows = (
        "".join(
            f"<tr><td>{escape(r.rater)}</td><td>{r.total}</td><td>{r.cant_tell}</td>"
            + "".join(f"<td>{r.by_category.get(code, 0)}</td>" for code in codes)
            + "</tr>"
            for r in stats.raters
        )
        or f'<tr><td colspan="{3 + len(codes)}">No ratings yet.</td></tr>'
    )
    return (
        '<div class="amvicc-stats"><h3>Agreement between raters</h3>'
        "<p>Each image rated twice or more counts once, as its first two ratings. "
        "Disputed: fully rated images whose raters disagree.</p>"
        f'<table class="amvicc-agreement-table">{head}{rows}</table>'
        f'<h3>Ratings per rater</h3><table class="amvicc-rater-table">{rater_head}'
        f"{rater_rows}</table></div>"
    )
